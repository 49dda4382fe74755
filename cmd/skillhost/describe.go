package main

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
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
			dir, err := stateDirOf(g)
			if err != nil {
				return err
			}
			h, err := host.New(ctx, host.NewConfig().WithCacheDir(filepath.Join(dir, "cache")))
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

// stateDirOf returns the state folder of a command that opens no engine,
// resolved as skillhost.Open resolves it: --state-dir, else the operator
// config's state_dir, else $SKILLHOST_STATE_DIR, else .skillhost.
func stateDirOf(g *globals) (string, error) {
	op, err := packs.LoadConfig(g.config)
	if err != nil {
		return "", usageErr("%v", err)
	}
	return skillhost.StateDir(skillhost.Config{StateDir: g.stateDir}, op), nil
}
