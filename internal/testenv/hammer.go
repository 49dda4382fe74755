package testenv

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Hammer calls call from callers goroutines released at once, each with
// its number, and fails t when any call fails. Each call's context ends
// wait after the start: a call that runs into that deadline is taken as
// stuck, and the first one found stuck has every goroutine's stack
// written to the test log, taken while the others still wait. When the
// callers have not all returned a little after wait (a call that ignores
// its context), Hammer writes the stacks and stops the test; those
// goroutines are left behind.
//
// wait bounds a hang, never how fast the calls run: it should be many
// times what the calls take under the race detector.
func Hammer(t testing.TB, callers int, wait time.Duration, call func(ctx context.Context, caller int) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		mu      sync.Mutex
		errs    []error
		dumped  bool
		dumpLog string
	)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := call(ctx, i)
			if err == nil {
				return
			}
			stuck := errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil
			var stacks string
			mu.Lock()
			first := stuck && !dumped
			dumped = dumped || stuck
			mu.Unlock()
			if first {
				stacks = Stacks()
			}
			mu.Lock()
			errs = append(errs, fmt.Errorf("caller %d: %w", i, err))
			if first {
				dumpLog = stacks
			}
			mu.Unlock()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	close(start)
	select {
	case <-done:
	case <-time.After(wait + 10*time.Second):
		t.Fatalf("%d callers: some did not return within %v of their deadline; goroutines:\n%s", callers, 10*time.Second, Stacks())
	}
	if len(errs) > 0 {
		n := min(len(errs), 5)
		t.Errorf("%d of %d callers failed; the first %d:\n%v", len(errs), callers, n, errors.Join(errs[:n]...))
		if dumpLog != "" {
			t.Logf("goroutines when the first caller ran into its %v deadline:\n%s", wait, dumpLog)
		}
	}
}

// Stacks returns the stacks of every goroutine, cut at 1 MiB.
func Stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
