//go:build linux

package sandboxfs

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// TestSpecialFiles checks that a FIFO the host left in a mount can be stat'ed
// but not opened, and that trying does not block.
func TestSpecialFiles(t *testing.T) {
	fx := newFixture(t)
	if err := syscall.Mkfifo(filepath.Join(fx.mount, "fifo"), 0o644); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	s := fx.open(t, false)
	if st, errno := s.Stat("fifo"); errno != 0 || st.Mode.Type() != fs.ModeNamedPipe {
		t.Errorf("stat: got mode %v, %s; want a named pipe", st.Mode, errnoName(errno))
	}
	for _, flag := range []experimentalsys.Oflag{experimentalsys.O_RDONLY, experimentalsys.O_WRONLY, experimentalsys.O_RDWR} {
		done := make(chan experimentalsys.Errno, 1)
		go func() {
			f, errno := s.OpenFile("fifo", flag, 0)
			if errno == 0 {
				f.Close()
			}
			done <- errno
		}()
		select {
		case errno := <-done:
			if errno != experimentalsys.EACCES {
				t.Errorf("open with flag %d: got %s, want EACCES", flag, errnoName(errno))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("open with flag %d blocked", flag)
		}
	}
	if _, errno := readFile(s, "hello.txt"); errno != 0 {
		t.Errorf("regular file beside it: %s", errnoName(errno))
	}
}
