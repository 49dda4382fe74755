package index

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/index/internal/textsearch"
	"github.com/skillhost/skillhost/packs"
)

// evalTexts returns the searchable columns of every tool of the evaluation
// set, as the tools table stores them.
func evalTexts(t *testing.T) [][]string {
	cat, _ := loadEvalSet(t, append(append([]string{}, tuneSets...), heldOutSets...)...)
	var docs [][]string
	for _, tl := range evalTools(cat) {
		r, err := prepareTool(tl)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, []string{r.nameTerms, r.Description, r.tagsText, r.paramsText, r.examplesTxt})
	}
	return docs
}

// TestTextIndexMatchesFTS5 checks that the in-memory index splits, folds and
// stems text as FTS5's "porter unicode61" tokenizer does: every document's
// set of indexed terms is the one FTS5 reports for it.
func TestTextIndexMatchesFTS5(t *testing.T) {
	docs := evalTexts(t)
	docs = append(docs, []string{"Café naïve RÉSUMÉ façade", "a an über straße 2fa x86_64 O'Brien e-mail", "", "", ""})
	db := openFTSProbe(t)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE probe_terms USING fts5vocab(probe, instance)`); err != nil {
		t.Fatal(err)
	}
	tx, _ := db.Begin()
	for i, d := range docs {
		if _, err := tx.Exec(`INSERT INTO probe(rowid, body) VALUES (?, ?)`, i+1, strings.Join(d, " \n ")); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	want := make([]map[string]bool, len(docs))
	rows, err := db.Query(`SELECT doc, term FROM probe_terms`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var doc int
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		if want[doc-1] == nil {
			want[doc-1] = map[string]bool{}
		}
		want[doc-1][term] = true
	}
	rows.Close()
	bad := 0
	for i, d := range docs {
		got := map[string]bool{}
		for _, col := range d {
			for _, st := range textsearch.Stems(col) {
				got[st] = true
			}
		}
		for term := range want[i] {
			if !got[term] {
				bad++
				if bad <= 20 {
					t.Errorf("doc %d: FTS5 indexes %q, the text index does not", i, term)
				}
			}
		}
		for term := range got {
			if !want[i][term] {
				bad++
				if bad <= 20 {
					t.Errorf("doc %d: the text index has %q, FTS5 does not", i, term)
				}
			}
		}
	}
}

// TestTextIndexBM25MatchesFTS5 checks that, for unexpanded queries, the
// in-memory index scores every document as FTS5's weighted bm25() does.
func TestTextIndexBM25MatchesFTS5(t *testing.T) {
	docs := evalTexts(t)
	db := openFTSProbe(t)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE five USING fts5(a, b, c, d, e, tokenize='porter unicode61')`); err != nil {
		t.Fatal(err)
	}
	tx, _ := db.Begin()
	for i, d := range docs {
		if _, err := tx.Exec(`INSERT INTO five(rowid, a, b, c, d, e) VALUES (?, ?, ?, ?, ?, ?)`, i, d[0], d[1], d[2], d[3], d[4]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ix := textsearch.Build(docs, toolWeights[:])
	for _, q := range []string{"send email", "weather forecast tomorrow", "delete branch", "refund payment order",
		"log in", "resize image png", "calendar", "the"} {
		words := textsearch.QueryTerms(q)
		got := map[int32]float64{}
		for _, m := range ix.Search(textsearch.NewScorer(textsearch.Plain(q)), nil) {
			got[m.Doc] = m.Score
		}
		want := fts5Scores(t, db, ftsExpr(words, false))
		if len(got) != len(want) {
			t.Errorf("%q: %d matches, FTS5 finds %d", q, len(got), len(want))
		}
		for doc, w := range want {
			if g := got[doc]; math.Abs(g-w) > 1e-4*math.Max(1, math.Abs(w)) {
				t.Errorf("%q: doc %d scores %.6f, FTS5 bm25 %.6f", q, doc, g, w)
			}
		}
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

func fts5Scores(t *testing.T, db *sql.DB, expr string) map[int32]float64 {
	t.Helper()
	rows, err := db.Query(`SELECT rowid, -bm25(five, 4, 2, 4, 1, 1) FROM five WHERE five MATCH ?`, expr)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int32]float64{}
	for rows.Next() {
		var id int32
		var s float64
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		out[id] = s
	}
	return out
}

// expansionCatalogue has tools whose descriptions share no word with the
// requests of the expansion tests below.
func expansionCatalogue() []ToolRecord {
	return []ToolRecord{
		{Name: "records_purge", Description: "Erase stored records permanently.", LoadingMode: packs.LoadingDeferred},
		{Name: "records_export", Description: "Write stored records to a CSV file.", LoadingMode: packs.LoadingDeferred},
		{Name: "weather_outlook", Description: "Weather forecast for the next days at a place.", LoadingMode: packs.LoadingDeferred},
		{Name: "remove", Description: "Takes a path.", LoadingMode: packs.LoadingDeferred},
		{Name: "file_tools", Description: "Delete a file, remove a file, erase a file: every way to get rid of a file.", LoadingMode: packs.LoadingDeferred},
	}
}

func searchNames(t *testing.T, s *Store, q string) []string {
	t.Helper()
	res, err := s.SearchTools(context.Background(), ToolQuery{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range res.Tools {
		names = append(names, h.Name)
	}
	return names
}

// TestExpansionFindsBySynonymAndTypo: a request using a synonym or a typo
// finds the tool, and the SQL path, which does not expand, does not.
func TestExpansionFindsBySynonymAndTypo(t *testing.T) {
	s := openTest(t, nil)
	if _, err := s.SyncTools(context.Background(), expansionCatalogue()); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"wipe it all":    "records_purge", // wipe → erase (synonym)
		"wether tomorow": "weather_outlook",
	} {
		if got := searchNames(t, s, q); len(got) == 0 || got[0] != want {
			t.Errorf("%q: got %v, want %s first", q, got, want)
		}
		useSnapshotText = false
		got := searchNames(t, s, q)
		useSnapshotText = true
		if slices.Contains(got, want) {
			t.Errorf("%q: the unexpanded SQL path finds %s (%v): the case does not test expansion", q, want, got)
		}
	}
}

// TestExpansionKeepsNameFirst: a tool's exact name or a prefix of it,
// typed as the query, ranks first with score 1 even when expansion makes
// another tool's text match it many times over.
func TestExpansionKeepsNameFirst(t *testing.T) {
	s := openTest(t, nil)
	if _, err := s.SyncTools(context.Background(), expansionCatalogue()); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"remove", "REMOVE", "records_pur", "records purge"} {
		res, err := s.SearchTools(context.Background(), ToolQuery{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		want := "remove"
		if strings.HasPrefix(q, "records") {
			want = "records_purge"
		}
		if len(res.Tools) == 0 || res.Tools[0].Name != want || res.Tools[0].Score != 1 {
			t.Errorf("%q: got %+v, want %s first with score 1", q, res.Tools, want)
		}
	}
}
