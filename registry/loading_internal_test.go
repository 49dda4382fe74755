package registry

import (
	"testing"

	"github.com/skillhost/skillhost/packs"
)

// TestEmptyLoadingIsDeferred: a tool whose loading mode is empty is
// deferred, as a manifest and the index read it; only "always" loads a
// tool without activation.
func TestEmptyLoadingIsDeferred(t *testing.T) {
	reg, err := New(t.Context(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := reg.NewRun(RunContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for mode, want := range map[string]bool{"": false, packs.LoadingDeferred: false, packs.LoadingAlways: true} {
		tl := &Tool{ToolSpec: &packs.ToolSpec{Name: "t_" + mode, Loading: mode}}
		if got := run.loaded(tl); got != want {
			t.Errorf("loading %q: loaded %v, want %v", mode, got, want)
		}
	}
}
