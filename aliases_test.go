package skillhost_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/registry"
)

// The skill tools take a playbook's file name and its title for its
// canonical name, as skillhost show does.
func TestSkillToolsTakeAliases(t *testing.T) {
	e := open(t, skillhost.Config{})
	ctx := context.Background()
	run, err := e.NewRun(skillhost.RunContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// skill_get is the search family's.
	search, err := open(t, skillhost.Config{Skills: registry.SkillsConfig{Tools: "search"}}).NewRun(skillhost.RunContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const canonical = "pack.core.api.cursor_pagination"
	for _, tc := range []struct {
		run        *skillhost.Run
		tool, args string
	}{
		{run, "load_skill", `{"skill_name":"` + canonical + `"}`},
		{run, "load_skill", `{"skill_name":"cursor-pagination"}`},
		{run, "load_skill", `{"skill_name":"collect every page of a cursor-paginated API"}`},
		{search, "skill_get", `{"names":["cursor-pagination"]}`},
	} {
		res, err := tc.run.Call(ctx, tc.tool, json.RawMessage(tc.args), nil)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.tool, tc.args, err)
		}
		if res.IsError || !strings.Contains(string(res.Output), canonical) {
			t.Errorf("%s %s: %s %+v", tc.tool, tc.args, res.Output, res.Error)
		}
	}
	res, err := run.Call(ctx, "load_skill", json.RawMessage(`{"skill_name":"cursor-paginaton"}`), nil)
	if err != nil || !res.IsError {
		t.Errorf("load_skill of no skill: %+v %v", res, err)
	}
}
