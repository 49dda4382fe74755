package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// checkMCPTools validates each rendered tool against the Tool definition
// of every published MCP revision, and returns the names rendered.
func checkMCPTools(t *testing.T, rendered []registry.MCPTool) []string {
	t.Helper()
	var names []string
	for _, r := range rendered {
		names = append(names, r.Name)
		doc, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		for _, rev := range testenv.MCPRevisions {
			if err := testenv.ValidateMCP(rev, "Tool", doc); err != nil {
				t.Errorf("tool %s is not a valid MCP %s Tool: %v\n%s", r.Name, rev, err, doc)
			}
		}
	}
	return names
}

// Every built-in tool and every tool of the bundled pack, rendered for
// MCP, is a valid Tool under the published schema of each revision
// skillhost serves: an object input schema whose properties are object
// schemas, an object output schema or none.
func TestMCPToolsMatchThePublishedSchemas(t *testing.T) {
	ctx := context.Background()
	cat, err := packs.LoadCatalog(ctx, []packs.SourceSpec{packs.BundledSource()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := index.Open(ctx, filepath.Join(t.TempDir(), "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	set, err := registry.NewSkillSet(registry.SkillSetOptions{Files: cat.Skills})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(ctx, cat, registry.Options{Host: newHost(t),
		Builtins: allBuiltins(registry.BuiltinOptions{Index: idx, Skills: set})})
	if err != nil {
		t.Fatal(err)
	}
	if p := reg.Problems(); len(p) > 0 {
		t.Fatalf("problems: %v", p)
	}
	var kinds = map[registry.Kind]int{}
	var visible []*registry.Tool
	for _, tl := range reg.Tools() {
		if !tl.Hidden {
			visible = append(visible, tl)
			kinds[tl.Kind]++
		}
	}
	names := checkMCPTools(t, registry.MCPTools(reg.Tools(), registry.RenderOptions{Examples: true}))
	if len(names) != len(visible) {
		t.Errorf("rendered %d tools, want the %d visible ones: %v", len(names), len(visible), names)
	}
	if kinds[registry.KindBuiltin] != 8 || kinds[registry.KindWasm] == 0 {
		t.Errorf("tools by kind: %v; want the 8 built-ins and the bundled pack's tools", kinds)
	}
	if !slices.Contains(names, registry.RunSkillScriptName) || !slices.Contains(names, "slugify") {
		t.Errorf("rendered %v; want run_skill_script and slugify among them", names)
	}
}

// The built-ins are declared in the form MCP clients accept: fitting
// their schemas changes nothing, so what the registry holds, what the
// index stores and what every rendering shows is what the source says.
func TestBuiltinSchemasAreDeclaredFitted(t *testing.T) {
	idx, err := index.Open(context.Background(), filepath.Join(t.TempDir(), "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	set, err := registry.NewSkillSet(registry.SkillSetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	builtins := allBuiltins(registry.BuiltinOptions{Index: idx, Skills: set})
	if len(builtins) != 8 {
		t.Fatalf("%d built-ins, want 8", len(builtins))
	}
	for _, b := range builtins {
		d := b.Describe()
		t.Run(d.Name, func(t *testing.T) {
			for _, c := range []struct {
				field string
				fit   func(json.RawMessage) (json.RawMessage, error)
				raw   json.RawMessage
			}{
				{packs.InputSchemaField, packs.FitInputSchema, d.InputSchema},
				{packs.OutputSchemaField, packs.FitOutputSchema, d.OutputSchema},
			} {
				got, err := c.fit(c.raw)
				if err != nil {
					t.Errorf("%s: %v", c.field, err)
				} else if string(got) != string(c.raw) {
					t.Errorf("%s is declared in a form MCP clients refuse:\n declared %s\n fitted   %s", c.field, c.raw, got)
				}
			}
		})
	}
}

// fitNative is a native tool with the schemas it is given.
type fitNative struct {
	name          string
	input, output string
}

func (n fitNative) Describe() packs.ToolSpec {
	d := packs.ToolSpec{Name: n.name, Description: "Has schemas to fit.", Loading: packs.LoadingAlways}
	if n.input != "" {
		d.InputSchema = json.RawMessage(n.input)
	}
	if n.output != "" {
		d.OutputSchema = json.RawMessage(n.output)
	}
	return d
}

func (fitNative) Execute(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

// A tool whose schemas MCP clients would refuse is registered in the
// nearest form they accept when there is an equivalent one, and refused,
// naming the tool, the schema and the JSON path, when there is none.
// Natives and the tools a module's describe export reports (below) take
// the same way in.
func TestNativeSchemasAreFitted(t *testing.T) {
	for _, c := range []struct {
		name          string
		input, output string
		// wantIn and wantOut are the schemas registered ("" for the
		// declared one); path is the refused part's JSON path.
		wantIn, wantOut string
		path            string
		// valid and invalid are arguments the schema accepts and refuses.
		valid, invalid string
	}{
		{name: "boolean properties", input: `{"type":"object","properties":{"a":true,"b":false,"c":{"type":"string"}}}`,
			wantIn: `{"type":"object","properties":{"a":{},"b":{"not":{}},"c":{"type":"string"}}}`,
			valid:  `{"a":[1,{}],"c":"x"}`, invalid: `{"b":null}`},
		{name: "boolean output property", output: `{"type":"object","required":["r"],"properties":{"r":true}}`,
			wantOut: `{"type":"object","required":["r"],"properties":{"r":{}}}`},
		{name: "true root", input: `true`, wantIn: `{"type":"object","properties":{}}`, valid: `{"any":1}`},
		{name: "no properties", input: `{"type":"object","additionalProperties":{"type":"integer"}}`,
			wantIn: `{"type":"object","properties":{},"additionalProperties":{"type":"integer"}}`, valid: `{"n":1}`, invalid: `{"n":"x"}`},
		{name: "ref root", input: `{"$ref":"#/$defs/q","$defs":{"q":{"type":"object","required":["q"],"properties":{"q":{"type":"string"}}}}}`,
			wantIn: `{"type":"object","properties":{},"$ref":"#/$defs/q","$defs":{"q":{"type":"object","required":["q"],"properties":{"q":{"type":"string"}}}}}`,
			valid:  `{"q":"x"}`, invalid: `{}`},
		{name: "type list with object", input: `{"type":["null","object"],"properties":{"q":{"type":"string"}}}`,
			wantIn: `{"type":"object","properties":{"q":{"type":"string"}}}`, valid: `{"q":"x"}`, invalid: `{"q":1}`},
		{name: "array output kept", output: `{"type":"array","items":true}`},
		{name: "layout kept", input: "{\n  \"properties\": {\"z\": true, \"a\": {\"type\": \"integer\"}}\n}",
			wantIn: "{\"type\":\"object\",\n  \"properties\": {\"z\": {}, \"a\": {\"type\": \"integer\"}}\n}"},
		{name: "false root", input: `false`, path: "$"},
		{name: "string root type", input: `{"type":"string"}`, path: "$.type"},
		{name: "type list without object", input: `{"type":["string","null"]}`, path: "$.type"},
		{name: "property name quoted", input: `{"type":"object","properties":{"a b":true,"c":{"type":"object"}},"$schema":"https://json-schema.org/draft/2020-12/schema"}`,
			wantIn: `{"type":"object","properties":{"a b":{},"c":{"type":"object"}},"$schema":"https://json-schema.org/draft/2020-12/schema"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := fitNative{name: "fit_me", input: c.input, output: c.output}
			reg, err := registry.New(context.Background(), nil, registry.Options{Natives: []registry.Native{n}})
			if c.path != "" {
				var se *packs.ToolSchemaError
				if !errors.Is(err, registry.ErrInvalidTool) || !errors.Is(err, packs.ErrToolSchema) || !errors.As(err, &se) {
					t.Fatalf("New: %v; want ErrInvalidTool and a *packs.ToolSchemaError", err)
				}
				if se.Path != c.path || se.Field != packs.InputSchemaField || se.Want == "" || !strings.Contains(err.Error(), `"fit_me"`) {
					t.Errorf("error %q (%+v); want the tool named and %s at %s", err, se, se.Field, c.path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tl, _ := reg.Tool("fit_me")
			for _, s := range []struct {
				got            json.RawMessage
				declared, want string
			}{
				{tl.InputSchema, c.input, c.wantIn}, {tl.OutputSchema, c.output, c.wantOut},
			} {
				want := s.want
				if want == "" {
					want = s.declared
				}
				if string(s.got) != want {
					t.Errorf("schema registered as %s, want %s", s.got, want)
				}
			}
			checkMCPTools(t, registry.MCPTools(reg.Tools(), registry.RenderOptions{}))
			// The fitted schema checks arguments as the declared one did.
			run, err := reg.NewRun(registry.RunContext{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for args, valid := range map[string]bool{c.valid: true, c.invalid: false} {
				if args == "" {
					continue
				}
				if res, err := run.Call(context.Background(), "fit_me", json.RawMessage(args), nil); err != nil || res.IsError == valid {
					t.Errorf("call with %s: %+v, %v; want valid %v", args, res, err, valid)
				}
			}
		})
	}
}

// The tools a module's describe export reports take the same fitting as
// a manifest's: describe_schemas.wat reports boolean property schemas, a
// boolean root, a type list (rewritten), a root that takes a string and
// one of false (refused, each a problem naming the pack, the module, the
// tool and the JSON path), and a list output schema (kept: not sent).
func TestDescribedSchemasAreFitted(t *testing.T) {
	dir := writeModulePack(t, "name: fitting\nmodules:\n  - name: m\n    path: m.wasm\n", "testdata/guests/wat/describe_schemas.wasm")
	reg, err := registry.New(context.Background(), catalog(t, dir), registry.Options{Host: newHost(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(reg.Tools()); got != "anything,list_output,loose" {
		t.Errorf("tools %s; want anything, list_output and loose", got)
	}
	want := map[string]string{
		"loose":    `{"type":"object","properties":{"any":{},"never":{"not":{}},"text":{"type":"string"}},"required":["text"]}`,
		"anything": `{"type":"object","properties":{}}`,
	}
	for name, schema := range want {
		if tl, ok := reg.Tool(name); !ok || string(tl.InputSchema) != schema {
			t.Errorf("%s: input schema %s, want %s", name, tl.InputSchema, schema)
		}
	}
	if tl, _ := reg.Tool("loose"); string(tl.OutputSchema) != `{"type":"object","properties":{"result":{}}}` {
		t.Errorf("loose: output schema %s", tl.OutputSchema)
	}
	if tl, _ := reg.Tool("list_output"); string(tl.OutputSchema) != `{"type":"array","items":true}` {
		t.Errorf("list_output: output schema %s, want it as declared", tl.OutputSchema)
	}
	checkMCPTools(t, registry.MCPTools(reg.Tools(), registry.RenderOptions{}))

	problems := map[string]string{}
	var leaves []error
	for _, p := range reg.Problems() {
		leaves = append(leaves, unjoinAll(p)...)
	}
	for _, p := range leaves {
		var se *packs.ToolSchemaError
		if !errors.As(p, &se) || !errors.Is(p, packs.ErrToolSchema) {
			t.Errorf("problem %v; want a *packs.ToolSchemaError", p)
			continue
		}
		for _, tool := range []string{"scalar", "never"} {
			if strings.Contains(p.Error(), `tool "`+tool+`"`) {
				problems[tool] = se.Path
			}
		}
		if !strings.Contains(p.Error(), "pack fitting module m") || !strings.Contains(p.Error(), "MCP clients accept") {
			t.Errorf("problem %q; want the pack, the module and what is accepted named", p)
		}
	}
	if problems["scalar"] != "$.type" || problems["never"] != "$" {
		t.Errorf("problems at %v; want scalar at $.type and never at $", problems)
	}
	// Refused tools are not callable; the rewritten ones are.
	run, err := reg.NewRun(registry.RunContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Call(context.Background(), "scalar", nil, nil); !errors.Is(err, registry.ErrToolNotFound) {
		t.Errorf("calling a refused tool: %v; want ErrToolNotFound", err)
	}
	res, err := run.Call(context.Background(), "loose", json.RawMessage(`{"text":"x","never":1}`), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Error.Message, "$.never") {
		t.Errorf("loose with a property of schema false: %+v, %v; want an invalid_input error at $.never", res, err)
	}
}

// unjoinAll flattens errors.Join trees into their leaves.
func unjoinAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoinAll(e)...)
		}
		return out
	}
	return []error{err}
}
