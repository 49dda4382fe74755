package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/packs"
)

func names(hits []ToolHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

func search(t testing.TB, s *Store, q ToolQuery) *ToolSearchResult {
	t.Helper()
	res, err := s.SearchTools(context.Background(), q)
	if err != nil {
		t.Fatalf("SearchTools(%+v): %v", q, err)
	}
	return res
}

func TestSearchToolsValidation(t *testing.T) {
	s := openTest(t, nil)
	mustSync(t, s, sampleTools())
	cases := []struct {
		q    ToolQuery
		want error
	}{
		{ToolQuery{Query: ""}, ErrEmptyQuery},
		{ToolQuery{Query: " \t\n"}, ErrEmptyQuery},
		{ToolQuery{Query: "x", SearchType: "semantic"}, ErrBadSearchType},
		{ToolQuery{Query: "x", SearchType: "FTS"}, ErrBadSearchType},
		{ToolQuery{Query: "x", Limit: -1}, ErrBadLimit},
		{ToolQuery{Query: "x", Limit: 21}, ErrBadLimit},
		{ToolQuery{Query: strings.Repeat("a", 201), SearchType: SearchRegex}, ErrPatternTooLong},
		{ToolQuery{Query: strings.Repeat("é", 201), SearchType: SearchRegex}, ErrPatternTooLong},
		{ToolQuery{Query: "(unclosed", SearchType: SearchRegex}, ErrBadPattern},
		{ToolQuery{Query: `\p{Nope}`, SearchType: SearchRegex}, ErrBadPattern},
	}
	for _, c := range cases {
		if _, err := s.SearchTools(context.Background(), c.q); !errors.Is(err, c.want) {
			t.Errorf("SearchTools(%+v) = %v, want %v", c.q, err, c.want)
		}
	}
	// Limits at the edges and long fts queries are fine.
	for _, q := range []ToolQuery{
		{Query: "x", Limit: 1}, {Query: "x", Limit: 20},
		{Query: strings.Repeat("a", 200), SearchType: SearchRegex},
		{Query: strings.Repeat("word ", 500)},
	} {
		if _, err := s.SearchTools(context.Background(), q); err != nil {
			t.Errorf("SearchTools(%.40q, limit %d): %v", q.Query, q.Limit, err)
		}
	}
}

func TestDefaultLimitIsEight(t *testing.T) {
	s := openTest(t, nil)
	var tools []ToolRecord
	for i := range 30 {
		tools = append(tools, ToolRecord{Name: fmt.Sprintf("tool_%02d", i), Description: "shared words", LoadingMode: packs.LoadingDeferred})
	}
	mustSync(t, s, tools)
	for _, st := range []string{SearchFTS, SearchRegex} {
		if got := len(search(t, s, ToolQuery{Query: "shared", SearchType: st}).Tools); got != DefaultLimit {
			t.Errorf("%s: %d results with limit 0, want %d", st, got, DefaultLimit)
		}
		if got := len(search(t, s, ToolQuery{Query: "shared", SearchType: st, Limit: 20}).Tools); got != 20 {
			t.Errorf("%s: %d results with limit 20", st, got)
		}
	}
}

func TestRegexScores(t *testing.T) {
	s := openTest(t, nil)
	mustSync(t, s, []ToolRecord{
		{Name: "read_file", Description: "Read a file", LoadingMode: packs.LoadingDeferred},
		{Name: "read_file_lines", Description: "Read some lines", LoadingMode: packs.LoadingDeferred},
		{Name: "bulk_read_file", Description: "Read many", LoadingMode: packs.LoadingDeferred},
		{Name: "cat", Description: "Print a file via read_file semantics", LoadingMode: packs.LoadingDeferred},
		{Name: "tagged", Description: "nothing", Tags: []string{"read_file"}, LoadingMode: packs.LoadingDeferred},
		{Name: "unrelated", Description: "nothing", LoadingMode: packs.LoadingDeferred},
	})
	res := search(t, s, ToolQuery{Query: "READ_file", SearchType: SearchRegex})
	got := map[string]float64{}
	for _, h := range res.Tools {
		got[h.Name] = h.Score
		if h.MatchType != SearchRegex {
			t.Errorf("%s match_type %q", h.Name, h.MatchType)
		}
	}
	want := map[string]float64{"read_file": 0.95, "read_file_lines": 0.90, "bulk_read_file": 0.85, "cat": 0.75, "tagged": 0.75}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("regex scores (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"read_file", "read_file_lines", "bulk_read_file", "cat", "tagged"}, names(res.Tools)); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	// Alternation: the whole-name check sees the longer alternative.
	res = search(t, s, ToolQuery{Query: "cat|catalog|read_file", SearchType: SearchRegex, Limit: 2})
	if res.Tools[0].Score != 0.95 || res.Tools[1].Score != 0.95 {
		t.Errorf("alternation full matches: %+v", res.Tools)
	}
}

func TestExactSearch(t *testing.T) {
	s := openTest(t, nil)
	mustSync(t, s, sampleTools())
	res := search(t, s, ToolQuery{Query: "read_file", SearchType: SearchExact})
	if d := cmp.Diff([]ToolHit{{Name: "read_file", Description: "Read a file from the workspace", Score: 1, MatchType: "exact", LoadingMode: "deferred"}}, res.Tools); d != "" {
		t.Errorf("exact (-want +got):\n%s", d)
	}
	if got := names(search(t, s, ToolQuery{Query: "GETWEATHERFORECAST", SearchType: SearchExact}).Tools); !cmp.Equal(got, []string{"getWeatherForecast"}) {
		t.Errorf("case-insensitive exact: %v", got)
	}
	if got := search(t, s, ToolQuery{Query: "read", SearchType: SearchExact}).Tools; len(got) != 0 {
		t.Errorf("exact matched a prefix: %v", got)
	}
	if got := search(t, s, ToolQuery{Query: "slugify", SearchType: SearchExact}).Tools; len(got) != 0 {
		t.Errorf("exact returned an always-loaded tool by default: %v", got)
	}
	if got := search(t, s, ToolQuery{Query: "slugify", SearchType: SearchExact, IncludeAlwaysLoaded: true}).Tools; len(got) != 1 || got[0].LoadingMode != "always" {
		t.Errorf("exact with include_always_loaded: %v", got)
	}
}

func TestFTSNameMatchesRankFirst(t *testing.T) {
	s := openTest(t, nil)
	tools := []ToolRecord{
		{Name: "search", Description: "generic", LoadingMode: packs.LoadingDeferred},
		{Name: "web_search", Description: "Search the web. Search search search engines for search results", LoadingMode: packs.LoadingDeferred},
		{Name: "web_search_news", Description: "news", LoadingMode: packs.LoadingDeferred},
		{Name: "webSearchImages", Description: "images", LoadingMode: packs.LoadingDeferred},
		{Name: "news_digest", Description: "web search digest of the news about web search", LoadingMode: packs.LoadingDeferred},
	}
	mustSync(t, s, tools)
	cases := []struct {
		query string
		first []string
	}{
		{"web_search", []string{"web_search", "web_search_news"}},
		{"WEB_SEARCH", []string{"web_search", "web_search_news"}},
		{"web search", []string{"web_search", "webSearchImages", "web_search_news"}},
		{"web_sea", []string{"web_search", "web_search_news"}},
		{"websearchimages", []string{"webSearchImages"}},
	}
	for _, c := range cases {
		res := search(t, s, ToolQuery{Query: c.query})
		got := names(res.Tools)
		if len(got) < len(c.first) || !cmp.Equal(got[:len(c.first)], c.first) {
			t.Errorf("%q: got %v, want it to start with %v", c.query, got, c.first)
		}
		if top := res.Tools[0].Score; (len(res.Tools) > 1 && top != 1) || (len(res.Tools) == 1 && top != 0.5) {
			t.Errorf("%q: top score %v of %d results", c.query, top, len(res.Tools))
		}
	}
}

func TestFTSScores(t *testing.T) {
	s := openTest(t, nil)
	mustSync(t, s, sampleTools())
	// One result: 0.5.
	res := search(t, s, ToolQuery{Query: "forecast"})
	if len(res.Tools) != 1 || res.Tools[0].Score != 0.5 || res.Tools[0].MatchType != "fts" {
		t.Errorf("single result: %+v", res.Tools)
	}
	// Several: best 1, worst 0, non-increasing.
	res = search(t, s, ToolQuery{Query: "file workspace text"})
	if len(res.Tools) < 2 {
		t.Fatalf("want several results: %+v", res.Tools)
	}
	if res.Tools[0].Score != 1 || res.Tools[len(res.Tools)-1].Score != 0 {
		t.Errorf("min-max ends: %+v", res.Tools)
	}
	for i := 1; i < len(res.Tools); i++ {
		if res.Tools[i].Score > res.Tools[i-1].Score {
			t.Errorf("scores not sorted: %+v", res.Tools)
		}
	}
}

func TestFTSScoreTransform(t *testing.T) {
	// Equal costs: 0.5 each. Tiered costs: exact 1, then below.
	hs := []*hit{{tier: tierText, r: -3}, {tier: tierText, r: -3}}
	ftsScores(hs)
	if hs[0].score != 0.5 || hs[1].score != 0.5 {
		t.Errorf("equal bm25: %v %v", hs[0].score, hs[1].score)
	}
	hs = []*hit{{tier: tierName}, {tier: tierPrefix}, {tier: tierText, r: -9}, {tier: tierText, r: -1}}
	ftsScores(hs)
	for i := 1; i < len(hs); i++ {
		if !(hs[i].score < hs[i-1].score) {
			t.Errorf("tier %d score %v not below %v", hs[i].tier, hs[i].score, hs[i-1].score)
		}
	}
	if hs[0].score != 1 || hs[3].score != 0 {
		t.Errorf("ends: %v, %v", hs[0].score, hs[3].score)
	}
}

func TestTieOrder(t *testing.T) {
	s := openTest(t, &Options{PreferredNamespaces: []string{"b", "a"}})
	// Every name matches the regex the same way (substring), so order comes
	// from the tie-breakers alone.
	tools := []ToolRecord{
		{Name: "x_zz_long", Namespace: "a", SideEffects: "pure"},
		{Name: "x_zz", Namespace: "c", SideEffects: "pure"},
		{Name: "x_zz_b2", Namespace: "b", SideEffects: "stateful"},
		{Name: "x_zz_b1", Namespace: "b", SideEffects: "stateful"},
		{Name: "x_zz_b0", Namespace: "b", SideEffects: "read"},
		{Name: "y_zz", Namespace: "", SideEffects: "external"},
		{Name: "w_zz", Namespace: "", SideEffects: "write"},
		{Name: "a_zz", Namespace: "a", SideEffects: "pure"},
	}
	for i := range tools {
		tools[i].LoadingMode = packs.LoadingDeferred
	}
	mustSync(t, s, tools)
	res := search(t, s, ToolQuery{Query: "_zz", SearchType: SearchRegex, Limit: 20})
	// b first, then a, then the unlisted namespaces ("" and c) together by
	// side effects; within a namespace rank, side effects, length, name.
	want := []string{"x_zz_b0", "x_zz_b1", "x_zz_b2", "a_zz", "x_zz_long", "x_zz", "w_zz", "y_zz"}
	if d := cmp.Diff(want, names(res.Tools)); d != "" {
		t.Errorf("tie order (-want +got):\n%s", d)
	}
	// The same tie-breakers order fts prefix matches.
	res = search(t, s, ToolQuery{Query: "x_zz", Limit: 20})
	want = []string{"x_zz", "x_zz_b0", "x_zz_b1", "x_zz_b2", "x_zz_long"}
	if got := names(res.Tools); len(got) < len(want) || !cmp.Equal(want, got[:len(want)]) {
		t.Errorf("fts prefix tie order: %v, want start %v", got, want)
	}
}

func TestAlwaysLoadedLeftOutByDefault(t *testing.T) {
	s := openTest(t, nil)
	mustSync(t, s, sampleTools())
	for _, st := range []string{SearchFTS, SearchRegex} {
		if got := names(search(t, s, ToolQuery{Query: "slug", SearchType: st}).Tools); len(got) != 0 {
			t.Errorf("%s: always-loaded tool returned by default: %v", st, got)
		}
		got := search(t, s, ToolQuery{Query: "slug", SearchType: st, IncludeAlwaysLoaded: true}).Tools
		if len(got) != 1 || got[0].Name != "slugify" || got[0].LoadingMode != "always" {
			t.Errorf("%s with include_always_loaded: %+v", st, got)
		}
	}
}

// TestVisibleAppliedBeforeLimit hides most of the best-ranked tools and
// checks the result is still full and has none of them.
func TestVisibleAppliedBeforeLimit(t *testing.T) {
	s := openTest(t, nil)
	var tools []ToolRecord
	for i := range 200 {
		desc := "common"
		if i < 150 {
			desc = "common common common target" // ranks these first
		}
		tools = append(tools, ToolRecord{Name: fmt.Sprintf("t%03d", i), Description: desc, LoadingMode: packs.LoadingDeferred})
	}
	mustSync(t, s, tools)
	visible := func(n string) bool { return n >= "t150" || n == "t007" }
	for _, st := range []string{SearchFTS, SearchRegex} {
		for _, limit := range []int{1, 8, 20} {
			res := search(t, s, ToolQuery{Query: "common", SearchType: st, Limit: limit, Visible: visible})
			if len(res.Tools) != limit {
				t.Errorf("%s limit %d: %d results", st, limit, len(res.Tools))
			}
			for _, h := range res.Tools {
				if !visible(h.Name) {
					t.Errorf("%s: hidden tool %s returned", st, h.Name)
				}
			}
		}
	}
	res := search(t, s, ToolQuery{Query: "target", Limit: 20, Visible: visible})
	if d := cmp.Diff([]string{"t007"}, names(res.Tools)); d != "" {
		t.Errorf("only visible target match (-want +got):\n%s", d)
	}
}

// TestDeniedToolNeverLeaks searches in every way a model could, and checks a
// denied tool never appears.
func TestDeniedToolNeverLeaks(t *testing.T) {
	for _, fts := range []bool{true, false} {
		s := openTest(t, &Options{DisableFTS: !fts})
		tools := append(sampleTools(), ToolRecord{Name: "secret_admin_tool", Description: "Delete every user account",
			Tags: []string{"admin"}, LoadingMode: packs.LoadingDeferred, SideEffects: "stateful"})
		mustSync(t, s, tools)
		visible := func(n string) bool { return n != "secret_admin_tool" }
		queries := []string{"secret_admin_tool", "secret", "secret_admin", "admin", "delete user account",
			"SECRET_ADMIN_TOOL", "secret admin tool", ".*", "s", "e", "tool", "secret.*", "^secret_admin_tool$"}
		for _, q := range queries {
			for _, st := range []string{SearchFTS, SearchRegex, SearchExact} {
				for _, always := range []bool{false, true} {
					res, err := s.SearchTools(context.Background(), ToolQuery{Query: q, SearchType: st, Limit: 20, Visible: visible, IncludeAlwaysLoaded: always})
					if err != nil {
						continue
					}
					for _, h := range res.Tools {
						if h.Name == "secret_admin_tool" {
							t.Errorf("fts=%v %s %q: denied tool returned", fts, st, q)
						}
					}
				}
			}
		}
		// Control: visible when allowed.
		if got := search(t, s, ToolQuery{Query: "secret_admin_tool", SearchType: SearchExact}).Tools; len(got) != 1 {
			t.Errorf("allowed exact search found %v", got)
		}
	}
}

// TestQueryTextIsNeverFTSSyntax feeds FTS5 operators and syntax as queries:
// none may fail, and syntax characters only ever act as word separators.
func TestQueryTextIsNeverFTSSyntax(t *testing.T) {
	s := openTest(t, nil)
	mustSync(t, s, append(sampleTools(), ToolRecord{Name: "near_and_or", Description: "name NEAR and OR not", LoadingMode: packs.LoadingDeferred}))
	queries := []string{
		`"`, `""`, `"web`, `web"search`, `name:foo`, `description:web`, `{name description}: web`, `NEAR(web search)`,
		`NEAR(web search, 2)`, `web AND search`, `web OR`, `OR`, `AND`, `NOT`, `NOT web`, `web NOT search`, `*`, `web*`,
		`^web`, `-web`, `+web`, `(web`, `web)`, `'`, `\`, `web:`, `:`, `rowid:1`, `tools_fts:x`, `{`, `}`, `[web]`,
		"\x00", "web\x00search", "\xff\xfe", `#`, `%`, `_`, `a|b`, `x NEAR/2 y`, `"a" * "b"`, `;DROP TABLE tools;--`,
	}
	for _, q := range queries {
		res, err := s.SearchTools(context.Background(), ToolQuery{Query: q, IncludeAlwaysLoaded: true})
		if err != nil && !errors.Is(err, ErrEmptyQuery) {
			t.Errorf("SearchTools(%q): %v", q, err)
			continue
		}
		if res == nil {
			continue
		}
		for _, h := range res.Tools {
			if h.Score < 0 || h.Score > 1 {
				t.Errorf("%q: score %v", q, h.Score)
			}
		}
	}
	// Operators are words: "NEAR" finds the tool that has the word.
	if got := names(search(t, s, ToolQuery{Query: "NEAR"}).Tools); !cmp.Equal(got, []string{"near_and_or"}) {
		t.Errorf("NEAR as a word: %v", got)
	}
	// A column filter is two words, not a filter.
	if got := names(search(t, s, ToolQuery{Query: "name:forecast"}).Tools); !cmp.Equal(got, []string{"near_and_or", "getWeatherForecast"}) && !cmp.Equal(got, []string{"getWeatherForecast", "near_and_or"}) {
		t.Errorf("name:forecast as words: %v", got)
	}
	var n int
	s.db.QueryRow(`SELECT count(*) FROM tools`).Scan(&n)
	if n != len(sampleTools())+1 {
		t.Errorf("tools table changed by a query: %d rows", n)
	}
}

func TestFTSFallsBackToRegex(t *testing.T) {
	var events []Event
	s := openTest(t, &Options{DisableFTS: true, OnEvent: func(e Event) { events = append(events, e) }})
	mustSync(t, s, sampleTools())
	res := search(t, s, ToolQuery{Query: "searching the web"})
	if res.SearchType != SearchRegex {
		t.Errorf("search_type = %q, want regex", res.SearchType)
	}
	if got := names(res.Tools); !cmp.Equal(got, []string{"web_search", "web_search_news"}) {
		t.Errorf("fallback results: %v", got)
	}
	for _, h := range res.Tools {
		if h.MatchType != SearchRegex {
			t.Errorf("match_type %q", h.MatchType)
		}
	}
	// Regex metacharacters in an fts query are literal in the fallback.
	if _, err := s.SearchTools(context.Background(), ToolQuery{Query: "(web|[file"}); err != nil {
		t.Errorf("fallback with metacharacters: %v", err)
	}
	last := events[len(events)-1]
	want := Event{Name: EventToolSearchQuery, Fields: map[string]any{"query": "(web|[file", "requested_search_type": "fts",
		"effective_search_type": "regex", "results_count": last.Fields["results_count"]}}
	if d := cmp.Diff(want, last); d != "" {
		t.Errorf("event (-want +got):\n%s", d)
	}
	var first Event
	for _, e := range events {
		if e.Name == EventToolSearchQuery {
			first = e
			break
		}
	}
	if c := first.Fields["results_count"]; c != 2 {
		t.Errorf("results_count = %v, want 2", c)
	}
}

func TestSearchEmitsEvent(t *testing.T) {
	var events []Event
	s := openTest(t, &Options{OnEvent: func(e Event) { events = append(events, e) }})
	mustSync(t, s, sampleTools())
	events = nil
	search(t, s, ToolQuery{Query: "file", SearchType: SearchRegex})
	want := []Event{{Name: EventToolSearchQuery, Fields: map[string]any{"query": "file", "requested_search_type": "regex",
		"effective_search_type": "regex", "results_count": 2}}}
	if d := cmp.Diff(want, events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	events = nil
	s.SearchTools(context.Background(), ToolQuery{Query: ""})
	if len(events) != 0 {
		t.Errorf("an invalid query emitted %v", events)
	}
}

// randomCatalog builds n tools from a small vocabulary so that many share
// words, scores and tie-breakers.
func randomCatalog(r *rand.Rand, n int) []ToolRecord {
	vocab := []string{"read", "write", "file", "web", "search", "news", "user", "account", "delete", "list", "image", "mail", "send", "get", "set", "data"}
	sides := []string{"pure", "read", "write", "external", "stateful"}
	nss := []string{"", "a", "b", "c"}
	seen := map[string]bool{}
	var tools []ToolRecord
	for len(tools) < n {
		var parts []string
		for range 1 + r.IntN(3) {
			parts = append(parts, vocab[r.IntN(len(vocab))])
		}
		name := strings.Join(parts, "_")
		if seen[name] {
			continue
		}
		seen[name] = true
		var desc []string
		for range r.IntN(8) {
			desc = append(desc, vocab[r.IntN(len(vocab))])
		}
		mode := packs.LoadingDeferred
		if r.IntN(5) == 0 {
			mode = packs.LoadingAlways
		}
		tools = append(tools, ToolRecord{Name: name, Description: strings.Join(desc, " "), Namespace: nss[r.IntN(len(nss))],
			SideEffects: sides[r.IntN(len(sides))], LoadingMode: mode, Tags: []string{vocab[r.IntN(len(vocab))]}})
	}
	return tools
}

// TestSearchPropertiesRandom checks, over random catalogues and queries, that
// every score is in [0, 1], results are sorted by the contract, and the
// answer does not depend on the order tools were inserted in or on the run.
func TestSearchPropertiesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	rounds, limits := 4, []int{1, 3, 8, 20}
	if raceEnabled {
		rounds, limits = 2, []int{3, 20}
	}
	for round := range rounds {
		tools := randomCatalog(r, 40+r.IntN(80))
		a := openTest(t, &Options{PreferredNamespaces: []string{"b"}})
		b := openTest(t, &Options{PreferredNamespaces: []string{"b"}})
		mustSync(t, a, tools)
		shuffled := append([]ToolRecord(nil), tools...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		// b gets them in another order, in two syncs.
		mustSync(t, b, shuffled[:len(shuffled)/2])
		mustSync(t, b, shuffled)
		queries := []string{"read", "file", "web search", "user_account", "delete", "get data", "mail send image", "list", "re", "set_", "xyz"}
		for _, q := range queries {
			for _, st := range []string{SearchFTS, SearchRegex, SearchExact} {
				for _, limit := range limits {
					tq := ToolQuery{Query: q, SearchType: st, Limit: limit, IncludeAlwaysLoaded: round%2 == 0}
					ra, err := a.SearchTools(ctx, tq)
					if err != nil {
						t.Fatal(err)
					}
					rb, _ := b.SearchTools(ctx, tq)
					ra2, _ := a.SearchTools(ctx, tq)
					if d := cmp.Diff(ra, rb); d != "" {
						t.Fatalf("round %d %s %q limit %d: insertion order changed the result:\n%s", round, st, q, limit, d)
					}
					if d := cmp.Diff(ra, ra2); d != "" {
						t.Fatalf("%s %q: second run differs:\n%s", st, q, d)
					}
					checkSorted(t, a, ra.Tools, tools)
				}
			}
		}
	}
}

// checkSorted verifies scores are in range and the contract order holds.
func checkSorted(t *testing.T, s *Store, hits []ToolHit, tools []ToolRecord) {
	t.Helper()
	byName := map[string]ToolRecord{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	for i, h := range hits {
		if h.Score < 0 || h.Score > 1 {
			t.Fatalf("score %v out of range", h.Score)
		}
		if i == 0 {
			continue
		}
		p := hits[i-1]
		a, b := byName[p.Name], byName[h.Name]
		ha := &hit{name: a.Name, ns: a.Namespace, side: sideEffectRank[a.SideEffects], nlen: nameLen(a.Name), score: p.Score}
		hb := &hit{name: b.Name, ns: b.Namespace, side: sideEffectRank[b.SideEffects], nlen: nameLen(b.Name), score: h.Score}
		if !s.less(ha, hb) {
			t.Fatalf("%s (%v) before %s (%v) breaks the contract order", p.Name, p.Score, h.Name, h.Score)
		}
	}
}

// TestSnapshotNamesMatchSQL checks that name matches taken from the
// in-memory snapshot equal those the SQL statement finds, for tools and
// skills, over many queries and filters.
func TestSnapshotNamesMatchSQL(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	s := openTest(t, &Options{PreferredNamespaces: []string{"c", "a"}})
	tools := randomCatalog(r, 150)
	// Many names with one prefix, for the cached large-range path.
	for i := range 2 * largeRange {
		tools = append(tools, ToolRecord{Name: fmt.Sprintf("bulk_item_%03d", i), Namespace: []string{"a", "b", "c", ""}[i%4],
			SideEffects: []string{"pure", "read", "write"}[i%3], LoadingMode: []string{packs.LoadingDeferred, packs.LoadingAlways}[i%5/4]})
	}
	tools = append(tools, ToolRecord{Name: "bulk", LoadingMode: packs.LoadingDeferred}, ToolRecord{Name: "BulkItem", LoadingMode: packs.LoadingDeferred})
	mustSync(t, s, tools)
	for i, sc := range []Scope{{}, {TenantID: "t1"}, {TenantID: "t1", ProjectID: "p1"}, {ProjectID: "p1"}} {
		var skills []SkillRecord
		for j, tl := range append(tools[:40:40], tools[150:150+2*largeRange]...) {
			skills = append(skills, SkillRecord{Name: tl.Name, Trigger: tl.Description + " x", TaskType: TaskTypes[(i+j)%len(TaskTypes)]})
		}
		if _, err := s.LoadPack(ctx, "p", skills, PackOptions{Scope: sc}); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{"read", "read_", "READ_FILE", "web search", "web_s", "r", "user account", "get", "data_", "zz", "list mail",
		"bulk", "bulk_", "BULK_ITEM", "bulk item", "bulk_item_1", "bulk_item_123", "bulkitem", "b"}
	for _, tl := range tools[:30] {
		queries = append(queries, tl.Name, tl.Name[:len(tl.Name)/2])
	}
	run := func() []any {
		var out []any
		for _, q := range queries {
			for _, always := range []bool{false, true} {
				res, err := s.SearchTools(ctx, ToolQuery{Query: q, Limit: 20, IncludeAlwaysLoaded: always,
					Visible: func(n string) bool { return !strings.HasPrefix(n, "image") }})
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, res)
			}
			for _, sc := range []Scope{{}, {TenantID: "t1"}, {TenantID: "t1", ProjectID: "p1"}, {ProjectID: "p1"}, {TenantID: "t2"}} {
				for _, tt := range []string{"", "api"} {
					res, err := s.SearchSkills(ctx, SkillQuery{Query: q, Limit: 20, Scope: sc, TaskType: tt})
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, res)
				}
			}
		}
		return out
	}
	// Make sure the snapshots are loaded and current, then compare.
	if _, err := s.current(ctx, &s.toolSnaps); err != nil {
		t.Fatal(err)
	}
	if _, err := s.current(ctx, &s.skillSnaps); err != nil {
		t.Fatal(err)
	}
	mem := run()
	useSnapshotNames = false
	defer func() { useSnapshotNames = true }()
	sqlPath := run()
	if d := cmp.Diff(mem, sqlPath); d != "" {
		t.Errorf("snapshot and SQL name matches differ (-snapshot +sql):\n%s", d)
	}
}

func TestLoadingModeChangeMovesRowidRange(t *testing.T) {
	s := openTest(t, nil)
	tools := sampleTools()
	mustSync(t, s, tools)
	idOf := func(name string) int64 {
		var id int64
		if err := s.db.QueryRow(`SELECT id FROM tools WHERE name = ?`, name).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	if id := idOf("slugify"); id < alwaysBase {
		t.Errorf("always-loaded tool has rowid %d below %d", id, alwaysBase)
	}
	if id := idOf("read_file"); id >= alwaysBase {
		t.Errorf("deferred tool has rowid %d", id)
	}
	tools[4].LoadingMode = packs.LoadingDeferred // slugify
	tools[2].LoadingMode = packs.LoadingAlways   // read_file
	rep := mustSync(t, s, tools)
	if d := cmp.Diff([]string{"read_file", "slugify"}, rep.Changed); d != "" {
		t.Errorf("changed (-want +got):\n%s", d)
	}
	if idOf("slugify") >= alwaysBase || idOf("read_file") < alwaysBase {
		t.Error("tools did not move range with their loading mode")
	}
	if got := names(search(t, s, ToolQuery{Query: "slug"}).Tools); !cmp.Equal(got, []string{"slugify"}) {
		t.Errorf("deferred slugify: %v", got)
	}
	if got := names(search(t, s, ToolQuery{Query: "workspace"}).Tools); !cmp.Equal(got, []string{"write_file"}) {
		t.Errorf("always-loaded read_file left out: %v", got)
	}
}
