package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The probes of fresh.wasm run on restored instances: benign calls put
// their instance back, and each call that changed what a snapshot does not
// cover (the descriptor table, the instance itself) has its instance
// discarded. Without the first half, the black-box fresh-state tests would
// test new instances only.
func TestDisturbingCallsDiscardTheirInstance(t *testing.T) {
	ctx := context.Background()
	h, m := internalModule(t, NewConfig(), "wat/fresh.wasm")
	if !m.c.snapshottable() {
		t.Fatal("fresh.wasm is not snapshottable")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "leak.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := Grant{Mounts: []Mount{{HostPath: dir, GuestPath: "/data", ReadOnly: true}}}
	idle := func() int {
		fp := m.freshPools()[profile(g, h.cfg.resolve(g.Limits))]
		if fp == nil {
			return 0
		}
		return fp.idle.len()
	}
	for _, tc := range []struct {
		export, input string
		kept          bool
	}{
		{"echo", "x", true},
		{"prestat", "3", true},
		{"say", "", true},
		{"close_fd", "4", true}, // EBADF: nothing changed
		{"close_fd", "3", false},
		{"close_fd", "1", false},
		{"open_leak", "", false},
		{"renumber", "", false},
		{"exit0", "", false},
		{"set_var", "v", true}, // vars are reset by the restore
	} {
		// Start each case from one idle instance.
		if _, err := m.Call(ctx, "echo", nil, &CallOptions{Grant: g}); err != nil {
			t.Fatal(err)
		}
		if idle() != 1 {
			t.Fatalf("before %s: %d idle instances", tc.export, idle())
		}
		if _, err := m.Call(ctx, tc.export, []byte(tc.input), &CallOptions{Grant: g}); err != nil {
			t.Fatalf("%s(%s): %v", tc.export, tc.input, err)
		}
		if got := idle() == 1; got != tc.kept {
			t.Errorf("%s(%s): instance kept = %v, want %v", tc.export, tc.input, got, tc.kept)
		}
	}
}
