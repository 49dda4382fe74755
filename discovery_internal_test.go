package skillhost

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// TestExamplesCountInRecordHash: the index describes a tool's examples by
// the arguments a rendering shows, within the per-tool cap, so editing an
// example's arguments re-indexes the tool and an example past the cap
// does not.
func TestExamplesCountInRecordHash(t *testing.T) {
	ctx := context.Background()
	type in struct {
		Text string `json:"text"`
	}
	build := func(t *testing.T, examples ...packs.Example) *registry.Registry {
		t.Helper()
		fn, err := registry.Func("echo", func(_ context.Context, v in) (in, error) { return v, nil },
			&registry.FuncOptions{Description: "Echo the text.", Examples: examples})
		if err != nil {
			t.Fatal(err)
		}
		reg, err := registry.New(ctx, nil, registry.Options{Natives: []registry.Native{fn}})
		if err != nil {
			t.Fatal(err)
		}
		return reg
	}
	ex := func(text, desc string, tags ...string) packs.Example {
		args, _ := json.Marshal(in{Text: text})
		return packs.Example{Args: args, Description: desc, Tags: tags}
	}
	st, err := index.Open(ctx, filepath.Join(t.TempDir(), "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sync := func(reg *registry.Registry, max int) index.SyncReport {
		t.Helper()
		rep, err := st.SyncTools(ctx, indexTools(reg, max))
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	base := []packs.Example{ex("a", "one letter", registry.ExampleMinimal), ex("hello world", "two words", registry.ExampleCommon)}
	got := indexTools(build(t, base...), 3)
	want := []string{`{"text":"a"} // one letter`, `{"text":"hello world"} // two words`}
	if len(got) != 1 || !slices.Equal(got[0].Examples, want) {
		t.Fatalf("indexed examples = %q, want %q", got[0].Examples, want)
	}
	if rep := sync(build(t, base...), 3); !slices.Equal(rep.Added, []string{"echo"}) {
		t.Fatalf("first sync = %+v", rep)
	}
	changed := []packs.Example{ex("b", "one letter", registry.ExampleMinimal), base[1]}
	if rep := sync(build(t, changed...), 3); !slices.Equal(rep.Changed, []string{"echo"}) {
		t.Errorf("changing an example's arguments: sync = %+v, want echo changed", rep)
	}
	// Past the cap of one, the second example is not shown and does not count.
	if rep := sync(build(t, changed...), 1); !slices.Equal(rep.Changed, []string{"echo"}) {
		t.Fatalf("lowering the cap: sync = %+v, want echo changed", rep)
	}
	edited := []packs.Example{changed[0], ex("something else", "other", registry.ExampleCommon)}
	if rep := sync(build(t, edited...), 1); rep.Unchanged != 1 || len(rep.Changed) != 0 {
		t.Errorf("editing an example past the cap: sync = %+v, want unchanged", rep)
	}
}
