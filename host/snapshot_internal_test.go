package host

import (
	"context"
	"testing"
)

// Calls are served by restoring one instance, not by instantiating anew;
// an instance whose memory grew is discarded, not restored.
func TestRestoredInstancesAreReused(t *testing.T) {
	ctx := context.Background()
	// Fuel counted: the first call's instance stays in its pool (see
	// TestTickPoolKeepsTickedInstances).
	h, m := internalModule(t, NewConfig().WithTickCheck(false), "wat/state.wasm")
	if !m.c.snapshottable() {
		t.Fatal("state.wasm is not snapshottable")
	}
	var first *instance
	for i := 0; i < 5; i++ {
		res, err := m.Call(ctx, "bump", nil, nil)
		if err != nil || string(res.Output) != "1001" {
			t.Fatalf("bump %d: %q, %v", i, res.Output, err)
		}
		fp := m.freshPools()[profile(Grant{}, h.cfg.resolve(Limits{}))]
		if fp == nil || fp.idle.len() != 1 {
			t.Fatalf("after call %d the pool holds %v", i, fp)
		}
		if first == nil {
			first = fp.idle.all()[0]
		} else if fp.idle.all()[0] != first {
			t.Fatalf("call %d was served by a new instance", i)
		}
		if fp.idle.all()[0].uses != i+1 {
			t.Errorf("instance served %d calls, want %d", fp.idle.all()[0].uses, i+1)
		}
	}
	if _, err := m.Call(ctx, "grow", nil, nil); err != nil {
		t.Fatal(err)
	}
	fp := m.freshPools()[profile(Grant{}, h.cfg.resolve(Limits{}))]
	if fp.idle.len() != 0 {
		t.Error("an instance whose memory grew went back to the pool")
	}
}

// With the tick check, the instance that ran the initialisers counts fuel
// and gives the pool its snapshot; once the module with the tick check is
// made, the pool keeps only instances that run it, restored from that
// snapshot, and reuses them.
func TestTickPoolKeepsTickedInstances(t *testing.T) {
	if !tickRuns() {
		t.Skip("no tick check here")
	}
	ctx := context.Background()
	h, m := internalModule(t, NewConfig(), "wat/state.wasm")
	res, err := m.Call(ctx, "bump", nil, nil)
	if err != nil || string(res.Output) != "1001" || !res.FuelCounted {
		t.Fatalf("first bump: %q, fuel counted %v, %v; want 1001, counted", res.Output, res.FuelCounted, err)
	}
	m.c.waitTick(h)
	fp := m.freshPools()[profile(Grant{}, h.cfg.resolve(Limits{}))]
	var first *instance
	for i := range 4 {
		res, err := m.Call(ctx, "bump", nil, nil)
		if err != nil || string(res.Output) != "1001" {
			t.Fatalf("bump %d: %q, %v", i, res.Output, err)
		}
		if i == 0 {
			continue // may have been served by the first call's instance
		}
		if res.FuelCounted {
			t.Errorf("bump %d counted fuel", i)
		}
		if in := sameIdleInstance(t, fp, &first, i); !in.ticked {
			t.Fatalf("after bump %d the pool's instance does not run the tick check", i)
		}
	}
}

// A trusted pool, too, retires an instance made before the module with
// the tick check was, once it is made.
func TestTrustedPoolTurnsToTheTickCheck(t *testing.T) {
	if !tickRuns() {
		t.Skip("no tick check here")
	}
	ctx := context.Background()
	h, m := internalModule(t, NewConfig(), "wat/state.wasm")
	p, err := m.NewPool(CallOptions{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Call(ctx, "bump", nil); err != nil {
		t.Fatal(err)
	}
	m.c.waitTick(h)
	for i := range 3 {
		res, err := p.Call(ctx, "bump", nil)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && res.FuelCounted {
			t.Errorf("pooled call %d counted fuel", i+2)
		}
		idle := p.idle.all()
		if len(idle) > 0 && !idle[0].ticked && i > 0 {
			t.Errorf("after pooled call %d the pool keeps an instance that counts fuel", i+2)
		}
	}
}
