package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// writeModulePack writes manifest beside a copy of the module at rel (a
// path from the repository's root) named m.wasm.
func writeModulePack(t *testing.T, manifest, rel string) string {
	t.Helper()
	dir := t.TempDir()
	wasm, err := os.ReadFile(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pack.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A tools: entry that sets only some fields is laid over what the
// module's describe export says, field by field: the description and the
// schemas are kept, the flags the module declared give the risk unless
// the entry sets them, and tools the manifest does not list stay out.
func TestToolEntryMergesWithDescribe(t *testing.T) {
	dir := writeModulePack(t, `name: d
modules:
  - name: m
    path: m.wasm
    tools:
      - name: slugify
        tags: [mine]
      - name: word_count
        idempotent: false
        side_effects: true
      - name: shout
        export: case_convert
        category: loud
`, "packs/bundled/modules/text/text.wasm")
	reg, err := registry.New(context.Background(), catalog(t, dir), registry.Options{Host: newHost(t)})
	if err != nil {
		t.Fatal(err)
	}
	if p := reg.Problems(); len(p) > 0 {
		t.Fatalf("problems: %v", p)
	}
	if got := names(reg.Tools()); got != "shout,slugify,word_count" {
		t.Fatalf("tools %s; want the three listed", got)
	}
	slug, _ := reg.Tool("slugify")
	if !strings.HasPrefix(slug.Description, "Turn text into a URL") || len(slug.InputSchema) == 0 || len(slug.OutputSchema) == 0 {
		t.Errorf("slugify lost what the module described: %q, %s, %s", slug.Description, slug.InputSchema, slug.OutputSchema)
	}
	if strings.Join(slug.Tags, ",") != "mine" || slug.Category != "text" || slug.Risk() != "SAFE" {
		t.Errorf("slugify tags %v, category %q, risk %s; want the entry's tags, the module's category, SAFE", slug.Tags, slug.Category, slug.Risk())
	}
	wc, _ := reg.Tool("word_count")
	if wc.Idempotent || !wc.SideEffects || wc.Risk() != "MODERATE" || !strings.HasPrefix(wc.Description, "Count words") {
		t.Errorf("word_count idempotent %v side effects %v risk %s description %q", wc.Idempotent, wc.SideEffects, wc.Risk(), wc.Description)
	}
	shout, _ := reg.Tool("shout")
	if shout.Export != "case_convert" || shout.Category != "loud" || !strings.HasPrefix(shout.Description, "Convert text or an identifier") {
		t.Errorf("shout: export %q category %q description %q", shout.Export, shout.Category, shout.Description)
	}
	run := newRun(t, reg, registry.RunContext{}, nil)
	res, err := run.Call(context.Background(), "slugify", []byte(`{"text":"Hello, World"}`), nil)
	if err != nil || res.IsError || !strings.Contains(string(res.Output), "hello-world") {
		t.Fatalf("slugify: %+v, %v", res, err)
	}
}

// What validate refuses from the exports alone keeps the module's tools
// out at load too, with the same message, before anything is compiled.
func TestModulesThatCannotServeToolsAreProblems(t *testing.T) {
	tests := []struct {
		name, manifest, module, want string
	}{
		{"no tools and no describe", "name: e\nmodules:\n  - {name: m, path: m.wasm}\n", "testdata/guests/wat/echo.wasm",
			"no tools: entry in pack.yaml and no describe export"},
		{"command module", "name: c\nmodules:\n  - {name: m, path: m.wasm, tools: [{name: run, description: Runs.}]}\n", "testdata/guests/wat/command.wasm",
			"-buildmode=c-shared"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := registry.New(context.Background(), catalog(t, writeModulePack(t, tt.manifest, tt.module)), registry.Options{Host: newHost(t)})
			if err != nil {
				t.Fatal(err)
			}
			var found error
			for _, p := range reg.Problems() {
				if errors.Is(p, packs.ErrModule) && strings.Contains(p.Error(), tt.want) {
					found = p
				}
			}
			if found == nil {
				t.Fatalf("problems %v; want one matching packs.ErrModule saying %q", reg.Problems(), tt.want)
			}
		})
	}
}
