package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/packs"
)

func TestListSkillsPages(t *testing.T) {
	s, log := retrievalStore(t, nil)
	ctx := context.Background()
	var want []string
	for i := range 45 {
		name := fmt.Sprintf("pack.many.skill_%02d", 44-i) // stored out of order
		put(t, s, SkillRecord{Name: name, Trigger: "trigger " + name})
		want = append(want, name)
	}
	slices.Sort(want)

	var got []string
	for page, wantLen := range []int{20, 20, 5, 0} {
		res, err := s.ListSkills(ctx, SkillListRequest{Page: page + 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Skills) != wantLen || res.Total != 45 || res.HasMore != (page < 2) || res.PageSize != DefaultPageSize || res.Page != page+1 {
			t.Errorf("page %d: %d skills, total %d, has_more %v, page_size %d", page+1, len(res.Skills), res.Total, res.HasMore, res.PageSize)
		}
		for _, e := range res.Skills {
			got = append(got, e.Name)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names over all pages (-want +got):\n%s", diff)
	}

	ev := log.last(t, EventSkillList)
	wantEv := map[string]any{
		"filters":        map[string]any{"task_type": "", "origin": "", "scope": "", "page": 4, "page_size": DefaultPageSize},
		"returned_count": 0,
	}
	if diff := cmp.Diff(wantEv, ev.Fields); diff != "" {
		t.Errorf("skill_list event (-want +got):\n%s", diff)
	}

	// One page of exactly the rest has no more after it.
	res, err := s.ListSkills(ctx, SkillListRequest{Page: 3, PageSize: 15})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skills) != 15 || res.HasMore {
		t.Errorf("last full page: %d skills, has_more %v", len(res.Skills), res.HasMore)
	}
}

func TestListSkillsFilters(t *testing.T) {
	s, _ := retrievalStore(t, nil)
	ctx := context.Background()
	long := strings.Repeat("a very long trigger sentence ", 20)
	put(t, s, SkillRecord{Name: "a.browser.pack", TaskType: "browser", Trigger: long, Origin: OriginPack})
	put(t, s, SkillRecord{Name: "b.browser.learned", TaskType: "browser", Trigger: "t", Origin: OriginLearned})
	put(t, s, SkillRecord{Name: "c.api.pack", TaskType: "api", Trigger: "t", Origin: OriginPack})
	put(t, s, SkillRecord{Name: "d.none.learned", Trigger: "t", Origin: OriginLearned})

	tests := []struct {
		req  SkillListRequest
		want []string
	}{
		{SkillListRequest{}, []string{"a.browser.pack", "b.browser.learned", "c.api.pack", "d.none.learned"}},
		{SkillListRequest{TaskType: "browser"}, []string{"a.browser.pack", "b.browser.learned"}},
		{SkillListRequest{TaskType: "unknown"}, []string{"d.none.learned"}},
		{SkillListRequest{Origin: OriginLearned}, []string{"b.browser.learned", "d.none.learned"}},
		{SkillListRequest{TaskType: "browser", Origin: OriginPack}, []string{"a.browser.pack"}},
		{SkillListRequest{TaskType: "code"}, nil},
	}
	for _, tt := range tests {
		res, err := s.ListSkills(ctx, tt.req)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range res.Skills {
			got = append(got, e.Name)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || res.Total != len(tt.want) {
			t.Errorf("%+v: total %d (-want +got):\n%s", tt.req, res.Total, diff)
		}
	}

	res, err := s.ListSkills(ctx, SkillListRequest{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Skills[0]
	if n := utf8.RuneCountInString(e.Trigger); n > listTriggerLen || !strings.HasSuffix(e.Trigger, ellipsis) {
		t.Errorf("trigger not shortened (%d characters): %q", n, e.Trigger)
	}
	if want := (SkillListEntry{Name: "a.browser.pack", Trigger: e.Trigger, TaskType: "browser", Origin: OriginPack, ScopeMode: packs.ScopeGlobal}); e != want {
		t.Errorf("entry = %+v, want %+v", e, want)
	}
	if !res.HasMore || res.Total != 4 {
		t.Errorf("has_more %v, total %d", res.HasMore, res.Total)
	}
}

func TestListSkillsValidation(t *testing.T) {
	s, _ := retrievalStore(t, nil)
	ctx := context.Background()
	tests := []struct {
		req  SkillListRequest
		want error
	}{
		{SkillListRequest{Page: -1}, ErrBadPage},
		{SkillListRequest{Page: MaxPage + 1}, ErrBadPage},
		{SkillListRequest{PageSize: -1}, ErrBadPage},
		{SkillListRequest{PageSize: 101}, ErrBadPage},
		{SkillListRequest{TaskType: "cooking"}, ErrBadTaskType},
		{SkillListRequest{Origin: "downloaded"}, ErrBadOrigin},
		{SkillListRequest{Scope: Scope{Mode: "galaxy"}}, ErrBadScope},
		{SkillListRequest{ScopeMode: "session"}, ErrBadScope},
	}
	for _, tt := range tests {
		if _, err := s.ListSkills(ctx, tt.req); !errors.Is(err, tt.want) {
			t.Errorf("%+v: err = %v, want %v", tt.req, err, tt.want)
		}
	}
	if _, err := s.ListSkills(ctx, SkillListRequest{Page: MaxPage, PageSize: MaxPageSize}); err != nil {
		t.Errorf("largest page: %v", err)
	}
}

func TestListSkillsScopeLeak(t *testing.T) {
	w := newScopeWorld(t)
	ctx := context.Background()
	for caller, sc := range worldScopes {
		t.Run(caller, func(t *testing.T) {
			var names []string
			for page := 1; ; page++ {
				res, err := w.s.ListSkills(ctx, SkillListRequest{Page: page, PageSize: 2, Scope: sc})
				if err != nil {
					t.Fatal(err)
				}
				checkMarkers(t, caller, "skill_list", mustJSON2(t, res))
				for _, e := range res.Skills {
					names = append(names, e.Name)
				}
				if !res.HasMore {
					if want := 3*len(visibleMarkers[caller]) + 1; res.Total != want || len(names) != want {
						t.Errorf("total %d, listed %d, want %d", res.Total, len(names), want)
					}
					break
				}
			}
			if !slices.IsSorted(names) {
				t.Errorf("not sorted by name: %v", names)
			}
		})
	}
}

// TestListSkillsScopeFilter lists each scope level on its own: the filter
// narrows what the caller sees and never shows another tenant's or
// project's skills, and a skill shadowed by a more specific one stays
// hidden under every filter.
func TestListSkillsScopeFilter(t *testing.T) {
	w := newScopeWorld(t)
	ctx := context.Background()
	modeOf := func(marker string) string {
		sc, _ := normScope(worldScopes[marker])
		return sc.Mode
	}
	for caller, sc := range worldScopes {
		vis := visibleMarkers[caller]
		for _, mode := range []string{packs.ScopeProject, packs.ScopeTenant, packs.ScopeGlobal} {
			t.Run(caller+"/"+mode, func(t *testing.T) {
				res, err := w.s.ListSkills(ctx, SkillListRequest{ScopeMode: mode, Scope: sc, PageSize: MaxPageSize})
				if err != nil {
					t.Fatal(err)
				}
				checkMarkers(t, caller, "skill_list", mustJSON2(t, res))
				want := 0
				for _, m := range vis {
					if modeOf(m) == mode {
						want += 3
					}
				}
				if modeOf(vis[len(vis)-1]) == mode {
					want++ // pack.shared.deploy, at its most specific scope
				}
				if res.Total != want || len(res.Skills) != want {
					t.Errorf("total %d, listed %d, want %d", res.Total, len(res.Skills), want)
				}
				for _, e := range res.Skills {
					if e.ScopeMode != mode {
						t.Errorf("%s is stored at %s, listed under %s", e.Name, e.ScopeMode, mode)
					}
				}
				ev := w.log.last(t, EventSkillList)
				if got := ev.Fields["filters"].(map[string]any)["scope"]; got != mode {
					t.Errorf("event filters scope = %v, want %s", got, mode)
				}
			})
		}
	}
}
