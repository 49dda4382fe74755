package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The rewritten modules kept in the cache folder are keyed by
// rewriteFormat: this digest of the rewriter's output for a fixed module
// changes whenever the rewriter does, and then rewriteFormat must change
// too, or hosts would keep running modules rewritten the old way.
func TestRewriteFormatIsCurrent(t *testing.T) {
	const want = "skillhost-rewrite-1 a23408b2d334370c96a492cd1a280489bab3cc4db6abd2b76352ef7861281cb8"
	wasm, err := os.ReadFile("../testdata/guests/wat/loop_count.wasm")
	if err != nil {
		t.Fatal(err)
	}
	out, info, err := instrument(wasm)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := json.Marshal(info)
	sum := sha256.Sum256(append(head, out...))
	if got := rewriteFormat + " " + hex.EncodeToString(sum[:]); got != want {
		t.Errorf("the rewriter's output changed: give rewriteFormat a new name, then set want to %q", got)
	}
}

// A second host with the same cache folder takes the rewritten module from
// it, and runs it as the first did; an entry that does not parse is
// rewritten again.
func TestRewrittenModulesAreCached(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wasm, err := os.ReadFile("../testdata/guests/wat/loop_count.wasm")
	if err != nil {
		t.Fatal(err)
	}
	run := func() int64 {
		t.Helper()
		h, err := New(ctx, NewConfig().WithCacheDir(dir))
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(ctx)
		m, err := h.Load(ctx, wasm, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ok, why := m.Metered(); !ok {
			t.Fatalf("not metered: %v", why)
		}
		res, err := m.Call(ctx, "count", []byte("1000"), nil)
		if err != nil || string(res.Output) != "902429759771004424" {
			t.Fatalf("count: %q, %v", res.Output, err)
		}
		return res.Fuel
	}
	fuel := run()
	entries, _ := filepath.Glob(filepath.Join(dir, "rewritten", "*"))
	if len(entries) != 1 {
		t.Fatalf("cache holds %v, want one rewritten module", entries)
	}
	before, err := os.Stat(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := run(); got != fuel {
		t.Errorf("fuel %d from the cached rewrite, %d from the rewriter", got, fuel)
	}
	// A miss would have replaced the file by a new one.
	if after, err := os.Stat(entries[0]); err != nil || !os.SameFile(before, after) {
		t.Errorf("the second host rewrote the module again (%v)", err)
	}
	for _, junk := range [][]byte{nil, []byte("\xff\xff\xff\xff{}"), []byte("\x02\x00\x00\x00{}not wasm")} {
		if err := os.WriteFile(entries[0], junk, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := run(); got != fuel {
			t.Errorf("fuel %d after a broken cache entry, want %d", got, fuel)
		}
		if _, _, ok := readRewritten(entries[0]); !ok {
			t.Errorf("a broken entry (%q) was not replaced", junk)
		}
	}
}
