package index

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func directoryNames(d *Directory) []string {
	var out []string
	for _, e := range d.Entries {
		out = append(out, e.Name)
	}
	return out
}

// directoryStore holds two pinned skills and four others, of which the
// test uses some to give them recency and use counts.
func directoryStore(t *testing.T) (*Store, *eventLog) {
	t.Helper()
	s, log := retrievalStore(t, nil)
	put(t, s, loginSkill())
	put(t, s, SkillRecord{Name: "pack.core.browser_forms.date_picker_safe", Title: "Fill date picker safely",
		Trigger: "A form has a date picker widget", TaskType: "browser", Pinned: true})
	put(t, s, SkillRecord{Name: "pack.core.api.pagination.cursor_loop", Title: "Handle cursor pagination",
		Trigger: "An API returns a next_cursor field", TaskType: "api", Pinned: true})
	put(t, s, SkillRecord{Name: "pack.core.code.parse_iso_dates", Title: "Parse ISO dates",
		Trigger: "Dates arrive as ISO 8601 strings", TaskType: "code"})
	put(t, s, SkillRecord{Name: "learned.domain.3f2a1c", Trigger: "Invoices need the tax ID on page one", TaskType: "domain",
		Origin: OriginLearned})
	put(t, s, SkillRecord{Name: "pack.docs.release_notes", Title: "Write release notes", Trigger: "Write release notes"})
	return s, log
}

func use(t *testing.T, s *Store, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := s.GetSkills(context.Background(), SkillGetRequest{Names: []string{n}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDirectoryGolden(t *testing.T) {
	s, log := directoryStore(t)
	ctx := context.Background()
	use(t, s, "pack.core.code.parse_iso_dates", "pack.core.browser_auth.login_basic")

	d, err := s.Directory(ctx, DirectoryConfig{}, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "directory_default.txt", d.Render())
	if ev := log.last(t, EventSkillDirectoryRendered); ev.Fields["count"] != 6 {
		t.Errorf("event = %+v", ev)
	}

	d, err = s.Directory(ctx, DirectoryConfig{MaxEntries: 4, IncludeFields: []string{"task_type", "title"}}, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "directory_fields.txt", d.Render())

	d, err = s.Directory(ctx, DirectoryConfig{IncludeFields: DirectoryFields}, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "directory_all_fields.txt", d.Render())
}

func TestDirectoryStrategies(t *testing.T) {
	s, _ := directoryStore(t)
	ctx := context.Background()
	// Use counts: release_notes 3, parse_iso_dates 2, login 1; most
	// recent: login, then parse_iso_dates, then release_notes.
	use(t, s, "pack.docs.release_notes", "pack.docs.release_notes", "pack.docs.release_notes",
		"pack.core.code.parse_iso_dates", "pack.core.code.parse_iso_dates", "pack.core.browser_auth.login_basic")
	pinned := []string{"pack.core.api.pagination.cursor_loop", "pack.core.browser_forms.date_picker_safe"}
	tests := []struct {
		cfg  DirectoryConfig
		want []string
	}{
		{DirectoryConfig{}, append(pinned, "pack.core.browser_auth.login_basic", "pack.core.code.parse_iso_dates",
			"pack.docs.release_notes", "learned.domain.3f2a1c")},
		{DirectoryConfig{Strategy: DirectoryPinnedThenTop}, append(pinned, "pack.docs.release_notes",
			"pack.core.code.parse_iso_dates", "pack.core.browser_auth.login_basic", "learned.domain.3f2a1c")},
		{DirectoryConfig{MaxEntries: 3}, append(pinned, "pack.core.browser_auth.login_basic")},
		{DirectoryConfig{MaxEntries: 3, Strategy: DirectoryPinnedThenTop}, append(pinned, "pack.docs.release_notes")},
		{DirectoryConfig{MaxEntries: 1}, pinned[:1]}, // the cap holds even against pinned skills
	}
	for _, tt := range tests {
		d, err := s.Directory(ctx, tt.cfg, Scope{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, directoryNames(d)); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tt.cfg, diff)
		}
		if n := strings.Count(d.Render(), "\n- "); n != len(tt.want) {
			t.Errorf("%+v: %d lines rendered", tt.cfg, n)
		}
	}
}

// TestDirectoryCapWithManyPinned pins more skills than the cap allows.
func TestDirectoryCapWithManyPinned(t *testing.T) {
	s, _ := retrievalStore(t, nil)
	for i := range 40 {
		put(t, s, SkillRecord{Name: fmt.Sprintf("pack.p.s%02d", i), Trigger: "t", Pinned: true})
	}
	d, err := s.Directory(context.Background(), DirectoryConfig{}, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Entries) != DefaultDirectoryEntries || d.Entries[0].Name != "pack.p.s00" || !d.Entries[29].Pinned {
		t.Errorf("%d entries: %v", len(d.Entries), directoryNames(d))
	}
	if n := strings.Count(d.Render(), "\n- "); n != DefaultDirectoryEntries {
		t.Errorf("%d lines rendered", n)
	}
}

func TestDirectoryEmptyAndValidation(t *testing.T) {
	s, log := retrievalStore(t, nil)
	ctx := context.Background()
	d, err := s.Directory(ctx, DirectoryConfig{}, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Render(); got != "" {
		t.Errorf("empty directory rendered %q", got)
	}
	if ev := log.last(t, EventSkillDirectoryRendered); ev.Fields["count"] != 0 {
		t.Errorf("event = %+v", ev)
	}
	for _, cfg := range []DirectoryConfig{
		{MaxEntries: -1}, {MaxEntries: MaxDirectoryEntries + 1}, {IncludeFields: []string{"name", "steps"}},
		{Strategy: "random"},
	} {
		if _, err := s.Directory(ctx, cfg, Scope{}); !errors.Is(err, ErrBadDirectoryConfig) {
			t.Errorf("%+v: err = %v", cfg, err)
		}
	}
	if _, err := s.Directory(ctx, DirectoryConfig{}, Scope{Mode: "moon"}); !errors.Is(err, ErrBadScope) {
		t.Errorf("bad scope: %v", err)
	}
	// A Directory built by hand renders with the default fields.
	hand := &Directory{Entries: []DirectoryEntry{{Name: "x.y", Title: "T", Trigger: "when", TaskType: "api"}}}
	if got, want := hand.Render(), directoryOpen+directoryHeader+"- x.y — T: when\n"+directoryClose; got != want {
		t.Errorf("hand-built directory:\n%s\nwant\n%s", got, want)
	}
}

func TestDirectoryScopeLeak(t *testing.T) {
	w := newScopeWorld(t)
	ctx := context.Background()
	for caller, sc := range worldScopes {
		t.Run(caller, func(t *testing.T) {
			for _, strategy := range []string{DirectoryPinnedThenRecent, DirectoryPinnedThenTop} {
				d, err := w.s.Directory(ctx, DirectoryConfig{Strategy: strategy, IncludeFields: DirectoryFields}, sc)
				if err != nil {
					t.Fatal(err)
				}
				out := d.Render()
				checkMarkers(t, caller, "directory", out)
				if want := 3*len(visibleMarkers[caller]) + 1; len(d.Entries) != want {
					t.Errorf("%d entries, want %d", len(d.Entries), want)
				}
				// One pinned skill per visible scope, listed first.
				for i, e := range d.Entries {
					if e.Pinned != (i < len(visibleMarkers[caller])) {
						t.Errorf("entry %d %s pinned=%v", i, e.Name, e.Pinned)
					}
				}
			}
		})
	}
}
