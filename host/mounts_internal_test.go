package host

import (
	"context"
	"os"
	"testing"

	"github.com/skillhost/skillhost/internal/testenv"
)

// The instance's mount budget records what the last call wrote and whether
// it met the quota, even when the guest ignores the errno and succeeds.
func TestMountBudgetReadOuts(t *testing.T) {
	ctx := context.Background()
	h, err := New(ctx, NewConfig().WithCacheDir(testenv.CacheDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	wasm, err := os.ReadFile("../testdata/guests/go/gohostile/gohostile.wasm")
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.Load(ctx, wasm, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := Grant{
		Mounts: []Mount{{HostPath: t.TempDir(), GuestPath: "/data"}},
		Limits: Limits{MaxWriteBytes: 1 << 20, MaxOpenFiles: 8},
	}
	p, err := m.NewPool(CallOptions{Grant: g}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	steps := []struct {
		input   string
		written int64
		hit     bool
	}{
		// The creation charge, then the 64 KiB chunks that fit.
		{"/data/a", 4096 + 15*64<<10, true},
		{"/data/b 1000", 4096 + 1000, false},
	}
	for _, st := range steps {
		res, err := p.Call(ctx, "write_flood", []byte(st.input))
		if err != nil {
			t.Fatalf("write_flood %s: %v", st.input, err)
		}
		if p.idle.len() != 1 {
			t.Fatalf("the pool holds %d instances, want 1", p.idle.len())
		}
		b := p.idle.all()[0].fsBudget
		t.Logf("write_flood %s: %s; written %d, quota hit %v", st.input, res.Output, b.Written(), b.QuotaHit())
		if b.Written() != st.written {
			t.Errorf("write_flood %s: budget counted %d bytes, want %d", st.input, b.Written(), st.written)
		}
		if b.QuotaHit() != st.hit {
			t.Errorf("write_flood %s: QuotaHit() = %v, want %v", st.input, b.QuotaHit(), st.hit)
		}
		if b.OpenFiles() != 0 {
			t.Errorf("write_flood %s: OpenFiles() = %d after the guest closed its file", st.input, b.OpenFiles())
		}
	}
}
