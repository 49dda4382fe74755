package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
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
		Long: `Search the tools of the loaded sources as a model's tool_search does, or
their skills (--skills) as skill_search does. QUERY is words (--type fts,
the default), a regular expression (--type regex) or a tool name (--type
exact). search brings the discovery index up to date first (in the user's
data folder, or the state folder), creating it when there is none.`,
		Example: `  skillhost search "count the words in a text"
  skillhost search --type regex 'slug|word'
  skillhost search --skills "paginate an api" --limit 3 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("search needs a QUERY: the words, tool name (--type exact) or pattern (--type regex) to look for")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			query := strings.Join(args, " ")
			switch {
			case searchType != "fts" && searchType != "regex" && searchType != "exact":
				return usageErr("--type %q must be fts, regex or exact", searchType)
			case limit < 1 || limit > index.MaxLimit:
				return usageErr("--limit %d is out of range: give 1 to %d", limit, index.MaxLimit)
			case taskType != "" && !skills:
				return usageErr("--task-type goes with --skills: tools have no task type")
			case taskType != "" && !slices.Contains(index.TaskTypes, taskType):
				return usageErr("--task-type %q must be one of %s", taskType, strings.Join(index.TaskTypes, ", "))
			case cmd.Flags().Changed("include-always-loaded") && skills:
				return usageErr("--include-always-loaded goes with a tool search, not --skills")
			case strings.TrimSpace(query) == "":
				return searchFlagErr(index.ErrEmptyQuery, limit, searchType, taskType)
			case searchType == "regex":
				if _, err := regexp.Compile(query); err != nil {
					return usageErr("the --type regex pattern %q is not valid: %s", query, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
				}
			}
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
					return searchFlagErr(err, limit, searchType, taskType)
				}
				out = res
				if !asJSON && len(res.Skills) == 0 {
					fmt.Fprintf(g.stdout, "no skill matches %q (--type %s)%s; or search the tools: skillhost search without --skills\n",
						query, searchType, otherTypes(searchType))
					return nil
				}
				if !asJSON {
					fmt.Fprintf(tw, "SKILL\tSCORE\tTASK\tTRIGGER\t(%s)\n", res.SearchType)
					for _, h := range res.Skills {
						fmt.Fprintf(tw, "%s\t%.3f\t%s\t%s\n", h.Name, h.Score, h.TaskType, firstSentence(h.Trigger))
					}
				}
			} else {
				res, err := e.SearchTools(ctx, index.ToolQuery{Query: query, SearchType: searchType, Limit: limit, IncludeAlwaysLoaded: always})
				if err != nil {
					return searchFlagErr(err, limit, searchType, taskType)
				}
				out = res
				if !asJSON && len(res.Tools) == 0 {
					fmt.Fprintf(g.stdout, "no tool matches %q (--type %s)%s; or search the skills: skillhost search --skills\n",
						query, searchType, otherTypes(searchType))
					return nil
				}
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
	f.StringVar(&searchType, "type", "fts", "search `TYPE`: fts (words), regex (a pattern) or exact (a tool name)")
	f.IntVar(&limit, "limit", index.DefaultLimit, fmt.Sprintf("`N` results to return, 1 to %d", index.MaxLimit))
	f.BoolVar(&asJSON, "json", false, "print the tool_search / skill_search response as JSON")
	f.BoolVar(&always, "include-always-loaded", true, "include tools that are always loaded")
	f.StringVar(&taskType, "task-type", "", "with --skills: only skills of this task `TYPE` ("+strings.Join(index.TaskTypes, ", ")+")")
	return cmd
}

// otherTypes suggests the search types other than t.
func otherTypes(t string) string {
	switch t {
	case "fts":
		return "; try --type regex for a pattern or --type exact for a name"
	case "regex":
		return "; try the words with --type fts"
	}
	return "; try the words with --type fts or a pattern with --type regex"
}

func newIndexCmd(g *globals) *cobra.Command {
	var rebuild bool
	cmd := &cobra.Command{
		Use:   "index [--rebuild]",
		Short: "Bring the discovery index up to date with the loaded sources",
		Long: `Bring the discovery index up to date: only tools and skills whose content
changed are rewritten. --rebuild rewrites every tool. The index is index.db
in the state folder when one is named (--state-dir, state_dir,
$SKILLHOST_STATE_DIR), else skillhost/index.db in the user's data folder;
skillhost cache info shows where.`,
		Example: `  skillhost index
  skillhost index --rebuild`,
		Args: noArgs,
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
