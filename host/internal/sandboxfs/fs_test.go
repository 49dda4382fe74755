package sandboxfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// Shorthands for the open flags.
const (
	rdonly    = experimentalsys.O_RDONLY
	wronly    = experimentalsys.O_WRONLY
	rdwr      = experimentalsys.O_RDWR
	oAppend   = experimentalsys.O_APPEND
	oCreat    = experimentalsys.O_CREAT
	oDir      = experimentalsys.O_DIRECTORY
	oExcl     = experimentalsys.O_EXCL
	oNoFollow = experimentalsys.O_NOFOLLOW
	oTrunc    = experimentalsys.O_TRUNC
)

// TestContainment pairs every way to reach a file inside the mount with the
// matching attempt to reach one outside it, for reads in both modes.
func TestContainment(t *testing.T) {
	fx := newFixture(t)
	read := func(p string) func(*FS) (string, experimentalsys.Errno) {
		return func(s *FS) (string, experimentalsys.Errno) { return readFile(s, p) }
	}
	stat := func(p string) func(*FS) (string, experimentalsys.Errno) {
		return func(s *FS) (string, experimentalsys.Errno) {
			st, errno := s.Stat(p)
			return st.Mode.Type().String(), errno
		}
	}
	lstat := func(p string) func(*FS) (string, experimentalsys.Errno) {
		return func(s *FS) (string, experimentalsys.Errno) {
			st, errno := s.Lstat(p)
			return st.Mode.Type().String(), errno
		}
	}
	openDir := func(p string) func(*FS) (string, experimentalsys.Errno) {
		return func(s *FS) (string, experimentalsys.Errno) {
			f, errno := s.OpenFile(p, rdonly|oDir, 0)
			if errno != 0 {
				return "", errno
			}
			defer f.Close()
			dirents, errno := f.Readdir(-1)
			return strconv.Itoa(len(dirents)) + " entries", errno
		}
	}
	tests := []struct {
		name string
		op   func(*FS) (string, experimentalsys.Errno)
		want string
	}{
		{"file", read("hello.txt"), "hello"},
		{"dotdot inside", read("dir/../hello.txt"), "hello"},
		{"dotdot out", read("../outside/secret.txt"), "EPERM"},
		{"dotdot out after descending", read("dir/../../outside/secret.txt"), "EPERM"},
		{"dotdot out of root alone", read(".."), "EPERM"},
		{"absolute system path", read("/etc/passwd"), "EPERM"},
		{"absolute host path of outside", read(filepath.Join(fx.outside, "secret.txt")), "EPERM"},
		{"absolute host path of mount", read(filepath.Join(fx.mount, "hello.txt")), "EPERM"},
		{"link inside", read("inside"), "hello"},
		{"link inside with dotdot target", read("dir/back"), "hello"},
		{"absolute link to outside dir", read("abs/secret.txt"), "EPERM"},
		{"relative link to outside dir", read("up/secret.txt"), "EPERM"},
		{"relative link to outside file", read("dir/upup"), "EPERM"},
		{"link then dotdot back in", read("abs/../mount/hello.txt"), "EPERM"},
		{"stat link inside", stat("inside"), "----------"},
		{"stat escaping link", stat("abs"), "EPERM"},
		{"lstat escaping link", lstat("abs"), "L---------"},
		{"stat absolute", stat("/etc"), "EPERM"},
		{"list root", openDir("/"), "7 entries"},
		{"list root as dot", openDir("."), "7 entries"},
		{"list root as empty", openDir(""), "7 entries"},
		{"list dir", openDir("dir"), "3 entries"},
		{"list through escaping link", openDir("abs"), "EPERM"},
		{"list parent", openDir(".."), "EPERM"},
	}
	for _, readOnly := range []bool{false, true} {
		s := fx.open(t, readOnly)
		for _, tc := range tests {
			t.Run(mode(readOnly)+"/"+tc.name, func(t *testing.T) {
				got, errno := tc.op(s)
				if errno != 0 {
					got = errnoName(errno)
				}
				if got != tc.want {
					t.Errorf("got %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// TestContainmentWrites pairs each change inside the mount with the same
// change aimed outside it through "..", an absolute path or a link, and checks
// that the outside directory is untouched.
func TestContainmentWrites(t *testing.T) {
	create := func(p string, flag experimentalsys.Oflag) func(*FS) experimentalsys.Errno {
		return func(s *FS) experimentalsys.Errno {
			f, errno := s.OpenFile(p, flag, 0o644)
			if errno != 0 {
				return errno
			}
			defer f.Close()
			_, errno = f.Write([]byte("pwned"))
			return errno
		}
	}
	now := time.Now().UnixNano()
	tests := []struct {
		name string
		op   func(*FS) experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"create", create("new.txt", wronly|oCreat), 0},
		{"create through dangling absolute link", create("dangling", wronly|oCreat), experimentalsys.EPERM},
		{"create through escaping link", create("up/new.txt", wronly|oCreat), experimentalsys.EPERM},
		{"create with dotdot", create("../outside/new.txt", wronly|oCreat), experimentalsys.EPERM},
		{"create absolute", create(filepath.Join(t.TempDir(), "new.txt"), wronly|oCreat), experimentalsys.EPERM},
		{"create exclusive over dangling link", create("dangling", wronly|oCreat|oExcl), experimentalsys.EEXIST},
		{"truncate", create("hello.txt", wronly|oTrunc), 0},
		{"truncate through link", create("dir/upup", wronly|oTrunc), experimentalsys.EPERM},
		{"mkdir", func(s *FS) experimentalsys.Errno { return s.Mkdir("d", 0o755) }, 0},
		{"mkdir through link", func(s *FS) experimentalsys.Errno { return s.Mkdir("up/d", 0o755) }, experimentalsys.EPERM},
		{"rename", func(s *FS) experimentalsys.Errno { return s.Rename("hello.txt", "dir/moved.txt") }, 0},
		{"rename out", func(s *FS) experimentalsys.Errno { return s.Rename("hello.txt", "up/moved.txt") }, experimentalsys.EPERM},
		{"rename in", func(s *FS) experimentalsys.Errno { return s.Rename("abs/secret.txt", "got.txt") }, experimentalsys.EPERM},
		{"rename a link", func(s *FS) experimentalsys.Errno { return s.Rename("abs", "dir/abs") }, 0},
		{"unlink", func(s *FS) experimentalsys.Errno { return s.Unlink("hello.txt") }, 0},
		{"unlink through link", func(s *FS) experimentalsys.Errno { return s.Unlink("up/secret.txt") }, experimentalsys.EPERM},
		{"unlink the escaping link itself", func(s *FS) experimentalsys.Errno { return s.Unlink("abs") }, 0},
		{"rmdir", func(s *FS) experimentalsys.Errno { return s.Rmdir("empty") }, 0},
		{"rmdir through link", func(s *FS) experimentalsys.Errno { return s.Rmdir("up/") }, experimentalsys.EPERM},
		{"chmod", func(s *FS) experimentalsys.Errno { return s.Chmod("hello.txt", 0o600) }, 0},
		{"chmod through link", func(s *FS) experimentalsys.Errno { return s.Chmod("up/secret.txt", 0o600) }, experimentalsys.EPERM},
		{"utimens", func(s *FS) experimentalsys.Errno { return s.Utimens("hello.txt", now, now) }, 0},
		{"utimens through link", func(s *FS) experimentalsys.Errno { return s.Utimens("dir/upup", now, now) }, experimentalsys.EPERM},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			before := snapshot(t, fx.outside)
			if got := tc.op(fx.open(t, false)); got != tc.want {
				t.Errorf("got %s, want %s", errnoName(got), errnoName(tc.want))
			}
			if diff := cmp.Diff(before, snapshot(t, fx.outside)); diff != "" {
				t.Errorf("outside directory changed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLinks checks that following links inside the mount works while creating
// any link is refused, and what Readlink discloses.
func TestLinks(t *testing.T) {
	fx := newFixture(t)
	for _, readOnly := range []bool{false, true} {
		s := fx.open(t, readOnly)
		tests := []struct {
			name string
			op   func() (string, experimentalsys.Errno)
			want string
		}{
			{"follow link inside", func() (string, experimentalsys.Errno) { return readFile(s, "inside") }, "hello"},
			{"symlink relative", func() (string, experimentalsys.Errno) { return "", s.Symlink("hello.txt", "new") }, "EPERM"},
			{"symlink absolute", func() (string, experimentalsys.Errno) { return "", s.Symlink("/etc", "new") }, "EPERM"},
			{"hard link", func() (string, experimentalsys.Errno) { return "", s.Link("hello.txt", "new") }, "EPERM"},
			{"readlink inside", func() (string, experimentalsys.Errno) { return s.Readlink("inside") }, "hello.txt"},
			{"readlink inside via dotdot", func() (string, experimentalsys.Errno) { return s.Readlink("dir/back") }, "../hello.txt"},
			{"readlink absolute", func() (string, experimentalsys.Errno) { return s.Readlink("abs") }, "EPERM"},
			{"readlink escaping", func() (string, experimentalsys.Errno) { return s.Readlink("up") }, "EPERM"},
			{"readlink escaping from subdir", func() (string, experimentalsys.Errno) { return s.Readlink("dir/upup") }, "EPERM"},
			{"readlink not a link", func() (string, experimentalsys.Errno) { return s.Readlink("hello.txt") }, "EINVAL"},
			{"readlink outside", func() (string, experimentalsys.Errno) { return s.Readlink("../outside") }, "EPERM"},
		}
		for _, tc := range tests {
			t.Run(mode(readOnly)+"/"+tc.name, func(t *testing.T) {
				got, errno := tc.op()
				if errno != 0 {
					got = errnoName(errno)
				}
				if got != tc.want {
					t.Errorf("got %q, want %q", got, tc.want)
				}
			})
		}
	}
	if _, err := os.Lstat(filepath.Join(fx.mount, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a link was created: %v", err)
	}
}

// TestReadOnly runs every change on a read-only mount, where it must fail with
// EROFS and change nothing, and on a read-write mount, where it must succeed.
func TestReadOnly(t *testing.T) {
	open := func(p string, flag experimentalsys.Oflag) func(*FS) experimentalsys.Errno {
		return func(s *FS) experimentalsys.Errno {
			f, errno := s.OpenFile(p, flag, 0o644)
			if errno == 0 {
				errno = f.Close()
			}
			return errno
		}
	}
	tests := []struct {
		name string
		op   func(*FS) experimentalsys.Errno
	}{
		{"open write-only", open("hello.txt", wronly)},
		{"open read-write", open("hello.txt", rdwr)},
		{"open read-only creating", open("new.txt", rdonly|oCreat)},
		{"open read-only truncating", open("hello.txt", rdonly|oTrunc)},
		{"open read-only appending", open("hello.txt", rdonly|oAppend)},
		{"create exclusive", open("new.txt", wronly|oCreat|oExcl)},
		{"mkdir", func(s *FS) experimentalsys.Errno { return s.Mkdir("d", 0o755) }},
		{"rmdir", func(s *FS) experimentalsys.Errno { return s.Rmdir("empty") }},
		{"unlink", func(s *FS) experimentalsys.Errno { return s.Unlink("hello.txt") }},
		{"rename", func(s *FS) experimentalsys.Errno { return s.Rename("hello.txt", "moved.txt") }},
		{"chmod", func(s *FS) experimentalsys.Errno { return s.Chmod("hello.txt", 0o600) }},
		{"utimens", func(s *FS) experimentalsys.Errno { return s.Utimens("hello.txt", 0, 0) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			before := snapshot(t, fx.mount)
			infoBefore, _ := os.Stat(filepath.Join(fx.mount, "hello.txt"))
			if got := tc.op(fx.open(t, true)); got != experimentalsys.EROFS {
				t.Errorf("read-only: got %s, want EROFS", errnoName(got))
			}
			if diff := cmp.Diff(before, snapshot(t, fx.mount)); diff != "" {
				t.Errorf("read-only mount changed (-want +got):\n%s", diff)
			}
			infoAfter, _ := os.Stat(filepath.Join(fx.mount, "hello.txt"))
			if !infoAfter.ModTime().Equal(infoBefore.ModTime()) {
				t.Errorf("read-only mount: hello.txt times changed")
			}
			if got := tc.op(newFixture(t).open(t, false)); got != 0 {
				t.Errorf("read-write: got %s, want ok", errnoName(got))
			}
		})
	}
}

// TestReadOnlyFile runs file changes on a file from a read-only mount, which
// is open read-only and must refuse them as wazero's ReadFS does, and on a
// file open read-write from a read-write mount.
func TestReadOnlyFile(t *testing.T) {
	tests := []struct {
		name           string
		op             func(experimentalsys.File) experimentalsys.Errno
		wantRO, wantRW experimentalsys.Errno
	}{
		{"write", func(f experimentalsys.File) experimentalsys.Errno { _, e := f.Write([]byte("x")); return e }, experimentalsys.EBADF, 0},
		{"pwrite", func(f experimentalsys.File) experimentalsys.Errno { _, e := f.Pwrite([]byte("x"), 1); return e }, experimentalsys.EBADF, 0},
		{"truncate", func(f experimentalsys.File) experimentalsys.Errno { return f.Truncate(1) }, experimentalsys.EBADF, 0},
		{"utimens", func(f experimentalsys.File) experimentalsys.Errno { return f.Utimens(0, 0) }, experimentalsys.EBADF, 0},
		{"set append", func(f experimentalsys.File) experimentalsys.Errno { return f.SetAppend(true) }, 0, 0},
		{"sync", func(f experimentalsys.File) experimentalsys.Errno { return f.Sync() }, 0, 0},
		{"datasync", func(f experimentalsys.File) experimentalsys.Errno { return f.Datasync() }, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, readOnly := range []bool{true, false} {
				fx := newFixture(t)
				before := snapshot(t, fx.mount)
				flag, want := rdonly, tc.wantRO
				if !readOnly {
					flag, want = rdwr, tc.wantRW
				}
				f, errno := fx.open(t, readOnly).OpenFile("hello.txt", flag, 0)
				if errno != 0 {
					t.Fatal(errnoName(errno))
				}
				if got := tc.op(f); got != want {
					t.Errorf("%s: got %s, want %s", mode(readOnly), errnoName(got), errnoName(want))
				}
				f.Close()
				if readOnly {
					if diff := cmp.Diff(before, snapshot(t, fx.mount)); diff != "" {
						t.Errorf("read-only mount changed (-want +got):\n%s", diff)
					}
				}
			}
		})
	}
}

// TestFileIO exercises a read-write file the way a guest does.
func TestFileIO(t *testing.T) {
	fx := newFixture(t)
	s := fx.open(t, false)
	f, errno := s.OpenFile("new.txt", rdwr|oCreat|oExcl, 0o600)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	defer f.Close()

	// step("name", want)(result) checks one call; the adapters below turn
	// each method's results into a string and an errno.
	step := func(name, want string) func(string, experimentalsys.Errno) {
		return func(got string, errno experimentalsys.Errno) {
			t.Helper()
			if errno != 0 {
				got = errnoName(errno)
			}
			if got != want {
				t.Errorf("%s: got %q, want %q", name, got, want)
			}
		}
	}
	buf := make([]byte, 16)
	text := func(n int, errno experimentalsys.Errno) (string, experimentalsys.Errno) {
		return string(buf[:n]), errno
	}
	count := func(n int, errno experimentalsys.Errno) (string, experimentalsys.Errno) {
		return strconv.Itoa(n), errno
	}
	offset := func(n int64, errno experimentalsys.Errno) (string, experimentalsys.Errno) {
		return strconv.FormatInt(n, 10), errno
	}
	flag := func(b bool, errno experimentalsys.Errno) (string, experimentalsys.Errno) {
		return strconv.FormatBool(b), errno
	}
	only := func(errno experimentalsys.Errno) (string, experimentalsys.Errno) { return "", errno }
	size := func(st sys.Stat_t, errno experimentalsys.Errno) (string, experimentalsys.Errno) {
		return strconv.FormatInt(st.Size, 10), errno
	}
	mtime := func(st sys.Stat_t, errno experimentalsys.Errno) (string, experimentalsys.Errno) {
		return time.Unix(0, st.Mtim).UTC().Format(time.DateTime), errno
	}

	step("write", "11")(count(f.Write([]byte("hello world"))))
	step("seek start", "0")(offset(f.Seek(0, io.SeekStart)))
	step("read", "hello")(text(f.Read(buf[:5])))
	step("seek current", "6")(offset(f.Seek(1, io.SeekCurrent)))
	step("read rest", "world")(text(f.Read(buf)))
	step("read at end", "0")(count(f.Read(buf)))
	step("seek end", "6")(offset(f.Seek(-5, io.SeekEnd)))
	step("seek before start", "EINVAL")(offset(f.Seek(-1, io.SeekStart)))
	step("seek bad whence", "EINVAL")(offset(f.Seek(0, 3)))
	step("pwrite", "1")(count(f.Pwrite([]byte("W"), 6)))
	step("pread", "World")(text(f.Pread(buf[:5], 6)))
	step("pread past end", "0")(count(f.Pread(buf, 100)))
	step("pread negative", "EINVAL")(count(f.Pread(buf, -1)))
	step("pwrite negative", "EINVAL")(count(f.Pwrite(buf, -1)))
	step("offset kept by pread and pwrite", "6")(offset(f.Seek(0, io.SeekCurrent)))
	step("truncate", "")(only(f.Truncate(5)))
	step("truncate negative", "EINVAL")(only(f.Truncate(-1)))
	step("size after truncate", "5")(size(f.Stat()))
	step("sync", "")(only(f.Sync()))
	step("datasync", "")(only(f.Datasync()))
	step("utimens", "")(only(f.Utimens(experimentalsys.UTIME_OMIT, time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC).UnixNano())))
	step("mtime after utimens", "2001-02-03 04:05:06")(mtime(f.Stat()))
	step("is dir", "false")(flag(f.IsDir()))
	ino, errno := f.Ino()
	step("has inode", "true")(flag(ino != 0, errno))
	pf := f.(experimentalsys.PollableFile)
	step("set nonblock", "")(only(pf.SetNonblock(true)))
	step("is nonblock", "true")(flag(pf.IsNonblock(), 0))
	step("poll", "true")(flag(pf.Poll(experimentalsys.POLLIN, 0)))
	step("close", "")(only(f.Close()))
	step("close again", "")(only(f.Close()))
	step("read closed", "EBADF")(count(f.Read(buf)))
	step("write closed", "EBADF")(count(f.Write(buf)))
	step("seek closed", "EBADF")(offset(f.Seek(0, io.SeekStart)))
	step("stat closed", "EBADF")(size(f.Stat()))
	step("sync closed", "EBADF")(only(f.Sync()))
	step("poll closed", "EBADF")(flag(pf.Poll(experimentalsys.POLLIN, 0)))

	if b, _ := os.ReadFile(filepath.Join(fx.mount, "new.txt")); string(b) != "hello" {
		t.Errorf("file holds %q, want %q", b, "hello")
	}
}

// TestAccessMode pairs each read or write with a file open for it and one
// that is not.
func TestAccessMode(t *testing.T) {
	s := newFixture(t).open(t, false)
	buf := make([]byte, 8)
	tests := []struct {
		name string
		flag experimentalsys.Oflag
		op   func(experimentalsys.File) experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"read read-only", rdonly, func(f experimentalsys.File) experimentalsys.Errno { _, e := f.Read(buf); return e }, 0},
		{"read write-only", wronly, func(f experimentalsys.File) experimentalsys.Errno { _, e := f.Read(buf); return e }, experimentalsys.EBADF},
		{"write write-only", wronly, func(f experimentalsys.File) experimentalsys.Errno { _, e := f.Write(buf); return e }, 0},
		{"write read-only", rdonly, func(f experimentalsys.File) experimentalsys.Errno { _, e := f.Write(buf); return e }, experimentalsys.EBADF},
		{"pwrite read-only", rdonly, func(f experimentalsys.File) experimentalsys.Errno { _, e := f.Pwrite(buf, 0); return e }, experimentalsys.EBADF},
		{"truncate read-only", rdonly, func(f experimentalsys.File) experimentalsys.Errno { return f.Truncate(0) }, experimentalsys.EBADF},
		{"truncate read-write", rdwr, func(f experimentalsys.File) experimentalsys.Errno { return f.Truncate(0) }, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, errno := s.OpenFile("dir/inner.txt", tc.flag, 0)
			if errno != 0 {
				t.Fatal(errnoName(errno))
			}
			defer f.Close()
			if got := tc.op(f); got != tc.want {
				t.Errorf("got %s, want %s", errnoName(got), errnoName(tc.want))
			}
		})
	}
}

// TestAppend checks append mode, switching it on an open file, and that the
// switch only reopens the file it started with.
func TestAppend(t *testing.T) {
	fx := newFixture(t)
	s := fx.open(t, false)
	f, errno := s.OpenFile("hello.txt", wronly|oAppend, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	defer f.Close()
	var got []string
	record := func(errno experimentalsys.Errno) {
		b, _ := os.ReadFile(filepath.Join(fx.mount, "hello.txt"))
		got = append(got, errnoName(errno)+" "+strconv.FormatBool(f.IsAppend())+" "+string(b))
	}
	_, errno = f.Write([]byte("!"))
	record(errno)
	_, errno = f.Pwrite([]byte("H"), 0)
	record(errno)
	record(f.SetAppend(false))
	_, errno = f.Pwrite([]byte("H"), 0)
	record(errno)
	record(f.SetAppend(true))
	_, errno = f.Write([]byte("?"))
	record(errno)
	// Replace the file under its name: reopening must not pick up the new one.
	if err := os.Rename(filepath.Join(fx.mount, "hello.txt"), filepath.Join(fx.mount, "old.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fx.mount, "hello.txt"), []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	record(f.SetAppend(false))
	want := []string{
		"ok true hello!",
		"ENOTSUP true hello!",
		"ok false hello!",
		"ok false Hello!",
		"ok true Hello!",
		"ok true Hello!?",
		"ENOENT true other",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestReaddir lists directories the way wazero's fd_readdir does: in pages,
// rewinding with Seek(0, io.SeekStart).
func TestReaddir(t *testing.T) {
	fx := newFixture(t)
	s := fx.open(t, true)
	d, errno := s.OpenFile(".", rdonly, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	defer d.Close()

	readAll := func(n int) []string {
		t.Helper()
		var names []string
		for {
			dirents, errno := d.Readdir(n)
			if errno != 0 {
				t.Fatal(errnoName(errno))
			}
			for _, e := range dirents {
				if e.Ino == 0 {
					t.Errorf("%s: no inode", e.Name)
				}
				names = append(names, e.Name+" "+e.Type.String())
			}
			if n <= 0 || len(dirents) < n {
				slices.Sort(names)
				return names
			}
		}
	}
	want := []string{
		"abs L---------",
		"dangling L---------",
		"dir d---------",
		"empty d---------",
		"hello.txt ----------",
		"inside L---------",
		"up L---------",
	}
	if diff := cmp.Diff(want, readAll(-1)); diff != "" {
		t.Errorf("all at once (-want +got):\n%s", diff)
	}
	if dirents, errno := d.Readdir(-1); errno != 0 || len(dirents) != 0 {
		t.Errorf("after the end: got %d entries, %s; want none", len(dirents), errnoName(errno))
	}
	if _, errno := d.Seek(0, io.SeekStart); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if diff := cmp.Diff(want, readAll(2)); diff != "" {
		t.Errorf("in pages of two (-want +got):\n%s", diff)
	}

	// A rewind sees files created since the directory was opened.
	if err := os.WriteFile(filepath.Join(fx.mount, "later.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errno := d.Seek(0, io.SeekStart); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if got := readAll(3); !slices.Contains(got, "later.txt ----------") {
		t.Errorf("after rewind: %q lacks later.txt", got)
	}

	misuse := []struct {
		name string
		op   func() experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"read a directory", func() experimentalsys.Errno { _, e := d.Read(make([]byte, 1)); return e }, experimentalsys.EISDIR},
		{"pread a directory", func() experimentalsys.Errno { _, e := d.Pread(make([]byte, 1), 0); return e }, experimentalsys.EISDIR},
		{"seek a directory elsewhere", func() experimentalsys.Errno { _, e := d.Seek(1, io.SeekStart); return e }, experimentalsys.EISDIR},
		{"append to a directory", func() experimentalsys.Errno { return d.SetAppend(true) }, experimentalsys.EISDIR},
		{"readdir a file", func() experimentalsys.Errno {
			f, errno := s.OpenFile("hello.txt", rdonly, 0)
			if errno != 0 {
				return errno
			}
			defer f.Close()
			_, errno = f.Readdir(-1)
			return errno
		}, experimentalsys.EBADF},
	}
	for _, tc := range misuse {
		if got := tc.op(); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, errnoName(got), errnoName(tc.want))
		}
	}
}

// TestOpenFlags covers the flags FS.OpenFile handles itself.
func TestOpenFlags(t *testing.T) {
	fx := newFixture(t)
	s := fx.open(t, false)
	tests := []struct {
		name string
		path string
		flag experimentalsys.Oflag
		want experimentalsys.Errno
	}{
		{"directory on a directory", "dir", rdonly | oDir, 0},
		{"directory on a file", "hello.txt", rdonly | oDir, experimentalsys.ENOTDIR},
		{"directory for writing", "dir", rdwr | oDir, experimentalsys.EISDIR},
		{"directory truncating a file", "hello.txt", rdonly | oDir | oTrunc, experimentalsys.EISDIR},
		{"write a directory", "dir", wronly, experimentalsys.EISDIR},
		{"follow a link", "inside", rdonly, 0},
		{"no-follow a file", "hello.txt", rdonly | oNoFollow, 0},
		{"no-follow a link", "inside", rdonly | oNoFollow, experimentalsys.ELOOP},
		{"create exclusive anew", "fresh.txt", wronly | oCreat | oExcl, 0},
		{"create exclusive existing", "hello.txt", wronly | oCreat | oExcl, experimentalsys.EEXIST},
		{"create exclusive no-follow over a link", "inside", wronly | oCreat | oExcl | oNoFollow, experimentalsys.EEXIST},
		{"trailing slash on a directory", "dir/", rdonly, 0},
		{"trailing slash on a file", "hello.txt/", rdonly, experimentalsys.ENOTDIR},
		{"missing", "missing.txt", rdonly, experimentalsys.ENOENT},
		{"both access modes", "hello.txt", rdwr | wronly, experimentalsys.EINVAL},
		{"nul byte", "hello.txt\x00", rdonly, experimentalsys.EINVAL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, got := s.OpenFile(tc.path, tc.flag, 0o644)
			if got == 0 {
				f.Close()
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", errnoName(got), errnoName(tc.want))
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(fx.mount, "hello.txt")); string(b) != "hello" {
		t.Errorf("hello.txt holds %q after the flag tests", b)
	}
}

// TestPermissions checks that a guest can set permission bits but not
// setuid, setgid or sticky.
func TestPermissions(t *testing.T) {
	fx := newFixture(t)
	s := fx.open(t, false)
	special := fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky
	f, errno := s.OpenFile("created", wronly|oCreat, special|0o750)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	f.Close()
	if errno := s.Chmod("hello.txt", special|0o700); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if errno := s.Mkdir("made", special|0o750); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	for _, name := range []string{"created", "hello.txt", "made"} {
		st, errno := s.Stat(name)
		if errno != 0 {
			t.Fatal(errnoName(errno))
		}
		if st.Mode&special != 0 {
			t.Errorf("%s: mode %v has special bits", name, st.Mode)
		}
	}
	if st, _ := s.Stat("hello.txt"); st.Mode.Perm() != 0o700 {
		t.Errorf("hello.txt: mode %v, want -rwx------", st.Mode)
	}
}

// TestErrnos checks the errors that wazero's DirFS adjusts.
func TestErrnos(t *testing.T) {
	s := newFixture(t).open(t, false)
	tests := []struct {
		name string
		op   func() experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"mkdir existing", func() experimentalsys.Errno { return s.Mkdir("dir", 0o755) }, experimentalsys.EEXIST},
		{"mkdir missing parent", func() experimentalsys.Errno { return s.Mkdir("nope/d", 0o755) }, experimentalsys.ENOENT},
		{"mkdir under a file", func() experimentalsys.Errno { return s.Mkdir("hello.txt/d", 0o755) }, experimentalsys.ENOENT},
		{"rmdir a file", func() experimentalsys.Errno { return s.Rmdir("hello.txt") }, experimentalsys.ENOTDIR},
		{"rmdir a link", func() experimentalsys.Errno { return s.Rmdir("up") }, experimentalsys.ENOTDIR},
		{"rmdir non-empty", func() experimentalsys.Errno { return s.Rmdir("dir") }, experimentalsys.ENOTEMPTY},
		{"rmdir missing", func() experimentalsys.Errno { return s.Rmdir("nope") }, experimentalsys.ENOENT},
		{"unlink a directory", func() experimentalsys.Errno { return s.Unlink("empty") }, experimentalsys.EISDIR},
		{"unlink missing", func() experimentalsys.Errno { return s.Unlink("nope") }, experimentalsys.ENOENT},
		{"rename onto itself", func() experimentalsys.Errno { return s.Rename("hello.txt", "hello.txt") }, 0},
		{"rename missing", func() experimentalsys.Errno { return s.Rename("nope", "x") }, experimentalsys.ENOENT},
		{"rename a file onto a directory", func() experimentalsys.Errno { return s.Rename("hello.txt", "empty") }, experimentalsys.EISDIR},
		{"rename a directory onto a file", func() experimentalsys.Errno { return s.Rename("empty", "hello.txt") }, experimentalsys.ENOTDIR},
		{"rename a directory onto an empty one", func() experimentalsys.Errno {
			if errno := s.Mkdir("empty2", 0o755); errno != 0 {
				return errno
			}
			return s.Rename("empty2", "empty")
		}, experimentalsys.EEXIST},
		{"utimens omitting both", func() experimentalsys.Errno {
			return s.Utimens("hello.txt", experimentalsys.UTIME_OMIT, experimentalsys.UTIME_OMIT)
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.op(); got != tc.want {
				t.Errorf("got %s, want %s", errnoName(got), errnoName(tc.want))
			}
		})
	}
}

// TestClose checks that open files outlive their FS and path operations fail
// with EBADF.
func TestClose(t *testing.T) {
	fx := newFixture(t)
	s, err := New(fx.mount, false)
	if err != nil {
		t.Fatal(err)
	}
	f, errno := s.OpenFile("hello.txt", rdonly, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	defer f.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if n, errno := f.Read(buf); errno != 0 || string(buf[:n]) != "hello" {
		t.Errorf("read after closing the FS: %q, %s", buf[:n], errnoName(errno))
	}
	if _, errno := s.OpenFile("hello.txt", rdonly, 0); errno != experimentalsys.EBADF {
		t.Errorf("open after close: got %s, want EBADF", errnoName(errno))
	}
	if _, errno := s.Stat("hello.txt"); errno != experimentalsys.EBADF {
		t.Errorf("stat after close: got %s, want EBADF", errnoName(errno))
	}
}

func TestNew(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(filepath.Join(dir, "missing"), false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: got %v, want fs.ErrNotExist", err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(file, false); err == nil {
		t.Error("a file as mount: got no error")
	}
	s, err := New(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.escapeErr == nil {
		t.Error("New did not learn os.Root's escape error")
	}
}

func mode(readOnly bool) string {
	if readOnly {
		return "ro"
	}
	return "rw"
}
