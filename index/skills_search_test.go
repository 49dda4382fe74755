package index

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func skillNames(hits []SkillHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

func TestSearchSkillsBasics(t *testing.T) {
	var events []Event
	s := openTest(t, &Options{OnEvent: func(e Event) { events = append(events, e) }})
	ctx := context.Background()
	if _, err := s.LoadPack(ctx, "core", packSkills(), PackOptions{}); err != nil {
		t.Fatal(err)
	}
	events = nil
	res, err := s.SearchSkills(ctx, SkillQuery{Query: "login password"})
	if err != nil {
		t.Fatal(err)
	}
	want := &SkillSearchResult{Query: "login password", SearchType: "fts", Skills: []SkillHit{{Name: "pack.core.login_basic",
		Title: "Basic login", Trigger: "Log into a website with username and password", TaskType: "browser", Score: 0.5}}}
	if d := cmp.Diff(want, res); d != "" {
		t.Errorf("search (-want +got):\n%s", d)
	}
	wantEv := []Event{{Name: EventSkillSearchQuery, Fields: map[string]any{"query": "login password",
		"requested_search_type": "fts", "effective_search_type": "fts", "results_count": 1}}}
	if d := cmp.Diff(wantEv, events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	// Content is searched too: steps, failure modes, instructions.
	for q, name := range map[string]string{"captcha": "pack.core.login_basic", "cursor": "pack.core.cursor_loop", "columns": "pack.core.pdf_tables"} {
		res, err := s.SearchSkills(ctx, SkillQuery{Query: q})
		if err != nil || len(res.Skills) == 0 || res.Skills[0].Name != name {
			t.Errorf("%q: %+v %v", q, res, err)
		}
	}
	// Name matches first, exact and regex scores.
	res, _ = s.SearchSkills(ctx, SkillQuery{Query: "pack.core.cursor_loop"})
	if res.Skills[0].Name != "pack.core.cursor_loop" || res.Skills[0].Score != 1 {
		t.Errorf("name query: %+v", res.Skills)
	}
	res, _ = s.SearchSkills(ctx, SkillQuery{Query: "PACK.CORE.CURSOR_LOOP", SearchType: SearchExact})
	if len(res.Skills) != 1 || res.Skills[0].Score != 1 {
		t.Errorf("exact: %+v", res.Skills)
	}
	res, _ = s.SearchSkills(ctx, SkillQuery{Query: `pack\.core\.`, SearchType: SearchRegex})
	if len(res.Skills) != 3 || res.Skills[0].Score != 0.9 {
		t.Errorf("regex prefix: %+v", res.Skills)
	}
	res, _ = s.SearchSkills(ctx, SkillQuery{Query: `pagination`, SearchType: SearchRegex})
	if len(res.Skills) != 1 || res.Skills[0].Score != 0.75 {
		t.Errorf("regex in tags/title: %+v", res.Skills)
	}
	// Task type filter.
	for _, st := range []string{SearchFTS, SearchRegex} {
		res, _ = s.SearchSkills(ctx, SkillQuery{Query: "pack", SearchType: st, TaskType: "api"})
		if d := cmp.Diff([]string{"pack.core.cursor_loop"}, skillNames(res.Skills)); d != "" {
			t.Errorf("%s task_type filter (-want +got):\n%s", st, d)
		}
	}
}

func TestSearchSkillsValidation(t *testing.T) {
	s := openTest(t, nil)
	cases := []struct {
		q    SkillQuery
		want error
	}{
		{SkillQuery{Query: " "}, ErrEmptyQuery},
		{SkillQuery{Query: "x", SearchType: "vector"}, ErrBadSearchType},
		{SkillQuery{Query: "x", Limit: 99}, ErrBadLimit},
		{SkillQuery{Query: "x", TaskType: "cooking"}, ErrBadTaskType},
		{SkillQuery{Query: "x", Scope: Scope{Mode: "galaxy"}}, ErrBadScope},
		{SkillQuery{Query: "[", SearchType: SearchRegex}, ErrBadPattern},
	}
	for _, c := range cases {
		if _, err := s.SearchSkills(context.Background(), c.q); !errors.Is(err, c.want) {
			t.Errorf("SearchSkills(%+v) = %v, want %v", c.q, err, c.want)
		}
	}
}

// TestSkillScopeNeverLeaks stores skills in many tenants and projects, all
// matching the same queries, and checks that every search type returns only
// what each caller may see.
func TestSkillScopeNeverLeaks(t *testing.T) {
	for _, fts := range []bool{true, false} {
		s := openTest(t, &Options{DisableFTS: !fts})
		ctx := context.Background()
		tenants := []string{"", "t1", "t2"}
		projects := []string{"", "p1", "p2"}
		var stored []Scope
		for _, tn := range tenants {
			for _, p := range projects {
				sc := Scope{TenantID: tn, ProjectID: p}
				if tn == "" && p != "" {
					sc = Scope{ProjectID: p}
				}
				stored = append(stored, sc)
			}
		}
		// Each scope gets its own tagged skill, and a shared name.
		owner := map[string]Scope{}
		for _, sc := range stored {
			ns, _ := normScope(sc)
			tag := fmt.Sprintf("%s_%s_%s", ns.Mode, ns.TenantID, ns.ProjectID)
			name := "learned.code.secret_" + tag
			owner[name] = ns
			if err := s.PutSkill(ctx, SkillRecord{Name: name, Trigger: "secret recipe for " + tag, Tags: []string{"secret"}, Scope: sc}); err != nil {
				t.Fatal(err)
			}
			if err := s.PutSkill(ctx, SkillRecord{Name: "shared.secret", Trigger: "shared secret in " + tag, Scope: sc}); err != nil {
				t.Fatal(err)
			}
		}
		callers := []Scope{{}, {TenantID: "t1"}, {TenantID: "t2"}, {TenantID: "t1", ProjectID: "p1"}, {TenantID: "t2", ProjectID: "p2"},
			{ProjectID: "p1"}, {TenantID: "t3"}, {TenantID: "t3", ProjectID: "p1"}, {TenantID: "t1", ProjectID: "p9"}}
		queries := []string{"secret", "secret recipe", "learned.code.secret", "shared.secret", "shared secret", ".*", "secret_tenant_t1_",
			"learned.code.secret_tenant_t2_", "learned.code.secret_project_t1_p1", "t1", "p1", "recipe"}
		for _, caller := range callers {
			for _, q := range queries {
				for i, st := range []string{SearchFTS, SearchRegex, SearchExact, SearchFTS} {
					tt := ""
					if i == 3 {
						tt = "unknown" // the task-type rowid ranges
					}
					res, err := s.SearchSkills(ctx, SkillQuery{Query: q, SearchType: st, Limit: 20, Scope: caller, TaskType: tt})
					if err != nil {
						t.Fatalf("%+v %s %q: %v", caller, st, q, err)
					}
					seen := map[string]bool{}
					for _, h := range res.Skills {
						if seen[h.Name] {
							t.Errorf("fts=%v caller %+v %s %q: %s twice", fts, caller, st, q, h.Name)
						}
						seen[h.Name] = true
						if h.Name == "shared.secret" {
							// The most specific visible copy.
							want := "global__"
							switch {
							case caller.ProjectID != "" && caller.TenantID != "" && caller.TenantID != "t3" && caller.ProjectID != "p9":
								want = fmt.Sprintf("project_%s_%s", caller.TenantID, caller.ProjectID)
							case caller.ProjectID != "" && caller.TenantID == "":
								want = "project__" + caller.ProjectID
							case caller.TenantID == "t1" || caller.TenantID == "t2":
								want = "tenant_" + caller.TenantID + "_"
							}
							if h.Trigger != "shared secret in "+want {
								t.Errorf("fts=%v caller %+v %s %q: shared.secret resolved to %q, want the %s copy", fts, caller, st, q, h.Trigger, want)
							}
							continue
						}
						o := owner[h.Name]
						if !visibleTo(caller, o.Mode, o.TenantID, o.ProjectID) {
							t.Errorf("fts=%v caller %+v %s %q: LEAK of %s (scope %+v)", fts, caller, st, q, h.Name, o)
						}
					}
				}
			}
			// Completeness: a broad query finds every visible skill.
			res, _ := s.SearchSkills(ctx, SkillQuery{Query: "secret", SearchType: SearchRegex, Limit: 20, Scope: caller})
			var got, want []string
			for _, h := range res.Skills {
				if h.Name != "shared.secret" {
					got = append(got, h.Name)
				}
			}
			for n, o := range owner {
				if visibleTo(caller, o.Mode, o.TenantID, o.ProjectID) {
					want = append(want, n)
				}
			}
			sort.Strings(got)
			sort.Strings(want)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("caller %+v: visible set (-want +got):\n%s", caller, d)
			}
		}
	}
}

// TestShadowedSkillDoesNotMatch checks that a less specific copy of a name
// is not found through text only it contains.
func TestShadowedSkillDoesNotMatch(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	s.PutSkill(ctx, SkillRecord{Name: "x.deploy", Trigger: "deploy with kubernetes"})
	s.PutSkill(ctx, SkillRecord{Name: "x.deploy", Trigger: "deploy with nomad", Scope: Scope{TenantID: "t1"}})
	for _, st := range []string{SearchFTS, SearchRegex} {
		res, _ := s.SearchSkills(ctx, SkillQuery{Query: "kubernetes", SearchType: st, Scope: Scope{TenantID: "t1"}})
		if len(res.Skills) != 0 {
			t.Errorf("%s: shadowed global copy found: %+v", st, res.Skills)
		}
		res, _ = s.SearchSkills(ctx, SkillQuery{Query: "kubernetes", SearchType: st, Scope: Scope{TenantID: "t2"}})
		if len(res.Skills) != 1 {
			t.Errorf("%s: another tenant should see the global copy: %+v", st, res.Skills)
		}
	}
}

func TestSkillSearchFallback(t *testing.T) {
	s := openTest(t, &Options{DisableFTS: true})
	ctx := context.Background()
	if _, err := s.LoadPack(ctx, "core", packSkills(), PackOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := s.SearchSkills(ctx, SkillQuery{Query: "paginated items"})
	if err != nil || res.SearchType != SearchRegex || len(res.Skills) != 1 || res.Skills[0].Score != 0.75 {
		t.Errorf("fallback: %+v %v", res, err)
	}
}

func TestTaskTypeChangeMovesSkill(t *testing.T) {
	s := openTest(t, &Options{Now: fixedClock()})
	ctx := context.Background()
	sc := Scope{TenantID: "acme", ProjectID: "web"}
	if err := s.PutSkill(ctx, SkillRecord{Name: "learned.x", Trigger: "scrape a page", TaskType: "browser", Scope: sc}); err != nil {
		t.Fatal(err)
	}
	s.db.Exec(`UPDATE skills SET use_count = 3, last_used = 77`)
	before, _ := getSkill(t, s, "learned.x", sc)
	if err := s.PutSkill(ctx, SkillRecord{Name: "learned.x", Trigger: "scrape a page via the api", TaskType: "api", Scope: sc}); err != nil {
		t.Fatal(err)
	}
	after, _ := getSkill(t, s, "learned.x", sc)
	if after.UseCount != 3 || !after.CreatedAt.Equal(before.CreatedAt) || after.LastUsed.UnixNano() != 77 || after.TaskType != "api" {
		t.Errorf("moved skill lost its statistics: before %+v after %+v", before, after)
	}
	for tt, want := range map[string]int{"api": 1, "browser": 0, "": 1} {
		res, err := s.SearchSkills(ctx, SkillQuery{Query: "scrape", TaskType: tt, Scope: sc})
		if err != nil || len(res.Skills) != want {
			t.Errorf("task type %q: %+v %v, want %d", tt, res, err, want)
		}
	}
	var n int
	s.db.QueryRow(`SELECT count(*) FROM skills_fts WHERE skills_fts MATCH 'scrape'`).Scan(&n)
	if n != 1 {
		t.Errorf("%d full-text rows after the move, want 1", n)
	}
}
