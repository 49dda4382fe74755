package index

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/skillhost/skillhost/packs"
)

func packSkills() []SkillRecord {
	return []SkillRecord{
		{Name: "pack.core.login_basic", Title: "Basic login", Trigger: "Log into a website with username and password",
			TaskType: "browser", Tags: []string{"auth", "login"}, Steps: []string{"Open the login page", "Fill the form", "Submit"},
			FailureModes: []string{"CAPTCHA blocks the form"}},
		{Name: "pack.core.cursor_loop", Title: "Cursor pagination", Trigger: "Retrieve all items from a cursor-paginated API",
			TaskType: "api", Tags: []string{"pagination"}, Steps: []string{"Call the endpoint", "Follow the next cursor"}},
		{Name: "pack.core.pdf_tables", Description: "Extract tables from PDF files", TaskType: "code",
			Instructions: "# PDF tables\nUse the pdf tool, then clean the columns."},
	}
}

// getSkill reads one stored skill by name and scope.
func getSkill(t testing.TB, s *Store, name string, sc Scope) (SkillRecord, bool) {
	t.Helper()
	sc, err := normScope(sc)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.db.Query(`SELECT `+skillColumns+` FROM skills WHERE name = ? AND scope_mode = ? AND scope_tenant_id = ? AND scope_project_id = ?`,
		name, sc.Mode, sc.TenantID, sc.ProjectID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return SkillRecord{}, false
	}
	sk, err := scanSkill(rows)
	if err != nil {
		t.Fatal(err)
	}
	return sk, true
}

func TestLoadPackRules(t *testing.T) {
	var events []Event
	s := openTest(t, &Options{Now: fixedClock(), OnEvent: func(e Event) { events = append(events, e) }})
	ctx := context.Background()

	rep, err := s.LoadPack(ctx, "core", packSkills(), PackOptions{Pinned: []string{"pack.core.cursor_loop"}})
	if err != nil {
		t.Fatal(err)
	}
	want := PackReport{Pack: "core", Added: []string{"pack.core.cursor_loop", "pack.core.login_basic", "pack.core.pdf_tables"}}
	if d := cmp.Diff(want, rep, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("first load (-want +got):\n%s", d)
	}
	sk, _ := getSkill(t, s, "pack.core.pdf_tables", Scope{})
	if sk.Trigger != "Extract tables from PDF files" || sk.TaskType != "code" || sk.Origin != OriginPack || sk.OriginRef != "core" || sk.Pinned {
		t.Errorf("stored SKILL.md skill: %+v", sk)
	}
	if sk.ContentHash == "" || sk.CreatedAt.IsZero() || !sk.CreatedAt.Equal(sk.UpdatedAt) || !sk.LastUsed.IsZero() {
		t.Errorf("hash and times: %+v", sk)
	}
	if p, _ := getSkill(t, s, "pack.core.cursor_loop", Scope{}); !p.Pinned {
		t.Error("pinned skill not pinned")
	}

	// A learned skill takes one of the names.
	if err := s.PutSkill(ctx, SkillRecord{Name: "pack.core.login_basic", Trigger: "my own way to log in", Steps: []string{"x"}}); err != nil {
		t.Fatal(err)
	}

	// Version 2 of the pack: one skill changed, the learned one changed too,
	// one removed, one new; without UpdateExisting.
	v2 := packSkills()
	v2[0].Steps = append(v2[0].Steps, "Check the avatar")
	v2[1].Steps = append(v2[1].Steps, "Stop at an empty cursor")
	v2 = append(v2[:2], SkillRecord{Name: "pack.core.retry", Trigger: "Retry a flaky call with backoff"})
	rep, err = s.LoadPack(ctx, "core", v2, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = PackReport{Pack: "core", Added: []string{"pack.core.retry"},
		Skipped: []string{"pack.core.cursor_loop", "pack.core.login_basic"}, Removed: []string{"pack.core.pdf_tables"}}
	if d := cmp.Diff(want, rep, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("load without UpdateExisting (-want +got):\n%s", d)
	}
	if p, _ := getSkill(t, s, "pack.core.cursor_loop", Scope{}); len(p.Steps) != 2 || p.Pinned {
		t.Errorf("skipped skill changed, or its pin kept though the options dropped it: %+v", p)
	}

	// With UpdateExisting the pack skill is rewritten; the learned one never.
	rep, err = s.LoadPack(ctx, "core", v2, PackOptions{UpdateExisting: true})
	if err != nil {
		t.Fatal(err)
	}
	want = PackReport{Pack: "core", Updated: []string{"pack.core.cursor_loop"}, Unchanged: []string{"pack.core.retry"},
		Skipped: []string{"pack.core.login_basic"}}
	if d := cmp.Diff(want, rep, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("load with UpdateExisting (-want +got):\n%s", d)
	}
	p, _ := getSkill(t, s, "pack.core.cursor_loop", Scope{})
	if len(p.Steps) != 3 || !p.UpdatedAt.After(p.CreatedAt) {
		t.Errorf("updated skill: %+v", p)
	}
	l, _ := getSkill(t, s, "pack.core.login_basic", Scope{})
	if l.Origin != OriginLearned || l.Trigger != "my own way to log in" {
		t.Errorf("learned skill overwritten: %+v", l)
	}

	var loaded []Event
	for _, e := range events {
		if e.Name == EventSkillPackLoaded {
			loaded = append(loaded, e)
		}
	}
	if len(loaded) != 3 {
		t.Fatalf("%d skill_pack_loaded events", len(loaded))
	}
	wantEv := Event{Name: EventSkillPackLoaded, Fields: map[string]any{"pack_name": "core", "skill_count": 3,
		"updated_count": 1, "added_count": 0, "skipped_count": 1, "removed_count": 0}}
	if d := cmp.Diff(wantEv, loaded[2]); d != "" {
		t.Errorf("event (-want +got):\n%s", d)
	}
}

func TestLoadPackIsPerScope(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	for _, sc := range []Scope{{}, {TenantID: "t1"}, {TenantID: "t1", ProjectID: "p1"}, {ProjectID: "solo"}} {
		rep, err := s.LoadPack(ctx, "core", packSkills(), PackOptions{Scope: sc})
		if err != nil {
			t.Fatalf("scope %+v: %v", sc, err)
		}
		if len(rep.Added) != 3 {
			t.Errorf("scope %+v: %+v", sc, rep)
		}
	}
	var n int
	s.db.QueryRow(`SELECT count(*) FROM skills`).Scan(&n)
	if n != 12 {
		t.Errorf("%d rows, want 12", n)
	}
	// Reloading into one scope does not touch the others.
	if _, err := s.LoadPack(ctx, "core", packSkills()[:1], PackOptions{Scope: Scope{TenantID: "t1"}}); err != nil {
		t.Fatal(err)
	}
	s.db.QueryRow(`SELECT count(*) FROM skills`).Scan(&n)
	if n != 10 {
		t.Errorf("%d rows after shrinking one scope, want 10", n)
	}
}

func TestLoadPackRejectsBadInput(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	cases := []struct {
		name   string
		pack   string
		skills []SkillRecord
		o      PackOptions
		want   error
	}{
		{"no pack name", " ", packSkills(), PackOptions{}, ErrBadSkill},
		{"empty skill name", "p", []SkillRecord{{Trigger: "x"}}, PackOptions{}, ErrBadSkill},
		{"no trigger or description", "p", []SkillRecord{{Name: "a"}}, PackOptions{}, ErrBadSkill},
		{"duplicate", "p", []SkillRecord{{Name: "a", Trigger: "x"}, {Name: "a", Trigger: "y"}}, PackOptions{}, ErrBadSkill},
		{"task type", "p", []SkillRecord{{Name: "a", Trigger: "x", TaskType: "cooking"}}, PackOptions{}, ErrBadTaskType},
		{"unknown pin", "p", []SkillRecord{{Name: "a", Trigger: "x"}}, PackOptions{Pinned: []string{"b"}}, ErrBadSkill},
		{"scope mode", "p", packSkills(), PackOptions{Scope: Scope{Mode: "planet"}}, ErrBadScope},
		{"global with tenant", "p", packSkills(), PackOptions{Scope: Scope{Mode: "global", TenantID: "t"}}, ErrBadScope},
		{"tenant without id", "p", packSkills(), PackOptions{Scope: Scope{Mode: "tenant"}}, ErrBadScope},
		{"tenant with project", "p", packSkills(), PackOptions{Scope: Scope{Mode: "tenant", TenantID: "t", ProjectID: "p"}}, ErrBadScope},
		{"project without id", "p", packSkills(), PackOptions{Scope: Scope{Mode: "project", TenantID: "t"}}, ErrBadScope},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := s.LoadPack(ctx, c.pack, c.skills, c.o); !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
		})
	}
	var n int
	s.db.QueryRow(`SELECT count(*) FROM skills`).Scan(&n)
	if n != 0 {
		t.Errorf("rejected loads stored %d skills", n)
	}
	if err := s.PutSkill(ctx, SkillRecord{Name: "x", Trigger: "y", Origin: "dreamt"}); !errors.Is(err, ErrBadSkill) {
		t.Errorf("PutSkill with a bad origin: %v", err)
	}
}

func TestPutSkillReplacesAndKeepsStats(t *testing.T) {
	s := openTest(t, &Options{Now: fixedClock()})
	ctx := context.Background()
	sc := Scope{TenantID: "acme"}
	if err := s.PutSkill(ctx, SkillRecord{Name: "learned.code.dates", Trigger: "parse ISO dates", Steps: []string{"a"}, Scope: sc}); err != nil {
		t.Fatal(err)
	}
	s.db.Exec(`UPDATE skills SET use_count = 7, last_used = 99`)
	first, _ := getSkill(t, s, "learned.code.dates", sc)
	if err := s.PutSkill(ctx, SkillRecord{Name: "learned.code.dates", Trigger: "parse ISO 8601 dates", Steps: []string{"b"}, Scope: sc}); err != nil {
		t.Fatal(err)
	}
	got, _ := getSkill(t, s, "learned.code.dates", sc)
	if got.Trigger != "parse ISO 8601 dates" || got.UseCount != 7 || !got.CreatedAt.Equal(first.CreatedAt) || !got.UpdatedAt.After(first.UpdatedAt) {
		t.Errorf("replaced skill: %+v", got)
	}
	if got.Origin != OriginLearned || got.Scope != (Scope{Mode: packs.ScopeTenant, TenantID: "acme"}) {
		t.Errorf("origin and scope: %+v", got)
	}
	res, err := s.SearchSkills(ctx, SkillQuery{Query: "8601", Scope: sc})
	if err != nil || len(res.Skills) != 1 {
		t.Errorf("search after replace: %+v %v", res, err)
	}
	res, _ = s.SearchSkills(ctx, SkillQuery{Query: "ISO", Scope: sc})
	if len(res.Skills) != 1 {
		t.Errorf("replace left a stale full-text row: %+v", res.Skills)
	}
}

func TestSkillContentHash(t *testing.T) {
	a := SkillRecord{Name: "n", Trigger: "t", Steps: []string{"s"}}
	b := a
	b.Scope = Scope{TenantID: "x"}
	b.Origin = OriginLearned
	b.UseCount = 4
	if SkillContentHash(a) != SkillContentHash(b) {
		t.Error("hash depends on scope, origin or statistics")
	}
	for name, mut := range map[string]func(*SkillRecord){
		"title": func(s *SkillRecord) { s.Title = "x" }, "description": func(s *SkillRecord) { s.Description = "x" },
		"trigger": func(s *SkillRecord) { s.Trigger = "x" }, "task type": func(s *SkillRecord) { s.TaskType = "api" },
		"tags": func(s *SkillRecord) { s.Tags = []string{"x"} }, "steps": func(s *SkillRecord) { s.Steps = []string{"x"} },
		"preconditions": func(s *SkillRecord) { s.Preconditions = []string{"x"} }, "failure modes": func(s *SkillRecord) { s.FailureModes = []string{"x"} },
		"instructions": func(s *SkillRecord) { s.Instructions = "x" }, "name": func(s *SkillRecord) { s.Name = "m" },
	} {
		c := a
		mut(&c)
		if SkillContentHash(c) == SkillContentHash(a) {
			t.Errorf("hash ignores %s", name)
		}
	}
}

func TestScopeWhereMatchesVisibleTo(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	stored := []Scope{{}, {TenantID: "t1"}, {TenantID: "t2"}, {TenantID: "t1", ProjectID: "p1"}, {TenantID: "t1", ProjectID: "p2"},
		{TenantID: "t2", ProjectID: "p1"}, {ProjectID: "p1"}}
	for i, sc := range stored {
		if err := s.PutSkill(ctx, SkillRecord{Name: "skill" + string(rune('a'+i)), Trigger: "x", Scope: sc}); err != nil {
			t.Fatal(err)
		}
	}
	requests := []Scope{{}, {TenantID: "t1"}, {TenantID: "t2"}, {TenantID: "t1", ProjectID: "p1"}, {ProjectID: "p1"},
		{TenantID: "t3", ProjectID: "p1"}, {Mode: "project", TenantID: "t1", ProjectID: "p2"}}
	for _, req := range requests {
		where, args := scopeWhere(req)
		rows, err := s.db.Query(`SELECT name, scope_mode, scope_tenant_id, scope_project_id FROM skills WHERE `+where+` ORDER BY name`, args...)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var n, m, tn, p string
			rows.Scan(&n, &m, &tn, &p)
			got = append(got, n)
		}
		rows.Close()
		var want []string
		for i, sc := range stored {
			ns, _ := normScope(sc)
			if visibleTo(req, ns.Mode, ns.TenantID, ns.ProjectID) {
				want = append(want, "skill"+string(rune('a'+i)))
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("request %+v (-visibleTo +scopeWhere):\n%s", req, d)
		}
	}
}
