package index

import (
	"context"
	"errors"
	"math"
	"testing"
)

// documented reports whether err is one of the errors a search may return
// for bad input.
func documented(err error) bool {
	for _, e := range []error{ErrEmptyQuery, ErrBadSearchType, ErrPatternTooLong, ErrBadPattern, ErrBadLimit, ErrBadTaskType, ErrBadScope} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

var fuzzSeeds = []string{
	"web search", "web_search", `"`, `name:foo`, `NEAR(a b)`, `a AND b OR NOT c`, `*`, `^x`, `x*`, `(`, `)`, `{a b}:c`,
	"read_file", ".*", "(a|b)+", `\p{L}`, "[", "\x00", "\xff", "é€𝄞", "   ", "", "a\nb", "-x", "+x", "''", `\`,
	"getWeatherForecast", "pack.core.login_basic", "OR OR OR", "a b c d e f g h i j k l m n o p q r s t u v w x y z",
}

// openFuzzStore opens a store with tools and skills in three scopes, for one
// fuzz target in one process.
func openFuzzStore(f *testing.F) *Store {
	ctx := context.Background()
	s, err := Open(ctx, f.TempDir()+"/fuzz.db", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	if _, err := s.SyncTools(ctx, append(sampleTools(), ToolRecord{Name: "near_and_or", Description: "NEAR AND OR NOT * ^ :"})); err != nil {
		f.Fatal(err)
	}
	for _, sc := range []Scope{{}, {TenantID: "t1"}, {TenantID: "t1", ProjectID: "p1"}} {
		if _, err := s.LoadPack(ctx, "core", packSkills(), PackOptions{Scope: sc}); err != nil {
			f.Fatal(err)
		}
	}
	return s
}

func FuzzSearchTools(f *testing.F) {
	for i, q := range fuzzSeeds {
		f.Add(q, uint8(i%3), int8(i%22-1), i%2 == 0)
	}
	s := openFuzzStore(f)
	types := []string{SearchFTS, SearchRegex, SearchExact, ""}
	f.Fuzz(func(t *testing.T, query string, typ uint8, limit int8, always bool) {
		res, err := s.SearchTools(context.Background(), ToolQuery{Query: query, SearchType: types[int(typ)%len(types)],
			Limit: int(limit), IncludeAlwaysLoaded: always, Visible: func(n string) bool { return n != "read_file" }})
		if err != nil {
			if !documented(err) {
				t.Fatalf("SearchTools(%q): undocumented error %v", query, err)
			}
			return
		}
		if len(res.Tools) > MaxLimit {
			t.Fatalf("%d results", len(res.Tools))
		}
		for _, h := range res.Tools {
			if math.IsNaN(h.Score) || h.Score < 0 || h.Score > 1 {
				t.Fatalf("SearchTools(%q): score %v", query, h.Score)
			}
			if h.Name == "read_file" {
				t.Fatalf("SearchTools(%q): hidden tool returned", query)
			}
		}
	})
}

func FuzzSearchSkills(f *testing.F) {
	for i, q := range fuzzSeeds {
		f.Add(q, uint8(i%3), int8(i%22-1), uint8(i%4))
	}
	s := openFuzzStore(f)
	types := []string{SearchFTS, SearchRegex, SearchExact, ""}
	scopes := []Scope{{}, {TenantID: "t1"}, {TenantID: "t1", ProjectID: "p1"}, {TenantID: "t2", ProjectID: "p1"}}
	f.Fuzz(func(t *testing.T, query string, typ uint8, limit int8, scope uint8) {
		sc := scopes[int(scope)%len(scopes)]
		res, err := s.SearchSkills(context.Background(), SkillQuery{Query: query, SearchType: types[int(typ)%len(types)],
			Limit: int(limit), Scope: sc})
		if err != nil {
			if !documented(err) {
				t.Fatalf("SearchSkills(%q): undocumented error %v", query, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, h := range res.Skills {
			if math.IsNaN(h.Score) || h.Score < 0 || h.Score > 1 {
				t.Fatalf("SearchSkills(%q): score %v", query, h.Score)
			}
			if seen[h.Name] {
				t.Fatalf("SearchSkills(%q): %s twice", query, h.Name)
			}
			seen[h.Name] = true
		}
	})
}
