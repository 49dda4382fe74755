package goschema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The exhaustive cases of the inference are the guest SDK's
// (guests/go/skill/schema_test.go) and the registry's golden files
// (testdata/registry/schema): both sides must keep producing them. These
// cover the package's own API.

type List struct {
	Value int   `json:"value"`
	Next  *List `json:"next,omitempty"`
}

type Box[T any] struct {
	Self *Box[T] `json:"self,omitempty"`
	V    T       `json:"v"`
}

type twoBoxes struct {
	A Box[int]    `json:"a"`
	B Box[string] `json:"b"`
}

type ownSchema struct{}

func (ownSchema) JSONSchema() json.RawMessage {
	return json.RawMessage(`{"type":"string","format":"uuid"}`)
}

func TestForOfDerive(t *testing.T) {
	viaFor, err := For(reflect.TypeFor[List]())
	if err != nil {
		t.Fatal(err)
	}
	viaOf, err := Of[*List]()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Derive(reflect.TypeFor[List]())
	if err != nil {
		t.Fatal(err)
	}
	viaDerive, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"value":{"type":"integer"},"next":{"$ref":"#"}},"required":["value"],"additionalProperties":false}`
	for name, got := range map[string][]byte{"For": viaFor, "Of": viaOf, "Derive": viaDerive} {
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if s.Properties.Get("next") == nil || s.Properties.Get("nope") != nil {
		t.Error("Properties.Get")
	}
}

// Two instantiations of one generic type get distinct $defs names, and
// the result is the same on every derivation.
func TestDefNamesAreUniqueAndStable(t *testing.T) {
	first, err := Of[twoBoxes]()
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, _ := Of[twoBoxes]()
		if !bytes.Equal(first, again) {
			t.Fatalf("derivations differ:\n%s\n%s", first, again)
		}
	}
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(first, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Defs) != 2 || doc.Defs["Box"] == nil || doc.Defs["Box2"] == nil {
		t.Errorf("$defs = %s", first)
	}
}

func TestSchemaer(t *testing.T) {
	got, err := Of[struct {
		ID ownSchema `json:"id" desc:"the record"`
	}]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"id":{"description":"the record","format":"uuid","type":"string"}},"required":["id"],"additionalProperties":false}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestErrorsNameTheField(t *testing.T) {
	_, err := For(reflect.TypeFor[struct {
		Outer []struct {
			C chan int `json:"c"`
		} `json:"outer"`
	}]())
	if err == nil || !strings.Contains(err.Error(), "field outer[].c: type chan int cannot be represented in JSON") {
		t.Errorf("err = %v", err)
	}
}

func TestSplitTag(t *testing.T) {
	tests := []struct {
		in   string
		sep  byte
		want []string
	}{
		{"a,b", ',', []string{"a", "b"}},
		{`a\,b,c`, ',', []string{"a,b", "c"}},
		{`x\|y|z`, '|', []string{"x|y", "z"}},
		{`back\\,slash`, ',', []string{`back\`, "slash"}},
		{`keep\d`, ',', []string{`keep\d`}},
		{"default=[1,2],pattern=^[a-z,]+$", ',', []string{"default=[1,2]", "pattern=^[a-z,]+$"}},
		{"", ',', []string{""}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, splitTag(tt.in, tt.sep)); diff != "" {
			t.Errorf("splitTag(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
