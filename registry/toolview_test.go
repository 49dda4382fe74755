package registry_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// tool_search ranks with the statistics of every tool the run may find,
// whatever it shows already: a run that activates a tool sharing the
// query's words, and so no longer gets it back, finds the other tools at
// the same scores as before.
func TestToolSearchScoresIgnoreActivation(t *testing.T) {
	ctx := context.Background()
	var natives []registry.Native
	for _, d := range []struct{ name, desc string }{
		{"sales_report", "Export the sales report of a quarter."},
		{"email_report", "Email a report to the team."},
		{"sales_email", "Email the sales figures to a customer."},
		{"report_bug", "Report a bug in a report of bugs."},
		{"photo_crop", "Crop a photo."},
	} {
		natives = append(natives, biTool{d: packs.ToolSpec{Name: d.name, Description: d.desc, Loading: packs.LoadingDeferred}})
	}
	idx, err := index.Open(ctx, filepath.Join(t.TempDir(), "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	reg, err := registry.New(ctx, nil, registry.Options{Natives: natives, Builtins: registry.Builtins(registry.BuiltinOptions{Index: idx})})
	if err != nil {
		t.Fatal(err)
	}
	var tools []index.ToolRecord
	for _, tl := range reg.Tools() {
		tools = append(tools, index.ToolRecord{Name: tl.Name, Description: tl.Description, LoadingMode: tl.Loading})
	}
	if _, err := idx.SyncTools(ctx, tools); err != nil {
		t.Fatal(err)
	}
	run, err := reg.NewRun(registry.RunContext{Tenant: "a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	search := func() string {
		t.Helper()
		res, err := run.Call(ctx, registry.ToolSearchName, json.RawMessage(`{"query":"sales report email","limit":3}`), nil)
		if err != nil || res.IsError {
			t.Fatalf("tool_search: %v %+v", err, res)
		}
		return string(res.Output)
	}
	before := search()
	var hits biSearch
	if err := json.Unmarshal([]byte(before), &hits); err != nil {
		t.Fatal(err)
	}
	if len(hits.Tools) != 3 || hits.Tools[1].Score <= 0 || hits.Tools[1].Score >= 1 {
		t.Fatalf("the case needs three hits, the middle one strictly between 0 and 1: %s", before)
	}
	if err := run.Activate(ctx, "report_bug", "test"); err != nil {
		t.Fatal(err)
	}
	if after := search(); after != before {
		t.Fatalf("activating report_bug changed the scores:\nbefore %s\nafter  %s", before, after)
	}
}
