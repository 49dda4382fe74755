package sandboxfs

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// FuzzNeverEscapes throws guest paths at every path operation of a read-write
// FS and checks that whatever succeeds stayed inside the mount: an opened or
// stat'ed file is one the mount holds, nothing outside changes, and Readlink
// discloses no target that leaves the mount.
func FuzzNeverEscapes(f *testing.F) {
	for _, p := range []string{
		"", ".", "/", "..", "../", "./..", "hello.txt", "dir/inner.txt", "dir/",
		"../outside/secret.txt", "dir/../../outside/secret.txt", "dir/../hello.txt",
		"/etc/passwd", "//etc/passwd", "/../outside", "abs", "abs/secret.txt",
		"abs/../mount/hello.txt", "up", "up/secret.txt", "up/../outside/secret.txt",
		"dir/upup", "dir/back", "inside", "dangling", "dir/back/../..",
		"hello.txt\x00", "dir//../..//outside", strings.Repeat("../", 40) + "etc/passwd",
		strings.Repeat("dir/../", 300) + "hello.txt", `..\outside\secret.txt`,
	} {
		for op := range uint8(numOps) {
			f.Add(p, op)
		}
	}
	f.Fuzz(func(t *testing.T, p string, op uint8) {
		fx := newFixture(t)
		s := fx.open(t, false)
		outsideBefore := snapshot(t, fx.outside)

		var opened []experimentalsys.File
		var stats []sys.Stat_t
		switch op % numOps {
		case opOpenRead:
			if f, errno := s.OpenFile(p, experimentalsys.O_RDONLY, 0); errno == 0 {
				opened = append(opened, f)
			}
		case opOpenCreate:
			if f, errno := s.OpenFile(p, experimentalsys.O_RDWR|experimentalsys.O_CREAT, 0o644); errno == 0 {
				_, _ = f.Write([]byte("pwned"))
				opened = append(opened, f)
			}
		case opOpenTrunc:
			if f, errno := s.OpenFile(p, experimentalsys.O_WRONLY|experimentalsys.O_TRUNC, 0); errno == 0 {
				opened = append(opened, f)
			}
		case opStat:
			if st, errno := s.Stat(p); errno == 0 {
				stats = append(stats, st)
			}
		case opLstat:
			if st, errno := s.Lstat(p); errno == 0 {
				stats = append(stats, st)
			}
		case opMkdir:
			_ = s.Mkdir(p, 0o755)
		case opRenameFrom:
			_ = s.Rename(p, "taken")
		case opRenameTo:
			_ = s.Rename("hello.txt", p)
		case opUnlink:
			_ = s.Unlink(p)
		case opRmdir:
			_ = s.Rmdir(p)
		case opChmod:
			_ = s.Chmod(p, 0o777)
		case opUtimens:
			_ = s.Utimens(p, 0, 0)
		case opReadlink:
			// The fixture's only links that stay inside are these.
			if target, errno := s.Readlink(p); errno == 0 && target != "hello.txt" && target != "../hello.txt" {
				t.Errorf("Readlink(%q) = %q, which leaves the mount", p, target)
			}
		}

		inside := inodes(t, fx.mount)
		for _, f := range opened {
			st, errno := f.Stat()
			if errno != 0 {
				t.Fatalf("stat of opened %q: %s", p, errnoName(errno))
			}
			stats = append(stats, st)
			buf := make([]byte, len(secret))
			if n, _ := f.Pread(buf, 0); string(buf[:n]) == secret {
				t.Errorf("opened %q and read the outside secret", p)
			}
			f.Close()
		}
		for _, st := range stats {
			if !inside[[2]uint64{st.Dev, st.Ino}] {
				t.Errorf("op %d on %q reached inode %d, which is not in the mount", op%numOps, p, st.Ino)
			}
		}
		if diff := cmp.Diff(outsideBefore, snapshot(t, fx.outside)); diff != "" {
			t.Errorf("op %d on %q changed the outside directory (-want +got):\n%s", op%numOps, p, diff)
		}
	})
}

const (
	opOpenRead = iota
	opOpenCreate
	opOpenTrunc
	opStat
	opLstat
	opMkdir
	opRenameFrom
	opRenameTo
	opUnlink
	opRmdir
	opChmod
	opUtimens
	opReadlink
	numOps
)

// inodes returns the device and inode of everything under dir, dir included,
// without following links.
func inodes(t *testing.T, dir string) map[[2]uint64]bool {
	t.Helper()
	got := map[[2]uint64]bool{}
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := sys.NewStat_t(info)
		got[[2]uint64{st.Dev, st.Ino}] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}
