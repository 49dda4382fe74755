package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The rewritten modules kept in the cache folder are keyed by
// rewriteFormat: this digest of the rewriter's output for a fixed module
// changes whenever the rewriter does, and then rewriteFormat must change
// too, or hosts would keep running modules rewritten the old way.
func TestRewriteFormatIsCurrent(t *testing.T) {
	want := map[bool]string{
		false: "skillhost-rewrite-5 08101a107f8254277bfb32620200e1df13e36a09767c87925d4f6ac6c6610452",
		true:  "skillhost-tick-4 6ab9fbbab559f854a7c88fe5eae85277cfef7790b6ed3e7f734a20a110cf459b",
	}
	wasm, err := os.ReadFile("../testdata/guests/wat/loop_count.wasm")
	if err != nil {
		t.Fatal(err)
	}
	for _, tick := range []bool{false, true} {
		out, info, err := instrument(wasm, tick)
		if err != nil {
			t.Fatal(err)
		}
		head, _ := json.Marshal(info)
		sum := sha256.Sum256(append(head, out...))
		format := cacheFormat(tick)
		if got := format + " " + hex.EncodeToString(sum[:]); got != want[tick] {
			t.Errorf("the rewriter's output changed: give %s a new name, then set want to %q", format, got)
		}
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
		h, err := New(ctx, NewConfig().WithCacheDir(dir).WithTickCheck(true))
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
		res, err := m.Call(ctx, "count", []byte("1000"), &CallOptions{CountFuel: true})
		if err != nil || string(res.Output) != "902429759771004424" || !res.FuelCounted {
			t.Fatalf("count: %q, %v", res.Output, err)
		}
		// The module with the tick check is kept beside it.
		m.c.waitTick(h)
		if _, err := m.Call(ctx, "count", []byte("1000"), nil); err != nil {
			t.Fatal(err) // its instance runs the initialisers, counting
		}
		ticked, err := m.Call(ctx, "count", []byte("1000"), nil)
		if err != nil || string(ticked.Output) != string(res.Output) || ticked.FuelCounted == tickRuns() {
			t.Fatalf("count without counting fuel: %q, %v, fuel counted %v", ticked.Output, err, ticked.FuelCounted)
		}
		return res.Fuel
	}
	fuel := run()
	entries, _ := filepath.Glob(filepath.Join(dir, "rewritten", "*"))
	want := 1
	if tickRuns() {
		want = 2
	}
	if len(entries) != want {
		t.Fatalf("cache holds %v, want %d rewritten modules", entries, want)
	}
	var before []os.FileInfo
	for _, e := range entries {
		fi, err := os.Stat(e)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, fi)
	}
	if got := run(); got != fuel {
		t.Errorf("fuel %d from the cached rewrite, %d from the rewriter", got, fuel)
	}
	// A miss would have replaced the file by a new one.
	for i, e := range entries {
		if after, err := os.Stat(e); err != nil || !os.SameFile(before[i], after) {
			t.Errorf("the second host rewrote the module again (%v)", err)
		}
	}
	for _, junk := range [][]byte{nil, []byte("\xff\xff\xff\xff{}"), []byte("\x02\x00\x00\x00{}not wasm")} {
		for _, e := range entries {
			if err := os.WriteFile(e, junk, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := run(); got != fuel {
			t.Errorf("fuel %d after a broken cache entry, want %d", got, fuel)
		}
		for _, e := range entries {
			if _, _, ok := readRewritten(e); !ok {
				t.Errorf("a broken entry (%q) was not replaced", junk)
			}
		}
	}
}

// An entry kept under the same format name by a rewriter whose output
// differs (a build with the same name, the fingerprint not in the key)
// is not read: the module is rewritten again.
func TestRewriteCacheKeyHasTheFingerprint(t *testing.T) {
	dir := t.TempDir()
	h := &Host{cfg: NewConfig().WithCacheDir(dir)}
	wasm, err := os.ReadFile("../testdata/guests/wat/loop_count.wasm")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	for _, tick := range []bool{false, true} {
		want, info, err := instrument(wasm, tick)
		if err != nil {
			t.Fatal(err)
		}
		// What a key without the fingerprint would name, and an entry
		// there that a rewriter of another output left.
		format := cacheFormat(tick)
		key := sha256.New()
		fmt.Fprintf(key, "%s\x00%d\x00", format, h.cfg.maxTableElem)
		key.Write(sum[:])
		stale := filepath.Join(dir, "rewritten", hex.EncodeToString(key.Sum(nil)))
		if stale == h.rewrittenPath(sum, tick) {
			t.Fatal("the key does not hold the rewriter's fingerprint")
		}
		writeRewritten(stale, wasm, info)
		got, _, err := h.instrumentCached(wasm, sum, tick)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("tick %v: the cache gave %d bytes (%v), not the rewrite of %d bytes", tick, len(got), err, len(want))
		}
	}
}
