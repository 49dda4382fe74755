package registry_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/registry"
)

// UsesIndex names exactly the built-ins that exist only over an index.
func TestUsesIndex(t *testing.T) {
	idx, err := index.Open(context.Background(), filepath.Join(t.TempDir(), "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	set, err := registry.NewSkillSet(registry.SkillSetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	with := map[string]bool{}
	for _, n := range allBuiltins(registry.BuiltinOptions{Index: idx, Skills: set}) {
		with[n.Describe().Name] = true
	}
	without := map[string]bool{}
	for _, n := range registry.Builtins(registry.BuiltinOptions{Skills: set}) {
		without[n.Describe().Name] = true
	}
	if len(with) <= len(without) {
		t.Fatalf("an index adds no built-ins: %v vs %v", with, without)
	}
	for name := range with {
		if got, want := registry.UsesIndex(name), !without[name]; got != want {
			t.Errorf("UsesIndex(%q) = %v, want %v", name, got, want)
		}
	}
	if registry.UsesIndex("slugify") {
		t.Error("UsesIndex(slugify) = true")
	}
}
