//go:build linux && (amd64 || arm64)

package host

import (
	"context"
	"testing"
)

// A restore leaves the pages a call changed writable, copying them back on
// every restore until they go cold, and then protects them all again: at
// every step the call finds the memory as the first call found it.
func TestRestoreLeavesChangedPagesWritable(t *testing.T) {
	if tracker() == nil {
		t.Skip("the kernel cannot track written pages (userfaultfd write-protect, Linux 6.7+)")
	}
	ctx := context.Background()
	// Fuel counted: the first call's instance stays in its pool.
	h, m := internalModule(t, NewConfig().WithTickCheck(false), "wat/pages.wasm")
	res, err := m.Call(ctx, "touch_none", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := string(res.Output)
	fp := m.freshPools()[profile(Grant{}, h.cfg.resolve(Limits{}))]
	if fp == nil || fp.idle.len() != 1 {
		t.Fatalf("after the first call the pool holds %v", fp)
	}
	in := fp.idle.all()[0]
	all := fp.snap.Load().memSize() / int(osPageSize)
	for i, step := range []struct {
		export string
		// loose is how many pages the restore leaves writable, or -1
		// when it depends on the page size.
		loose int
	}{
		{"touch_all", all}, // every page changed: none protected
		{"touch_one", 0},   // all but two cold: all protected
		{"touch_one", 2},   // the output's page and the touched one
		{"touch_none", 2},  // one cold page, too few to protect
		{"random", -1},     // pages written by the host
		{"touch_all", all}, // loose pages written again
		{"touch_none", 0},  // all but one cold
		{"touch_one", 2},   // protected pages written again
		{"touch_none", 2},
	} {
		res, err := m.Call(ctx, step.export, nil, nil)
		if err != nil {
			t.Fatalf("call %d (%s): %v", i, step.export, err)
		}
		if string(res.Output) != want {
			t.Fatalf("call %d (%s) found checksum %s, want %s: state leaked", i, step.export, res.Output, want)
		}
		if fp.idle.len() != 1 || fp.idle.all()[0] != in {
			t.Fatalf("call %d (%s) was not served by the one restored instance", i, step.export)
		}
		d := in.alloc.mem.dirty
		if d == nil {
			t.Fatal("the instance's memory is not tracked")
		}
		if step.loose >= 0 && d.loose != step.loose {
			t.Errorf("after call %d (%s) %d pages are writable, want %d", i, step.export, d.loose, step.loose)
		}
	}
}
