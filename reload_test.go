package skillhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
)

// Reload swaps the catalog whole: runs made before keep their tools and
// finish their calls, runs made after see the new catalog.
func TestReloadSwapsTheCatalog(t *testing.T) {
	dir := writePack(t, "name: r\nmodules:\n  - name: m\n    path: m.wasm\n    tools:\n      - {name: nap, export: sleep, description: Sleeps., loading: always}\n", "wat/blocking.wasm", "m.wasm")
	release := make(chan struct{})
	hold := holdTool{started: make(chan struct{}, 1), release: release}
	e := open(t, skillhost.Config{PackDirs: []string{dir}, NoBundled: true, Tools: []skillhost.Native{hold}})
	// On a failure below, let a held call end before the engine closes.
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce)
	ctx := context.Background()
	before, err := e.NewRun(skillhost.RunContext{Tenant: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := before.Call(ctx, "nap", json.RawMessage(`{}`), nil); err != nil {
		t.Fatal(err) // compiles the module
	}
	// A call in flight across the reload.
	var wg sync.WaitGroup
	wg.Add(1)
	var inflight *skillhost.Result
	var inflightErr error
	ended := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(ended)
		inflight, inflightErr = before.Call(ctx, "hold", nil, nil)
	}()
	select {
	case <-hold.started:
	case <-ended:
		t.Fatalf("the call ended before its tool ran: %+v, %v", inflight, inflightErr)
	case <-time.After(30 * time.Second):
		t.Fatal("the held tool did not start")
	}
	manifest := "name: r\nmodules:\n  - name: m\n    path: m.wasm\n    tools:\n      - {name: doze, export: sleep, description: Sleeps too., loading: always}\n"
	if err := os.WriteFile(filepath.Join(dir, "pack.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	releaseOnce()
	wg.Wait()
	if inflightErr != nil || inflight.IsError || string(inflight.Output) != `"released"` {
		t.Errorf("the call in flight across the reload: %+v, %v", inflight, inflightErr)
	}
	after, err := e.NewRun(skillhost.RunContext{Tenant: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after.Visible("nap") || !after.Visible("doze") {
		t.Errorf("after the reload a new run sees nap=%v doze=%v", after.Visible("nap"), after.Visible("doze"))
	}
	if _, err := e.Tool("nap"); !errors.Is(err, skillhost.ErrToolNotFound) {
		t.Errorf("the engine still has nap: %v", err)
	}
	if res, err := before.Call(ctx, "nap", nil, nil); err != nil || res.IsError {
		t.Errorf("a run made before the reload lost its tool: %+v, %v", res, err)
	}
	hits, err := e.SearchTools(ctx, indexQuery("doze"))
	if err != nil || len(hits.Tools) == 0 || hits.Tools[0].Name != "doze" {
		t.Errorf("the index does not know the reloaded tool: %+v, %v", hits, err)
	}
}

func indexQuery(q string) index.ToolQuery {
	return index.ToolQuery{Query: q, SearchType: "exact", IncludeAlwaysLoaded: true}
}

// holdTool is a native tool whose calls wait until release is closed.
type holdTool struct {
	started chan struct{}
	release chan struct{}
}

func (holdTool) Describe() packs.ToolSpec {
	return packs.ToolSpec{Name: "hold", Description: "Waits to be released.", Loading: packs.LoadingAlways}
}

func (h holdTool) Execute(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	h.started <- struct{}{}
	select {
	case <-h.release:
		return json.RawMessage(`"released"`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
