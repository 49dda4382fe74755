package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/index"
)

func newSearchCmd(g *globals) *cobra.Command {
	var (
		skills, asJSON, always bool
		searchType, taskType   string
		limit                  int
	)
	cmd := &cobra.Command{
		Use:   "search [--skills] [--type fts|regex|exact] [--limit N] [--json] QUERY",
		Short: "Search the tools (tool_search) or skills (skill_search) of the loaded sources",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("search needs a QUERY")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			query := strings.Join(args, " ")
			e, err := openEngine(ctx, g, nil)
			if err != nil {
				return err
			}
			defer e.Close(ctx)
			var out any
			tw := tabwriter.NewWriter(g.stdout, 0, 2, 2, ' ', 0)
			if skills {
				res, err := e.SearchSkills(ctx, index.SkillQuery{Query: query, SearchType: searchType, Limit: limit, TaskType: taskType})
				if err != nil {
					return searchErr(err)
				}
				out = res
				if !asJSON {
					fmt.Fprintf(tw, "SKILL\tSCORE\tTASK\tTRIGGER\t(%s)\n", res.SearchType)
					for _, h := range res.Skills {
						fmt.Fprintf(tw, "%s\t%.3f\t%s\t%s\n", h.Name, h.Score, h.TaskType, firstSentence(h.Trigger))
					}
				}
			} else {
				res, err := e.SearchTools(ctx, index.ToolQuery{Query: query, SearchType: searchType, Limit: limit, IncludeAlwaysLoaded: always})
				if err != nil {
					return searchErr(err)
				}
				out = res
				if !asJSON {
					fmt.Fprintf(tw, "TOOL\tSCORE\tMATCH\tLOADING\tDESCRIPTION\t(%s)\n", res.SearchType)
					for _, h := range res.Tools {
						fmt.Fprintf(tw, "%s\t%.3f\t%s\t%s\t%s\n", h.Name, h.Score, h.MatchType, h.LoadingMode, firstSentence(h.Description))
					}
				}
			}
			if asJSON {
				b, err := json.MarshalIndent(out, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.BoolVar(&skills, "skills", false, "search skills instead of tools")
	f.StringVar(&searchType, "type", "fts", "search type: fts, regex or exact")
	f.IntVar(&limit, "limit", 8, "results to return, 1 to 20")
	f.BoolVar(&asJSON, "json", false, "print the tool_search / skill_search response as JSON")
	f.BoolVar(&always, "include-always-loaded", true, "include tools that are always loaded")
	f.StringVar(&taskType, "task-type", "", "with --skills: only skills of this task type (browser, api, code, domain, unknown)")
	return cmd
}

// searchErr turns a refused query into a usage error.
func searchErr(err error) error {
	for _, s := range []error{index.ErrEmptyQuery, index.ErrBadSearchType, index.ErrPatternTooLong, index.ErrBadLimit} {
		if errors.Is(err, s) {
			return usageErr("%v", err)
		}
	}
	return err
}

func newIndexCmd(g *globals) *cobra.Command {
	var rebuild bool
	cmd := &cobra.Command{
		Use:   "index [--rebuild]",
		Short: "Bring the discovery index up to date with the loaded sources",
		Long: `Bring the discovery index (STATE_DIR/index.db) up to date: only tools and
skills whose content changed are rewritten. --rebuild rewrites every tool.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			e, err := openEngine(ctx, g, nil)
			if err != nil {
				return err
			}
			defer e.Close(ctx)
			if rebuild {
				rep, err := e.RebuildIndex(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "rebuilt: %d tool(s), fingerprint %s\n", len(rep.Added)+len(rep.Changed)+rep.Unchanged, short(rep.Fingerprint))
			}
			fmt.Fprintf(g.stdout, "tools: %d indexed\n", len(e.Tools()))
			for _, r := range e.PackReports() {
				fmt.Fprintf(g.stdout, "skills of pack %s: %d added, %d updated, %d unchanged, %d kept as stored, %d removed\n",
					r.Pack, len(r.Added), len(r.Updated), len(r.Unchanged), len(r.Skipped), len(r.Removed))
			}
			for _, o := range e.Overrides() {
				fmt.Fprintf(g.stdout, "override: %s\n", o)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&rebuild, "rebuild", false, "rewrite the whole tool index")
	return cmd
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
