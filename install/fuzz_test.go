package install_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/install"
)

// FuzzParseSource: any reference parses or is refused with ErrBadSource;
// a git or OCI source's canonical form reads back the same, and no
// folder inside a repository climbs out of it.
func FuzzParseSource(f *testing.F) {
	for _, s := range []string{"owner/repo", "owner/repo@v1", "github.com/a/b/c/d@main", "https://github.com/a/b/tree/main/x",
		"git+file:///srv/x.git/y@v1", "oci://ghcr.io/a/b:1", "oci://localhost:5000/a@sha256:" + strings.Repeat("0", 64),
		"https://example.com/a.tar.gz#sha256=" + strings.Repeat("a", 64), "https://example.com", "http://x", "a/../b", "@", "//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		s, err := install.ParseSource(ref)
		if err != nil {
			return
		}
		switch s.Kind {
		case install.KindGit, install.KindOCI:
			again, err := install.ParseSource(s.String())
			if err != nil || again != s {
				t.Fatalf("%q parsed as %+v, its canonical form %q as %+v, %v", ref, s, s.String(), again, err)
			}
		}
		if strings.Contains(s.Subpath, "..") && !strings.Contains(s.Subpath, "...") {
			for _, seg := range strings.Split(s.Subpath, "/") {
				if seg == ".." {
					t.Fatalf("%q: subpath %q climbs", ref, s.Subpath)
				}
			}
		}
	})
}

// FuzzReadLock: any lock file is read or refused, never panics, and
// one that is read writes back and reads again the same.
func FuzzReadLock(f *testing.F) {
	f.Add("version = 1\n")
	f.Add("version = 1\n[[installed]]\nname = \"pdf\"\nkind = \"skill\"\nsource = \"x\"\ndigest = \"sha256:" + strings.Repeat("a", 64) + "\"\n[installed.approved]\nhosts = [\"a\"]\n")
	f.Add("version = 2\n")
	f.Fuzz(func(t *testing.T, data string) {
		dir := t.TempDir()
		file := filepath.Join(dir, install.LockFile)
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := install.ReadLock(file)
		if err != nil {
			return
		}
		if err := l.Write(file); err != nil {
			t.Fatal(err)
		}
		if _, err := install.ReadLock(file); err != nil {
			t.Fatalf("a lock written back does not read: %v", err)
		}
	})
}
