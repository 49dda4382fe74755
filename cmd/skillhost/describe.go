package main

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/skillhost/skillhost/host"
)

func newDescribeCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe FILE.wasm",
		Short: "Print the tools a module declares, as pack.yaml tool entries",
		Long: `Call the module's describe export (guests built with the skillhost SDKs
have one) and print its tools as the tools: list of a pack.yaml module entry,
ready to paste into a manifest.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("describe needs exactly one FILE.wasm")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			wasm, err := os.ReadFile(args[0])
			if err != nil {
				return usageErr("reading module: %v", err)
			}
			h, err := host.New(ctx, host.NewConfig().WithCacheDir(filepath.Join(stateDirOf(g), "cache")))
			if err != nil {
				return usageErr("%v", err)
			}
			defer h.Close(ctx)
			m, err := h.Load(ctx, wasm, host.LoadOptions{Name: filepath.Base(args[0])})
			if err != nil {
				return usageErr("%v", err)
			}
			d, err := m.Describe(ctx)
			if err != nil {
				return usageErr("%v", err)
			}
			if asJSON {
				b, _ := json.MarshalIndent(d, "", "  ")
				_, err := g.stdout.Write(append(b, '\n'))
				return err
			}
			type entry struct {
				Name         string   `yaml:"name"`
				Export       string   `yaml:"export,omitempty"`
				Description  string   `yaml:"description,omitempty"`
				Tags         []string `yaml:"tags,omitempty,flow"`
				InputSchema  any      `yaml:"input_schema,omitempty"`
				OutputSchema any      `yaml:"output_schema,omitempty"`
			}
			var tools []entry
			for _, t := range d.Tools {
				e := entry{Name: t.Name, Description: t.Description, Tags: t.Tags}
				if t.Export != "" && t.Export != t.Name {
					e.Export = t.Export
				}
				_ = json.Unmarshal(t.InputSchema, &e.InputSchema)
				_ = json.Unmarshal(t.OutputSchema, &e.OutputSchema)
				tools = append(tools, e)
			}
			enc := yaml.NewEncoder(g.stdout)
			enc.SetIndent(2)
			defer enc.Close()
			return enc.Encode(map[string]any{"tools": tools})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the describe output as JSON")
	return cmd
}

// stateDirOf returns the state folder: the flag, $SKILLHOST_STATE_DIR, or
// .skillhost.
func stateDirOf(g *globals) string {
	if g.stateDir != "" {
		return g.stateDir
	}
	if d := os.Getenv("SKILLHOST_STATE_DIR"); d != "" {
		return d
	}
	return ".skillhost"
}
