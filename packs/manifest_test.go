package packs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/grant"
)

const goodManifest = `name: demo
version: 1.2.0
description: A demo pack.
modules:
  - name: text
    path: modules/text.wasm
    sha256: ` + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" + `
    request:
      allowed_hosts: ["api.example.com"]
      mounts: [{guest: /data, read_only: true}]
      env: [API_KEY]
      config: {user_agent: demo}
      tools: [other]
      services: [mail.send]
    limits: {timeout: 2s, max_memory: 64MiB, max_output: 1MB, max_fuel: 5000000}
    tools:
      - name: slugify
        description: Make a slug.
        input_schema:
          type: object
          properties: {text: {type: string}}
        idempotent: true
      - name: fetch
        export: do_fetch
        side_effects: true
        requires_network: true
`

func TestParseGood(t *testing.T) {
	p, err := Parse([]byte(goodManifest), "pack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Pack{
		Name: "demo", Version: "1.2.0", Description: "A demo pack.", DefaultLoading: LoadingDeferred,
		Modules: []*Module{{
			Name: "text", Path: "modules/text.wasm", SHA256: strings.Repeat("a", 64),
			Request: Request{
				AllowedHosts: []string{"api.example.com"},
				Mounts:       []MountRequest{{Guest: "/data", ReadOnly: true}},
				Env:          []string{"API_KEY"},
				Config:       map[string]string{"user_agent": "demo"},
				Tools:        []string{"other"},
				Services:     []string{"mail.send"},
			},
			Limits: grant.Limits{Timeout: 2 * time.Second, MaxMemoryBytes: 64 << 20, MaxOutputBytes: 1e6, MaxFuel: 5e6},
			Tools: []*ToolSpec{
				{Name: "slugify", Export: "slugify", DisplayName: "Slugify", Description: "Make a slug.", Idempotent: true,
					InputSchema: []byte(`{"properties":{"text":{"type":"string"}},"type":"object"}`),
					Version:     "1.2.0", Category: DefaultCategory, Loading: LoadingDeferred,
					Written: []string{"description", "idempotent", "input_schema", "name"}},
				{Name: "fetch", Export: "do_fetch", DisplayName: "Fetch", SideEffects: true, RequiresNetwork: true,
					Version: "1.2.0", Category: DefaultCategory, Loading: LoadingDeferred,
					Written: []string{"export", "name", "requires_network", "side_effects"}},
			},
		}},
	}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if got := p.Modules[0].Tools[0].Risk(); got != "SAFE" {
		t.Errorf("slugify risk %s", got)
	}
	if got := p.Modules[0].Tools[1].Risk(); got != "DANGEROUS" {
		t.Errorf("fetch risk %s", got)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, manifest string
		want           []string // substrings, one per expected error
	}{
		{"empty", "", []string{"pack.yaml: manifest is empty"}},
		{"syntax", "name: [unclosed", []string{"pack.yaml:1:"}},
		{"unknown field", "name: x\nmodules: []\nbogus: 1\n", []string{"pack.yaml:2: modules must have at least 1 item", `pack.yaml:3: unknown field "bogus"`}},
		{"bad names", "name: Bad Name\nmodules:\n  - name: Text\n    path: ../x.wasm\n",
			[]string{`pack.yaml:1: name "Bad Name" must match`, `pack.yaml:3: modules[0].name "Text" must match`, `pack.yaml:4: modules[0].path "../x.wasm" must be a relative path`}},
		{"no modules", "name: x\n", []string{`pack.yaml:1: missing required field "modules"`}},
		{"duplicate tool", "name: x\nmodules:\n  - name: m\n    path: m.wasm\n    tools:\n      - name: a\n      - name: a\n",
			[]string{`pack.yaml:7: modules[0].tools[1].name: tool "a" is already declared at modules[0].tools[0]`}},
		{"bad limits", "name: x\nmodules:\n  - name: m\n    path: m.wasm\n    limits: {timeout: soon}\n", []string{`limits: timeout "soon"`}},
		{"bad fuel", "name: x\nmodules:\n  - name: m\n    path: m.wasm\n    limits: {max_fuel: -1}\n", []string{"pack.yaml:5: modules[0].limits.max_fuel is -1; must be at least 0"}},
		{"bad size", "name: x\nmodules:\n  - name: m\n    path: m.wasm\n    limits: {max_memory: 8GiB}\n", []string{"above the 4 GiB"}},
		{"bad schema", "name: x\nmodules:\n  - name: m\n    path: m.wasm\n    tools:\n      - name: a\n        input_schema: [1]\n", []string{"pack.yaml:7: modules[0].tools[0].input_schema must be an object, got array"}},
		{"bad mount and env", "name: x\nmodules:\n  - name: m\n    path: m.wasm\n    request: {mounts: [{guest: data}], env: [lower]}\n",
			[]string{`pack.yaml:5: modules[0].request.mounts[0].guest "data" must match ^/`, `pack.yaml:5: modules[0].request.env[0] "lower" must match`}},
		{"bad risk", "name: x\nmodules:\n  - name: m\n    path: m.wasm\n    tools: [{name: a, risk_level: scary}]\n", []string{`pack.yaml:5: modules[0].tools[0].risk_level "scary" must be one of`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.manifest), "pack.yaml")
			if !errors.Is(err, ErrInvalidManifest) {
				t.Fatalf("err = %v, want ErrInvalidManifest", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("got %d errors, want %d:\n%s", len(lines), len(tt.want), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// An alias bomb is refused quickly (decodeYAML bounds alias expansion).
func TestParseAliasBomb(t *testing.T) {
	m := "name: x\nmodules:\n  - name: m\n    path: m.wasm\n    tools:\n      - name: a\n        tags: &a [x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for i := 0; i < 8; i++ {
		name := string(rune('b' + i))
		m += "      - name: " + name + "\n        tags: &" + name + " [" + strings.Repeat("*"+prev+",", 8) + "*" + prev + "]\n"
		prev = name
	}
	if _, err := Parse([]byte(m), "pack.yaml"); !errors.Is(err, ErrInvalidManifest) {
		t.Errorf("err = %v", err)
	}
}

func TestLoadChecksModuleFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"pack.yaml":         {Data: []byte("name: x\nmodules:\n  - name: m\n    path: m.wasm\n  - name: n\n    path: gone.wasm\n")},
		"m.wasm":            {Data: []byte("\x00asm")},
		"unrelated/file.md": {Data: []byte("#")},
	}
	_, err := Load(fsys, "packs/x", "workspace")
	if !errors.Is(err, ErrInvalidManifest) || !strings.Contains(err.Error(), `packs/x/pack.yaml: modules[1].path: module file "gone.wasm" does not exist`) {
		t.Errorf("err = %v", err)
	}
	delete(fsys, "pack.yaml")
	if _, err := Load(fsys, "packs/x", "workspace"); !errors.Is(err, ErrNoManifest) {
		t.Errorf("no manifest: err = %v", err)
	}
	fsys["pack.yaml"] = &fstest.MapFile{Data: []byte("name: x\n" + strings.Repeat("#", maxManifestBytes))}
	if _, err := Load(fsys, "packs/x", "workspace"); !errors.Is(err, ErrInvalidManifest) {
		t.Errorf("huge manifest: err = %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"10": 10, "1KB": 1000, "1 KiB": 1024, "64MiB": 64 << 20, "2g": 2 << 30, "5B": 5} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "10 parsecs", "99999999999999999999", "18446744073709551615GiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(goodManifest))
	f.Add([]byte("name: x\nmodules: [{name: m, path: m.wasm, tools: [{name: a}]}]"))
	f.Add([]byte("a: &a [*a]"))
	if cases, err := filepath.Glob("../testdata/packs/manifest/*/pack.yaml"); err == nil {
		for _, c := range cases {
			if data, err := os.ReadFile(c); err == nil && len(data) < 16<<10 {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "pack.yaml")
		if err == nil && (p == nil || !nameRE.MatchString(p.Name)) {
			t.Fatalf("accepted an invalid pack: %+v", p)
		}
		if err != nil && !errors.Is(err, ErrInvalidManifest) {
			t.Fatalf("error %v does not match ErrInvalidManifest", err)
		}
	})
}

func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"word_count": "Word count", "json_query": "JSON query", "case-convert": "Case convert",
		"http_get_url": "HTTP get URL", "x": "X", "pdf2text": "Pdf2text",
	} {
		if got := DisplayName(in); got != want {
			t.Errorf("DisplayName(%q) = %q, want %q", in, got, want)
		}
	}
}

// Tools built outside Parse, from a module's describe export, get the
// same defaults.
func TestCompleteTool(t *testing.T) {
	p := &Pack{Version: "3.0.0", DefaultLoading: LoadingAlways}
	got := &ToolSpec{Name: "word_count"}
	p.CompleteTool(got)
	want := &ToolSpec{Name: "word_count", Export: "word_count", DisplayName: "Word count", Category: DefaultCategory,
		Loading: LoadingAlways, Version: "3.0.0"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	kept := &ToolSpec{Name: "a", Export: "b", DisplayName: "C", Category: "d", Loading: LoadingDeferred, Version: "1"}
	before := *kept
	(&Pack{}).CompleteTool(kept)
	if d := cmp.Diff(&before, kept); d != "" {
		t.Errorf("declared fields changed (-want +got)\n%s", d)
	}
	empty := &ToolSpec{Name: "a"}
	(&Pack{}).CompleteTool(empty)
	if empty.Loading != LoadingDeferred {
		t.Errorf("loading %q, want deferred", empty.Loading)
	}
}

func TestToolRisk(t *testing.T) {
	for _, tt := range []struct {
		tool ToolSpec
		want string
	}{
		{ToolSpec{Idempotent: true}, "SAFE"},
		{ToolSpec{}, "MODERATE"},
		{ToolSpec{SideEffects: true}, "MODERATE"},
		{ToolSpec{SideEffects: true, RequiresNetwork: true}, "DANGEROUS"},
		{ToolSpec{SideEffects: true, RequiresFilesystem: true}, "DANGEROUS"},
		{ToolSpec{Idempotent: true, RequiresNetwork: true}, "SAFE"},
		{ToolSpec{Idempotent: true, RiskLevel: "CRITICAL"}, "CRITICAL"},
		{ToolSpec{Idempotent: true, RiskLevel: "AUTO"}, "SAFE"},
	} {
		if got := tt.tool.Risk(); got != tt.want {
			t.Errorf("%+v: Risk() = %s, want %s", tt.tool, got, tt.want)
		}
	}
}

func TestManifestErrorText(t *testing.T) {
	for _, tt := range []struct {
		err  ManifestError
		want string
	}{
		{ManifestError{File: "f", Line: 3, Field: "name", Msg: `"PDF" must match ^[a-z]+$`}, `f:3: name "PDF" must match ^[a-z]+$`},
		{ManifestError{File: "f", Line: 3, Field: "steps", Msg: "must have at least 1 item"}, `f:3: steps must have at least 1 item`},
		{ManifestError{File: "f", Field: "description", Msg: "is 1500 characters; at most 1024 allowed"}, `f: description is 1500 characters; at most 1024 allowed`},
		{ManifestError{File: "f", Line: 1, Field: "tags", Msg: "has 3 items; at most 2 allowed"}, `f:1: tags has 3 items; at most 2 allowed`},
		{ManifestError{File: "f", Line: 2, Field: "steps[2]", Msg: `missing required field "action"`}, `f:2: steps[2]: missing required field "action"`},
		{ManifestError{File: "f", Line: 4, Msg: `unknown field "nmae"`}, `f:4: unknown field "nmae"`},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

// A tool without an input schema has nothing to check its examples
// against; its output schema must still compile.
func TestParseExamplesWithoutSchema(t *testing.T) {
	m := "name: x\nmodules:\n  - name: m\n    path: m.wasm\n    tools:\n      - name: a\n        examples: [{args: {anything: 1}}]\n        output_schema: {type: object}\n"
	p, err := Parse([]byte(m), "pack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(p.Modules[0].Tools[0].Examples[0].Args); got != `{"anything":1}` {
		t.Errorf("args %s", got)
	}
	bad := strings.Replace(m, "{type: object}", "{type: 7}", 1)
	if _, err := Parse([]byte(bad), "pack.yaml"); err == nil || !strings.Contains(err.Error(), `pack.yaml:8: modules[0].tools[0].output_schema is not a valid JSON Schema for tool "a"`) {
		t.Errorf("err = %v", err)
	}
}

func BenchmarkParse(b *testing.B) {
	data := []byte(goodManifest)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, "pack.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}
