package packs_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
)

// The bundled pack validates, and its manifest says exactly what each
// module's describe export says about names, descriptions, tags, schemas,
// categories and flags.
// After changing a module, regenerate its entries with
// `skillhost describe FILE.wasm`.
func TestBundledPackMatchesModules(t *testing.T) {
	p, err := packs.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "core" || p.Source != "bundled" || len(p.Modules) == 0 {
		t.Fatalf("bundled pack %+v", p)
	}
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithCacheDir(testenv.CacheDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	for _, m := range p.Modules {
		t.Run(m.Name, func(t *testing.T) {
			wasm, err := fs.ReadFile(p.FS, m.Path)
			if err != nil {
				t.Fatal(err)
			}
			hm, err := h.Load(ctx, wasm, host.LoadOptions{Name: m.Path, SHA256: m.SHA256})
			if err != nil {
				t.Fatal(err)
			}
			d, err := hm.Describe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []abi.ToolDescriptor
			for _, td := range d.Tools {
				if td.Export == "" {
					td.Export = td.Name
				}
				td.InputSchema, td.OutputSchema = canonical(t, td.InputSchema), canonical(t, td.OutputSchema)
				td.Examples = nil // written in pack.yaml only
				want = append(want, td)
			}
			for _, tool := range m.Tools {
				got = append(got, abi.ToolDescriptor{Name: tool.Name, Export: tool.Export, Description: tool.Description,
					InputSchema: canonical(t, tool.InputSchema), OutputSchema: canonical(t, tool.OutputSchema), Tags: tool.Tags,
					Category: tool.Category, SideEffects: tool.SideEffects, Idempotent: tool.Idempotent,
					RequiresNetwork: tool.RequiresNetwork, RequiresFilesystem: tool.RequiresFilesystem})
				if err := hmExports(hm, tool.Export); err != nil {
					t.Error(err)
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("pack.yaml disagrees with describe (-describe +pack.yaml)\n%s", d)
			}
		})
	}
}

func hmExports(m *host.Module, export string) error {
	for _, e := range m.Exports() {
		if e == export {
			return nil
		}
	}
	return &exportError{export}
}

type exportError struct{ name string }

func (e *exportError) Error() string { return "module has no export " + e.name }

// canonical re-encodes JSON so key order and spacing do not matter.
func canonical(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("schema %s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return b
}
