package sandboxfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

const secret = "SECRET"

// fixture is a mount directory beside an outside directory it must not reach:
//
//	outside/secret.txt       "SECRET"
//	mount/hello.txt          "hello"
//	mount/empty/             empty directory
//	mount/dir/inner.txt      "inner"
//	mount/inside   -> hello.txt                 stays inside
//	mount/dir/back -> ../hello.txt              stays inside
//	mount/abs      -> <outside>                 absolute, escapes
//	mount/up       -> ../outside                relative, escapes
//	mount/dir/upup -> ../../outside/secret.txt  relative, escapes
//	mount/dangling -> <outside>/new.txt         absolute, escapes, missing
type fixture struct {
	mount, outside string
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	base := t.TempDir()
	fx := fixture{mount: filepath.Join(base, "mount"), outside: filepath.Join(base, "outside")}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(fx.mount, "dir"), 0o755))
	must(os.Mkdir(filepath.Join(fx.mount, "empty"), 0o755))
	must(os.Mkdir(fx.outside, 0o755))
	must(os.WriteFile(filepath.Join(fx.outside, "secret.txt"), []byte(secret), 0o644))
	must(os.WriteFile(filepath.Join(fx.mount, "hello.txt"), []byte("hello"), 0o644))
	must(os.WriteFile(filepath.Join(fx.mount, "dir", "inner.txt"), []byte("inner"), 0o644))
	for link, target := range map[string]string{
		"inside":   "hello.txt",
		"dir/back": "../hello.txt",
		"abs":      fx.outside,
		"up":       "../outside",
		"dir/upup": "../../outside/secret.txt",
		"dangling": filepath.Join(fx.outside, "new.txt"),
	} {
		must(os.Symlink(target, filepath.Join(fx.mount, filepath.FromSlash(link))))
	}
	return fx
}

// open returns a new FS on the fixture's mount, closed when the test ends.
func (fx fixture) open(t testing.TB, readOnly bool) *FS {
	t.Helper()
	s, err := New(fx.mount, readOnly)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openBudget returns a new FS on the fixture's mount metered by b, closed
// when the test ends.
func (fx fixture) openBudget(t testing.TB, readOnly bool, b *Budget) *FS {
	t.Helper()
	s, err := NewWithBudget(fx.mount, readOnly, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// snapshot returns every entry under dir with its type and, for regular
// files, contents; for links, their target.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			got[rel] = "link " + target
		case d.IsDir():
			got[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			got[rel] = info.Mode().String() + " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// readFile reads a whole file through s.
func readFile(s experimentalsys.FS, p string) (string, experimentalsys.Errno) {
	f, errno := s.OpenFile(p, experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		return "", errno
	}
	defer f.Close()
	var out []byte
	buf := make([]byte, 64)
	for {
		n, errno := f.Read(buf)
		if errno != 0 {
			return "", errno
		}
		if n == 0 {
			return string(out), 0
		}
		out = append(out, buf[:n]...)
	}
}

// errnoNames spell errnos the way they read in C, for test output.
var errnoNames = map[experimentalsys.Errno]string{
	0:                         "ok",
	experimentalsys.EACCES:    "EACCES",
	experimentalsys.EBADF:     "EBADF",
	experimentalsys.EEXIST:    "EEXIST",
	experimentalsys.EINVAL:    "EINVAL",
	experimentalsys.EIO:       "EIO",
	experimentalsys.EISDIR:    "EISDIR",
	experimentalsys.ELOOP:     "ELOOP",
	experimentalsys.ENOENT:    "ENOENT",
	experimentalsys.ENOSYS:    "ENOSYS",
	experimentalsys.ENOTDIR:   "ENOTDIR",
	experimentalsys.ENOTEMPTY: "ENOTEMPTY",
	experimentalsys.ENOTSUP:   "ENOTSUP",
	experimentalsys.EPERM:     "EPERM",
	experimentalsys.EROFS:     "EROFS",
	EDQUOT:                    "EDQUOT",
	EMFILE:                    "EMFILE",
}

func errnoName(errno experimentalsys.Errno) string {
	if name, ok := errnoNames[errno]; ok {
		return name
	}
	return errno.Error()
}
