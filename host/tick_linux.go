//go:build linux

package host

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// tickSupported says whether calls without a fuel limit can run with the
// tick check (see ticker and Config.WithTickCheck).
const tickSupported = true

// tickPeriod is how often the tick flag changes while calls are in
// flight: how late a deadline may be seen with the tick check, and how
// long a garbage collection may wait for a spinning guest. Measured (see
// RATIONALE.md), the timer costs 8.5% of a core at 1 ms, 5% at 2 ms and
// 2.7% at 4 ms.
const tickPeriod = 2 * time.Millisecond

// ticker changes a host's tick flag every tickPeriod while calls that
// check it are in flight, with no Go code involved: a thread (the ticker
// thread below, or a goroutine where there is none) blocked in read(2) on
// a periodic timerfd has the flag's own memory as its buffer,
// so the kernel writes the expiration count (a small number, at least 1)
// into the flag at each expiry, whether or not a processor is free to run
// Go code. Guests stuck in native code, holding every processor or holding
// up a garbage collection that has stopped every other goroutine, see the
// flag change all the same, call the host and reach a preemption point
// there.
//
// When the thread runs again it writes the next generation (a number with
// tickGeneration set) into the flag, in the same step as blocking in the
// next read (the goroutine through rearm, which has no preemption point). A guest compares
// the flag with the value it last saw, and the host function it calls
// makes it see a generation, but never a count (see instance.tick): so
// while a generation stands every guest calls the host once, whenever it
// runs, and while a count stands, from the expiry until the goroutine has
// run again, at every check (at a loop head, again and again: the guest
// waits in the host for the generation). The flag starts at a count. So a guest stops
// calling only while a read is pending: were the goroutine preempted
// between writing a generation and reading, with guests holding every
// processor, nothing would change the flag again.
type ticker struct {
	flag *uint64
	gen  uint64 // the last generation written

	mu      sync.Mutex
	fd      int
	calls   int  // in flight
	armed   bool // the timer runs
	reading bool // the thread or goroutine has started
	closed  bool

	// thread is the ticker thread's page, nil while the ticker runs on a
	// goroutine (see tickThread); disarming is set while a check that
	// stops the idle timer is pending.
	thread    []byte
	disarming bool
	// noThread is set when the thread could not be made.
	noThread atomic.Bool
}

// ownThread reports whether the ticker runs, or is to run, on a thread of
// its own (see tickThread).
func (t *ticker) ownThread() bool { return tickThreadSupported && !t.noThread.Load() }

func newTicker(flag *uint64) (*ticker, error) {
	fd, _, errno := syscall.RawSyscall(syscall.SYS_TIMERFD_CREATE, 1 /* CLOCK_MONOTONIC */, syscall.O_CLOEXEC, 0)
	if errno != 0 {
		return nil, errno
	}
	return &ticker{flag: flag, fd: int(fd)}, nil
}

// start counts a call in flight, starting the timer at the first.
func (t *ticker) start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls++
	if t.armed || t.closed {
		return
	}
	if t.settime(tickPeriod) == nil {
		t.armed = true
	}
	if !t.reading {
		t.reading = true
		if !tickThreadSupported || t.startThread() != nil {
			t.noThread.Store(true)
			go t.read()
		}
	}
}

// stop counts a call done. The timer is stopped by the goroutine, at the
// first tick with no call in flight, so that a server taking calls one
// after the other does not start and stop it for each.
func (t *ticker) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls--
	if t.thread != nil && t.calls == 0 && t.armed && !t.disarming {
		// The thread runs no Go code: a timer of the runtime stops the
		// idle timer, as the goroutine does at the first idle tick.
		t.disarming = true
		time.AfterFunc(2*tickPeriod, t.disarmIdle)
	}
}

// disarmIdle stops the timer when no call is in flight.
func (t *ticker) disarmIdle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.disarming = false
	if t.calls == 0 && t.armed && !t.closed && t.settime(0) == nil {
		t.armed = false
	}
}

// settime sets the timer to expire every period (0 stops it).
func (t *ticker) settime(period time.Duration) error {
	var spec [4]int64 // struct itimerspec: interval, then first expiry
	spec[0], spec[1] = int64(period/time.Second), int64(period%time.Second)
	spec[2], spec[3] = spec[0], spec[1]
	return t.setspec(&spec)
}

// setspec sets the timer to spec.
func (t *ticker) setspec(spec *[4]int64) error {
	_, _, errno := syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, uintptr(t.fd), 0, uintptr(unsafe.Pointer(spec)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// read is the goroutine: it stays blocked in read(2) but for the moments
// after each expiry.
func (t *ticker) read() {
	for {
		t.gen++
		errno := rearm(t.fd, t.flag, tickGeneration|t.gen)
		if errno != 0 {
			// The flag may hold a generation with no read pending: make it
			// a count, so that guests keep calling the host until this
			// goroutine runs.
			atomic.StoreUint64(t.flag, 1)
		}
		t.mu.Lock()
		if t.closed {
			// A count for good: guests still running call the host at
			// every check, which stops them at their deadlines.
			atomic.StoreUint64(t.flag, 1)
			syscall.Close(t.fd)
			t.mu.Unlock()
			return
		}
		if t.calls == 0 && t.armed {
			// Stopped: the next read blocks until a call starts it.
			if t.settime(0) == nil {
				t.armed = false
			}
		}
		t.mu.Unlock()
		if errno != 0 && errno != syscall.EINTR {
			time.Sleep(tickPeriod)
		}
	}
}

// rearm writes gen into the flag and blocks in read(2) on fd with the flag
// as the buffer. It is nosplit, which leaves it without a preemption point
// between the store and the system call (syscall.Syscall is nosplit too
// until it has entered the system call); see ticker.
//
//go:nosplit
//go:norace
//go:noinline
func rearm(fd int, flag *uint64, gen uint64) syscall.Errno {
	*flag = gen
	_, _, errno := syscall.Syscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(flag)), 8)
	return errno
}

// close ends the goroutine and releases the timer.
func (t *ticker) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	if !t.reading {
		atomic.StoreUint64(t.flag, 1)
		syscall.Close(t.fd)
		return
	}
	if t.thread != nil {
		t.stopThread()
		return
	}
	// Wake the goroutine once; it sees closed, closes the descriptor and
	// returns.
	t.setspec(&[4]int64{0, 0, 0, 1})
}

// The ticker thread. The goroutine of ticker.read needs a processor to
// write each generation, and blocking in read(2) through syscall.Syscall
// keeps its processor until the runtime's monitor takes it back, which,
// with one processor, made guests wait up to a millisecond after every
// tick (see RATIONALE.md). Where cloneTicker exists the same loop runs on
// a thread of its own, made with clone(2), which runs no Go code and holds
// no processor: it writes a generation and blocks in the next read, with
// nothing in between that Go could preempt. Its page holds the word the
// kernel clears when it exits, the word that tells it to stop, and the
// stack it never uses (every signal is blocked on it).
const tickThreadPage = 4096

func (t *ticker) startThread() error {
	page, err := syscall.Mmap(-1, 0, tickThreadPage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return err
	}
	ctid, stop := (*uint32)(unsafe.Pointer(&page[0])), (*uint32)(unsafe.Pointer(&page[4]))
	atomic.StoreUint32(ctid, 1)
	t.gen++
	if _, errno := cloneTicker(uintptr(unsafe.Pointer(&page[tickThreadPage-64])), t.fd, t.flag, stop, ctid, t.gen); errno != 0 {
		syscall.Munmap(page)
		return syscall.Errno(errno)
	}
	t.thread = page
	return nil
}

// threadAlive reports whether the ticker thread runs.
func (t *ticker) threadAlive() bool {
	return t.thread != nil && atomic.LoadUint32((*uint32)(unsafe.Pointer(&t.thread[0]))) != 0
}

// stopThread tells the thread to stop, wakes it, and waits until it has
// exited: the kernel writes into the flag until then.
func (t *ticker) stopThread() {
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&t.thread[4])), 1)
	t.setspec(&[4]int64{0, 0, 0, 1})
	for deadline := time.Now().Add(10 * time.Second); t.threadAlive(); time.Sleep(50 * time.Microsecond) {
		if time.Now().After(deadline) {
			// Never seen; leak the page and the descriptor rather than
			// let the kernel write into memory that is reused.
			return
		}
	}
	atomic.StoreUint64(t.flag, 1)
	syscall.Close(t.fd)
	syscall.Munmap(t.thread)
	t.thread = nil
}
