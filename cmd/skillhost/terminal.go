package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// maxStdinBytes bounds what call reads of stdin.
const maxStdinBytes = 64 << 20

// isTerminal reports whether v, a stdin or stderr, is a terminal. Tests
// stand in for one with a value that has an IsTerminal method.
func isTerminal(v any) bool {
	if t, ok := v.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// readAll reads r whole, up to maxStdinBytes.
func readAll(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxStdinBytes+1))
	if err == nil && len(b) > maxStdinBytes {
		err = fmt.Errorf("the input is larger than %d MiB", maxStdinBytes>>20)
	}
	return b, err
}

// progressDelay is how long a compilation runs before its progress line
// shows: one served from the cache is done well before.
var progressDelay = 300 * time.Millisecond

// compiling shows a progress line on stderr while a module compiles, when
// stderr is a terminal: its name, size and the time so far, redrawn every
// tenth of a second and erased when done is called. Otherwise it shows
// nothing.
func (g *globals) compiling(name string, size int) (done func()) {
	if !g.stderrTTY {
		return func() {}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		wait := time.NewTimer(progressDelay)
		defer wait.Stop()
		select {
		case <-stop:
			return
		case <-wait.C:
		}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			fmt.Fprintf(g.stderr, "\r\x1b[Kskillhost: compiling %s (%s) %.1fs", name, size64(int64(size)), time.Since(start).Seconds())
			select {
			case <-stop:
				fmt.Fprint(g.stderr, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(stop)
		wg.Wait()
	}
}

// size64 is a byte count in the largest unit that keeps one decimal.
func size64(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
