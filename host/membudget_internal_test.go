package host

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// state.wasm has one page of linear memory: a snapshot and an idle
// instance are each charged 64 KiB.
const statePage = 65536

func budgetHost(t *testing.T, budget uint64) (*Host, *Module) {
	t.Helper()
	ctx := context.Background()
	// Fuel counted: the first call's instance stays in its pool.
	h, err := New(ctx, NewConfig().WithMemoryBudget(budget).WithTickCheck(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	wasm, err := os.ReadFile("../testdata/guests/wat/state.wasm")
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.Load(ctx, wasm, LoadOptions{Name: "state"})
	if err != nil {
		t.Fatal(err)
	}
	if !m.c.snapshottable() {
		t.Fatal("state.wasm is not snapshottable")
	}
	return h, m
}

// profileGrant is a grant of its own instantiation profile: calls under
// different names share no instance and no snapshot.
func profileGrant(name string) Grant { return Grant{Env: map[string]string{"P": name}} }

// bump calls state.wasm's bump, which answers 1001 in fresh state.
func bump(t testing.TB, m *Module, g Grant) {
	t.Helper()
	res, err := m.Call(context.Background(), "bump", nil, &CallOptions{Grant: g})
	if err != nil {
		t.Fatalf("bump: %v", err)
	}
	if string(res.Output) != "1001" {
		t.Fatalf("bump = %s, want 1001: state leaked between calls", res.Output)
	}
}

// held reports what a profile's pool holds: whether it has a snapshot and
// how many idle instances.
func held(m *Module, g Grant) (snap bool, idle int) {
	m.mu.Lock()
	fp := m.freshPools()[profile(g, m.h.cfg.resolve(g.Limits))]
	m.mu.Unlock()
	if fp == nil {
		return false, 0
	}
	return fp.snap.Load() != nil, fp.idle.len()
}

// heldTotal adds up what the module's pools hold, as the budget should
// charge it: every snapshot and every idle instance. It also checks that
// the budget knows of nothing else: no closed instance, no dropped
// snapshot.
func heldTotal(t *testing.T, m *Module) int64 {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	live := map[*heldNode]bool{}
	for _, fp := range m.freshPools() {
		if snap := fp.snap.Load(); snap != nil {
			if snap.held.charge.Load() == 0 {
				t.Errorf("a pool's snapshot is not charged")
			}
			n += int64(snap.memSize())
			live[&snap.held] = true
		}
		for _, in := range fp.idle.all() {
			if in.held.charge.Load() == 0 {
				t.Errorf("an idle instance is not charged")
			}
			n += in.heldBytes()
			live[&in.held] = true
		}
	}
	b := m.h.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	for node := range b.nodes {
		if !live[node] {
			t.Errorf("the budget knows of a node that is neither an idle instance nor a snapshot (charged %d)", node.charge.Load())
		}
	}
	return n
}

// Past the budget, what was used least recently goes first: a pool's idle
// instance before its snapshot, and the pool used longest ago before the
// others.
func TestMemoryBudgetReleasesLeastRecentlyUsed(t *testing.T) {
	// Room for one pool's snapshot and instance, and one more page.
	h, m := budgetHost(t, 3*statePage)
	a, b, c := profileGrant("a"), profileGrant("b"), profileGrant("c")

	bump(t, m, a)
	if snap, idle := held(m, a); !snap || idle != 1 {
		t.Fatalf("after a call: snapshot %v, %d idle; want both kept", snap, idle)
	}
	if st := h.MemoryStats(); st.Held != 2*statePage || st.Evictions != 0 {
		t.Fatalf("stats after a call: %+v, want 2 pages held and no eviction", st)
	}

	// b's snapshot fits; its instance does not, and a's idle instance,
	// used before a's snapshot was last touched, goes.
	bump(t, m, b)
	if snap, idle := held(m, a); !snap || idle != 0 {
		t.Errorf("a after b: snapshot %v, %d idle; want the snapshot kept, the instance released", snap, idle)
	}
	if snap, idle := held(m, b); !snap || idle != 1 {
		t.Errorf("b: snapshot %v, %d idle; want both kept", snap, idle)
	}

	// Using a again makes b the least recently used: a's new instance
	// pushes b's idle instance out, then b's snapshot.
	bump(t, m, a)
	bump(t, m, c)
	if snap, idle := held(m, b); snap || idle != 0 {
		t.Errorf("b after a and c: snapshot %v, %d idle; want it all released", snap, idle)
	}
	if snap, _ := held(m, c); !snap {
		t.Errorf("c: the newest snapshot was released")
	}
	st := h.MemoryStats()
	if st.Held > st.Budget || st.Evictions == 0 {
		t.Errorf("stats: %+v, want held within the budget and evictions counted", st)
	}
	if got := heldTotal(t, m); got != int64(st.Held) {
		t.Errorf("the pools hold %d bytes, the budget charges %d", got, st.Held)
	}

	// A released profile still runs, in fresh state, and takes a new
	// snapshot.
	bump(t, m, b)
	if snap, _ := held(m, b); !snap {
		t.Errorf("b took no new snapshot")
	}
}

// A budget smaller than one snapshot keeps nothing, and calls still run
// in fresh state.
func TestMemoryBudgetSmallerThanASnapshot(t *testing.T) {
	h, m := budgetHost(t, statePage/2)
	for range 3 {
		bump(t, m, Grant{})
	}
	if snap, idle := held(m, Grant{}); snap || idle != 0 {
		t.Errorf("snapshot %v, %d idle; want nothing kept", snap, idle)
	}
	if st := h.MemoryStats(); st.Held != 0 {
		t.Errorf("held %d, want 0", st.Held)
	}
}

// Many callers over more profiles than fit: every call finds fresh state,
// the charge never passes the budget, and it always equals what the pools
// hold — however evictions, restores and new snapshots interleave.
func TestMemoryBudgetHammer(t *testing.T) {
	h, m := budgetHost(t, 7*statePage)
	grants := make([]Grant, 6)
	for i := range grants {
		grants[i] = profileGrant(fmt.Sprint(i))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 150 {
				bump(t, m, grants[(g*7+i*(g+1))%len(grants)])
				if st := h.MemoryStats(); st.Held > st.Budget {
					t.Errorf("held %d past the budget %d", st.Held, st.Budget)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := h.MemoryStats()
	if got := heldTotal(t, m); got != int64(st.Held) {
		t.Errorf("the pools hold %d bytes, the budget charges %d", got, st.Held)
	}
	if st.Evictions == 0 {
		t.Errorf("no eviction among 6 profiles in a budget of 7 pages: %+v", st)
	}
}

// A trusted Pool's idle instances count against the same budget.
func TestMemoryBudgetBoundsPools(t *testing.T) {
	h, m := budgetHost(t, 2*statePage)
	p, err := m.NewPool(CallOptions{}, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := p.Call(context.Background(), "bump", nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := h.MemoryStats()
	idle := p.idle.len()
	if st.Held > st.Budget || int64(st.Held) != int64(idle)*statePage {
		t.Errorf("stats %+v with %d idle instances: want the idle ones charged, within the budget", st, idle)
	}
	p.Close()
	if st := h.MemoryStats(); st.Held != 0 {
		t.Errorf("after Close: held %d, want 0", st.Held)
	}
}

// With no budget nothing is charged and nothing is released.
func TestNoMemoryBudget(t *testing.T) {
	h, m := budgetHost(t, 0)
	for _, g := range []Grant{profileGrant("a"), profileGrant("b")} {
		bump(t, m, g)
		if snap, idle := held(m, g); !snap || idle != 1 {
			t.Errorf("snapshot %v, %d idle; want both kept", snap, idle)
		}
	}
	if st := h.MemoryStats(); st != (MemoryStats{}) {
		t.Errorf("stats %+v, want zero", st)
	}
}

// Under a budget, which bounds what the pools hold together, a module
// keeps restorable instances for more profiles than it would without one.
func TestMemoryBudgetServesManyProfiles(t *testing.T) {
	_, m := budgetHost(t, 1<<30)
	for i := range maxStates + 4 {
		g := profileGrant(fmt.Sprint(i))
		bump(t, m, g)
		if snap, idle := held(m, g); !snap || idle != 1 {
			t.Fatalf("profile %d: snapshot %v, %d idle; want both kept", i, snap, idle)
		}
	}
}

// Worker processes share the budget: each is sent an equal part of it.
func TestMemoryBudgetIsSharedByWorkers(t *testing.T) {
	h, _ := budgetHost(t, 8<<20)
	p := &workerPool{h: h, size: 4}
	if got := p.workerConfig().MemBudget; got != 2<<20 {
		t.Errorf("a worker's budget is %d, want a quarter of 8 MiB", got)
	}
	if got := p.workerConfig().config().memBudget; got != 2<<20 {
		t.Errorf("the worker's host gets a budget of %d", got)
	}
}

// Under a budget a pool keeps as many idle instances as concurrent calls
// left it, not twice the processors: many callers of one tool reuse them.
func TestMemoryBudgetKeepsAnInstancePerConcurrentCaller(t *testing.T) {
	_, m := budgetHost(t, 1<<30)
	n := 4*runtime.GOMAXPROCS(0) + 1
	ins := make([]*instance, n)
	fp := m.freshPool(profile(Grant{}, m.h.cfg.resolve(Limits{})), false)
	bump(t, m, Grant{}) // takes the snapshot
	for i := range ins {
		if ins[i] = fp.get(); ins[i] == nil {
			var err error
			if ins[i], err = m.newInstance(context.Background(), Grant{}, &CallOptions{}, false); err != nil {
				t.Fatal(err)
			}
			if err := ins[i].adopt(fp.current()); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, in := range ins {
		if !fp.put(in) {
			t.Fatal("an idle instance was refused")
		}
	}
	if _, idle := held(m, Grant{}); idle != n {
		t.Errorf("%d idle instances kept, want %d", idle, n)
	}
}

// The budget's own order, against a model of it: every charge past the
// budget releases exactly the least recently used charged nodes, oldest
// first, however charges, drops (a get) and forgets (a close) interleave,
// and many more nodes are charged than one scan queues.
func TestMemoryBudgetEvictsInOrder(t *testing.T) {
	const limit, nodes = 3 * queueLen, 8 * queueLen
	b := newMemBudget(limit)
	all := make([]*heldNode, nodes)
	for i := range all {
		all[i] = &heldNode{}
	}
	lastUse := map[*heldNode]int{}
	charged := map[*heldNode]bool{}
	oldest := func(k int, except *heldNode) []*heldNode {
		var c []*heldNode
		for n := range charged {
			if n != except {
				c = append(c, n)
			}
		}
		slices.SortFunc(c, func(x, y *heldNode) int { return lastUse[x] - lastUse[y] })
		return c[:min(k, len(c))]
	}
	r := rand.New(rand.NewPCG(3, 4))
	evicted := 0
	for step := range 20000 {
		n := all[r.IntN(nodes)]
		switch op := r.IntN(10); {
		case op < 7:
			var want []*heldNode
			if over := len(charged) - boolInt(charged[n]) + 1 - limit; over > 0 {
				want = oldest(over, n)
			}
			victims := b.charge(n, 1, nil)
			if !slices.Equal(victims, want) {
				t.Fatalf("step %d: charging a node released %d nodes, want the %d oldest in order", step, len(victims), len(want))
			}
			for _, v := range victims {
				delete(charged, v)
			}
			evicted += len(victims)
			charged[n] = true
			lastUse[n] = step
		case op < 9:
			b.drop(n)
			delete(charged, n)
		default:
			b.forget(n)
			delete(charged, n)
		}
		if got := b.used.Load(); got != int64(len(charged)) || got > limit {
			t.Fatalf("step %d: %d charged, the model has %d (budget %d)", step, got, len(charged), limit)
		}
	}
	if evicted < 10*queueLen {
		t.Errorf("only %d evictions: the queue was hardly used", evicted)
	}
	// A node larger than the budget releases everything else, then itself.
	big := &heldNode{}
	want := append(oldest(len(charged), big), big)
	if victims := b.charge(big, limit+1, nil); !slices.Equal(victims, want) {
		t.Errorf("a node past the budget released %d nodes, want all %d charged and itself", len(victims), len(want))
	}
	if got := b.used.Load(); got != 0 {
		t.Errorf("after it: %d charged, want 0", got)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
