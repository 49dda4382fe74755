package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/internal/evalset"
	"github.com/skillhost/skillhost/packs"
)

func newEvalCmd(g *globals) *cobra.Command {
	var (
		catalogs, queryFiles []string
		asJSON, misses       bool
		searchType           string
	)
	cmd := &cobra.Command{
		Use:   "eval --catalog TOOLS.jsonl --queries QUERIES.jsonl [--json]",
		Short: "Measure how well tool_search finds the right tool in a catalog",
		Long: `Index a tool catalog in a temporary store, run tool_search for every query
and print recall at 1, 5 and 10 and the mean reciprocal rank within the top 10.

Each catalog line is a tool in OpenAI function shape, {"name","description",
"parameters"} or {"type":"function","function":{...}}. Each query line is
{"query": "...", "expected": ["tool_name", ...]}; a query counts as found at k
when any expected tool is among the first k results. --catalog and --queries
may be repeated to combine files.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(catalogs) == 0 || len(queryFiles) == 0 {
				return usageErr("eval needs --catalog and --queries (see skillhost eval --help)")
			}
			var tools []evalset.Tool
			for _, f := range catalogs {
				ts, err := readJSONL(f, evalset.LoadCatalog)
				if err != nil {
					return usageErr("%v", err)
				}
				tools = append(tools, ts...)
			}
			var queries []evalset.Query
			for _, f := range queryFiles {
				qs, err := readJSONL(f, evalset.LoadQueries)
				if err != nil {
					return usageErr("%v", err)
				}
				queries = append(queries, qs...)
			}
			if err := evalset.Validate(tools, queries); err != nil {
				return usageErr("%v", err)
			}
			rep, err := evaluate(cmd.Context(), tools, queries, searchType)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			m := rep.Metrics
			if asJSON {
				b, _ := json.Marshal(m)
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 2, 2, ' ', 0)
			fmt.Fprintf(tw, "n\t%d\n", m.N)
			fmt.Fprintf(tw, "recall_at_1\t%.4f\n", m.RecallAt1)
			fmt.Fprintf(tw, "recall_at_5\t%.4f\n", m.RecallAt5)
			fmt.Fprintf(tw, "recall_at_10\t%.4f\n", m.RecallAt10)
			fmt.Fprintf(tw, "mrr_at_10\t%.4f\n", m.MRRAt10)
			if err := tw.Flush(); err != nil {
				return err
			}
			if misses {
				for _, r := range rep.Results {
					if r.Rank != 1 {
						fmt.Fprintf(g.stdout, "rank %d\t%q\texpected %v\tgot %v\n", r.Rank, r.Query, r.Expected, first(r.Got, 3))
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&catalogs, "catalog", nil, "JSONL `FILE` of tool definitions (repeatable)")
	f.StringArrayVar(&queryFiles, "queries", nil, "JSONL `FILE` of queries with expected tools (repeatable)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object: n, recall_at_1, recall_at_5, recall_at_10, mrr_at_10")
	f.BoolVar(&misses, "misses", false, "also list every query whose expected tool was not ranked first")
	f.StringVar(&searchType, "type", "fts", "search `TYPE`: fts, regex or exact")
	return cmd
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func readJSONL[T any](file string, load func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return v, nil
}

// evaluate indexes tools in a temporary store and runs the queries.
func evaluate(ctx context.Context, tools []evalset.Tool, queries []evalset.Query, searchType string) (*evalset.Report, error) {
	dir, err := os.MkdirTemp("", "skillhost-eval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	st, err := index.Open(ctx, filepath.Join(dir, "index.db"), nil)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	recs := make([]index.ToolRecord, 0, len(tools))
	for _, t := range tools {
		r := index.ToolRecord{Name: t.Name, Description: t.Description, LoadingMode: packs.LoadingDeferred}
		for _, p := range t.Params {
			r.Params = append(r.Params, index.Param{Name: p.Name, Description: p.Description})
		}
		recs = append(recs, r)
	}
	if _, err := st.SyncTools(ctx, recs); err != nil {
		return nil, fmt.Errorf("indexing the catalog: %w", err)
	}
	// Every query is ranked by the same snapshot of the final catalogue,
	// loaded before the first one: the figures never depend on timing.
	if err := st.Warm(ctx); err != nil {
		return nil, err
	}
	return evalset.Run(ctx, queries, func(ctx context.Context, q string, limit int) ([]string, error) {
		res, err := st.SearchTools(ctx, index.ToolQuery{Query: q, SearchType: searchType, Limit: limit})
		if err != nil {
			return nil, err
		}
		names := make([]string, len(res.Tools))
		for i, h := range res.Tools {
			names[i] = h.Name
		}
		return names, nil
	})
}
