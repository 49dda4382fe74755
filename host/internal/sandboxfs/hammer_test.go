package sandboxfs

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// TestHammer shares one FS between goroutines, as module instances share a
// mount, each opening, reading, writing, listing and renaming at once, with
// escapes mixed in. Run it with -race.
func TestHammer(t *testing.T) {
	fx := newFixture(t)
	s := fx.open(t, false)
	goroutines, iterations := 4*runtime.GOMAXPROCS(0), 100
	if testing.Short() {
		iterations = 10
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			name := fmt.Sprintf("g%d.txt", g)
			payload := []byte(name)
			for i := range iterations {
				if got, errno := readFile(s, "hello.txt"); errno != 0 || got != "hello" {
					t.Errorf("goroutine %d: read shared file: %q, %s", g, got, errnoName(errno))
					return
				}
				if got, errno := readFile(s, "dir/back"); errno != 0 || got != "hello" {
					t.Errorf("goroutine %d: read through link: %q, %s", g, got, errnoName(errno))
					return
				}
				if _, errno := readFile(s, "up/secret.txt"); errno != experimentalsys.EPERM {
					t.Errorf("goroutine %d: escape: got %s, want EPERM", g, errnoName(errno))
					return
				}
				f, errno := s.OpenFile(name, experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_TRUNC, 0o644)
				if errno != 0 {
					t.Errorf("goroutine %d: create: %s", g, errnoName(errno))
					return
				}
				_, werr := f.Write(payload)
				buf := make([]byte, len(payload))
				n, rerr := f.Pread(buf, 0)
				f.Close()
				if werr != 0 || rerr != 0 || string(buf[:n]) != name {
					t.Errorf("goroutine %d: write then read back: %q, %s, %s", g, buf[:n], errnoName(werr), errnoName(rerr))
					return
				}
				if errno := s.Rename(name, name+".tmp"); errno != 0 {
					t.Errorf("goroutine %d: rename: %s", g, errnoName(errno))
					return
				}
				if errno := s.Rename(name+".tmp", name); errno != 0 {
					t.Errorf("goroutine %d: rename back: %s", g, errnoName(errno))
					return
				}
				if i%10 == 0 {
					d, errno := s.OpenFile(".", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
					if errno != 0 {
						t.Errorf("goroutine %d: open root: %s", g, errnoName(errno))
						return
					}
					_, errno = d.Readdir(-1)
					d.Close()
					if errno != 0 {
						t.Errorf("goroutine %d: readdir: %s", g, errnoName(errno))
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for g := range goroutines {
		name := fmt.Sprintf("g%d.txt", g)
		if got, errno := readFile(s, name); errno != 0 || got != name {
			t.Errorf("%s holds %q, %s", name, got, errnoName(errno))
		}
	}
}
