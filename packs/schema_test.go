package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// testSchema is a schema with one property per keyword the messages
// cover.
const testSchema = `{
  "type": "object",
  "required": ["name", "trigger"],
  "additionalProperties": false,
  "properties": {
    "name": {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"},
    "trigger": {"type": "string"},
    "description": {"type": "string", "maxLength": 1024, "minLength": 1},
    "task_type": {"enum": ["browser", "api", "code", "domain", "unknown"]},
    "steps": {"type": "array", "minItems": 1, "maxItems": 3, "items": {
      "type": "object", "required": ["action"], "additionalProperties": false,
      "properties": {"action": {"type": "string"}, "retries": {"type": "integer", "minimum": 0, "maximum": 5}}
    }},
    "enabled": {"type": "boolean"},
    "tags": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
    "homepage": {"type": "string", "format": "uri"},
    "metadata": {"type": "object", "additionalProperties": {"type": "string"}, "propertyNames": {"pattern": "^[a-z]+$"}},
    "kind": {"const": "skill"},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
    "forbidden": false,
    "min": {"type": "integer"},
    "max": {"type": "integer"},
    "limit": {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+[a-z]+$"}]},
    "when": {"oneOf": [{"type": "string"}, {"type": "object", "required": ["at"], "properties": {"at": {"type": "string"}}}]}
  },
  "dependentRequired": {"min": ["max"]}
}`

func compileTestSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	s, err := compileSchema(doc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// schemaMessages validates a YAML document against s and returns the
// errors' texts.
func schemaMessages(t *testing.T, s *jsonschema.Schema, in string) []string {
	t.Helper()
	n, err := decodeYAML("skills/x/SKILL.md", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	v, err := nodeValue("skills/x/SKILL.md", n)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range validateNode(s, v, "skills/x/SKILL.md", n, "") {
		if !errors.Is(e, ErrInvalidManifest) {
			t.Errorf("%v does not match ErrInvalidManifest", e)
		}
		out = append(out, e.Error())
	}
	return out
}

func TestSchemaMessages(t *testing.T) {
	s := compileTestSchema(t)
	const ok = "name: pdf\ntrigger: t\n"
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"valid", ok, nil},
		{"pattern", "trigger: t\nname: PDF\n", []string{`skills/x/SKILL.md:2: name "PDF" must match ^[a-z0-9]+(-[a-z0-9]+)*$`}},
		{"required", "name: pdf\n", []string{`skills/x/SKILL.md:1: missing required field "trigger"`}},
		{"required nested", ok + "steps:\n  - action: a\n  - retries: 1\n", []string{`skills/x/SKILL.md:5: steps[1]: missing required field "action"`}},
		{"unknown field", ok + "nmae: x\n", []string{`skills/x/SKILL.md:3: unknown field "nmae"`}},
		{"unknown nested field", ok + "steps:\n  - action: a\n    acton: b\n", []string{`skills/x/SKILL.md:5: steps[0]: unknown field "acton"`}},
		{"extra field allowed by the schema", ok + "metadata: {author: me}\n", nil},
		{"type", "name: 5\ntrigger: t\n", []string{`skills/x/SKILL.md:1: name must be a string, got number`}},
		{"type of a nested value", ok + "metadata:\n  author: [a]\n", []string{`skills/x/SKILL.md:4: metadata.author must be a string, got array`}},
		{"type of the document", "[1]\n", []string{`skills/x/SKILL.md:1: the document must be an object, got array`}},
		{"empty document", "", []string{`skills/x/SKILL.md: the document must be an object, got null`}},
		{"YAML 1.1 boolean", ok + "enabled: yes\n", []string{`skills/x/SKILL.md:3: enabled must be a boolean, got string "yes" (write true or false)`}},
		{"maxLength", ok + "description: " + strings.Repeat("x", 1500) + "\n", []string{`skills/x/SKILL.md:3: description is 1500 characters; at most 1024 allowed`}},
		{"minLength", ok + "description: ''\n", []string{`skills/x/SKILL.md:3: description must not be empty`}},
		{"enum", ok + "task_type: web\n", []string{`skills/x/SKILL.md:3: task_type "web" must be one of browser, api, code, domain, unknown`}},
		{"minItems", ok + "steps: []\n", []string{`skills/x/SKILL.md:3: steps must have at least 1 item`}},
		{"maxItems", ok + "steps: [{action: a}, {action: b}, {action: c}, {action: d}]\n", []string{`skills/x/SKILL.md:3: steps has 4 items; at most 3 allowed`}},
		{"minimum", ok + "steps:\n  - action: a\n    retries: -1\n", []string{`skills/x/SKILL.md:5: steps[0].retries is -1; must be at least 0`}},
		{"maximum", ok + "steps:\n  - action: a\n    retries: 9\n", []string{`skills/x/SKILL.md:5: steps[0].retries is 9; must be at most 5`}},
		{"integer", ok + "steps:\n  - action: a\n    retries: 1.5\n", []string{`skills/x/SKILL.md:5: steps[0].retries must be an integer, got number`}},
		{"uniqueItems", ok + "tags: [a, b, a]\n", []string{`skills/x/SKILL.md:3: tags must not repeat items; items 0 and 2 are equal`}},
		{"format", ok + "homepage: not a uri\n", []string{`skills/x/SKILL.md:3: homepage "not a uri" is not a valid uri: relative url`}},
		{"propertyNames", ok + "metadata:\n  good: a\n  Bad: b\n", []string{`skills/x/SKILL.md:5: metadata: key "Bad" must match ^[a-z]+$`}},
		{"const", ok + "kind: tool\n", []string{`skills/x/SKILL.md:3: kind "tool" must be "skill"`}},
		{"exclusiveMinimum", ok + "ratio: 0\n", []string{`skills/x/SKILL.md:3: ratio is 0; must be greater than 0`}},
		{"multipleOf", ok + "ratio: 0.7\n", []string{`skills/x/SKILL.md:3: ratio is 0.700000; must be a multiple of 0.500000`}},
		{"false schema", ok + "forbidden: 1\n", []string{`skills/x/SKILL.md:3: forbidden is not allowed here`}},
		{"anyOf by type", ok + "limit: true\n", []string{`skills/x/SKILL.md:3: limit must be an integer or a string, got boolean`}},
		{"anyOf closest branch", ok + "limit: lots\n", []string{`skills/x/SKILL.md:3: limit "lots" must match ^[0-9]+[a-z]+$`}},
		{"oneOf closest branch", ok + "when:\n  day: monday\n", []string{`skills/x/SKILL.md:3: when: missing required field "at"`}},
		{"dependentRequired", ok + "min: 1\n", []string{`skills/x/SKILL.md:1: missing field "max", required when "min" is present`}},
		{"key with dots", ok + "metadata:\n  \"a.b\": [x]\n", []string{
			`skills/x/SKILL.md:4: metadata: key "a.b" must match ^[a-z]+$`,
			`skills/x/SKILL.md:4: metadata["a.b"] must be a string, got array`,
		}},
		{"through an alias and a merge", "base: &b {action: 1}\n" + ok + "steps:\n  - <<: *b\n", []string{
			`skills/x/SKILL.md:1: unknown field "base"`,
			`skills/x/SKILL.md:1: steps[0].action must be a string, got number`,
		}},
		{"several, in line order", "trigger: 1\nname: X\nbogus: 1\n", []string{
			`skills/x/SKILL.md:1: trigger must be a string, got number`,
			`skills/x/SKILL.md:2: name "X" must match ^[a-z0-9]+(-[a-z0-9]+)*$`,
			`skills/x/SKILL.md:3: unknown field "bogus"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, schemaMessages(t, s, tt.in)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// Every embedded schema compiles, whoever wrote it.
func TestEmbeddedSchemasCompile(t *testing.T) {
	names, err := fs.Glob(schemaFiles, "schemas/*.schema.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no embedded schemas: %v", err)
	}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "schemas/"), ".schema.json")
		if _, err := embeddedSchema(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	errs := checkSchema("no-such", "f.yaml", nil)
	if len(errs) != 1 || errors.Is(errs[0], ErrInvalidManifest) {
		t.Errorf("unknown schema: %v, want one error that is not a manifest problem", errs)
	}
}

// A pack's schema may not reach outside itself: no files, no network.
func TestCompileSchemaRefusesOutsideReferences(t *testing.T) {
	for _, ref := range []string{"file:///etc/passwd", "https://example.com/s.json", "other.json", schemaBase + "pack.schema.json"} {
		doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(`{"$ref": "` + ref + `"}`)))
		if _, err := compileSchema(doc); err == nil {
			t.Errorf("$ref %s compiled", ref)
		}
	}
	for _, bad := range []string{`{"type": "strin"}`, `{"pattern": "(?=x)"}`, `{"minLength": -1}`} {
		doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if _, err := compileSchema(doc); err == nil {
			t.Errorf("%s compiled", bad)
		}
	}
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"$defs": {"x": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/x"}}}`))
	if _, err := compileSchema(doc); err != nil {
		t.Errorf("local $ref: %v", err)
	}
}

func BenchmarkCheckSchema(b *testing.B) {
	n, err := decodeYAML("pack.yaml", []byte(goodManifest))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if errs := checkSchema("pack", "pack.yaml", n); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// A schema compiled twice is compiled once: the second compile returns
// the first's result, and a schema that differs in any value is compiled
// anew. A broken schema is never remembered.
func TestCompileSchemaRemembers(t *testing.T) {
	doc := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, err := compileSchema(doc(`{"type":"object","properties":{"q":{"type":"string","maxLength":7}}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := compileSchema(doc(`{"properties":{"q":{"maxLength":7,"type":"string"}},"type":"object"}`))
	if err != nil || a != b {
		t.Errorf("the same schema compiled twice: %p, %p, %v", a, b, err)
	}
	c, err := compileSchema(doc(`{"type":"object","properties":{"q":{"type":"string","maxLength":8}}}`))
	if err != nil || c == a {
		t.Errorf("a different schema got the first one's compilation")
	}
	for range 2 {
		if _, err := compileSchema(doc(`{"type":"nonsense"}`)); err == nil {
			t.Fatal("a broken schema compiled")
		}
	}
	small := &schemaCache{max: 2}
	small.put("1", a)
	small.put("2", b)
	small.put("3", c)
	if small.get("1") != nil || small.get("3") != c {
		t.Errorf("a full cache did not start afresh")
	}
}
