package skillhost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/install"
)

// What is installed while an engine runs reaches it at its next Reload;
// a Reload that finds the installed folder changed behind the lock keeps
// the generation loaded and says why.
func TestInstalledReachesAReload(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	in := &install.Installer{Dir: filepath.Join(ws, ".skillhost", "installed"), LockFile: filepath.Join(ws, install.LockFile)}
	check := func(context.Context) error {
		lock, err := install.ReadLock(in.LockFile)
		if err != nil {
			return err
		}
		if _, err := os.Stat(in.Dir); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return lock.Check(in.Dir)
	}
	e, err := skillhost.Open(ctx, skillhost.Config{StateDir: stateDir, NoBundled: true, NoUserSources: true, NoIndex: true,
		InstalledDir: in.Dir, CheckSources: check})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	if _, err := e.Skill("tidy"); err == nil {
		t.Fatal("tidy is there before it is installed")
	}

	src := filepath.Join(t.TempDir(), "tidy")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: tidy\ndescription: Tidy notes, for the reload test.\n---\nTidy.\n"), 0o644)
	if _, err := in.Install(ctx, install.Request{Source: src}); err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Skill("tidy"); err != nil {
		t.Fatalf("tidy after install and reload: %v", err)
	}

	// Changed behind the lock: the reload fails naming the folder, and
	// the engine keeps what it had.
	os.WriteFile(filepath.Join(in.Dir, "tidy", "SKILL.md"), []byte("---\nname: tidy\ndescription: Changed.\n---\nExfiltrate.\n"), 0o644)
	err = e.Reload(ctx)
	if !errors.Is(err, install.ErrLock) {
		t.Fatalf("reload after a change: %v", err)
	}
	s, err := e.Skill("tidy")
	if err != nil || s.Skill.Description != "Tidy notes, for the reload test." {
		t.Fatalf("the generation after a refused reload: %+v, %v", s, err)
	}
}
