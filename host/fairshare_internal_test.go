package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost/abi"
)

func loadFixture(t *testing.T, h *Host, rel string) *Module {
	t.Helper()
	wasm, err := os.ReadFile("../testdata/guests/" + rel)
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.Load(context.Background(), wasm, LoadOptions{Name: rel})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newFairHost returns a host with the default configuration, closed when
// the test ends.
func newFairHost(t *testing.T) *Host {
	t.Helper()
	h, err := New(context.Background(), NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// group returns the counts of one group of the host's fair share.
func group(h *Host, name string) *shareGroup { return h.fair.group(name) }

// spinners starts n guests of group that spin until stop cancels them
// (or, failing that, their long deadline), and waits until they all run.
// stop cancels the spinners and waits for them to end.
func spinners(t *testing.T, h *Host, spin *Module, group string, n int) (stop func()) {
	t.Helper()
	const (
		timeout = 30 * time.Second // a backstop: the test cancels them well before
		startBy = 20 * time.Second // for all n to be running, on a loaded machine
	)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	stop = func() {
		cancel()
		wg.Wait()
	}
	// Registered after the host's Close, so it runs first, on any exit.
	t.Cleanup(stop)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := spin.Call(ctx, "spin", nil, &CallOptions{Group: group, Grant: Grant{Limits: Limits{Timeout: timeout}}})
			if !errors.Is(err, ErrCanceled) && !errors.Is(err, ErrTimeout) {
				t.Errorf("a spinner of %s ended with %v, want it canceled or timed out", group, err)
			}
		}()
	}
	for deadline := time.Now().Add(startBy); ; time.Sleep(time.Millisecond) {
		f := &h.fair
		g, ok := f.groups.Load(group)
		if ok && g.(*shareGroup).members.Load() == int32(n) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the spinners of %s did not all start", group)
		}
	}
	return stop
}

// While one tenant's guests spin on every processor, another tenant's call
// runs: the spinning group parks down to its share, the other never
// parks, and the spinners still stop when their calls end.
func TestFairShareHoldsAGroupToItsShare(t *testing.T) {
	ctx := context.Background()
	h := newFairHost(t)
	spin := loadFixture(t, h, "wat/loop.wasm")
	count := loadFixture(t, h, "wat/loop_count.wasm")
	n := 2 * runtime.GOMAXPROCS(0)
	stop := spinners(t, h, spin, "b", n)

	res, err := count.Call(ctx, "count", []byte("20000000"), &CallOptions{Group: "a", Grant: Grant{Limits: Limits{Timeout: 20 * time.Second}}})
	if err != nil {
		t.Fatalf("a's call beside b's spinners: %v", err)
	}
	if len(res.Output) == 0 {
		t.Fatal("a's call has no output")
	}
	if p := group(h, "b").parks.Load(); p == 0 {
		t.Errorf("b ran %d spinners on %d processors beside a's call and never parked", n, runtime.GOMAXPROCS(0))
	}
	if p := group(h, "a").parks.Load(); p != 0 {
		t.Errorf("a, under its share, parked %d times", p)
	}
	stop()
	if r, p := h.fair.running.Load(), h.fair.parked.Load(); r != 0 || p != 0 {
		t.Errorf("after every call: %d running, %d parked, want none", r, p)
	}
}

// A group alone on the host is never held back, however many guests it
// runs.
func TestFairShareLeavesALoneGroupAlone(t *testing.T) {
	h := newFairHost(t)
	spin := loadFixture(t, h, "wat/loop.wasm")
	stop := spinners(t, h, spin, "solo", 3*runtime.GOMAXPROCS(0))
	// Let them all spin together a while, refuelling (and parking, were
	// the group held back) many times.
	time.Sleep(500 * time.Millisecond)
	stop()
	if p := group(h, "solo").parks.Load(); p != 0 {
		t.Errorf("a group alone parked %d times", p)
	}
}

// A guest waiting for a tool it called does not count against its group:
// the tool's guest runs in its place.
func TestFairShareToolCallLeavesTheShare(t *testing.T) {
	ctx := context.Background()
	h := newFairHost(t)
	caller := loadFixture(t, h, "wat/tool_call.wasm")
	during := int32(-1)
	tools := ToolDispatcherFunc(func(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
		during = group(h, "a").members.Load()
		return abi.ToolResult{Output: json.RawMessage(`{}`)}
	})
	_, err := caller.Call(ctx, "call_tool", []byte("inner"), &CallOptions{Group: "a", Tools: tools, Grant: Grant{Tools: []string{"inner"}}})
	if err != nil {
		t.Fatal(err)
	}
	if during != 0 {
		t.Errorf("while its tool ran, the caller counted in its group (%d members), want 0", during)
	}
	if m := group(h, "a").members.Load(); m != 0 {
		t.Errorf("after the call: %d members, want 0", m)
	}
}

// A group with a request in flight and no guest running (Host.Busy) is
// left a processor: the spinning group parks down to its share while the
// request lasts, and runs whole again after.
func TestFairShareLeavesAProcessorToABusyGroup(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		t.Skip("with one processor a group keeps its guest: its share is at least one")
	}
	h := newFairHost(t)
	spin := loadFixture(t, h, "wat/loop.wasm")
	stop := spinners(t, h, spin, "b", procs)
	b := group(h, "b")
	done := h.Busy("a")
	for deadline := time.Now().Add(10 * time.Second); b.running.Load() >= int32(procs); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("b still runs %d guests on %d processors while a is busy", b.running.Load(), procs)
		}
	}
	if want := int32(max(1, procs/2)); b.running.Load() > want {
		t.Errorf("b runs %d guests while a is busy, want at most its share, %d", b.running.Load(), want)
	}
	done()
	for deadline := time.Now().Add(10 * time.Second); b.running.Load() < int32(procs); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("b runs %d of its %d guests after a's request ended", b.running.Load(), procs)
		}
	}
	stop()
	if a := group(h, "a"); a.load.Load() != 0 || h.fair.busy.Load() != 0 || h.fair.active.Load() != 0 {
		t.Errorf("after everything: a's load %d, busy groups %d, active groups %d; want none", a.load.Load(), h.fair.busy.Load(), h.fair.active.Load())
	}
}
