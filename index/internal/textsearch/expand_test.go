package textsearch

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/skillhost/skillhost/internal/evalset"
)

// byText indexes weighted terms by text.
func byText(ts []Term) map[string]Term {
	m := make(map[string]Term, len(ts))
	for _, t := range ts {
		m[t.text] = t
	}
	return m
}

var allowWeighted = cmp.AllowUnexported(Term{})

func TestSynonymDataIsWellFormed(t *testing.T) {
	check := func(where, list string) []string {
		terms := splitTerms(list)
		if len(terms) != strings.Count(list, ",")+1 {
			t.Errorf("%s: empty entry in %q", where, list)
		}
		seen := map[string]bool{}
		for _, term := range terms {
			if want := strings.Join(SplitWords(term), " "); term != want {
				t.Errorf("%s: entry %q is not written as splitWords splits it (want %q)", where, term, want)
			}
			if stopWords[term] {
				t.Errorf("%s: entry %q is a stop-word; queries never search it alone", where, term)
			}
			if n := strings.Count(term, " ") + 1; n > maxPhraseWords {
				t.Errorf("%s: phrase %q has %d words, at most %d are recognised", where, term, n, maxPhraseWords)
			}
			if seen[term] {
				t.Errorf("%s: %q twice", where, term)
			}
			seen[term] = true
		}
		return terms
	}
	distinct := map[string]bool{}
	for i, s := range synonymSets {
		where := fmt.Sprintf("synonymSets[%d]", i)
		terms := check(where, s.terms)
		if len(terms) < 2 {
			t.Errorf("%s: %q has fewer than two members", where, s.terms)
		}
		if !(s.weight > 0 && s.weight < 1) {
			t.Errorf("%s: weight %v, want in (0, 1)", where, s.weight)
		}
		for _, term := range terms {
			distinct[term] = true
		}
	}
	for i, r := range relatedSets {
		where := fmt.Sprintf("relatedSets[%d]", i)
		n, b := check(where, r.narrower), check(where, r.broader)
		if len(n) == 0 || len(b) == 0 {
			t.Errorf("%s: empty side", where)
		}
		if !(r.weight > 0 && r.weight < 1) {
			t.Errorf("%s: weight %v, want in (0, 1)", where, r.weight)
		}
		for _, term := range append(n, b...) {
			distinct[term] = true
		}
	}
	if len(distinct) < 300 {
		t.Errorf("the vocabulary has %d distinct entries; expected a few hundred", len(distinct))
	}
	t.Logf("%d synonym sets, %d related sets, %d distinct words and phrases", len(synonymSets), len(relatedSets), len(distinct))
}

func TestBuildSynonyms(t *testing.T) {
	idx := buildSynonyms([]synonymSet{
		{0.5, "delete, remove, erase"},
		{0.8, "remove, rm"},
		{0.5, "a, b, c, d, e, f, g, h, i, j, k"},
	}, []relatedSet{
		{0.4, "yen, pound sterling", "currency, money back"},
	})
	got := map[string][]expansion{
		"remove": idx.expand["remove"],
		"yen":    idx.expand["yen"],
	}
	want := map[string][]expansion{
		// The heavier set first, then the order of the data.
		"remove": {{"rm", 0.8}, {"delete", 0.5}, {"erase", 0.5}},
		"yen":    {{"currency", 0.4}, {"money back", 0.4}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(expansion{})); diff != "" {
		t.Errorf("expansions (-want +got):\n%s", diff)
	}
	if _, ok := idx.expand["currency"]; ok {
		t.Errorf("a broader word expands back: %v", idx.expand["currency"])
	}
	if n := len(idx.expand["a"]); n != maxExpansions {
		t.Errorf("a word of an 11-member set has %d expansions, want the cap %d", n, maxExpansions)
	}
	if idx.phraseWords != 2 {
		t.Errorf("phraseWords = %d, want 2", idx.phraseWords)
	}
}

func TestExpandTerms(t *testing.T) {
	tests := []struct {
		query string
		// want lists terms that must be present; absent terms that must not.
		want   []Term
		absent []string
		groups int
	}{
		{query: "ping the team", groups: 2, want: []Term{
			{"ping", 1, 0}, {"send", 0.5, 0}, {"post", 0.5, 0}, {"message", 0.5, 0},
			{"team", 1, 1}, {"group", 0.5, 1},
		}, absent: []string{"the"}},
		// A phrase is one group, searched as a phrase; its words are not
		// groups of their own.
		{query: "get my money back", groups: 2, want: []Term{
			{"get", 1, 0}, {"money back", 1, 1}, {"refund", 0.5, 1}, {"reimburse", 0.5, 1},
		}, absent: []string{"money", "back"}},
		{query: "turn on the porch light", groups: 3, want: []Term{
			{"turn on", 1, 0}, {"enable", 0.5, 0}, {"activate", 0.5, 0}, {"porch", 1, 1}, {"light", 1, 2}, {"lamp", 0.5, 2},
		}, absent: []string{"turn", "on"}},
		// One-way links: yen leads to currency, currency not to yen.
		{query: "how many yen is 250 dollars", groups: 4, want: []Term{
			{"how many", 1, 0}, {"count", 0.5, 0}, {"yen", 1, 1}, {"currency", 0.4, 1}, {"exchange rate", 0.4, 1},
			{"250", 1, 2}, {"dollars", 1, 3}, {"currency", 0.4, 3},
		}},
		{query: "currency", groups: 1, want: []Term{{"currency", 1, 0}, {"exchange rate", 0.5, 0}},
			absent: []string{"yen", "dollars"}},
		// The heavier weight wins when a word is reached twice.
		{query: "summarise", groups: 1, want: []Term{{"summarise", 1, 0}, {"summarize", 0.8, 0}}},
		{query: "will I need an umbrella", groups: 1, want: []Term{
			{"umbrella", 1, 0}, {"weather", 0.4, 0}, {"forecast", 0.4, 0},
		}},
		// Repeated words are one group; only stop-words are kept when
		// nothing else is left.
		{query: "send send SEND", groups: 1, want: []Term{{"send", 1, 0}}},
		{query: "what is this", groups: 3, want: []Term{{"what", 1, 0}, {"is", 1, 1}, {"this", 1, 2}}},
		{query: "zzqx", groups: 1, want: []Term{{"zzqx", 1, 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			words := SplitWords(tc.query)
			got := expandTerms(words)
			m := byText(got)
			for _, w := range tc.want {
				g, ok := m[w.text]
				if !ok {
					t.Errorf("missing %q in %v", w.text, got)
					continue
				}
				// A term reached from two groups is kept in each; check the
				// one asked for.
				if g.group != w.group {
					for _, x := range got {
						if x.text == w.text && x.group == w.group {
							g = x
						}
					}
				}
				if diff := cmp.Diff(w, g, allowWeighted); diff != "" {
					t.Errorf("term %q (-want +got):\n%s", w.text, diff)
				}
			}
			for _, a := range tc.absent {
				if _, ok := m[a]; ok {
					t.Errorf("unexpected term %q in %v", a, got)
				}
			}
			groups := map[int]bool{}
			for _, x := range got {
				groups[x.group] = true
				if !(x.weight > 0 && x.weight <= 1) {
					t.Errorf("term %q has weight %v", x.text, x.weight)
				}
			}
			if len(groups) != tc.groups {
				t.Errorf("%d groups, want %d: %v", len(groups), tc.groups, got)
			}
		})
	}
}

func TestExpandTermsBounds(t *testing.T) {
	if got := expandTerms(nil); len(got) != 0 {
		t.Errorf("expandTerms(nil) = %v", got)
	}
	// Many distinct words: at most maxQueryTerms groups, and the derived
	// terms are cut to maxWeightedTerms while the words themselves stay.
	words := []string{"send", "delete", "create", "update", "search", "list", "show", "stop", "start",
		"refund", "email", "file", "picture", "video", "meeting", "weather", "price", "user", "server",
		"bug", "error", "password", "url", "website", "folder", "music", "hotel", "flight"}
	got := expandTerms(words)
	groups, own := map[int]bool{}, 0
	for _, x := range got {
		groups[x.group] = true
		if x.weight == 1 {
			own++
		}
	}
	if len(groups) != maxQueryTerms || own != maxQueryTerms {
		t.Errorf("%d groups and %d own words, want %d", len(groups), own, maxQueryTerms)
	}
	if len(got) != maxWeightedTerms {
		t.Errorf("%d terms, want the cap %d", len(got), maxWeightedTerms)
	}
}

func TestCapTerms(t *testing.T) {
	in := []Term{{"a", 1, 0}, {"b", 0.5, 0}, {"c", 0.8, 0}, {"d", 1, 1}, {"e", 0.5, 1}, {"f", 1, 2}}
	want := []Term{{"a", 1, 0}, {"c", 0.8, 0}, {"d", 1, 1}, {"f", 1, 2}}
	if diff := cmp.Diff(want, capTerms(slices.Clone(in), 4), allowWeighted); diff != "" {
		t.Errorf("capTerms 4 (-want +got):\n%s", diff)
	}
	// Words of weight 1 stay beyond the cap.
	want = []Term{{"a", 1, 0}, {"d", 1, 1}, {"f", 1, 2}}
	if diff := cmp.Diff(want, capTerms(slices.Clone(in), 1), allowWeighted); diff != "" {
		t.Errorf("capTerms 1 (-want +got):\n%s", diff)
	}
}

// testVocab is a small catalogue vocabulary.
func testVocab() *memVocab {
	return newVocab(strings.Fields(`weather forecast refund order orders customer thermostat temperature
		upload logs email send whether gather feather summary translate meeting greek state restart restore
		title label separate`))
}

func TestCorrectTerms(t *testing.T) {
	v := testVocab()
	tests := []struct {
		query string
		want  []Term
	}{
		{"refnd order 99", []Term{{"refnd", 1, 0}, {"refund", weightCorrection, 0}, {"order", 1, 1}, {"99", 1, 2}}},
		// Every word at the smallest cost, the more frequent first, then in
		// byte order.
		{"wether forcast", []Term{{"wether", 1, 0}, {"weather", weightCorrection, 0}, {"whether", weightCorrection, 0},
			{"forcast", 1, 1}, {"forecast", weightCorrection, 1}}},
		// Ten letters: two edits allowed, only the closest kept; a and s
		// are neighbouring keys.
		{"thermostst", []Term{{"thermostst", 1, 0}, {"thermostat", weightCorrection, 0}}},
		{"termperatrue", []Term{{"termperatrue", 1, 0}, {"temperature", weightCorrection, 0}}},
		// Swapped letters are one edit, also the first two.
		{"uplaod the logs", []Term{{"uplaod", 1, 0}, {"upload", weightCorrection, 0}, {"logs", 1, 1}}},
		{"send emial", []Term{{"send", 1, 0}, {"emial", 1, 1}, {"email", weightCorrection, 1}}},
		{"ewather", []Term{{"ewather", 1, 0}, {"weather", weightCorrection, 0}}},
		// A vowel for a vowel is a common misspelling.
		{"seperate", []Term{{"seperate", 1, 0}, {"separate", weightCorrection, 0}}},
		// Real words one unlikely slip away are left alone: n and k are
		// far apart, l and t too, and a different first letter is rarely
		// a typo.
		{"green stale eather", []Term{{"green", 1, 0}, {"stale", 1, 1}, {"eather", 1, 2}}},
		// Inflected forms of indexed words are not typos (the stemmer
		// matches them), even with a neighbour at the same distance.
		{"restarted titled labels", []Term{{"restarted", 1, 0}, {"titled", 1, 1}, {"labels", 1, 2}}},
		// Four-letter words take one plausible slip.
		{"ordr", []Term{{"ordr", 1, 0}, {"order", weightCorrection, 0}}},
		// Three-letter words, words with digits, words of the synonym
		// vocabulary, stop-words and contraction stems are left alone (a
		// word mixing letters and digits gets its split form).
		{"ord", []Term{{"ord", 1, 0}}},
		{"orderz2", []Term{{"orderz2", 1, 0}, {"orderz 2", weightForm, 0}}},
		{"umbrella", []Term{{"umbrella", 1, 0}}},
		{"would", []Term{{"would", 1, 0}}},
		{"refund hasn shouldn", []Term{{"refund", 1, 0}}},
		// Nothing near: the word alone.
		{"kubernetes", []Term{{"kubernetes", 1, 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got := correctTerms(SplitWords(tc.query), v)
			if diff := cmp.Diff(tc.want, got, allowWeighted); diff != "" {
				t.Errorf("correctTerms(%q) (-want +got):\n%s", tc.query, diff)
			}
		})
	}
}

func TestTypoCost(t *testing.T) {
	tests := []struct {
		a, b string
		max  int
		want int
	}{
		{"thermostst", "thermostat", 2, 1}, // s next to a
		{"green", "greek", 2, 2},           // n far from k: delete and insert
		{"green", "greek", 1, 2},           // over the bound: max+1
		{"seperate", "separate", 2, 1},     // vowels
		{"uplaod", "upload", 2, 1},
		{"refnd", "refund", 2, 1},
		{"café", "cafè", 2, 1}, // no layout assumed outside a-z
		{"", "abc", 5, 3},
		{"abc", "abc", 0, 0},
	}
	for _, tc := range tests {
		if got := typoCost([]rune(tc.a), []rune(tc.b), tc.max); got != tc.want {
			t.Errorf("typoCost(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.max, got, tc.want)
		}
	}
	// Never below the plain distance, never above twice it.
	r := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		a, b := []rune(randWord(r, "qazsxnmlp", 7)), []rune(randWord(r, "qazsxnmlp", 7))
		d, c := refOSA(a, b), typoCost(a, b, 20)
		if c < d || c > 2*d {
			t.Fatalf("typoCost(%q, %q) = %d, distance %d", string(a), string(b), c, d)
		}
	}
}

func TestPlausibleSub(t *testing.T) {
	for _, p := range []string{"as", "sa", "qw", "qa", "wa", "ws", "az", "sz", "sx", "gb", "hn", "mk", "pl", "ae", "ou", "éx"} {
		if r := []rune(p); !plausibleSub(r[0], r[1]) {
			t.Errorf("plausibleSub(%q, %q) = false", r[0], r[1])
		}
	}
	for _, p := range []string{"nk", "lt", "qs", "zq", "am", "pq", "sc", "ml", "ay"} {
		if r := []rune(p); plausibleSub(r[0], r[1]) {
			t.Errorf("plausibleSub(%q, %q) = true", r[0], r[1])
		}
	}
}

func TestKnownForm(t *testing.T) {
	v := newVocab([]string{"restart", "title", "threat", "complete", "commit", "query", "schedule", "logs"})
	for _, w := range []string{"restarted", "restarting", "titled", "titles", "threats", "completely", "committed",
		"queries", "queried", "scheduled", "scheduling", "log"} {
		if !knownForm(w, v) {
			t.Errorf("knownForm(%q) = false", w)
		}
	}
	for _, w := range []string{"restore", "tile", "commute", "quarry", "xyz", "re", "completer s"} {
		if knownForm(w, v) {
			t.Errorf("knownForm(%q) = true", w)
		}
	}
}

func TestExpandQueryCorrectsThenExpands(t *testing.T) {
	got := byText(Expand(SplitWords("refnd please"), testVocab()))
	want := map[string]Term{
		"refnd":  {"refnd", 1, 0},
		"refund": {"refund", weightCorrection, 0},
		// Synonyms of a correction carry both weights.
		"reimburse":  {"reimburse", weightCorrection * weightSynonym, 0},
		"money back": {"money back", weightCorrection * weightSynonym, 0},
	}
	for k, w := range want {
		if diff := cmp.Diff(w, got[k], allowWeighted, cmpApprox); diff != "" {
			t.Errorf("%q (-want +got):\n%s", k, diff)
		}
	}
	if _, ok := got["please"]; ok {
		t.Errorf("the stop-word stayed: %v", got)
	}
	// Without a vocabulary there is nothing to correct against.
	if diff := cmp.Diff(expandTerms(SplitWords("refnd")), Expand(SplitWords("refnd"), nil), allowWeighted); diff != "" {
		t.Errorf("Expand(nil vocab) differs from expandTerms (-want +got):\n%s", diff)
	}
}

var cmpApprox = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })

func TestFTSQuery(t *testing.T) {
	w := func(texts ...string) []Term {
		var out []Term
		for i, s := range texts {
			out = append(out, Term{s, 1, i})
		}
		return out
	}
	tests := []struct {
		name string
		in   []Term
		want string
	}{
		{"words", w("send", "email"), `"send" OR "email"`},
		{"phrase", w("money back"), `"money back"`},
		{"operators are words", w("NEAR", "AND", "OR", "NOT"), `"NEAR" OR "AND" OR "OR" OR "NOT"`},
		{"syntax is text", w(`a"b`, "col:x", "x*", "^y", "(z)", "{a b}:c", "-q", "+r"),
			`"a""b" OR "col:x" OR "x*" OR "^y" OR "(z)" OR "{a b}:c" OR "-q" OR "+r"`},
		{"duplicates once", w("a", "b", "a"), `"a" OR "b"`},
		{"nothing to match", w("", "  ", "***", `""`), ""},
		{"nul and bad utf-8", w("a\x00b", "c\xffd"), `"a b" OR "c d"`},
		{"no weight", []Term{{"a", 0, 0}, {"b", math.NaN(), 1}, {"c", -1, 2}, {"d", 0.1, 3}}, `"d"`},
		{"empty", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ftsQuery(tc.in); got != tc.want {
				t.Errorf("ftsQuery = %s, want %s", got, tc.want)
			}
		})
	}
}

// openFTSProbe opens an in-memory FTS5 table with one text column.
func openFTSProbe(tb testing.TB) *sql.DB {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='porter unicode61')`); err != nil {
		tb.Fatal(err)
	}
	return db
}

// TestFTSQueryTermsAreWords runs expressions against FTS5: words that are
// FTS5 syntax match documents containing them as words, and nothing else.
func TestFTSQueryTermsAreWords(t *testing.T) {
	db := openFTSProbe(t)
	docs := []string{"near and or not", "col x star", "money back guarantee", "back the money"}
	for i, d := range docs {
		if _, err := db.Exec(`INSERT INTO probe(rowid, body) VALUES (?, ?)`, i+1, d); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		terms []string
		want  []int
	}{
		{[]string{"NEAR"}, []int{1}},
		{[]string{"and"}, []int{1}},
		{[]string{"NOT"}, []int{1}},
		{[]string{"col:x"}, []int{2}}, // a phrase "col x", not a column filter
		{[]string{"star*"}, []int{2}},
		{[]string{"x*"}, []int{2}}, // not a prefix query
		{[]string{"mone*"}, nil},
		{[]string{"money back"}, []int{3}}, // a phrase: doc 4 has both words, not the phrase
		{[]string{"guarantee", "NEAR(back money)"}, []int{3}},
		{[]string{"^near"}, []int{1}},
	}
	for _, tc := range tests {
		var in []Term
		for i, s := range tc.terms {
			in = append(in, Term{s, 1, i})
		}
		q := ftsQuery(in)
		rows, err := db.Query(`SELECT rowid FROM probe WHERE probe MATCH ? ORDER BY rowid`, q)
		if err != nil {
			t.Fatalf("%v → %s: %v", tc.terms, q, err)
		}
		var got []int
		for rows.Next() {
			var id int
			rows.Scan(&id)
			got = append(got, id)
		}
		rows.Close()
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%v → %s matched (-want +got):\n%s", tc.terms, q, diff)
		}
	}
}

func FuzzFTSQuery(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, fuzzSeeds[(i+7)%len(fuzzSeeds)], `"`+s)
	}
	db := openFTSProbe(f)
	f.Fuzz(func(t *testing.T, a, b, c string) {
		in := []Term{{a, 1, 0}, {b, 0.5, 0}, {c, 0.7, 1}}
		q := ftsQuery(in)
		if q == "" {
			if len(distinctTerms(in)) != 0 {
				t.Fatalf("empty expression for %q", distinctTerms(in))
			}
			return
		}
		// A document holding the terms' own text must be found by them:
		// only words were searched. (Checked for ASCII, where SQLite's
		// tokenizer and Go agree on what a letter is.)
		doc := strings.Join(distinctTerms(in), " ")
		if _, err := db.Exec(`INSERT INTO probe(rowid, body) VALUES (1, ?)`, doc); err != nil {
			t.Fatal(err)
		}
		defer db.Exec(`DELETE FROM probe`)
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM probe WHERE probe MATCH ?`, q).Scan(&n); err != nil {
			t.Fatalf("ftsQuery(%q, %q, %q) = %s: not a valid FTS5 query: %v", a, b, c, q, err)
		}
		if n != 1 && isASCIIAlnum(doc) {
			t.Fatalf("ftsQuery(%q, %q, %q) = %s does not match the document %q", a, b, c, q, doc)
		}
	})
}

// isASCIIAlnum reports whether s is ASCII with at least one letter or digit.
func isASCIIAlnum(s string) bool {
	alnum := false
	for _, r := range s {
		if r > unicode.MaxASCII {
			return false
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			alnum = true
		}
	}
	return alnum
}

func TestRescore(t *testing.T) {
	ws := []Term{
		{"refund", 1, 0}, {"reimburse", 0.5, 0}, {"money back", 0.5, 0},
		{"order", 1, 1}, {"purchase", 0.5, 1},
	}
	tests := []struct {
		name    string
		contrib map[string]float64
		want    float64
	}{
		{"nothing", nil, 0},
		{"one word", map[string]float64{"refund": 2}, 2},
		{"a synonym counts at its weight", map[string]float64{"reimburse": 2}, 1},
		// Best term per group, not the sum of the group.
		{"word and synonym", map[string]float64{"refund": 2, "reimburse": 3, "money back": 3}, 2},
		{"a strong synonym beats a weak word", map[string]float64{"refund": 1, "reimburse": 4}, 2},
		{"groups add up", map[string]float64{"refund": 2, "purchase": 2}, 3},
		{"bad values match nothing", map[string]float64{"refund": math.NaN(), "order": -1, "purchase": math.Inf(1)}, math.Inf(1)},
		{"unknown terms", map[string]float64{"other": 5}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rescore(tc.contrib, ws); got != tc.want {
				t.Errorf("rescore = %v, want %v", got, tc.want)
			}
		})
	}
	// A Scorer gives the same scores from slices.
	sc := NewScorer(ws)
	if diff := cmp.Diff([]string{"refund", "reimburse", "money back", "order", "purchase"}, sc.terms); diff != "" {
		t.Errorf("scorer terms (-want +got):\n%s", diff)
	}
	for _, tc := range tests {
		c := make([]float64, len(sc.terms))
		for i, term := range sc.terms {
			c[i] = tc.contrib[term]
		}
		if got := sc.score(c); got != tc.want {
			t.Errorf("%s: Scorer.score = %v, want %v", tc.name, got, tc.want)
		}
	}
	// A term in two groups counts in each; more groups than the stack
	// buffer holds still score.
	shared := []Term{{"send", 1, 0}, {"post", 1, 1}, {"send", 0.5, 1}, {"far", 1, 40}}
	if got := rescore(map[string]float64{"send": 2, "far": 1}, shared); got != 4 {
		t.Errorf("shared term: rescore = %v, want 4", got)
	}
	// With every weight 1 and one term per group, rescore is the sum of the
	// contributions: plain bm25.
	plain := []Term{{"a", 1, 0}, {"b", 1, 1}, {"c", 1, 2}}
	if got := rescore(map[string]float64{"a": 1.5, "c": 2.25}, plain); got != 3.75 {
		t.Errorf("plain rescore = %v, want 3.75", got)
	}
}

// refOSA is the textbook optimal string alignment distance.
func refOSA(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func TestOSADistance(t *testing.T) {
	tests := []struct {
		a, b string
		max  int
		want int
	}{
		{"", "", 2, 0},
		{"abc", "", 5, 3},
		{"abc", "", 2, 3}, // over the bound: max+1
		{"refund", "refund", 2, 0},
		{"refnd", "refund", 2, 1},
		{"uplaod", "upload", 2, 1}, // adjacent swap
		{"wether", "weather", 2, 1},
		{"kitten", "sitting", 5, 3},
		{"kitten", "sitting", 2, 3},
		{"ca", "abc", 5, 3}, // OSA edits no substring twice
		{"thermostst", "thermostat", 1, 1},
		{"café", "cafe", 1, 1},
		{"日本語", "日語", 1, 1},
		{"ab", "ba", 0, 1},
	}
	for _, tc := range tests {
		if got := osaDistance([]rune(tc.a), []rune(tc.b), tc.max); got != tc.want {
			t.Errorf("osaDistance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.max, got, tc.want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		a, b := []rune(randWord(r, "abcd", 9)), []rune(randWord(r, "abcd", 9))
		ref := refOSA(a, b)
		for m := 0; m <= 4; m++ {
			want := min(ref, m+1)
			if got := osaDistance(a, b, m); got != want {
				t.Fatalf("osaDistance(%q, %q, %d) = %d, want %d", string(a), string(b), m, got, want)
			}
		}
	}
}

// randWord draws a word of 0..maxLen characters from alphabet.
func randWord(r *rand.Rand, alphabet string, maxLen int) string {
	as := []rune(alphabet)
	n := r.IntN(maxLen + 1)
	w := make([]rune, n)
	for i := range w {
		w[i] = as[r.IntN(len(as))]
	}
	return string(w)
}

// bruteNear is Near by comparing against every word.
func bruteNear(words []string, freq map[string]int, term string, maxDist int) []string {
	type m struct {
		w string
		d int
	}
	var found []m
	for _, w := range words {
		if d := refOSA([]rune(term), []rune(w)); d <= maxDist {
			found = append(found, m{w, d})
		}
	}
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i], found[j]
		if a.d != b.d {
			return a.d < b.d
		}
		if freq[a.w] != freq[b.w] {
			return freq[a.w] > freq[b.w]
		}
		return a.w < b.w
	})
	out := []string{}
	for _, f := range found {
		out = append(out, f.w)
	}
	return out
}

// TestVocabNearIsExact compares Near with a scan of every word, on words from
// a small alphabet so that many are close, long enough to cross the indexed
// prefix, some with characters outside ASCII.
func TestVocabNearIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	freq := map[string]int{}
	var terms []string
	for range 3000 {
		w := randWord(r, "abcdeé", 12)
		if w == "" {
			continue
		}
		terms = append(terms, w)
		if r.IntN(4) == 0 {
			terms = append(terms, w) // more frequent
		}
	}
	var words []string
	for _, w := range terms {
		if freq[w] == 0 {
			words = append(words, w)
		}
		freq[w]++
	}
	v := newVocab(terms)
	if v.Len() != len(words) {
		t.Fatalf("Len = %d, want %d", v.Len(), len(words))
	}
	queries := 400
	if raceEnabled {
		queries = 60
	}
	for i := range queries {
		var q string
		if i%2 == 0 {
			q = mutate(r, words[r.IntN(len(words))], "abcdeéx", 1+r.IntN(2))
		} else {
			q = randWord(r, "abcdeé", 12)
		}
		if q == "" {
			continue
		}
		for d := 0; d <= vocabMaxDist; d++ {
			want := bruteNear(words, freq, q, d)
			got := v.Near(q, d)
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("Near(%q, %d) (-want +got):\n%s", q, d, diff)
			}
		}
	}
}

// mutate applies n random edits (insert, delete, substitute, swap) to w.
func mutate(r *rand.Rand, w, alphabet string, n int) string {
	rs, as := []rune(w), []rune(alphabet)
	for range n {
		switch op := r.IntN(4); {
		case op == 0 || len(rs) == 0:
			i := r.IntN(len(rs) + 1)
			rs = slices.Insert(rs, i, as[r.IntN(len(as))])
		case op == 1:
			i := r.IntN(len(rs))
			rs = slices.Delete(rs, i, i+1)
		case op == 2:
			rs[r.IntN(len(rs))] = as[r.IntN(len(as))]
		case len(rs) > 1:
			i := r.IntN(len(rs) - 1)
			rs[i], rs[i+1] = rs[i+1], rs[i]
		}
	}
	return string(rs)
}

func TestVocabEdges(t *testing.T) {
	v := newVocab([]string{"", "order", "orders", "order", "border"})
	if v.Len() != 3 || !v.Has("order") || v.Has("") || v.Has("ord") {
		t.Errorf("Len %d, Has(order) %v, Has(\"\") %v, Has(ord) %v", v.Len(), v.Has("order"), v.Has(""), v.Has("ord"))
	}
	tests := []struct {
		term string
		max  int
		want []string
	}{
		{"order", 1, []string{"order", "border", "orders"}},
		{"order", 0, []string{"order"}},
		{"ordr", -3, nil},                                  // clamped to 0
		{"ordr", 9, []string{"order", "border", "orders"}}, // clamped to 2
		{"", 2, nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, v.Near(tc.term, tc.max)); diff != "" {
			t.Errorf("Near(%q, %d) (-want +got):\n%s", tc.term, tc.max, diff)
		}
	}
	empty := newVocab(nil)
	if empty.Has("a") || empty.Near("abc", 2) != nil {
		t.Error("an empty vocabulary found something")
	}
}

// benchWords returns n distinct pseudo-words of 3 to 14 letters built from
// syllables, as catalogue vocabularies look.
func benchWords(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, seed+1))
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "te", "vi", "zo", "pre", "con", "ing", "er", "st",
		"tr", "ch", "ph", "qu", "ex", "un", "re", "de", "al", "on", "ta", "io", "ou", "ai"}
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for k := 1 + r.IntN(5); k > 0; k-- {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		w := b.String()
		if len(w) < 3 || len(w) > 14 || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

func BenchmarkVocabNear(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		words := benchWords(n, 7)
		v := newVocab(words)
		r := rand.New(rand.NewPCG(8, 9))
		queries := make([]string, 1024)
		for i := range queries {
			// One edit, as the typos correctTerms handles.
			queries[i] = mutate(r, words[r.IntN(len(words))], "aeioulnrst", 1)
		}
		for _, d := range []int{1, 2} {
			b.Run(fmt.Sprintf("words=%d/dist=%d", n, d), func(b *testing.B) {
				b.ReportAllocs()
				found := 0
				for i := 0; b.Loop(); i++ {
					found += len(v.Near(queries[i%len(queries)], d))
				}
				b.ReportMetric(float64(found)/float64(b.N), "words/op")
			})
		}
	}
}

func BenchmarkNewVocab(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		words := benchWords(n, 7)
		b.Run(fmt.Sprintf("words=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				newVocab(words)
			}
		})
	}
}

func BenchmarkExpandQuery(b *testing.B) {
	v := newVocab(benchWords(10_000, 7))
	words := SplitWords("wether forcast for berlin this weekend, and refnd the order if it rains")
	b.ReportAllocs()
	for b.Loop() {
		ftsQuery(Expand(words, v))
	}
}

// expansionBench is a plain FTS5 table of an evaluation catalogue with the
// catalogue's vocabulary.
type expansionBench struct {
	db     *sql.DB
	vocab  *memVocab
	names  []string  // by rowid-1
	or     *sql.Stmt // rank by one OR-ed MATCH
	single *sql.Stmt // one term's best documents

	mu  sync.Mutex
	dfs map[string]int // document frequencies, for searchBounded
}

// expansionColumns are the bm25 weights of the table's columns: name words,
// description, parameters (as the index weighs them).
const expansionColumns = "4, 2, 1"

// perTermCandidates bounds the documents read per term when scoring term by
// term, as a search over a large catalogue would.
const perTermCandidates = 200

func newExpansionBench(t testing.TB, cat []evalset.Tool) *expansionBench {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "expand.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE VIRTUAL TABLE docs USING fts5(name, description, params, tokenize='porter unicode61')`); err != nil {
		t.Fatal(err)
	}
	e := &expansionBench{db: db}
	var words []string
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i, tl := range cat {
		var params []string
		for _, p := range tl.Params {
			params = append(params, nameTerms(p.Name), p.Description)
		}
		row := []string{nameTerms(tl.Name), tl.Description, strings.Join(params, " ")}
		if _, err := tx.Exec(`INSERT INTO docs(rowid, name, description, params) VALUES (?, ?, ?, ?)`,
			i+1, row[0], row[1], row[2]); err != nil {
			t.Fatal(err)
		}
		for _, col := range row {
			words = append(words, SplitWords(col)...)
		}
		e.names = append(e.names, tl.Name)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	e.vocab = newVocab(words)
	if e.or, err = db.Prepare(`SELECT rowid, bm25(docs, ` + expansionColumns + `) AS r FROM docs WHERE docs MATCH ? ORDER BY r LIMIT ?`); err != nil {
		t.Fatal(err)
	}
	if e.single, err = db.Prepare(`SELECT rowid, bm25(docs, ` + expansionColumns + `) AS r FROM docs WHERE docs MATCH ? ORDER BY r LIMIT ?`); err != nil {
		t.Fatal(err)
	}
	return e
}

// top orders scored documents, best first, ties by name, and names the
// first limit.
func (e *expansionBench) top(scores map[int]float64, limit int) []string {
	ids := make([]int, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := scores[ids[i]], scores[ids[j]]
		if a != b {
			return a > b
		}
		return e.names[ids[i]-1] < e.names[ids[j]-1]
	})
	if len(ids) > limit {
		ids = ids[:limit]
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = e.names[id-1]
	}
	return out
}

// searchOR ranks by the bm25 of one OR-ed MATCH of every term, weights
// ignored.
func (e *expansionBench) searchOR(ctx context.Context, ws []Term, limit int) ([]string, error) {
	return e.searchMatch(ctx, ftsQuery(ws), limit)
}

// searchMatch ranks by the bm25 of MATCH q.
func (e *expansionBench) searchMatch(ctx context.Context, q string, limit int) ([]string, error) {
	if q == "" {
		return nil, nil
	}
	// More rows than asked for, so that ties at the cut are ordered by
	// name as searchWeighted orders them.
	rows, err := e.or.QueryContext(ctx, q, limit+50)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	scores := map[int]float64{}
	for rows.Next() {
		var id int
		var r float64
		if err := rows.Scan(&id, &r); err != nil {
			return nil, err
		}
		scores[id] = -r
	}
	return e.top(scores, limit), rows.Err()
}

// searchWeighted collects every term's own bm25 contribution (the best
// perTermCandidates documents of a MATCH of that term alone) and ranks by
// rescore.
func (e *expansionBench) searchWeighted(ctx context.Context, ws []Term, limit int) ([]string, error) {
	sc := NewScorer(ws)
	contrib := map[int][]float64{}
	for i, term := range sc.terms {
		rows, err := e.single.QueryContext(ctx, QuoteFTS(term), perTermCandidates)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int
			var r float64
			if err := rows.Scan(&id, &r); err != nil {
				rows.Close()
				return nil, err
			}
			c := contrib[id]
			if c == nil {
				c = make([]float64, len(sc.terms))
				contrib[id] = c
			}
			c[i] = -r
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	scores := make(map[int]float64, len(contrib))
	for id, c := range contrib {
		scores[id] = sc.score(c)
	}
	return e.top(scores, limit), nil
}

// searchRepeated approximates the weights inside one MATCH: FTS5's bm25
// adds up every phrase of the expression, so a term written twice counts
// twice. Words of weight 1 are written four times and derived terms
// round(4 × weight) times; there is no best-of-group, a document matching
// several terms of a group counts them all.
func (e *expansionBench) searchRepeated(ctx context.Context, ws []Term, limit int) ([]string, error) {
	best := map[string]float64{}
	for _, w := range ws {
		t := cleanFTSTerm(w.text)
		best[t] = max(best[t], w.weight)
	}
	var parts []string
	for _, t := range distinctTerms(ws) {
		for range max(1, int(math.Round(best[t]*4))) {
			parts = append(parts, QuoteFTS(t))
		}
	}
	return e.searchMatch(ctx, strings.Join(parts, " OR "), limit)
}

// commonTerm is the document frequency above which searchBounded leaves a
// derived term out: max(256, rows/64), as the index's search treats common
// words.
func (e *expansionBench) commonTerm() int { return max(256, len(e.names)/64) }

// df returns the number of documents matching term, cached as the index
// caches document frequencies between writes.
func (e *expansionBench) df(ctx context.Context, term string) (int, error) {
	e.mu.Lock()
	n, ok := e.dfs[term]
	e.mu.Unlock()
	if ok {
		return n, nil
	}
	if err := e.db.QueryRowContext(ctx, `SELECT count(*) FROM docs WHERE docs MATCH ?`, QuoteFTS(term)).Scan(&n); err != nil {
		return 0, err
	}
	e.mu.Lock()
	if e.dfs == nil {
		e.dfs = map[string]int{}
	}
	e.dfs[term] = n
	e.mu.Unlock()
	return n, nil
}

// searchBounded is searchWeighted without the derived terms no document
// holds or too many do: those cost a query each and add nothing (or
// almost nothing, as bm25 gives common terms little weight).
func (e *expansionBench) searchBounded(ctx context.Context, ws []Term, limit int) ([]string, error) {
	limitDF := e.commonTerm()
	var kept []Term
	for _, w := range ws {
		if w.weight < 1 {
			n, err := e.df(ctx, cleanFTSTerm(w.text))
			if err != nil {
				return nil, err
			}
			if n == 0 || n > limitDF {
				continue
			}
		}
		kept = append(kept, w)
	}
	return e.searchWeighted(ctx, kept, limit)
}

// TestExpansionEval measures on the evaluation set what synonyms and spelling
// correction add to a plain bm25 search, and checks that exact tool names
// are still found first. Run with -v for the figures.
func TestExpansionEval(t *testing.T) {
	if testing.Short() {
		t.Skip("the evaluation runs thousands of queries")
	}
	if raceEnabled {
		t.Skip("the figures do not depend on the race detector, which makes this run take minutes")
	}
	cat, queries := loadEvalSet(t, tuneSets...)
	e := newExpansionBench(t, cat)
	var nameQueries []evalset.Query
	for _, tl := range cat {
		nameQueries = append(nameQueries, evalset.Query{Text: tl.Name, Expected: []string{tl.Name}})
	}
	type variant struct {
		name   string
		terms  func(q string) []Term
		search func(context.Context, []Term, int) ([]string, error)
	}
	syn := func(q string) []Term { return expandTerms(SplitWords(q)) }
	typo := func(q string) []Term { return correctTerms(SplitWords(q), e.vocab) }
	both := func(q string) []Term { return Expand(SplitWords(q), e.vocab) }
	variants := []variant{
		{"plain bm25, one OR query", Plain, e.searchOR},
		{"plain, scored term by term", Plain, e.searchWeighted},
		{"+synonyms, one OR query", syn, e.searchOR},
		{"+synonyms, rescored", syn, e.searchWeighted},
		{"+typo correction, rescored", typo, e.searchWeighted},
		{"+both, one OR query", both, e.searchOR},
		{"+both, rescored", both, e.searchWeighted},
		{"+both, repeated terms", both, e.searchRepeated},
		{"+both, rescored, df-bounded", both, e.searchBounded},
	}
	ctx := context.Background()
	t.Logf("%d tools, %d queries, vocabulary %d words; %d name queries", len(cat), len(queries), e.vocab.Len(), len(nameQueries))
	t.Logf("%-28s %8s %8s %8s %8s | %8s %8s | %6s %8s", "variant", "R@1", "R@5", "R@10", "MRR@10", "name R@1", "name MRR", "terms", "ms/query")
	results := map[string][2]evalset.Metrics{}
	ranks := map[string][][]evalset.Result{}
	for _, v := range variants {
		nterms := 0
		search := func(ctx context.Context, q string, limit int) ([]string, error) {
			ws := v.terms(q)
			nterms += len(distinctTerms(ws))
			return v.search(ctx, ws, limit)
		}
		start := time.Now()
		rep, err := evalset.Run(ctx, queries, search)
		if err != nil {
			t.Fatal(err)
		}
		perQuery := float64(time.Since(start).Microseconds()) / 1000 / float64(len(queries))
		terms := float64(nterms) / float64(len(queries))
		nrep, err := evalset.Run(ctx, nameQueries, search)
		if err != nil {
			t.Fatal(err)
		}
		m, nm := rep.Metrics, nrep.Metrics
		results[v.name] = [2]evalset.Metrics{m, nm}
		ranks[v.name] = [][]evalset.Result{rep.Results, nrep.Results}
		t.Logf("%-28s %8.3f %8.3f %8.3f %8.3f | %8.3f %8.3f | %6.1f %8.2f", v.name, m.RecallAt1, m.RecallAt5, m.RecallAt10, m.MRRAt10,
			nm.RecallAt1, nm.MRRAt10, terms, perQuery)
	}
	if os.Getenv("SKILLHOST_EVAL_MISSES") != "" {
		// Every query whose rank the full expansion changed.
		for k, set := range []string{"query", "name"} {
			before, after := ranks["plain bm25, one OR query"][k], ranks["+both, rescored"][k]
			for i := range before {
				if b, a := before[i].Rank, after[i].Rank; a != b {
					t.Logf("%s rank %d → %d %q want %v got %v", set, b, a, after[i].Query, after[i].Expected, after[i].Got)
				}
			}
		}
	}
	plain, perTerm := results["plain bm25, one OR query"], results["plain, scored term by term"]
	// Scoring term by term with equal weights is plain bm25 again (up to
	// rounding in ties).
	if d := math.Abs(plain[0].MRRAt10 - perTerm[0].MRRAt10); d > 0.005 {
		t.Errorf("term-by-term scoring of the plain query moved MRR@10 by %.4f; it should reproduce bm25", d)
	}
	full := results["+both, rescored"]
	if full[0].MRRAt10 <= plain[0].MRRAt10 || full[0].RecallAt5 <= plain[0].RecallAt5 {
		t.Errorf("expansion did not help: MRR@10 %.3f vs %.3f, recall@5 %.3f vs %.3f",
			full[0].MRRAt10, plain[0].MRRAt10, full[0].RecallAt5, plain[0].RecallAt5)
	}
	if full[1].RecallAt1 < plain[1].RecallAt1-0.01 {
		t.Errorf("expansion hurts exact-name queries: recall@1 %.3f vs %.3f", full[1].RecallAt1, plain[1].RecallAt1)
	}
}

// BenchmarkExpandedSearch compares, on a 10,000-tool table (the evaluation
// catalogue repeated under new names), the cost per query of a plain OR-ed
// MATCH, the expanded query OR-ed, and the expanded query scored term by
// term as TestExpansionEval's "rescored" variants do.
func BenchmarkExpandedSearch(b *testing.B) {
	cat, queries := loadEvalSet(b, tuneSets...)
	var big []evalset.Tool
	for i := 0; len(big) < 10_000; i++ {
		for _, tl := range cat {
			tl.Name = fmt.Sprintf("%s_%d", tl.Name, i)
			big = append(big, tl)
		}
	}
	e := newExpansionBench(b, big[:10_000])
	if len(queries) > 64 {
		queries = queries[:64]
	}
	ctx := context.Background()
	for _, v := range []struct {
		name   string
		terms  func(string) []Term
		search func(context.Context, []Term, int) ([]string, error)
	}{
		{"plain/OR", Plain, e.searchOR},
		{"expanded/OR", func(q string) []Term { return Expand(SplitWords(q), e.vocab) }, e.searchOR},
		{"expanded/per-term", func(q string) []Term { return Expand(SplitWords(q), e.vocab) }, e.searchWeighted},
		{"expanded/per-term-df-bounded", func(q string) []Term { return Expand(SplitWords(q), e.vocab) }, e.searchBounded},
		{"expanded/repeated", func(q string) []Term { return Expand(SplitWords(q), e.vocab) }, e.searchRepeated},
	} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := v.search(ctx, v.terms(queries[i%len(queries)].Text), evalset.Limit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSplitLetterDigit: a word mixing letters and digits is split where
// one turns into the other; other words are not.
func TestSplitLetterDigit(t *testing.T) {
	for in, want := range map[string]string{
		"sha256": "sha 256", "utf8": "utf 8", "v2beta1": "v 2 beta 1", "3d": "3 d", "x": "",
		"base": "", "2024": "", "sha 256": "", "": "", "ipv6": "ipv 6",
	} {
		if got := splitLetterDigit(in); got != want {
			t.Errorf("splitLetterDigit(%q) = %q, want %q", in, got, want)
		}
	}
}
