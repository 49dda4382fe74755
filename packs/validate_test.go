package packs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/packs"
)

// Arguments are checked against a tool's input schema with every
// violation located by its JSON path and phrased as manifest errors are.
func TestValidateJSON(t *testing.T) {
	s, err := packs.CompileSchema([]byte(`{
		"type": "object",
		"required": ["text"],
		"additionalProperties": false,
		"properties": {
			"text": {"type": "string", "minLength": 1},
			"mode": {"enum": ["upper", "lower"]},
			"items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}}
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		doc  string
		want []packs.Violation
	}{
		{`{"text":"ok"}`, nil},
		{`{"text":5}`, []packs.Violation{{Path: "$.text", Message: "must be a string, got number"}}},
		{`{}`, []packs.Violation{{Path: "$", Message: `missing required field "text"`}}},
		{`{"text":"x","mode":"sideways","items":[{"n":1},{"n":-2}]}`, []packs.Violation{
			{Path: "$.items[1].n", Message: "is -2; must be at least 0"},
			{Path: "$.mode", Message: `"sideways" must be one of upper, lower`},
		}},
		{`{"text":"x","txt":"y"}`, []packs.Violation{{Path: "$", Message: `unknown field "txt"`}}},
		{`[1]`, []packs.Violation{{Path: "$", Message: "must be an object, got array"}}},
	}
	for _, tt := range tests {
		got, err := packs.ValidateJSON(s, []byte(tt.doc))
		if err != nil {
			t.Fatalf("%s: %v", tt.doc, err)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.doc, d)
		}
	}
	// A number too large for the validator's arithmetic is a violation,
	// not a crash.
	num, err := packs.CompileSchema([]byte(`{"type":"object","properties":{"x":{"type":"number","minimum":0}}}`))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := packs.ValidateJSON(num, []byte(`{"x":1e1000001}`))
	if err != nil || len(vs) != 1 || !strings.Contains(vs[0].Message, "too large") {
		t.Errorf("huge number: %v, %v", vs, err)
	}
	if _, err := packs.ValidateJSON(s, []byte(`{"text":`)); !errors.Is(err, packs.ErrNotJSON) {
		t.Errorf("truncated JSON: err = %v, want ErrNotJSON", err)
	}
}

func FuzzValidateJSON(f *testing.F) {
	s, err := packs.CompileSchema([]byte(`{"type":"object","required":["a"],"properties":{"a":{"type":"array","items":{"type":"string"}},"b":{"type":"object","additionalProperties":{"type":"integer"}}}}`))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{`{"a":["x"],"b":{"n":1e1000001}}`, `{"a":["x"]}`, `{"a":[1,{"b":2}]}`, `{"b":{"x":"y","\"q":1}}`, `[]`, `"s"`, `{"a":`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		vs, err := packs.ValidateJSON(s, doc)
		if err != nil && !errors.Is(err, packs.ErrNotJSON) {
			t.Fatalf("undocumented error %v", err)
		}
		for _, v := range vs {
			if v.Path == "" || v.Path[0] != '$' || v.Message == "" {
				t.Fatalf("violation %+v has no path or message", v)
			}
		}
	})
}
