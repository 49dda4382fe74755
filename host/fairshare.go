package host

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Fair shares of the processors between groups of calls (tenants, see
// CallOptions.Group).
//
// A metered guest reaches the host every fuel slice (refuel), where it
// yields to the Go scheduler; that keeps one spinning guest from holding a
// thread, but not a tenant with many guests from holding the machine: with
// as many spinning guests as processors, another tenant's short call runs
// on a third of a processor at best, and each step of its HTTP request
// waits behind them — for the network poller, which the scheduler runs
// only when a processor has nothing else to do, up to 10 ms. So the host
// counts the guests of each group running an export, and the groups busy
// outside guests (Host.Busy, a request in flight); while more than one
// group is active and they want more than the processors, a guest whose
// group runs more than its equal share (processors / groups, at least
// one) parks at its next refuel, until a guest ends or parks or a request
// ends and it can run without taking the share of another. A group alone on the host is never held back, so a
// single tenant's calls run as before; a parked guest still ends at its
// deadline, and parking costs it wall time, never fuel.
//
// The counts are atomics, read at every refuel (a few loads); only parking
// takes a lock.
type fairShare struct {
	groups  sync.Map     // group name -> *shareGroup
	running atomic.Int32 // guests running an export, not parked
	active  atomic.Int32 // groups with a guest running or parked, or busy
	parked  atomic.Int32
	// busy counts the groups with work in flight outside guests (Busy):
	// each wants a processor of its own.
	busy atomic.Int32

	// changed wakes the parked guests when one of them may be able to
	// resume.
	changed signal
}

// shareGroup is one group's guests.
type shareGroup struct {
	members atomic.Int32 // running or parked
	running atomic.Int32
	busy    atomic.Int32 // Busy calls not yet done
	load    atomic.Int32 // members + busy: the group is active while > 0
	parks   atomic.Int64 // times one of them parked
}

func (f *fairShare) group(name string) *shareGroup {
	v, ok := f.groups.Load(name)
	if !ok {
		v, _ = f.groups.LoadOrStore(name, &shareGroup{})
	}
	return v.(*shareGroup)
}

// more and less count one more or one less thing the group has in
// flight, guest or not.
func (f *fairShare) more(g *shareGroup) {
	if g.load.Add(1) == 1 {
		f.active.Add(1)
	}
}

func (f *fairShare) less(g *shareGroup) {
	if g.load.Add(-1) == 0 {
		f.active.Add(-1)
	}
}

// Busy says that group has work in flight outside any guest — an HTTP
// request being read, checked or answered — until done is called: while
// it has, the group counts as active and as wanting a processor, so that
// other groups' guests past their share leave one to it. The network
// poller, and with it every request's next step, runs only on a
// processor no guest holds.
func (h *Host) Busy(group string) (done func()) {
	f := &h.fair
	g := f.group(group)
	f.more(g)
	if g.busy.Add(1) == 1 {
		f.busy.Add(1)
	}
	return func() {
		if g.busy.Add(-1) == 0 {
			f.busy.Add(-1)
		}
		f.less(g)
		if f.parked.Load() > 0 {
			f.wake()
		}
	}
}

// enter counts a guest of group that starts running an export.
func (f *fairShare) enter(group string) *shareGroup {
	g := f.group(group)
	f.more(g)
	g.members.Add(1)
	g.running.Add(1)
	f.running.Add(1)
	return g
}

// leave counts a guest of g that ended its export.
func (f *fairShare) leave(g *shareGroup) {
	g.running.Add(-1)
	f.running.Add(-1)
	g.members.Add(-1)
	f.less(g)
	if f.parked.Load() > 0 {
		f.wake()
	}
}

// over reports whether a guest of g, counted as running with extra more,
// would run past g's share while others need the processors.
func (f *fairShare) over(g *shareGroup, extra int32) bool {
	groups := f.active.Load()
	if groups < 2 {
		return false
	}
	procs := int32(runtime.GOMAXPROCS(0))
	if f.running.Load()+extra+f.busy.Load() <= procs {
		return false
	}
	return g.running.Load()+extra > max(1, procs/groups)
}

// yield parks the calling guest of g while its group runs past its share;
// it returns ctx's error if ctx ends first (the guest must then stop).
func (f *fairShare) yield(ctx context.Context, g *shareGroup) error {
	if !f.over(g, 0) {
		return nil
	}
	g.running.Add(-1)
	f.running.Add(-1)
	f.parked.Add(1)
	g.parks.Add(1)
	defer func() {
		f.parked.Add(-1)
		g.running.Add(1)
		f.running.Add(1)
	}()
	// Fewer run now: another parked guest may go on.
	f.wake()
	for {
		ch := f.changed.wait()
		if !f.over(g, 1) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// wake lets the parked guests look again.
func (f *fairShare) wake() { f.changed.wake() }
