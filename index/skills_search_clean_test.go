package index

import (
	"context"
	"strings"
	"testing"
)

// cleanStore holds one tool and one skill whose title and trigger name
// that tool and carry an e-mail address.
func cleanStore(t *testing.T, opts *Options) (*Store, *eventLog) {
	t.Helper()
	s, log := retrievalStore(t, opts)
	ctx := context.Background()
	if _, err := s.SyncTools(ctx, []ToolRecord{{Name: "admin_reset_password", Description: "Resets any user's password."}}); err != nil {
		t.Fatal(err)
	}
	put(t, s, SkillRecord{Name: "pack.ops.unlock_account", Title: "Unlock with admin_reset_password",
		Trigger: "A user is locked out: run admin_reset_password, then mail ops@example.com",
		Steps:   []string{"Confirm who the user is"}})
	return s, log
}

// TestSearchSkillsRewritesHiddenTools: skill_search hands back titles and
// triggers with references to tools the caller cannot see rewritten to
// the tool_search guidance, and with redaction applied, for every search
// type; with every tool visible the name stays.
func TestSearchSkillsRewritesHiddenTools(t *testing.T) {
	ctx := context.Background()
	s, _ := cleanStore(t, nil)
	hidden := func(name string) bool { return name != "admin_reset_password" }
	for _, st := range []string{SearchFTS, SearchRegex, SearchExact} {
		query := map[string]string{SearchFTS: "locked out user", SearchRegex: "locked out", SearchExact: "pack.ops.unlock_account"}[st]
		res, err := s.SearchSkills(ctx, SkillQuery{Query: query, SearchType: st, VisibleTool: hidden})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Skills) != 1 {
			t.Fatalf("%s: %+v", st, res.Skills)
		}
		h := res.Skills[0]
		for _, text := range []string{h.Title, h.Trigger} {
			if strings.Contains(text, "admin_reset_password") {
				t.Errorf("%s: hidden tool named in %q", st, text)
			}
			if !strings.Contains(text, "tool_search") {
				t.Errorf("%s: %q does not point to tool_search", st, text)
			}
		}
		if strings.Contains(h.Trigger, "ops@example.com") {
			t.Errorf("%s: trigger not redacted: %q", st, h.Trigger)
		}

		res, err = s.SearchSkills(ctx, SkillQuery{Query: query, SearchType: st})
		if err != nil {
			t.Fatal(err)
		}
		if h := res.Skills[0]; !strings.Contains(h.Trigger, "admin_reset_password") || strings.Contains(h.Trigger, "ops@example.com") {
			t.Errorf("%s, every tool visible: trigger %q, want the tool named and the address redacted", st, h.Trigger)
		}
	}

	// KnownTools extends the names judged: a tool the index does not hold.
	put(t, s, SkillRecord{Name: "pack.ops.page_oncall", Title: "Page the on-call engineer",
		Trigger: "Production is down: call pager_send", Steps: []string{"Say what broke"}})
	res, err := s.SearchSkills(ctx, SkillQuery{Query: "production down", KnownTools: []string{"pager_send"},
		VisibleTool: func(n string) bool { return n != "pager_send" }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skills) == 0 || strings.Contains(res.Skills[0].Trigger, "pager_send") {
		t.Errorf("a known tool outside the index is not rewritten: %+v", res.Skills)
	}

	// With redaction off, only tool references change.
	raw, _ := cleanStore(t, &Options{DisableRedaction: true})
	res, err = raw.SearchSkills(ctx, SkillQuery{Query: "locked out user", VisibleTool: hidden})
	if err != nil {
		t.Fatal(err)
	}
	if h := res.Skills[0]; strings.Contains(h.Trigger, "admin_reset_password") || !strings.Contains(h.Trigger, "ops@example.com") {
		t.Errorf("redaction off: trigger %q", h.Trigger)
	}
}

// TestRelevantReportsOneEvent: pre-flight retrieval reports
// skills_retrieved only, not a skill_search_query of its own search.
func TestRelevantReportsOneEvent(t *testing.T) {
	s, log := cleanStore(t, nil)
	log.events = nil
	res, err := s.Relevant(context.Background(), RelevantRequest{Task: "a user is locked out"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skills) != 1 {
		t.Fatalf("skills = %+v", res.Skills)
	}
	var names []string
	for _, e := range log.events {
		names = append(names, e.Name)
	}
	if len(names) != 1 || names[0] != EventSkillsRetrieved {
		t.Errorf("events %v, want [%s]", names, EventSkillsRetrieved)
	}
}

// TestToolReferencesFollowTheCatalogue: the tool names references are
// judged against are read again after the catalogue changes: a tool
// indexed after a first answer is rewritten out of the next one.
func TestToolReferencesFollowTheCatalogue(t *testing.T) {
	ctx := context.Background()
	s, _ := cleanStore(t, nil)
	put(t, s, SkillRecord{Name: "pack.ops.rotate", Title: "Rotate keys", Trigger: "Keys are old: run vault_rotate",
		Steps: []string{"Rotate"}})
	hidden := func(name string) bool { return name != "vault_rotate" }
	search := func() string {
		t.Helper()
		res, err := s.SearchSkills(ctx, SkillQuery{Query: "keys are old", VisibleTool: hidden})
		if err != nil || len(res.Skills) == 0 {
			t.Fatalf("search: %+v %v", res, err)
		}
		return res.Skills[0].Trigger
	}
	if got := search(); !strings.Contains(got, "vault_rotate") {
		t.Fatalf("an unknown tool name is rewritten: %q", got)
	}
	if _, err := s.SyncTools(ctx, []ToolRecord{{Name: "admin_reset_password", Description: "Resets any user's password."},
		{Name: "vault_rotate", Description: "Rotates the vault's keys."}}); err != nil {
		t.Fatal(err)
	}
	if got := search(); strings.Contains(got, "vault_rotate") {
		t.Errorf("a tool indexed after the first answer is not rewritten: %q", got)
	}
}
