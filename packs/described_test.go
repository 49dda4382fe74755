package packs_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/packs"
)

// Parse records the keys each tool entry wrote.
func TestParseRecordsWrittenKeys(t *testing.T) {
	p, err := packs.Parse([]byte(`name: p
modules:
  - name: m
    path: m.wasm
    tools:
      - name: a
        idempotent: false
        tags: []
      - name: b
        description: B.
        input_schema: {type: object}
        output_schema: {type: object}
`), "pack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := p.Modules[0].Tools[0], p.Modules[0].Tools[1]
	if d := cmp.Diff([]string{"idempotent", "name", "tags"}, a.Written); d != "" {
		t.Errorf("a.Written (-want +got):\n%s", d)
	}
	if !packs.NeedsDescribe(a) || packs.NeedsDescribe(b) {
		t.Errorf("NeedsDescribe(a) = %v, (b) = %v; want true, false", packs.NeedsDescribe(a), packs.NeedsDescribe(b))
	}
}

// Every key a tool entry may write overrides exactly its field, and
// nothing else of what the module described is lost.
func TestMergeToolOverridesFieldByField(t *testing.T) {
	described := packs.DescribedTool(abi.ToolDescriptor{
		Name: "t", Description: "From the module.", InputSchema: json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"string"}`), Tags: []string{"mod"}, Category: "text",
		Idempotent: true, RequiresNetwork: true,
		Examples: []abi.ToolExample{{Args: json.RawMessage(`{}`), Description: "none"}},
	})
	// entry has every field set, each to something the module did not say.
	min := 1.0
	entry := &packs.ToolSpec{
		Name: "t2", Export: "e", DisplayName: "T", Description: "From the manifest.", Icon: "x", Version: "2",
		InputSchema: json.RawMessage(`{"type":"object","required":["a"]}`), OutputSchema: json.RawMessage(`{}`),
		Examples: []packs.Example{{Args: json.RawMessage(`{"a":1}`)}}, Tags: []string{"man"}, Category: "c",
		SideEffects: true, Idempotent: false, RequiresNetwork: false, RequiresFilesystem: true, RiskLevel: "CRITICAL",
		Hidden: true, Loading: "always", ConfigParams: []packs.ConfigParam{{Name: "k", Type: "number", Min: &min}},
	}
	tt := reflect.TypeOf(packs.ToolSpec{})
	for i := 0; i < tt.NumField(); i++ {
		f := tt.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if key == "-" {
			continue
		}
		t.Run(key, func(t *testing.T) {
			e := *entry
			e.Written = []string{key}
			got := packs.MergeTool(described, &e)
			gv, dv, ev := reflect.ValueOf(*got), reflect.ValueOf(*described), reflect.ValueOf(e)
			if !reflect.DeepEqual(gv.Field(i).Interface(), ev.Field(i).Interface()) {
				t.Errorf("%s = %v, want the entry's %v", f.Name, gv.Field(i), ev.Field(i))
			}
			for j := 0; j < tt.NumField(); j++ {
				if j == i || tt.Field(j).Name == "Written" {
					continue
				}
				if !reflect.DeepEqual(gv.Field(j).Interface(), dv.Field(j).Interface()) {
					t.Errorf("%s = %v, want the module's %v", tt.Field(j).Name, gv.Field(j), dv.Field(j))
				}
			}
		})
	}
	// An entry written only to set one flag keeps the module's
	// description and schemas, and changes the risk.
	e := &packs.ToolSpec{Name: "t", SideEffects: true, Written: []string{"name", "side_effects"}}
	got := packs.MergeTool(described, e)
	if got.Description != "From the module." || string(got.InputSchema) != `{"type":"object"}` || !got.SideEffects || !got.Idempotent {
		t.Errorf("merged %+v", got)
	}
	if described.SideEffects {
		t.Error("MergeTool changed the described tool")
	}
	if r := got.Risk(); r != "DANGEROUS" {
		t.Errorf("risk %s, want DANGEROUS (side effects with network)", r)
	}
}
