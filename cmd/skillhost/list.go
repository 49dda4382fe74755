package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/packs"
)

// listRow is one tool or skill in `skillhost list --json`.
type listRow struct {
	Kind        string `json:"kind"` // "tool" or "skill"
	Name        string `json:"name"`
	Description string `json:"description"`
	Pack        string `json:"pack"`
	Version     string `json:"version,omitempty"`
	Source      string `json:"source"`
	Path        string `json:"path,omitempty"`
	Risk        string `json:"risk_level,omitempty"`
	// Format is how a skill is written: "agent" (SKILL.md) or "playbook".
	Format string `json:"format,omitempty"`
	// Aliases are a playbook skill's other names, which show also takes:
	// its file's name (without .skill.<ext>) and its title.
	Aliases []string `json:"aliases,omitempty"`
}

func newListCmd(g *globals) *cobra.Command {
	var asJSON, toolsOnly, skillsOnly bool
	cmd := &cobra.Command{
		Use:   "list [--json] [--tools|--skills]",
		Short: "List the tools and skills of the loaded sources",
		Long: `List the tools and skills of the loaded sources, one a line. A playbook
skill's description starts with its file's name (without .skill.<ext>) in
brackets, which show takes as well as its canonical name; --json lists its
aliases (file name and title). list creates no file.`,
		Example: `  skillhost list
  skillhost list --skills --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if toolsOnly && skillsOnly {
				return usageErr("--tools and --skills leave nothing to list together; give one of them or neither")
			}
			e, done, err := openReadOnly(cmd.Context(), g)
			if err != nil {
				return err
			}
			defer done()
			var rows []listRow
			if !skillsOnly {
				for _, t := range e.Tools() {
					rows = append(rows, listRow{Kind: "tool", Name: t.Name, Description: t.Description, Pack: t.Pack,
						Version: t.PackVersion, Source: t.Source, Path: t.Path, Risk: t.Risk()})
				}
			}
			if !toolsOnly {
				all := e.Skills()
				for _, se := range all {
					s := se.Skill
					rows = append(rows, listRow{Kind: "skill", Name: s.Name, Description: skillSummary(s.Description, s.Trigger, s.Title),
						Pack: s.Pack, Version: s.Metadata["version"], Source: se.Source, Path: se.Path, Format: string(s.Kind),
						Aliases: packs.SkillAliases(se, all)})
				}
			}
			if asJSON {
				if rows == nil {
					rows = []listRow{}
				}
				b, _ := json.MarshalIndent(rows, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tPACK\tSOURCE\tRISK\tDESCRIPTION")
			for _, r := range rows {
				kind, risk := r.Kind, r.Risk
				if r.Kind == "skill" {
					kind, risk = "skill ("+r.Format+")", "-"
				}
				pack := r.Pack
				if r.Version != "" {
					pack += " " + r.Version
				}
				desc := r.Description
				if r.Format == string(packs.KindPlaybook) && len(r.Aliases) > 0 && packs.PlaybookStem(r.Path) == r.Aliases[0] {
					desc = "(" + r.Aliases[0] + ") " + desc
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, kind, pack, r.Source, risk, firstSentence(desc))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON: an array of {kind, name, description, pack, version, source, path, risk_level, format}")
	cmd.Flags().BoolVar(&toolsOnly, "tools", false, "list only tools")
	cmd.Flags().BoolVar(&skillsOnly, "skills", false, "list only skills")
	return cmd
}

// skillSummary is the first non-empty of a skill's description, trigger
// and title.
func skillSummary(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// firstSentence is s up to the end of its first sentence or line, cut to
// at most 100 characters (whole runes, so CJK text stays valid UTF-8).
func firstSentence(s string) string {
	for i, r := range s {
		if r == '\n' || (r == '.' && i+1 < len(s) && s[i+1] == ' ') {
			s = strings.TrimSpace(s[:i+1])
			break
		}
	}
	if utf8.RuneCountInString(s) > 100 {
		r := []rune(s)
		return string(r[:97]) + "..."
	}
	return s
}
