package index

import (
	"context"
	"slices"
	"testing"

	"github.com/skillhost/skillhost/packs"
)

// seedEventFields are the fields the discovery contract lists for each
// event the index reports. An event may carry more; it must carry these,
// under these names.
var seedEventFields = map[string][]string{
	EventToolSearchQuery:        {"query", "requested_search_type", "effective_search_type", "results_count"},
	EventSkillSearchQuery:       {"query", "requested_search_type", "effective_search_type", "results_count"},
	EventSkillGet:               {"names", "returned_count", "max_tokens", "final_tokens_est"},
	EventSkillList:              {"filters", "returned_count"},
	EventSkillsRetrieved:        {"skill_count", "top_k_used", "raw_tokens_est", "final_tokens_est", "was_summarized"},
	EventSkillDirectoryRendered: {"count"},
	EventSkillPackLoaded:        {"pack_name", "skill_count", "updated_count"},
}

// TestEventsCarryContractFields makes every call that reports an event and
// checks each event's fields, name by name, and the values of the ones
// the calls determine.
func TestEventsCarryContractFields(t *testing.T) {
	s, log := retrievalStore(t, nil)
	ctx := context.Background()
	if _, err := s.SyncTools(ctx, []ToolRecord{{Name: "web_fetch", Description: "Fetch a web page", LoadingMode: packs.LoadingDeferred}}); err != nil {
		t.Fatal(err)
	}
	login := loginSkill()
	if _, err := s.LoadPack(ctx, "core", []SkillRecord{login}, PackOptions{UpdateExisting: true, Pinned: []string{login.Name}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SearchTools(ctx, ToolQuery{Query: "web_f", SearchType: "regex"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SearchSkills(ctx, SkillQuery{Query: "login"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSkills(ctx, SkillGetRequest{Names: []string{login.Name, "pack.core.nothing"}, MaxTokens: 300}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListSkills(ctx, SkillListRequest{TaskType: "browser", Origin: OriginPack, ScopeMode: packs.ScopeGlobal}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Relevant(ctx, RelevantRequest{Task: "log in with a username and password", TopK: 2}); err != nil {
		t.Fatal(err)
	}
	d, err := s.Directory(ctx, DirectoryConfig{}, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	d.Render()

	for name, fields := range seedEventFields {
		ev := log.last(t, name)
		for _, f := range fields {
			if _, ok := ev.Fields[f]; !ok {
				t.Errorf("%s has no field %q (fields: %v)", name, f, ev.Fields)
			}
		}
	}

	checks := []struct {
		event, field string
		want         any
	}{
		{EventToolSearchQuery, "query", "web_f"},
		{EventToolSearchQuery, "requested_search_type", "regex"},
		{EventToolSearchQuery, "effective_search_type", "regex"},
		{EventToolSearchQuery, "results_count", 1},
		{EventSkillGet, "returned_count", 1},
		{EventSkillGet, "max_tokens", 300},
		{EventSkillList, "returned_count", 1},
		{EventSkillsRetrieved, "skill_count", 1},
		{EventSkillsRetrieved, "top_k_used", 2},
		{EventSkillDirectoryRendered, "count", 1},
		{EventSkillPackLoaded, "pack_name", "core"},
		{EventSkillPackLoaded, "skill_count", 1},
		{EventSkillPackLoaded, "updated_count", 0},
	}
	for _, c := range checks {
		if got := log.last(t, c.event).Fields[c.field]; got != c.want {
			t.Errorf("%s.%s = %#v, want %#v", c.event, c.field, got, c.want)
		}
	}
	if got := log.last(t, EventSkillGet).Fields["names"]; !slices.Equal(got.([]string), []string{login.Name, "pack.core.nothing"}) {
		t.Errorf("skill_get names = %v", got)
	}
	filters := log.last(t, EventSkillList).Fields["filters"].(map[string]any)
	for k, want := range map[string]any{"task_type": "browser", "origin": OriginPack, "scope": packs.ScopeGlobal} {
		if filters[k] != want {
			t.Errorf("skill_list filters[%s] = %v, want %v", k, filters[k], want)
		}
	}
	if got := log.last(t, EventSkillGet).Fields["final_tokens_est"].(int); got <= 0 || got > 300 {
		t.Errorf("skill_get final_tokens_est = %d, want 1..300", got)
	}
}
