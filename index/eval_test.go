package index

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/index/internal/textsearch"
	"github.com/skillhost/skillhost/internal/evalset"
	"github.com/skillhost/skillhost/packs"
)

// evalDir holds the project's retrieval evaluation set.
const evalDir = "../testdata/eval"

// Parts of the evaluation set. The ranking is tuned on tuneSets; heldOutSets
// (other domains, written before any tuning) only measure whether the tuning
// carries over to a catalogue it never saw.
var (
	tuneSets    = []string{"a", "b"}
	heldOutSets = []string{"c"}
)

// loadEvalSet reads the tools-X.jsonl and queries-X.jsonl files of the
// evaluation set for each part X of sets.
func loadEvalSet(t testing.TB, sets ...string) ([]evalset.Tool, []evalset.Query) {
	t.Helper()
	var toolFiles, queryFiles []string
	for _, set := range sets {
		tf, _ := filepath.Glob(filepath.Join(evalDir, "tools-"+set+".jsonl"))
		qf, _ := filepath.Glob(filepath.Join(evalDir, "queries-"+set+".jsonl"))
		toolFiles, queryFiles = append(toolFiles, tf...), append(queryFiles, qf...)
	}
	sort.Strings(toolFiles)
	sort.Strings(queryFiles)
	if len(toolFiles) == 0 || len(queryFiles) == 0 {
		t.Skipf("no evaluation set in %s", evalDir)
	}
	var tools []evalset.Tool
	for _, p := range toolFiles {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := evalset.LoadCatalog(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		tools = append(tools, ts...)
	}
	var queries []evalset.Query
	for _, p := range queryFiles {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		qs, err := evalset.LoadQueries(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		queries = append(queries, qs...)
	}
	return tools, queries
}

// evalTools converts catalog entries to index tools.
func evalTools(cat []evalset.Tool) []ToolRecord {
	out := make([]ToolRecord, len(cat))
	for i, c := range cat {
		t := ToolRecord{Name: c.Name, Description: c.Description, LoadingMode: packs.LoadingDeferred}
		for _, p := range c.Params {
			t.Params = append(t.Params, Param{Name: p.Name, Description: p.Description})
		}
		out[i] = t
	}
	return out
}

// plainBM25 is the baseline: one FTS5 column holding name, description and
// parameters, the query's words OR-ed, ranked by unweighted bm25.
type plainBM25 struct{ db *sql.DB }

func newPlainBM25(t testing.TB, tools []ToolRecord) *plainBM25 {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "plain.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE VIRTUAL TABLE plain USING fts5(name UNINDEXED, body, tokenize='porter unicode61')`); err != nil {
		t.Fatal(err)
	}
	tx, _ := db.Begin()
	for _, tl := range tools {
		body := []string{tl.Name, tl.Description}
		for _, p := range tl.Params {
			body = append(body, p.Name, p.Description)
		}
		if _, err := tx.Exec(`INSERT INTO plain(name, body) VALUES (?, ?)`, tl.Name, strings.Join(body, " ")); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return &plainBM25{db: db}
}

func (p *plainBM25) search(ctx context.Context, query string, limit int) ([]string, error) {
	var terms []string
	for _, w := range strings.Fields(query) {
		if w = strings.Trim(w, ".,;:!?'\"()[]{}"); w != "" {
			terms = append(terms, textsearch.QuoteFTS(strings.ToLower(w)))
		}
	}
	if len(terms) == 0 {
		return nil, nil
	}
	rows, err := p.db.QueryContext(ctx, `SELECT name FROM plain WHERE plain MATCH ? ORDER BY bm25(plain) LIMIT ?`,
		strings.Join(terms, " OR "), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// TestRetrievalQuality runs each part of the evaluation set through the
// index and through a plain single-column bm25 baseline, and fails if the
// index is not better. Run with -v to see the figures.
func TestRetrievalQuality(t *testing.T) {
	if raceEnabled {
		t.Skip("the figures do not depend on the race detector, which makes this run take minutes")
	}
	for _, part := range []struct {
		name string
		sets []string
	}{{"tuned", tuneSets}, {"held-out", heldOutSets}} {
		t.Run(part.name, func(t *testing.T) {
			cat, queries := loadEvalSet(t, part.sets...)
			evalRetrieval(t, cat, queries)
		})
	}
}

func evalRetrieval(t *testing.T, cat []evalset.Tool, queries []evalset.Query) {
	tools := evalTools(cat)
	ctx := context.Background()
	s := openTest(t, nil)
	if _, err := s.SyncTools(ctx, tools); err != nil {
		t.Fatal(err)
	}
	ours, err := evalset.Run(ctx, queries, func(ctx context.Context, q string, limit int) ([]string, error) {
		res, err := s.SearchTools(ctx, ToolQuery{Query: q, Limit: limit})
		if err != nil {
			return nil, err
		}
		names := make([]string, len(res.Tools))
		for i, h := range res.Tools {
			names[i] = h.Name
		}
		return names, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	base, err := evalset.Evaluate(ctx, queries, newPlainBM25(t, tools).search)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d tools, %d queries", len(tools), len(queries))
	t.Logf("plain bm25: recall@1 %.3f recall@5 %.3f recall@10 %.3f MRR@10 %.3f", base.RecallAt1, base.RecallAt5, base.RecallAt10, base.MRRAt10)
	m := ours.Metrics
	t.Logf("index:      recall@1 %.3f recall@5 %.3f recall@10 %.3f MRR@10 %.3f", m.RecallAt1, m.RecallAt5, m.RecallAt10, m.MRRAt10)
	if os.Getenv("SKILLHOST_EVAL_MISSES") != "" {
		for _, r := range ours.Results {
			if r.Rank != 1 {
				t.Logf("rank %d %q want %v got %v", r.Rank, r.Query, r.Expected, r.Got)
			}
		}
	}
	if m.MRRAt10 < base.MRRAt10 {
		t.Errorf("index MRR@10 %.3f is below the plain bm25 baseline %.3f", m.MRRAt10, base.MRRAt10)
	}
}
