package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newListCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tools of the loaded packs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := openEngine(cmd.Context(), g, nil)
			if err != nil {
				return err
			}
			defer e.Close(cmd.Context())
			tools := e.Tools()
			if asJSON {
				type row struct {
					Name        string `json:"name"`
					Description string `json:"description"`
					Pack        string `json:"pack"`
					Version     string `json:"version,omitempty"`
					Source      string `json:"source"`
					Risk        string `json:"risk_level"`
				}
				rows := make([]row, 0, len(tools))
				for _, t := range tools {
					rows = append(rows, row{t.Name, t.Description, t.Pack, t.PackVersion, t.Source, t.Risk})
				}
				b, _ := json.MarshalIndent(rows, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "TOOL\tPACK\tSOURCE\tRISK\tDESCRIPTION")
			for _, t := range tools {
				fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\t%s\n", t.Name, t.Pack, t.PackVersion, t.Source, t.Risk, firstSentence(t.Description))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func firstSentence(s string) string {
	for i, r := range s {
		if r == '\n' || (r == '.' && i+1 < len(s) && s[i+1] == ' ') {
			return s[:i+1]
		}
	}
	if len(s) > 100 {
		return s[:97] + "..."
	}
	return s
}
