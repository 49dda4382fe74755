package install_test

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/install"
)

func TestParseGitSources(t *testing.T) {
	for _, c := range []struct {
		in                  string
		ref, rev, sub, text string
	}{
		{"anthropics/skills", "https://github.com/anthropics/skills.git", "", "", "git+https://github.com/anthropics/skills.git"},
		{"anthropics/skills@v1.2", "https://github.com/anthropics/skills.git", "v1.2", "", "git+https://github.com/anthropics/skills.git@v1.2"},
		{"anthropics/skills/skills/pdf", "https://github.com/anthropics/skills.git", "", "skills/pdf", "git+https://github.com/anthropics/skills.git/skills/pdf"},
		{"github.com/obra/superpowers@main", "https://github.com/obra/superpowers.git", "main", "", "git+https://github.com/obra/superpowers.git@main"},
		{"gitlab.com/a/b/c", "https://gitlab.com/a/b.git", "", "c", "git+https://gitlab.com/a/b.git/c"},
		{"https://github.com/anthropics/skills/tree/main/skills/pdf", "https://github.com/anthropics/skills.git", "main", "skills/pdf", "git+https://github.com/anthropics/skills.git/skills/pdf@main"},
		{"https://git.example.com/team/skills.git/pdf@0123456789abcdef0123456789abcdef01234567", "https://git.example.com/team/skills.git", "0123456789abcdef0123456789abcdef01234567", "pdf", "git+https://git.example.com/team/skills.git/pdf@0123456789abcdef0123456789abcdef01234567"},
		{"git+file:///srv/skills.git/x@v1", "file:///srv/skills.git", "v1", "x", "git+file:///srv/skills.git/x@v1"},
	} {
		s, err := install.ParseSource(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if s.Kind != install.KindGit || s.Ref != c.ref || s.Rev != c.rev || s.Subpath != c.sub || s.String() != c.text {
			t.Errorf("%s: %+v %q; want %s %s %s %s", c.in, s, s.String(), c.ref, c.rev, c.sub, c.text)
		}
		// The canonical form reads back the same.
		if again, err := install.ParseSource(s.String()); err != nil || again != s {
			t.Errorf("%s read back as %+v, %v", s.String(), again, err)
		}
	}
	for _, bad := range []string{"owner/repo@../x", "https://github.com/a/b.git/../../etc", "https://user:pw@github.com/a/b.git", "owner/repo/tree/main/x@v2"} {
		if _, err := install.ParseSource(bad); !errors.Is(err, install.ErrBadSource) {
			t.Errorf("%s: %v, want ErrBadSource", bad, err)
		}
	}
	// Not git: archives on a git host, and a site.
	for _, in := range []string{"https://github.com/a/b/archive/refs/tags/v1.tar.gz", "https://skills.example.com"} {
		if s, err := install.ParseSource(in); err != nil || s.Kind == install.KindGit {
			t.Errorf("%s: %+v, %v", in, s, err)
		}
	}
	// A local folder wins over the shorthand.
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll(filepath.Join("owner", "repo"), 0o755)
	if s, err := install.ParseSource("owner/repo"); err != nil || s.Kind != install.KindFolder {
		t.Errorf("owner/repo beside a folder of that name: %+v, %v", s, err)
	}
}

// gitRepo makes a bare repository of two skills, alpha tagged v1 then
// changed on main, and returns its folder and the two commits.
func gitRepo(t *testing.T) (bare, v1, v2 string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("SKILLHOST_REQUIRE_TOOLCHAINS") != "" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	work := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	writeTree(t, work, map[string]string{
		"skills/alpha/SKILL.md": skillMD("alpha", "version one"),
		"skills/beta/SKILL.md":  skillMD("beta", "b"),
	})
	run("add", ".")
	run("commit", "-q", "-m", "one")
	run("tag", "-a", "v1", "-m", "v1")
	v1 = run("rev-parse", "HEAD")
	writeTree(t, work, map[string]string{"skills/alpha/SKILL.md": skillMD("alpha", "version two")})
	run("commit", "-q", "-am", "two")
	v2 = run("rev-parse", "HEAD")
	bare = filepath.Join(t.TempDir(), "skills.git")
	run("clone", "-q", "--bare", work, bare)
	return bare, v1, v2
}

func TestInstallFromGit(t *testing.T) {
	bare, v1, v2 := gitRepo(t)
	in := newInstaller(t)
	ctx := context.Background()
	got, err := in.Install(ctx, install.Request{Source: "git+file://" + bare + "/skills/alpha@v1"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Name != "alpha" || got[0].Resolved != v1 {
		t.Fatalf("installed %+v; want alpha at %s", got[0], v1)
	}
	if b, _ := os.ReadFile(filepath.Join(in.Dir, "alpha", "SKILL.md")); !strings.Contains(string(b), "version one") {
		t.Fatalf("SKILL.md at v1: %s", b)
	}
	// The default branch, every skill of the repository.
	if _, err := in.Install(ctx, install.Request{Source: "file://" + bare, All: true}); err != nil {
		t.Fatal(err)
	}
	lock, _ := install.ReadLock(in.LockFile)
	if e := lock.Find("alpha"); e == nil || e.Resolved != v2 || e.Subpath != "skills/alpha" {
		t.Fatalf("alpha's entry %+v; want %s", e, v2)
	}
	if _, err := in.Install(ctx, install.Request{Source: "file://" + bare + "@nonesuch"}); !errors.Is(err, install.ErrBadSource) {
		t.Fatalf("a missing ref: %v", err)
	}
	if _, err := in.Install(ctx, install.Request{Source: "git+file://" + bare + "/skills/gamma"}); !errors.Is(err, install.ErrBadSource) {
		t.Fatalf("a missing folder: %v", err)
	}
}

// A tag moved after locking does not move what Sync installs: it
// reinstalls the locked commit.
func TestSyncUsesTheLockedCommit(t *testing.T) {
	bare, v1, v2 := gitRepo(t)
	in := newInstaller(t)
	ctx := context.Background()
	if _, err := in.Install(ctx, install.Request{Source: "git+file://" + bare + "/skills/alpha@v1"}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "--git-dir", bare, "tag", "-f", "v1", v2).CombinedOutput()
	if err != nil {
		t.Fatalf("moving the tag: %v %s", err, out)
	}
	od, err := in.Outdated(ctx)
	if err != nil || len(od) != 1 || od[0].Name != "alpha" || od[0].Locked != v1 || od[0].Latest != v2 {
		t.Fatalf("outdated after the tag moved: %+v, %v", od, err)
	}
	os.RemoveAll(filepath.Join(in.Dir, "alpha"))
	if _, err := in.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(in.Dir, "alpha", "SKILL.md")); !strings.Contains(string(b), "version one") {
		t.Fatalf("Sync followed the moved tag: %s", b)
	}
	lock, _ := install.ReadLock(in.LockFile)
	if e := lock.Find("alpha"); e.Resolved != v1 || !strings.HasSuffix(e.Source, "@v1") {
		t.Fatalf("the lock after Sync: %+v", e)
	}
}

// A repository served by git's own smart-HTTP server over TLS on
// loopback.
func TestInstallFromGitOverHTTPS(t *testing.T) {
	bare, _, v2 := gitRepo(t)
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("git-http-backend: %v", err)
	}
	srv := httptest.NewTLSServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(bare), "GIT_HTTP_EXPORT_ALL=1"}})
	defer srv.Close()
	in := newInstaller(t)
	in.GitCABundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	got, err := in.Install(context.Background(), install.Request{Source: srv.URL + "/skills.git/skills/beta"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Name != "beta" || got[0].Resolved != v2 {
		t.Fatalf("installed %+v", got[0])
	}
}
