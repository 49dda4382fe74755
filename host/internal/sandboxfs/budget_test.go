package sandboxfs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// fileSize returns the size of a file in the fixture's mount, on the host.
func fileSize(t *testing.T, fx fixture, name string) int64 {
	t.Helper()
	info, err := os.Stat(filepath.Join(fx.mount, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// create opens name for writing, creating and truncating it.
func create(t *testing.T, s *FS, name string) experimentalsys.File {
	t.Helper()
	f, errno := s.OpenFile(name, rdwr|oCreat|oTrunc, 0o644)
	if errno != 0 {
		t.Fatalf("create %s: %s", name, errnoName(errno))
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// wantBudget checks the budget's read-outs.
func wantBudget(t *testing.T, b *Budget, written, open int64, hit bool) {
	t.Helper()
	if got := b.Written(); got != written {
		t.Errorf("Written() = %d, want %d", got, written)
	}
	if got := b.OpenFiles(); got != open {
		t.Errorf("OpenFiles() = %d, want %d", got, open)
	}
	if got := b.QuotaHit(); got != hit {
		t.Errorf("QuotaHit() = %v, want %v", got, hit)
	}
}

// A guest writing in a loop far past the quota gets EDQUOT at the quota,
// and nothing past it reaches the disk.
func TestBudgetWriteLoopStopsAtQuota(t *testing.T) {
	const quota = 1 << 20
	for _, mode := range []string{"write", "append", "pwrite"} {
		t.Run(mode, func(t *testing.T) {
			fx := newFixture(t)
			b := NewBudget(quota, 0)
			s := fx.openBudget(t, false, b)
			flag := rdwr | oCreat | oTrunc
			if mode == "append" {
				flag |= oAppend
			}
			f, errno := s.OpenFile("flood", flag, 0o644)
			if errno != 0 {
				t.Fatal(errnoName(errno))
			}
			defer f.Close()
			chunk := make([]byte, 48<<10) // does not divide the quota
			var written int64
			var last experimentalsys.Errno
			for i := 0; i < 1<<16 && last == 0; i++ { // up to 3 GiB
				var n int
				if mode == "pwrite" {
					n, last = f.Pwrite(chunk, written)
				} else {
					n, last = f.Write(chunk)
				}
				written += int64(n)
				if last != 0 && n != 0 {
					t.Fatalf("a refused write wrote %d bytes", n)
				}
			}
			if last != EDQUOT {
				t.Fatalf("the write loop ended with %s after %d bytes, want EDQUOT", errnoName(last), written)
			}
			want := (quota - CreateCharge) / int64(len(chunk)) * int64(len(chunk))
			if written != want {
				t.Errorf("wrote %d bytes before EDQUOT, want %d (every whole chunk that fits)", written, want)
			}
			if size := fileSize(t, fx, "flood"); size != written {
				t.Errorf("the host file holds %d bytes, want %d", size, written)
			}
			wantBudget(t, b, written+CreateCharge, 1, true)
			if got := b.TakeRefusal(); got != EDQUOT {
				t.Errorf("TakeRefusal() = %s, want EDQUOT", errnoName(got))
			}
			if got := b.TakeRefusal(); got != 0 {
				t.Errorf("second TakeRefusal() = %s, want ok", errnoName(got))
			}
			// What still fits is still written.
			room := quota - b.Written()
			if n, errno := f.Write(make([]byte, room)); errno != 0 || int64(n) != room {
				t.Errorf("writing the last %d bytes: %d, %s", room, n, errnoName(errno))
			}
			if n, errno := f.Write([]byte{1}); errno != EDQUOT || n != 0 {
				t.Errorf("writing one byte past the quota: %d, %s; want 0, EDQUOT", n, errnoName(errno))
			}
		})
	}
}

func TestBudgetCountsGrowth(t *testing.T) {
	const quota = 1 << 20
	fx := newFixture(t)
	b := NewBudget(quota, 0)
	s := fx.openBudget(t, false, b)
	f := create(t, s, "sparse")
	charged := int64(CreateCharge)

	// Truncate far past the quota: refused, nothing changes.
	if errno := f.Truncate(100 << 30); errno != EDQUOT {
		t.Errorf("truncate to 100 GiB: %s, want EDQUOT", errnoName(errno))
	}
	if size := fileSize(t, fx, "sparse"); size != 0 {
		t.Errorf("after the refused truncate the file holds %d bytes", size)
	}
	wantBudget(t, b, charged, 1, true)

	// Growth by truncate is charged; shrinking gives nothing back.
	if errno := f.Truncate(1000); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	charged += 1000
	if errno := f.Truncate(10); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if errno := f.Truncate(500); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	charged += 490
	if got := b.Written(); got != charged {
		t.Errorf("after truncates Written() = %d, want %d", got, charged)
	}

	// A write past the end counts the gap.
	if n, errno := f.Pwrite([]byte("x"), 10_500); errno != 0 || n != 1 {
		t.Fatalf("pwrite past the end: %d, %s", n, errnoName(errno))
	}
	charged += 10_000 + 1
	if _, errno := f.Seek(20_500, io.SeekStart); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if n, errno := f.Write([]byte("yy")); errno != 0 || n != 2 {
		t.Fatalf("write after seeking past the end: %d, %s", n, errnoName(errno))
	}
	charged += 9_999 + 2
	// Overwriting inside the file counts the bytes only.
	if n, errno := f.Pwrite([]byte("zzz"), 0); errno != 0 || n != 3 {
		t.Fatalf("overwrite: %d, %s", n, errnoName(errno))
	}
	charged += 3
	if got := b.Written(); got != charged {
		t.Errorf("Written() = %d, want %d", got, charged)
	}

	// A one-byte write far past the end is refused for its gap.
	if n, errno := f.Pwrite([]byte("x"), 10<<30); errno != EDQUOT || n != 0 {
		t.Errorf("pwrite at 10 GiB: %d, %s; want 0, EDQUOT", n, errnoName(errno))
	}
	if _, errno := f.Seek(10<<30, io.SeekStart); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if n, errno := f.Write([]byte("x")); errno != EDQUOT || n != 0 {
		t.Errorf("write at 10 GiB: %d, %s; want 0, EDQUOT", n, errnoName(errno))
	}
	if size := fileSize(t, fx, "sparse"); size != 20_502 {
		t.Errorf("the file holds %d bytes, want 20502", size)
	}
	if got := b.Written(); got != charged {
		t.Errorf("refusals changed Written() to %d, want %d", got, charged)
	}
}

// Creating files and directories costs CreateCharge each: a loop creating
// 100,000 empty files stops at the quota.
func TestBudgetCreateCharge(t *testing.T) {
	const quota = 1 << 20
	fx := newFixture(t)
	b := NewBudget(quota, 0)
	s := fx.openBudget(t, false, b)
	if errno := s.Mkdir("many", 0o755); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	attempts := 100_000
	if testing.Short() {
		attempts = 5_000
	}
	created, refused := 0, 0
	for i := range attempts {
		f, errno := s.OpenFile(fmt.Sprintf("many/%d", i), wronly|oCreat|oExcl, 0o644)
		switch errno {
		case 0:
			f.Close()
			if refused > 0 {
				t.Fatalf("file %d was created after a refusal", i)
			}
			created++
		case EDQUOT:
			refused++
		default:
			t.Fatalf("create %d: %s", i, errnoName(errno))
		}
	}
	if want := quota/CreateCharge - 1; created != want {
		t.Errorf("created %d files, want %d (the directory took one charge)", created, want)
	}
	entries, err := os.ReadDir(filepath.Join(fx.mount, "many"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != created {
		t.Errorf("the host directory holds %d entries, want %d", len(entries), created)
	}
	if errno := s.Mkdir("one-more", 0o755); errno != EDQUOT {
		t.Errorf("mkdir past the quota: %s, want EDQUOT", errnoName(errno))
	}
	if _, err := os.Stat(filepath.Join(fx.mount, "one-more")); err == nil {
		t.Error("the refused mkdir created the directory")
	}
	wantBudget(t, b, quota, 0, true)
}

// Only creation is charged: opening, truncating or renaming an existing
// file is not, and a failed creation is given back.
func TestBudgetChargesOnlyCreation(t *testing.T) {
	fx := newFixture(t)
	b := NewBudget(1<<20, 0)
	s := fx.openBudget(t, false, b)
	steps := []struct {
		name string
		op   func() experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"open existing with O_CREAT", func() experimentalsys.Errno {
			f, errno := s.OpenFile("hello.txt", rdwr|oCreat, 0o644)
			if errno == 0 {
				f.Close()
			}
			return errno
		}, 0},
		{"O_CREAT|O_EXCL of an existing file", func() experimentalsys.Errno {
			_, errno := s.OpenFile("hello.txt", rdwr|oCreat|oExcl, 0o644)
			return errno
		}, experimentalsys.EEXIST},
		{"O_CREAT in a missing directory", func() experimentalsys.Errno {
			_, errno := s.OpenFile("nowhere/new.txt", rdwr|oCreat, 0o644)
			return errno
		}, experimentalsys.ENOENT},
		{"O_CREAT through an escaping link", func() experimentalsys.Errno {
			_, errno := s.OpenFile("dangling", rdwr|oCreat, 0o644)
			return errno
		}, experimentalsys.EPERM},
		{"mkdir of an existing directory", func() experimentalsys.Errno { return s.Mkdir("dir", 0o755) }, experimentalsys.EEXIST},
		{"rename", func() experimentalsys.Errno { return s.Rename("hello.txt", "hello2.txt") }, 0},
		{"symlink", func() experimentalsys.Errno { return s.Symlink("hello2.txt", "l") }, experimentalsys.EPERM},
		{"link", func() experimentalsys.Errno { return s.Link("hello2.txt", "l") }, experimentalsys.EPERM},
		{"truncating open", func() experimentalsys.Errno {
			f, errno := s.OpenFile("hello2.txt", wronly|oTrunc, 0)
			if errno == 0 {
				f.Close()
			}
			return errno
		}, 0},
	}
	for _, st := range steps {
		if errno := st.op(); errno != st.want {
			t.Errorf("%s: %s, want %s", st.name, errnoName(errno), errnoName(st.want))
		}
		if got := b.Written(); got != 0 {
			t.Fatalf("%s charged %d bytes", st.name, got)
		}
	}
	wantBudget(t, b, 0, 0, false)
}

// StartCall resets the write count and keeps the open files.
func TestBudgetStartCall(t *testing.T) {
	const quota = 1 << 20
	fx := newFixture(t)
	b := NewBudget(quota, 0)
	s := fx.openBudget(t, false, b)
	chunk := make([]byte, quota*6/10)
	for call := range 3 {
		b.StartCall(quota, 0)
		f := create(t, s, fmt.Sprintf("call%d", call))
		if n, errno := f.Write(chunk); errno != 0 || n != len(chunk) {
			t.Fatalf("call %d writing 60%% of the quota: %d, %s", call, n, errnoName(errno))
		}
		if n, errno := f.Write(chunk); errno != EDQUOT || n != 0 {
			t.Fatalf("call %d writing another 60%%: %d, %s; want 0, EDQUOT", call, n, errnoName(errno))
		}
		// The file stays open into the next call.
		wantBudget(t, b, int64(len(chunk))+CreateCharge, int64(call+1), true)
	}
	b.StartCall(quota, 0)
	wantBudget(t, b, 0, 3, false)
	if got := b.TakeRefusal(); got != 0 {
		t.Errorf("TakeRefusal() after StartCall = %s, want ok", errnoName(got))
	}
}

// Open files and directories are capped across the mounts sharing a
// budget; Close gives a slot back once.
func TestBudgetOpenFiles(t *testing.T) {
	const limit = 8
	fx1, fx2 := newFixture(t), newFixture(t)
	b := NewBudget(0, limit)
	rw, ro := fx1.openBudget(t, false, b), fx2.openBudget(t, true, b)

	var open []experimentalsys.File
	for i := 0; ; i++ {
		s, name := rw, "hello.txt"
		switch i % 3 {
		case 1:
			s = ro
		case 2:
			name = "dir"
		}
		f, errno := s.OpenFile(name, rdonly, 0)
		if errno == EMFILE {
			break
		}
		if errno != 0 {
			t.Fatal(errnoName(errno))
		}
		open = append(open, f)
		if i > 1000 {
			t.Fatal("no EMFILE after 1000 opens")
		}
	}
	if len(open) != limit {
		t.Errorf("opened %d files before EMFILE, want %d", len(open), limit)
	}
	if got := b.TakeRefusal(); got != EMFILE {
		t.Errorf("TakeRefusal() = %s, want EMFILE", errnoName(got))
	}
	// Refusal comes before creating anything.
	if _, errno := rw.OpenFile("new.txt", rdwr|oCreat, 0o644); errno != EMFILE {
		t.Errorf("create at the cap: %s, want EMFILE", errnoName(errno))
	}
	if _, err := os.Stat(filepath.Join(fx1.mount, "new.txt")); err == nil {
		t.Error("a create refused with EMFILE created the file")
	}
	// Failed opens hold no slot; a double Close gives back one.
	open[0].Close()
	open[0].Close()
	if got := b.OpenFiles(); got != limit-1 {
		t.Errorf("after closing one file twice OpenFiles() = %d, want %d", got, limit-1)
	}
	if _, errno := rw.OpenFile("missing.txt", rdonly, 0); errno != experimentalsys.ENOENT {
		t.Errorf("open missing: %s", errnoName(errno))
	}
	if _, errno := rw.OpenFile("abs/secret.txt", rdonly, 0); errno != experimentalsys.EPERM {
		t.Errorf("open through an escaping link: %s", errnoName(errno))
	}
	f, errno := rw.OpenFile("dir/inner.txt", rdonly, 0)
	if errno != 0 {
		t.Fatalf("open after a close: %s", errnoName(errno))
	}
	open[0] = f
	if _, errno := ro.OpenFile("hello.txt", rdonly, 0); errno != EMFILE {
		t.Errorf("open past the cap: %s, want EMFILE", errnoName(errno))
	}
	for _, f := range open {
		f.Close()
	}
	wantBudget(t, b, 0, 0, false)
}

// wazero's own open of a mount root for the preopen (".", O_RDONLY, mode 0,
// once per FS) takes no slot; the guest's opens of the root do.
func TestBudgetPreopenRootNotCounted(t *testing.T) {
	fx1, fx2 := newFixture(t), newFixture(t)
	b := NewBudget(0, 1)
	s1, s2 := fx1.openBudget(t, false, b), fx2.openBudget(t, true, b)
	root1, errno := s1.OpenFile(".", rdonly, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	root2, errno := s2.OpenFile(".", rdonly, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	wantBudget(t, b, 0, 0, false)
	// The guest's open of the root (wazero passes mode 0o600) counts.
	guestRoot, errno := s1.OpenFile(".", rdonly, 0o600)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	if _, errno := s1.OpenFile(".", rdonly, 0); errno != EMFILE {
		t.Errorf("a second preopen-like open of the root: %s, want EMFILE", errnoName(errno))
	}
	guestRoot.Close()
	root1.Close()
	root2.Close()
	wantBudget(t, b, 0, 0, false)
}

// Read-only mounts are not charged for reading, and keep refusing writes
// as before.
func TestBudgetReadOnlyMount(t *testing.T) {
	fx := newFixture(t)
	b := NewBudget(1, 0)
	s := fx.openBudget(t, true, b)
	for range 3 {
		if got, errno := readFile(s, "hello.txt"); errno != 0 || got != "hello" {
			t.Fatalf("read: %q, %s", got, errnoName(errno))
		}
	}
	if _, errno := s.OpenFile("new.txt", wronly|oCreat, 0o644); errno != experimentalsys.EROFS {
		t.Errorf("create: %s, want EROFS", errnoName(errno))
	}
	if errno := s.Mkdir("d", 0o755); errno != experimentalsys.EROFS {
		t.Errorf("mkdir: %s, want EROFS", errnoName(errno))
	}
	f, errno := s.OpenFile("hello.txt", rdonly, 0)
	if errno != 0 {
		t.Fatal(errnoName(errno))
	}
	defer f.Close()
	if _, errno := f.Write([]byte("x")); errno != experimentalsys.EBADF {
		t.Errorf("write: %s, want EBADF", errnoName(errno))
	}
	if errno := f.Truncate(100 << 30); errno != experimentalsys.EBADF {
		t.Errorf("truncate: %s, want EBADF", errnoName(errno))
	}
	wantBudget(t, b, 0, 1, false)
}

// With no caps the budget counts and refuses nothing; a nil budget meters
// nothing.
func TestBudgetNoCaps(t *testing.T) {
	fx := newFixture(t)
	b := NewBudget(0, 0)
	s := fx.openBudget(t, false, b)
	f := create(t, s, "big")
	if errno := f.Truncate(1 << 30); errno != 0 {
		t.Fatal(errnoName(errno))
	}
	wantBudget(t, b, 1<<30+CreateCharge, 1, false)

	var nilBudget *Budget
	nilBudget.StartCall(1, 1)
	wantBudget(t, nilBudget, 0, 0, false)
	if got := nilBudget.TakeRefusal(); got != 0 {
		t.Errorf("nil TakeRefusal() = %s", errnoName(got))
	}
}

// TestBudgetHammer shares one budget between two mounts and many
// goroutines creating, writing, opening and closing at once: every byte
// charged is accounted for, the quota is never passed and the open-file
// count never passes its cap nor ends above zero. Run it with -race.
func TestBudgetHammer(t *testing.T) {
	const (
		quota  = 4 << 20
		chunk  = 10_000
		rounds = 60
	)
	// Each goroutine holds up to two files at once: half of them can.
	goroutines := 4 * runtime.GOMAXPROCS(0)
	limit := int64(goroutines)
	fx1, fx2 := newFixture(t), newFixture(t)
	b := NewBudget(quota, limit)
	mounts := []*FS{fx1.openBudget(t, false, b), fx2.openBudget(t, false, b)}
	var (
		wg           sync.WaitGroup
		mu           sync.Mutex
		charged      int64 // what successful operations should have charged
		quotaRefused int
		openRefused  int
		maxOpen      int64
	)
	payload := make([]byte, chunk)
	for g := range goroutines {
		wg.Go(func() {
			s := mounts[g%2]
			var mine int64
			var dq, mf int
			note := func() {
				if n := b.OpenFiles(); n > limit {
					t.Errorf("OpenFiles() = %d, above the cap %d", n, limit)
				} else {
					mu.Lock()
					maxOpen = max(maxOpen, n)
					mu.Unlock()
				}
			}
			for i := range rounds {
				f, errno := s.OpenFile(fmt.Sprintf("g%d-%d", g, i), rdwr|oCreat|oExcl, 0o644)
				switch errno {
				case 0:
					mine += CreateCharge
				case EDQUOT:
					dq++
					continue
				case EMFILE:
					mf++
					continue
				default:
					t.Errorf("create: %s", errnoName(errno))
					return
				}
				note()
				var size int64
				for range 3 {
					n, errno := f.Write(payload)
					size += int64(n)
					switch errno {
					case 0:
					case EDQUOT:
						dq++
					default:
						t.Errorf("write: %s", errnoName(errno))
					}
				}
				mine += size
				switch errno := f.Truncate(2 * chunk); errno {
				case 0:
					mine += max(2*chunk-size, 0)
				case EDQUOT:
					dq++
				default:
					t.Errorf("truncate: %s", errnoName(errno))
				}
				if d, errno := s.OpenFile("dir", rdonly|oDir, 0); errno == 0 {
					note()
					d.Close()
					d.Close()
				} else if errno == EMFILE {
					mf++
				} else {
					t.Errorf("open dir: %s", errnoName(errno))
				}
				f.Close()
			}
			mu.Lock()
			charged += mine
			quotaRefused += dq
			openRefused += mf
			mu.Unlock()
		})
	}
	wg.Wait()
	if got := b.Written(); got != charged || got > quota {
		t.Errorf("Written() = %d; the operations that succeeded charged %d; the quota is %d", got, charged, quota)
	}
	if quotaRefused == 0 {
		t.Error("no operation met the quota; raise rounds")
	}
	if maxOpen == 0 {
		t.Error("no file was open at once")
	}
	if got := b.OpenFiles(); got != 0 {
		t.Errorf("OpenFiles() = %d after every file was closed", got)
	}
	t.Logf("%d goroutines: %d bytes charged, %d EDQUOT, %d EMFILE, at most %d open", goroutines, charged, quotaRefused, openRefused, maxOpen)
}
