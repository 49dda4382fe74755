package skillhost_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/skillhost/skillhost"
)

// The engine's memory budget bounds what its modules hold between calls
// together: past it, the least recently used module's instances and
// snapshot are released, and its tools still answer.
func TestMemoryBudgetBoundsTheEngine(t *testing.T) {
	const budget = 12 << 20 // the text module holds about 9 MiB, the hash module 10
	e := open(t, skillhost.Config{MemoryBudget: budget})
	ctx := context.Background()
	calls := []struct{ tool, args, want string }{
		{"slugify", `{"text":"Hello World"}`, `hello-world`},
		{"hash", `{"text":"abc"}`, `ba7816bf`},
		{"slugify", `{"text":"Again Here"}`, `again-here`},
		{"hash", `{"text":"abc"}`, `ba7816bf`},
	}
	for _, c := range calls {
		res, err := e.Call(ctx, c.tool, []byte(c.args), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if !strings.Contains(string(res.Output), c.want) {
			t.Fatalf("%s = %s, want %s in it", c.tool, res.Output, c.want)
		}
		st := e.MemoryStats()
		if st.Budget != budget || st.Held > st.Budget || st.Held == 0 {
			t.Fatalf("after %s: %+v, want something held within a budget of %d", c.tool, st, budget)
		}
	}
	if st := e.MemoryStats(); st.Evictions == 0 {
		t.Errorf("two modules of about 10 MiB each in a 12 MiB budget released nothing: %+v", st)
	}
}

// Without Config.MemoryBudget the operator config's [server]
// memory_budget applies, and without either the default.
func TestMemoryBudgetFromTheOperatorConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "skillhost.toml")
	if err := os.WriteFile(file, []byte("[server]\nmemory_budget = \"5MiB\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := open(t, skillhost.Config{ConfigFile: file}).MemoryStats().Budget; got != 5<<20 {
		t.Errorf("[server] memory_budget = 5MiB: budget %d", got)
	}
	if got := open(t, skillhost.Config{ConfigFile: file, MemoryBudget: 7 << 20}).MemoryStats().Budget; got != 7<<20 {
		t.Errorf("Config.MemoryBudget over the file's: budget %d, want %d", got, 7<<20)
	}
	empty := filepath.Join(t.TempDir(), "skillhost.toml")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := open(t, skillhost.Config{ConfigFile: empty}).MemoryStats().Budget; got != skillhost.DefaultMemoryBudget {
		t.Errorf("no budget set: %d, want the default %d", got, skillhost.DefaultMemoryBudget)
	}
}

// The tick check is on by default; [server] tick_check = false and
// Config.CountAllFuel each turn it off, and tick_check = true leaves it on.
func TestTickCheckFromTheOperatorConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	off, on := write("off.toml", "[server]\ntick_check = false\n"), write("on.toml", "[server]\ntick_check = true\n")
	for _, tc := range []struct {
		name string
		cfg  skillhost.Config
		want bool
	}{
		{"default", skillhost.Config{}, true},
		{"tick_check = false", skillhost.Config{ConfigFile: off}, false},
		{"tick_check = true", skillhost.Config{ConfigFile: on}, true},
		{"CountAllFuel", skillhost.Config{CountAllFuel: true}, false},
		{"CountAllFuel beside tick_check = true", skillhost.Config{ConfigFile: on, CountAllFuel: true}, false},
	} {
		if got := open(t, tc.cfg).Host().Config().TickCheck(); got != tc.want {
			t.Errorf("%s: the host's tick check is %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An engine opened for one call (Config.OneCall) loads its modules for
// one call: slugify runs with the tick check (on Linux) and leaves neither
// snapshot nor warm instance behind, where an engine opened as usual takes
// the module's snapshot, warm-up included.
func TestOneCallEngine(t *testing.T) {
	ctx := context.Background()
	args := json.RawMessage(`{"text":"One call, no snapshot"}`)
	const want = `{"slug":"one-call-no-snapshot"}`
	for _, oneCall := range []bool{true, false} {
		e := open(t, skillhost.Config{OneCall: oneCall, NoIndex: true})
		for i := range 2 {
			res, err := e.Call(ctx, "slugify", args, nil)
			if err != nil || string(res.Output) != want {
				t.Fatalf("one call %v, call %d: %s, %v", oneCall, i, res.Output, err)
			}
			if oneCall && runtime.GOOS == "linux" && res.FuelCounted {
				t.Errorf("call %d counted fuel; an engine for one call runs the tick check", i)
			}
		}
		if held := e.MemoryStats().Held; (held == 0) != oneCall {
			t.Errorf("one call %v: %d bytes held between calls", oneCall, held)
		}
		// A fuel limit still counts, with the module made for it.
		e = open(t, skillhost.Config{OneCall: oneCall, NoIndex: true,
			Grants: map[string]skillhost.Grant{"core": {Limits: skillhost.Limits{MaxFuel: 1 << 40}}}})
		res, err := e.Call(ctx, "slugify", args, nil)
		if err != nil || string(res.Output) != want || !res.FuelCounted {
			t.Errorf("one call %v, with a fuel limit: %s, fuel counted %v, %v", oneCall, res.Output, res.FuelCounted, err)
		}
	}
}
