package packs_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
)

// Each schema comes out in the form MCP clients accept when an exact
// equivalent exists, byte for byte elsewhere, or is refused with the
// JSON path of every part that has none.
func TestFitToolSchemas(t *testing.T) {
	for _, c := range []struct {
		name   string
		output bool
		in     string
		// want is the fitted schema ("" for in itself); paths are the
		// refused parts, in document order.
		want  string
		paths []string
	}{
		{name: "empty", in: ``},
		{name: "object schema kept", in: `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`},
		{name: "no type", in: `{"properties":{"a":{}}}`, want: `{"type":"object","properties":{"a":{}}}`},
		{name: "no properties", in: `{"type":"object"}`, want: `{"type":"object","properties":{}}`},
		{name: "empty object", in: `{ }`, want: `{"type":"object","properties":{}}`},
		{name: "map input", in: `{"type":"object","additionalProperties":{"type":"string"}}`,
			want: `{"type":"object","properties":{},"additionalProperties":{"type":"string"}}`},
		{name: "ref root", in: `{"$ref":"#/$defs/a","$defs":{"a":{"type":"object","properties":{"x":{"type":"integer"}}}}}`,
			want: `{"type":"object","properties":{},"$ref":"#/$defs/a","$defs":{"a":{"type":"object","properties":{"x":{"type":"integer"}}}}}`},
		{name: "properties after a late type", in: `{"description":"d","type":"object","required":[]}`,
			want: `{"description":"d","type":"object","properties":{},"required":[]}`},
		{name: "nested booleans kept", in: `{"type":"object","properties":{"a":{"type":"array","items":true},"b":{"type":"object","additionalProperties":false,"properties":{"c":true}}},"additionalProperties":false}`},
		{name: "true property", in: `{"type":"object","properties":{"a":true}}`, want: `{"type":"object","properties":{"a":{}}}`},
		{name: "false property", in: `{"type":"object","properties":{"a":false}}`, want: `{"type":"object","properties":{"a":{"not":{}}}}`},
		{name: "spacing kept", in: " {\"properties\" : { \"a\" :\ttrue , \"b\":{ } } } ", want: "{\"type\":\"object\",\"properties\" : { \"a\" :\t{} , \"b\":{ } } }"},
		{name: "key written twice", in: `{"properties":{"a":true},"type":"object","properties":{"b":false}}`,
			want: `{"properties":{"a":{}},"type":"object","properties":{"b":{"not":{}}}}`},
		{name: "escaped property name", in: `{"properties":{"a\"b":true,"\u00e9":false}}`, want: `{"type":"object","properties":{"a\"b":{},"\u00e9":{"not":{}}}}`},
		{name: "true root", in: `true`, want: `{"type":"object","properties":{}}`},
		{name: "type list", in: `{"type":["object","null"]}`, want: `{"type":"object","properties":{}}`},
		{name: "false root", in: `false`, paths: []string{"$"}},
		{name: "array root", in: `[]`, paths: []string{"$"}},
		{name: "null root", in: `null`, paths: []string{"$"}},
		{name: "not JSON", in: `{"type":`, paths: []string{"$"}},
		{name: "string type", in: `{"type":"string"}`, paths: []string{"$.type"}},
		{name: "type list without object", in: `{"type":["array"]}`, paths: []string{"$.type"}},
		{name: "type a number", in: `{"type":5}`, paths: []string{"$.type"}},
		{name: "properties a boolean", in: `{"type":"object","properties":true}`, paths: []string{"$.properties"}},
		{name: "properties a list", in: `{"properties":[{"type":"string"}]}`, paths: []string{"$.properties"}},
		{name: "property a string", in: `{"properties":{"a":"string","b b":5,"c":true}}`, paths: []string{"$.properties.a", `$.properties["b b"]`}},
		{name: "required a string", in: `{"required":"a"}`, paths: []string{"$.required"}},
		{name: "required of numbers", in: `{"required":[1]}`, paths: []string{"$.required"}},
		{name: "$schema a number", in: `{"$schema":7}`, paths: []string{"$.$schema"}},
		{name: "every part", in: `{"type":"string","properties":{"a":1},"required":null}`, paths: []string{"$.type", "$.properties.a", "$.required"}},

		{name: "output true kept", output: true, in: `true`},
		{name: "output false kept", output: true, in: `false`},
		{name: "output array kept", output: true, in: `{"type":"array","items":true}`},
		{name: "output type list kept", output: true, in: `{"type":["object","null"],"properties":{"a":true}}`},
		{name: "output true property", output: true, in: `{"type":"object","properties":{"a":true}}`, want: `{"type":"object","properties":{"a":{}}}`},
		{name: "output properties a list", output: true, in: `{"type":"object","properties":[]}`, paths: []string{"$.properties"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fit, field := packs.FitInputSchema, packs.InputSchemaField
			if c.output {
				fit, field = packs.FitOutputSchema, packs.OutputSchemaField
			}
			got, err := fit(json.RawMessage(c.in))
			if len(c.paths) > 0 {
				if !errors.Is(err, packs.ErrToolSchema) {
					t.Fatalf("err = %v, want ErrToolSchema", err)
				}
				var paths []string
				for _, e := range errLeaves(err) {
					var se *packs.ToolSchemaError
					if !errors.As(e, &se) || se.Field != field || se.Got == "" || se.Want == "" {
						t.Fatalf("%#v: want a *ToolSchemaError of %s saying what is there and what is accepted", e, field)
					}
					paths = append(paths, se.Path)
				}
				if strings.Join(paths, " ") != strings.Join(c.paths, " ") {
					t.Errorf("refused at %v, want %v (%v)", paths, c.paths, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if want == "" {
				want = c.in
			}
			if string(got) != want {
				t.Errorf("fitted to %s, want %s", got, want)
			}
		})
	}
}

func errLeaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, errLeaves(e)...)
		}
		return out
	}
	return []error{err}
}

// A manifest problem of this kind is a *ManifestError wrapping the
// *ToolSchemaError: it matches ErrInvalidManifest and ErrToolSchema.
func TestManifestToolSchemaErrors(t *testing.T) {
	_, err := packs.Load(os.DirFS("../testdata/packs/manifest/mcp-schema-refused"), "refused", "workspace")
	var n int
	for _, e := range errLeaves(err) {
		var me *packs.ManifestError
		var se *packs.ToolSchemaError
		if !errors.As(e, &me) || !errors.Is(e, packs.ErrInvalidManifest) {
			t.Fatalf("%v: want a *ManifestError", e)
		}
		if errors.As(e, &se) {
			if !errors.Is(e, packs.ErrToolSchema) || se.Path != "$.type" || me.Line == 0 {
				t.Errorf("%v: %+v; want ErrToolSchema at $.type with a line", e, se)
			}
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d tool schema errors in %v, want 2", n, err)
	}
}

// Whatever the document, fitting never panics; a schema it accepts is
// valid JSON, fitted already (fitting again changes nothing), still a
// valid JSON Schema if it was one, and, as an input schema sent to MCP
// clients, a valid Tool in every published revision. A refusal says
// where and what is accepted.
func FuzzFitToolSchema(f *testing.F) {
	for _, s := range []string{
		``, `true`, `false`, `null`, `[]`, `"x"`, `1`, `{}`,
		`{"type":"object","properties":{"a":true,"b":false,"c":{"type":"string"}},"required":["a"]}`,
		`{"type":["object","null"],"properties":{"a":{"type":"array","items":true}}}`,
		`{"properties":{"a":true},"properties":{"b":false}}`,
		`{"type":"string"}`, `{"properties":[]}`, `{"properties":{"a":1}}`, `{"required":"a"}`, `{"$schema":1}`,
		`{"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"x":true},"properties":{"x":{"$ref":"#/$defs/x"}}}`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, output bool) {
		fit := packs.FitInputSchema
		if output {
			fit = packs.FitOutputSchema
		}
		got, err := fit(json.RawMessage(in))
		if err != nil {
			for _, e := range errLeaves(err) {
				var se *packs.ToolSchemaError
				if !errors.As(e, &se) || !strings.HasPrefix(se.Path, "$") || se.Want == "" {
					t.Fatalf("refusal %#v: want a *ToolSchemaError with a path and what is accepted", e)
				}
			}
			return
		}
		if strings.Trim(in, " \t\r\n") == "" {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("fitted %q to %q, not JSON", in, got)
		}
		again, err := fit(got)
		if err != nil || string(again) != string(got) {
			t.Fatalf("fitting %q again gave %q, %v", got, again, err)
		}
		if _, err := packs.CompileSchema(json.RawMessage(in)); err != nil {
			return
		}
		if _, err := packs.CompileSchema(got); err != nil {
			t.Fatalf("%q compiles, its fitted form %q does not: %v", in, got, err)
		}
		if output {
			return
		}
		var root map[string]json.RawMessage
		if err := json.Unmarshal(got, &root); err != nil {
			t.Fatalf("fitted input schema %q is not an object", got)
		}
		if _, ok := root["type"]; !ok {
			root["type"] = json.RawMessage(`"object"`) // as the MCP rendering adds it
		}
		tool, _ := json.Marshal(map[string]any{"name": "t", "inputSchema": root})
		for _, rev := range testenv.MCPRevisions {
			if err := testenv.ValidateMCP(rev, "Tool", tool); err != nil {
				t.Fatalf("%q fitted to %q is not a valid MCP %s input schema: %v", in, got, rev, err)
			}
		}
	})
}
