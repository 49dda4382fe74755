package evalset

import (
	"context"
	"fmt"
)

// Limit is how many results Evaluate asks the search function for.
const Limit = 10

// SearchFunc returns the names of the tools a search ranks for query, best
// first, at most limit of them.
type SearchFunc func(ctx context.Context, query string, limit int) ([]string, error)

// Metrics summarises a run over N queries.
//
// A query is a hit at k when ANY of its expected tools is among the first k
// names the search returned; RecallAtK is the share of queries that are hits
// at k. MRRAt10 is the mean over all queries of 1/r, where r is the rank
// (1-based) of the first expected tool to appear in the results — the best
// ranked of them — and 1/r counts as 0 when none is in the top 10. With a
// single expected tool per query these are the usual recall@k and MRR@10.
type Metrics struct {
	N          int     `json:"n"`
	RecallAt1  float64 `json:"recall_at_1"`
	RecallAt5  float64 `json:"recall_at_5"`
	RecallAt10 float64 `json:"recall_at_10"`
	MRRAt10    float64 `json:"mrr_at_10"`
}

// Result is how one query fared.
type Result struct {
	Query    string   `json:"query"`
	Expected []string `json:"expected"`
	// Got is what the search returned, cut to Limit names.
	Got []string `json:"got"`
	// Rank is the 1-based position in Got of the first expected tool, or 0
	// when none of them was returned.
	Rank int `json:"rank"`
	// Line is the query's line in its file, 0 when built in code.
	Line int `json:"line,omitempty"`
}

// Report is a run's metrics with the result of every query, in the order
// the queries were given.
type Report struct {
	Metrics Metrics  `json:"metrics"`
	Results []Result `json:"results"`
}

// Evaluate runs every query through search with a limit of Limit and
// returns the metrics. See Metrics for how queries with several expected
// tools are counted.
func Evaluate(ctx context.Context, queries []Query, search SearchFunc) (Metrics, error) {
	rep, err := Run(ctx, queries, search)
	if err != nil {
		return Metrics{}, err
	}
	return rep.Metrics, nil
}

// Run is Evaluate with the result of each query, for reports that show the
// misses. It stops at the first search error or when ctx is done.
func Run(ctx context.Context, queries []Query, search SearchFunc) (*Report, error) {
	if len(queries) == 0 {
		return nil, ErrNoQueries
	}
	if search == nil {
		return nil, ErrNilSearch
	}
	rep := &Report{Results: make([]Result, 0, len(queries))}
	var hit1, hit5, hit10 int
	var rr float64
	for i, q := range queries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		got, err := search(ctx, q.Text, Limit)
		if err != nil {
			return nil, fmt.Errorf("evalset: searching for query %d %q: %w", i+1, q.Text, err)
		}
		if len(got) > Limit {
			got = got[:Limit]
		}
		rank := firstRank(got, q.Expected)
		rep.Results = append(rep.Results, Result{Query: q.Text, Expected: q.Expected, Got: got, Rank: rank, Line: q.Line})
		if rank == 0 {
			continue
		}
		rr += 1 / float64(rank)
		if rank <= 1 {
			hit1++
		}
		if rank <= 5 {
			hit5++
		}
		hit10++
	}
	n := float64(len(queries))
	rep.Metrics = Metrics{
		N:          len(queries),
		RecallAt1:  float64(hit1) / n,
		RecallAt5:  float64(hit5) / n,
		RecallAt10: float64(hit10) / n,
		MRRAt10:    rr / n,
	}
	return rep, nil
}

// firstRank returns the 1-based position of the first name in got that is
// one of expected, or 0.
func firstRank(got, expected []string) int {
	for i, name := range got {
		for _, want := range expected {
			if name == want {
				return i + 1
			}
		}
	}
	return 0
}
