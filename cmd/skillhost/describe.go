package main

import (
	"encoding/json"
	"errors"
	"io/fs"
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
				return usageErr("reading module %s: %v", args[0], pathErr(err))
			}
			// describe only reads: it uses the compilation cache when
			// there is one, and creates none.
			cache, err := moduleCacheDir(g, false)
			if err != nil {
				return err
			}
			h, err := host.New(ctx, host.NewConfig().WithCacheDir(cache))
			if err != nil {
				return usageErr("%s", message(err))
			}
			defer h.Close(ctx)
			name := filepath.Base(args[0])
			done := g.compiling(name, len(wasm))
			m, err := h.Load(ctx, wasm, host.LoadOptions{Name: name})
			done()
			if err != nil {
				return usageErr("%s", message(err))
			}
			d, err := m.Describe(ctx)
			if err != nil {
				return usageErr("%s", message(err))
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
				Category     string   `yaml:"category,omitempty"`
				SideEffects  bool     `yaml:"side_effects,omitempty"`
				Idempotent   bool     `yaml:"idempotent,omitempty"`
				Network      bool     `yaml:"requires_network,omitempty"`
				Filesystem   bool     `yaml:"requires_filesystem,omitempty"`
				Examples     []any    `yaml:"examples,omitempty"`
				InputSchema  any      `yaml:"input_schema,omitempty"`
				OutputSchema any      `yaml:"output_schema,omitempty"`
			}
			var tools []entry
			for _, t := range d.Tools {
				e := entry{Name: t.Name, Description: t.Description, Tags: t.Tags, Category: t.Category,
					SideEffects: t.SideEffects, Idempotent: t.Idempotent, Network: t.RequiresNetwork, Filesystem: t.RequiresFilesystem}
				for _, ex := range t.Examples {
					var args any
					_ = json.Unmarshal(ex.Args, &args)
					e.Examples = append(e.Examples, map[string]any{"args": args, "description": ex.Description})
				}
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

// stateOf returns the state folders of the global flags, resolved as
// skillhost.Open resolves them: --state-dir, else the operator config's
// state_dir, else $SKILLHOST_STATE_DIR, else the user's folders.
func stateOf(g *globals) (skillhost.StateFolders, error) {
	op, err := packs.LoadConfig(g.configFile)
	if err != nil {
		return skillhost.StateFolders{}, usageErr("%s", message(err))
	}
	return skillhost.StateDir(skillhost.Config{StateDir: g.stateDir}, op), nil
}

// moduleCacheDir returns the compilation cache folder of a command that
// loads a module without an engine. When create is false and the folder
// does not exist, it returns "": the module is compiled in memory and
// nothing is created.
func moduleCacheDir(g *globals, create bool) (string, error) {
	st, err := stateOf(g)
	if err != nil {
		return "", err
	}
	if !create {
		if _, err := os.Stat(st.Cache); errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
	}
	return st.Cache, nil
}
