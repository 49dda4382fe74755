package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// internalModule makes a host of cfg, closed when the test ends, and
// loads the test guest rel (a path under testdata/guests) into it.
func internalModule(t *testing.T, cfg Config, rel string) (*Host, *Module) {
	t.Helper()
	h := internalHost(t, cfg)
	m, err := h.Load(context.Background(), guestBytes(t, rel), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h, m
}

// internalHost returns a host made with cfg, closed when the test ends.
func internalHost(t *testing.T, cfg Config) *Host {
	t.Helper()
	ctx := context.Background()
	h, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	return h
}

// guestBytes reads the test guest at rel under testdata/guests.
func guestBytes(t *testing.T, rel string) []byte {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "guests", rel))
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// sameIdleInstance checks that fp holds one idle instance after call i,
// and that it is *first, which the first check sets; it returns the
// instance.
func sameIdleInstance(t *testing.T, fp *freshPool, first **instance, i int) *instance {
	t.Helper()
	idle := fp.idle.all()
	if len(idle) != 1 {
		t.Fatalf("after call %d the pool holds %d instances, want 1", i, len(idle))
	}
	if *first == nil {
		*first = idle[0]
	} else if idle[0] != *first {
		t.Errorf("call %d was served by a new instance", i)
	}
	return idle[0]
}

// freshPools returns the module's fresh-state pools by profile.
func (m *Module) freshPools() map[string]*freshPool {
	if fresh := m.fresh.Load(); fresh != nil {
		return *fresh
	}
	return nil
}
