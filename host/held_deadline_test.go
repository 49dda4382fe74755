package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host"
)

// heldDeadline is a context whose deadline has passed, or soon will,
// while its Done channel stays open: what a call's context looks like
// between its deadline and the moment the scheduler runs the context's
// timer. The host reads the clock against the deadline it took from the
// context instead of waiting for that timer. Canceling the parent stands
// in for the timer at last, so that a host which waits for it gets
// ErrCanceled after a few seconds rather than hanging the test.
type heldDeadline struct {
	context.Context
	at time.Time
}

func (c heldDeadline) Deadline() (time.Time, bool) { return c.at, true }

// holdDeadline returns a context whose deadline is in d and whose Done
// channel closes only when the test is given up on (after giveUp).
func holdDeadline(t *testing.T, d, giveUp time.Duration) context.Context {
	t.Helper()
	parent, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(giveUp, cancel)
	t.Cleanup(func() { timer.Stop(); cancel() })
	return heldDeadline{Context: parent, at: time.Now().Add(d)}
}

// A spinning guest is stopped at the deadline the instance holds, though
// the context's Done has not fired: when it reaches the host to refuel
// (a call that counts fuel or has a fuel cap) and at the tick check (a
// call that counts none).
func TestSpinStopsAtTheDeadlineTheContextHasNotFired(t *testing.T) {
	h := newHost(t, testConfig().WithTickCheck(true))
	spin := load(t, h, "wat/loop.wasm")
	for name, opts := range map[string]*host.CallOptions{
		"counting fuel": {Grant: host.Grant{Limits: host.Limits{Timeout: time.Minute}}, CountFuel: true},
		"fuel cap":      {Grant: host.Grant{Limits: host.Limits{Timeout: time.Minute, MaxFuel: 1 << 60}}},
		"tick check":    {Grant: host.Grant{Limits: host.Limits{Timeout: time.Minute}}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := holdDeadline(t, 50*time.Millisecond, 3*time.Second)
			_, err := spin.Call(ctx, "spin", nil, opts)
			wantKind(t, err, host.ErrTimeout)
		})
	}
}

// A guest that returns after its deadline, having slept in a host call
// that the context's Done did not interrupt, gets a timeout: its result
// came too late to count.
func TestResultAfterTheHeldDeadlineIsATimeout(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/blocking.wasm")
	opts := &host.CallOptions{Grant: host.Grant{Limits: host.Limits{Timeout: time.Minute}}}
	ctx := holdDeadline(t, 20*time.Millisecond, 3*time.Second)
	res, err := m.Call(ctx, "sleep", []byte("200"), opts)
	ce := wantKind(t, err, host.ErrTimeout)
	if len(res.Output) > 0 {
		t.Errorf("the late result was kept: %q (%v)", res.Output, ce)
	}
	// The same sleep within its deadline returns.
	if out := mustCall(t, m, "sleep", "1", opts.Grant); out != "slept" {
		t.Errorf("sleep within the deadline = %q", out)
	}
}
