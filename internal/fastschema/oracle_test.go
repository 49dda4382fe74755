package fastschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillhost/skillhost/packs"
)

// The oracle is the full validator as the registry runs it: the schema
// compiled by packs.CompileSchema (Draft 2020-12, formats asserted), the
// document decoded by jsonschema.UnmarshalJSON.

// oracle is the full validator's answer for one document.
type oracle struct {
	valid    bool
	panicked any // the validator panicked (numbers math/big will not read)
}

func fullValidate(s *jsonschema.Schema, doc []byte) (o oracle) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return oracle{}
	}
	defer func() {
		if p := recover(); p != nil {
			o = oracle{panicked: p}
		}
	}()
	return oracle{valid: s.Validate(v) == nil}
}

// compileBoth compiles schema for the oracle and the fast path.
func compileBoth(t testing.TB, schema string) (*jsonschema.Schema, *Plan) {
	t.Helper()
	full, err := packs.CompileSchema(json.RawMessage(schema))
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	plan, ok := Compile(json.RawMessage(schema))
	if !ok {
		t.Fatalf("schema %s: no plan", schema)
	}
	return full, plan
}

// agree checks the fast path's verdict on doc against the oracle: valid
// must be valid, invalid must be invalid (unless the document repeats a
// name: the validator sees only the last value, the fast path checks
// every value), unsure claims nothing. It returns the verdict.
func agree(t testing.TB, schema string, full *jsonschema.Schema, plan *Plan, doc []byte) verdict {
	t.Helper()
	got := plan.check(doc)
	want := fullValidate(full, doc)
	switch {
	case got == valid && !want.valid:
		t.Fatalf("HOLE: fast path says valid, validator says invalid (panic: %v)\nschema: %s\ndoc:    %q", want.panicked, schema, doc)
	case got == invalid && want.valid && !hasDuplicateNames(doc):
		t.Fatalf("fast path says invalid, validator says valid\nschema: %s\ndoc:    %q", schema, doc)
	}
	if plan.Valid(doc) != (got == valid) {
		t.Fatalf("Valid and check disagree on %q", doc)
	}
	return got
}

// hasDuplicateNames reports whether some object of the JSON document doc
// has a name twice (compared decoded, as the validator's map does).
func hasDuplicateNames(doc []byte) bool {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber() // 1e999 is no float64, and an error would end the scan
	type frame struct {
		obj   bool
		names map[string]bool
		key   bool // the next string token is a name
	}
	var stack []*frame
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.key {
			if name, ok := tok.(string); ok {
				if top.names[name] {
					return true
				}
				top.names[name] = true
				top.key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.obj {
				top.key = true
			}
			stack = append(stack, &frame{obj: true, names: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			if top != nil && top.obj {
				top.key = true
			}
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].obj {
				stack[len(stack)-1].key = true
			}
			continue
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}

// bundledSchemas returns the input and output schemas of the bundled
// pack's tools, and the examples of their arguments, by tool name.
func bundledSchemas(t testing.TB) (schemas map[string]string, examples map[string][]string) {
	t.Helper()
	p, err := packs.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	schemas, examples = map[string]string{}, map[string][]string{}
	for _, m := range p.Modules {
		for _, tool := range m.Tools {
			schemas[tool.Name+".input"] = string(tool.InputSchema)
			if len(tool.OutputSchema) > 0 {
				schemas[tool.Name+".output"] = string(tool.OutputSchema)
			}
			for _, ex := range tool.Examples {
				examples[tool.Name+".input"] = append(examples[tool.Name+".input"], string(ex.Args))
			}
		}
	}
	if len(schemas) == 0 {
		t.Fatal("the bundled pack has no tools")
	}
	return schemas, examples
}

func (v verdict) String() string {
	switch v {
	case valid:
		return "valid"
	case invalid:
		return "invalid"
	case unsure:
		return "unsure"
	}
	return fmt.Sprintf("verdict(%d)", v)
}
