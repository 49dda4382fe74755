package registry

import (
	"encoding/json"
	"strings"
	"testing"
)

// Output schemas that use $id get one of their own per tool over MCP, so
// that a client caching validators by $id checks each tool's results
// against that tool's schema.
func TestOwnSchemaID(t *testing.T) {
	a := json.RawMessage(`{"$id":"out","type":"object","properties":{"x":{"type":"string"}}}`)
	b := json.RawMessage(`{"$id":"out","type":"object","properties":{"x":{"type":"number"}}}`)
	ia, ib := rootID(t, ownSchemaID(a, "alpha")), rootID(t, ownSchemaID(b, "beta"))
	if ia == "out" || ib == "out" || ia == ib || !strings.HasPrefix(ia, schemaIDBase+"alpha/") {
		t.Fatalf("ids %q and %q", ia, ib)
	}
	// The same tool with another schema (after a reload) gets another id.
	b2 := json.RawMessage(`{"$id":"out","type":"object","properties":{"x":{"type":"boolean"}}}`)
	if rootID(t, ownSchemaID(b2, "beta")) == ib {
		t.Fatal("a changed schema kept its id")
	}
	// Nested relative ids get a root to resolve against; the rest of the
	// schema is unchanged.
	nested := json.RawMessage(`{"type":"object","properties":{"x":{"$id":"item","type":"string"}}}`)
	got := ownSchemaID(nested, "gamma")
	if id := rootID(t, got); !strings.HasPrefix(id, schemaIDBase+"gamma/") || !strings.HasSuffix(string(got), `"type":"object","properties":{"x":{"$id":"item","type":"string"}}}`) {
		t.Fatalf("nested: %s", got)
	}
	// Left as they are: no $id, an empty object, a schema that refers to
	// its own absolute id, a name that needs escaping made safe.
	for _, s := range []string{`{"type":"object"}`, `{}`, `{"$id":"https://x.example/o","type":"object","properties":{"a":{"$ref":"https://x.example/o#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`} {
		if got := ownSchemaID(json.RawMessage(s), "t"); string(got) != s {
			t.Errorf("%s became %s", s, got)
		}
	}
	if id := rootID(t, ownSchemaID(json.RawMessage(`{"$id":"o"}`), "a/b c")); !strings.HasPrefix(id, schemaIDBase+"a%2Fb%20c/") {
		t.Errorf("escaped name: %s", id)
	}
	var v any
	if err := json.Unmarshal(ownSchemaID(json.RawMessage(`{"$id":"o"}`), "t"), &v); err != nil {
		t.Fatal(err)
	}
}

func rootID(t *testing.T, s json.RawMessage) string {
	t.Helper()
	var top struct {
		ID string `json:"$id"`
	}
	if err := json.Unmarshal(s, &top); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return top.ID
}
