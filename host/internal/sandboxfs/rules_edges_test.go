package sandboxfs

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// The edges of the mounts' rules, each found by `make mutate` as a change
// no test noticed.

// Every operation that takes a path refuses one that leaves the mount by
// itself, with EPERM, on writable and read-only mounts alike; a read-only
// mount refuses every change inside it with EROFS.
func TestEveryOperationRefusesEscapes(t *testing.T) {
	now := time.Now().UnixNano()
	ops := map[string]func(s *FS, p string) experimentalsys.Errno{
		"open": func(s *FS, p string) experimentalsys.Errno {
			f, errno := s.OpenFile(p, rdonly, 0)
			if errno == 0 {
				f.Close()
			}
			return errno
		},
		"lstat":       func(s *FS, p string) experimentalsys.Errno { _, errno := s.Lstat(p); return errno },
		"stat":        func(s *FS, p string) experimentalsys.Errno { _, errno := s.Stat(p); return errno },
		"readlink":    func(s *FS, p string) experimentalsys.Errno { _, errno := s.Readlink(p); return errno },
		"mkdir":       func(s *FS, p string) experimentalsys.Errno { return s.Mkdir(p, 0o755) },
		"chmod":       func(s *FS, p string) experimentalsys.Errno { return s.Chmod(p, 0o600) },
		"rename from": func(s *FS, p string) experimentalsys.Errno { return s.Rename(p, "moved.txt") },
		"rename to":   func(s *FS, p string) experimentalsys.Errno { return s.Rename("hello.txt", p) },
		"rmdir":       func(s *FS, p string) experimentalsys.Errno { return s.Rmdir(p) },
		"unlink":      func(s *FS, p string) experimentalsys.Errno { return s.Unlink(p) },
		"utimens":     func(s *FS, p string) experimentalsys.Errno { return s.Utimens(p, now, now) },
	}
	for _, readOnly := range []bool{false, true} {
		fx := newFixture(t)
		s := fx.open(t, readOnly)
		before, inside := snapshot(t, fx.outside), snapshot(t, fx.mount)
		for name, op := range ops {
			want := experimentalsys.EPERM
			if readOnly && name == "rename to" {
				want = experimentalsys.EROFS // of the source, checked first
			}
			for _, p := range []string{"../outside/secret.txt", "../outside", "..", "/etc/passwd"} {
				if errno := op(s, p); errno != want {
					t.Errorf("read-only %v: %s %q = %s, want %s", readOnly, name, p, errnoName(errno), errnoName(want))
				}
			}
		}
		if diff := cmp.Diff(before, snapshot(t, fx.outside)); diff != "" {
			t.Errorf("read-only %v: the outside changed (-want +got):\n%s", readOnly, diff)
		}
		if diff := cmp.Diff(inside, snapshot(t, fx.mount)); diff != "" {
			t.Errorf("read-only %v: the mount changed (-want +got):\n%s", readOnly, diff)
		}
	}
	ro := newFixture(t).open(t, true)
	for _, tc := range []struct {
		name string
		op   func() experimentalsys.Errno
	}{
		{"rename", func() experimentalsys.Errno { return ro.Rename("hello.txt", "moved.txt") }},
		{"rename to itself", func() experimentalsys.Errno { return ro.Rename("hello.txt", "hello.txt") }},
		{"unlink", func() experimentalsys.Errno { return ro.Unlink("hello.txt") }},
		{"mkdir", func() experimentalsys.Errno { return ro.Mkdir("d", 0o755) }},
	} {
		if errno := tc.op(); errno != experimentalsys.EROFS {
			t.Errorf("read-only %s = %s, want EROFS", tc.name, errnoName(errno))
		}
	}
	s := newFixture(t).open(t, false)
	for _, p := range []string{"missing", "dir/missing"} {
		if _, errno := s.Lstat(p); errno != experimentalsys.ENOENT {
			t.Errorf("lstat %q = %s, want ENOENT", p, errnoName(errno))
		}
	}
}

// Only wazero's own open of a mount's root (".", read-only, mode 0, the
// first) goes uncounted: an open of the root with another mode or flags,
// or of another folder, takes a slot even when it comes first.
func TestBudgetOnlyThePreopenGoesUncounted(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    string
		flag experimentalsys.Oflag
		perm os.FileMode
	}{
		{"the root with a mode", ".", rdonly, 0o700},
		{"the root as a directory", ".", rdonly | oDir, 0},
		{"another folder", "dir", rdonly, 0},
	} {
		b := NewBudget(0, 1)
		s := newFixture(t).openBudget(t, false, b)
		first, errno := s.OpenFile(tc.p, tc.flag, tc.perm)
		if errno != 0 {
			t.Fatalf("%s: %s", tc.name, errnoName(errno))
		}
		if _, errno := s.OpenFile("hello.txt", rdonly, 0); errno != EMFILE {
			t.Errorf("%s first: the next open = %s, want EMFILE", tc.name, errnoName(errno))
		}
		first.Close()
	}
}

// Opening a file that does not exist, without O_CREAT, is charged nothing:
// at a full quota it fails with ENOENT, not EDQUOT.
func TestOpenWithoutCreateIsNotCharged(t *testing.T) {
	b := NewBudget(1, 0)
	s := newFixture(t).openBudget(t, false, b)
	for _, flag := range []experimentalsys.Oflag{rdonly, wronly, rdwr | oTrunc} {
		if _, errno := s.OpenFile("missing.txt", flag, 0o644); errno != experimentalsys.ENOENT {
			t.Errorf("open of a missing file with flags %#x = %s, want ENOENT", flag, errnoName(errno))
		}
	}
	if b.Written() != 0 || b.QuotaHit() {
		t.Errorf("written %d, quota hit %v; want nothing charged", b.Written(), b.QuotaHit())
	}
}

// SetAppend reopens a writable file on the same file, at the same offset:
// switching append on makes the next write go to the end wherever the
// offset is, and off keeps the offset. It refuses a closed file and a
// folder, and does not reopen a read-only file or a file whose mode does
// not change, so neither notices the name now naming another file.
func TestSetAppendEdges(t *testing.T) {
	fx := newFixture(t)
	s := fx.open(t, false)
	f, errno := s.OpenFile("hello.txt", wronly, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	content := func() string {
		b, err := os.ReadFile(filepath.Join(fx.mount, "hello.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	seek := func(off int64) {
		if _, errno := f.Seek(off, io.SeekStart); errno != 0 {
			t.Fatalf("seek: %s", errnoName(errno))
		}
	}
	write := func(s string) {
		if _, errno := f.Write([]byte(s)); errno != 0 {
			t.Fatalf("write %q: %s", s, errnoName(errno))
		}
	}
	seek(1)
	if errno := f.SetAppend(true); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	write("X")
	if got := content(); got != "helloX" {
		t.Errorf("append after seeking to 1: %q, want helloX", got)
	}
	seek(1)
	for _, on := range []bool{false, true, false} {
		if errno := f.SetAppend(on); errno != 0 {
			t.Fatal(errnoName(errno))
		}
	}
	write("Y")
	if got := content(); got != "hYlloX" {
		t.Errorf("write at 1 after switching append on and off: %q, want hYlloX", got)
	}
	// The name now names another file: a call that changes nothing
	// succeeds without reopening.
	if err := os.Rename(filepath.Join(fx.mount, "hello.txt"), filepath.Join(fx.mount, "old.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fx.mount, "hello.txt"), []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	if errno := f.SetAppend(false); errno != 0 || f.IsAppend() {
		t.Errorf("SetAppend to the mode the file has: %s, append %v", errnoName(errno), f.IsAppend())
	}
	// A file removed since it was opened cannot be reopened; the open
	// one stays usable.
	g, errno := s.OpenFile("dir/inner.txt", wronly, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	defer g.Close()
	if err := os.Remove(filepath.Join(fx.mount, "dir", "inner.txt")); err != nil {
		t.Fatal(err)
	}
	if errno := g.SetAppend(true); errno != experimentalsys.ENOENT || g.IsAppend() {
		t.Errorf("SetAppend of a removed file: %s, append %v; want ENOENT", errnoName(errno), g.IsAppend())
	}
	if _, errno := g.Write([]byte("still")); errno != 0 {
		t.Errorf("writing the open file after the refused reopen: %s", errnoName(errno))
	}
	// A read-only file takes the mode without a reopen, and still writes
	// nothing.
	r, errno := s.OpenFile("hello.txt", rdonly, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	defer r.Close()
	if err := os.Remove(filepath.Join(fx.mount, "hello.txt")); err != nil {
		t.Fatal(err)
	}
	if errno := r.SetAppend(true); errno != 0 || !r.IsAppend() {
		t.Errorf("SetAppend of a read-only file: %s, append %v; want ok, true", errnoName(errno), r.IsAppend())
	}
	if _, errno := r.Write([]byte("x")); errno != experimentalsys.EBADF {
		t.Errorf("writing a read-only file in append mode: %s, want EBADF", errnoName(errno))
	}
	// A folder and a closed file are refused.
	d, errno := s.OpenFile("dir", rdonly|oDir, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if errno := d.SetAppend(true); errno != experimentalsys.EISDIR {
		t.Errorf("SetAppend of a folder: %s, want EISDIR", errnoName(errno))
	}
	d.Close()
	f.Close()
	if errno := f.SetAppend(true); errno != experimentalsys.EBADF {
		t.Errorf("SetAppend of a closed file: %s, want EBADF", errnoName(errno))
	}
}

// bigOffset is past the largest file the test folder's file system holds
// (ext4's 16 TiB), so that a write there fails with nothing written.
const bigOffset = 1 << 44

// A write or truncation the file system refuses is charged nothing: what
// was charged for it, the gap up to its offset included, is given back.
func TestBudgetFailedWritesAreGivenBack(t *testing.T) {
	fx := newFixture(t)
	b := NewBudget(0, 0) // no cap; the count is kept
	s := fx.openBudget(t, false, b)
	f, errno := s.OpenFile("hello.txt", rdwr, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	defer f.Close()
	if n, errno := f.Pwrite([]byte("ab"), bigOffset); n != 0 {
		t.Skipf("this file system wrote %d bytes at %d; the test needs one that refuses", n, int64(bigOffset))
	} else if errno == 0 {
		t.Error("a refused pwrite reported no error")
	}
	if got := b.Written(); got != 0 {
		t.Errorf("after a refused pwrite: Written() = %d, want 0", got)
	}
	if errno := f.Truncate(bigOffset); errno == 0 {
		t.Error("a truncation past the file system's largest file succeeded")
	}
	if got := b.Written(); got != 0 {
		t.Errorf("after a refused truncation: Written() = %d, want 0", got)
	}
	// A write that ends past the largest file writes what fits (a sparse
	// file up to it) and is charged that, and the gap before it. The
	// largest offset a seek takes is the largest file's size.
	lo, hi := int64(0), int64(bigOffset)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if _, errno := f.Seek(mid, io.SeekStart); errno == 0 {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if _, errno := f.Seek(lo-1, io.SeekStart); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	n, errno := f.Write([]byte("ab"))
	if n == 2 {
		t.Skip("this file system wrote both bytes")
	}
	if errno == 0 {
		t.Error("a short write reported no error")
	}
	if want := lo - 1 - int64(len("hello")) + int64(n); b.Written() != want {
		t.Errorf("after a write of %d of 2 bytes at %d: Written() = %d, want %d", n, lo-1, b.Written(), want)
	}
}

// An empty write is charged nothing, wherever the offset is; a write in
// append mode is charged no gap, since it goes to the end.
func TestBudgetEmptyAndAppendWrites(t *testing.T) {
	fx := newFixture(t)
	b := NewBudget(0, 0)
	s := fx.openBudget(t, false, b)
	f, errno := s.OpenFile("hello.txt", rdwr, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	defer f.Close()
	if _, errno := f.Seek(1000, io.SeekStart); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if n, errno := f.Write(nil); n != 0 || errno != 0 {
		t.Errorf("an empty write: %d, %s", n, errnoName(errno))
	}
	if n, errno := f.Pwrite(nil, 2000); n != 0 || errno != 0 {
		t.Errorf("an empty pwrite: %d, %s", n, errnoName(errno))
	}
	if got := b.Written(); got != 0 {
		t.Errorf("after empty writes: Written() = %d, want 0", got)
	}
	if errno := f.SetAppend(true); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if _, errno := f.Seek(1000, io.SeekStart); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if _, errno := f.Write([]byte("!")); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if got := b.Written(); got != 1 {
		t.Errorf("an append write with the offset past the end: Written() = %d, want 1", got)
	}
	if size := fileSize(t, fx, "hello.txt"); size != int64(len("hello!")) {
		t.Errorf("the file holds %d bytes, want %d", size, len("hello!"))
	}
}

// A closed file refuses everything with EBADF, its times included; the
// times of a file whose name now names another, or nothing, are not set.
func TestClosedAndReplacedFiles(t *testing.T) {
	fx := newFixture(t)
	s := fx.open(t, false)
	f, errno := s.OpenFile("hello.txt", rdwr, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	f.Close()
	now := time.Now().UnixNano()
	for name, errno := range map[string]experimentalsys.Errno{
		"read":     func() experimentalsys.Errno { _, e := f.Read(make([]byte, 1)); return e }(),
		"pread":    func() experimentalsys.Errno { _, e := f.Pread(make([]byte, 1), 0); return e }(),
		"write":    func() experimentalsys.Errno { _, e := f.Write([]byte("x")); return e }(),
		"pwrite":   func() experimentalsys.Errno { _, e := f.Pwrite([]byte("x"), 0); return e }(),
		"truncate": f.Truncate(0),
		"utimens":  f.Utimens(now, now),
		"stat":     func() experimentalsys.Errno { _, e := f.Stat(); return e }(),
	} {
		if errno != experimentalsys.EBADF {
			t.Errorf("%s of a closed file: %s, want EBADF", name, errnoName(errno))
		}
	}
	if got, err := os.ReadFile(filepath.Join(fx.mount, "hello.txt")); err != nil || string(got) != "hello" {
		t.Errorf("the closed file was changed: %q, %v", got, err)
	}

	g, errno := s.OpenFile("hello.txt", rdwr, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	defer g.Close()
	if err := os.Rename(filepath.Join(fx.mount, "hello.txt"), filepath.Join(fx.mount, "old.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fx.mount, "hello.txt"), []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if errno := g.Utimens(past.UnixNano(), past.UnixNano()); errno != experimentalsys.ENOENT {
		t.Errorf("utimens of a file replaced under its name: %s, want ENOENT", errnoName(errno))
	}
	if info, err := os.Stat(filepath.Join(fx.mount, "hello.txt")); err != nil || info.ModTime().Equal(past) {
		t.Errorf("the file now under the name got the times: %v, %v", info, err)
	}
	if err := os.Remove(filepath.Join(fx.mount, "hello.txt")); err != nil {
		t.Fatal(err)
	}
	if errno := g.Utimens(past.UnixNano(), past.UnixNano()); errno != experimentalsys.ENOENT {
		t.Errorf("utimens of a file removed: %s, want ENOENT", errnoName(errno))
	}
}

// Opening a file as a folder for writing is refused as a folder would be,
// before it is opened.
func TestOpenFileAsAFolderForWriting(t *testing.T) {
	s := newFixture(t).open(t, false)
	for _, flag := range []experimentalsys.Oflag{wronly | oDir, rdwr | oDir} {
		if _, errno := s.OpenFile("hello.txt", flag, 0); errno != experimentalsys.EISDIR {
			t.Errorf("open hello.txt with flags %#x: %s, want EISDIR", flag, errnoName(errno))
		}
	}
}

// The budget's own contract: charging or giving back nothing, or less
// than nothing, changes nothing.
func TestBudgetChargesNothingForNothing(t *testing.T) {
	b := NewBudget(100, 0)
	if errno := b.chargeWrite(10); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	for _, n := range []int64{0, -5, math.MinInt64} {
		if errno := b.chargeWrite(n); errno != 0 || b.Written() != 10 {
			t.Errorf("charging %d: %s, Written() = %d; want ok, 10", n, errnoName(errno), b.Written())
		}
		b.refundWrite(n)
		if b.Written() != 10 {
			t.Errorf("giving back %d: Written() = %d, want 10", n, b.Written())
		}
	}
}
