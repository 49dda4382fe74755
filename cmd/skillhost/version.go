package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/abi"
)

// versionInfo is what skillhost version prints.
type versionInfo struct {
	// Version is the module version the binary was built at ("devel"
	// for a build from a checkout).
	Version string `json:"version"`
	// Commit is the VCS revision of a build from a checkout, with
	// "-dirty" when it had changes; "" when unknown.
	Commit string `json:"commit,omitempty"`
	Go     string `json:"go"`
	Wazero string `json:"wazero"`
	// ABI is the version of the host↔guest ABI the host speaks.
	ABI      string `json:"abi"`
	Platform string `json:"platform"`
}

// buildVersion reads the version from the binary's build information.
func buildVersion() versionInfo {
	v := versionInfo{Version: "devel", Wazero: "unknown", Go: runtime.Version(), ABI: abi.Version, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
		v.Version = mv
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "-dirty"
		}
		v.Commit = rev
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/tetratelabs/wazero" {
			v.Wazero = d.Version
			if d.Replace != nil {
				v.Wazero = d.Replace.Version
			}
		}
	}
	return v
}

// versionLine is the one-line version of --version.
func versionLine() string {
	v := buildVersion()
	s := "skillhost " + v.Version
	if v.Commit != "" {
		s += " (" + v.Commit + ")"
	}
	return fmt.Sprintf("%s, %s, wazero %s, ABI %s, %s", s, v.Go, v.Wazero, v.ABI, v.Platform)
}

func newVersionCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of skillhost, its commit, Go, wazero and ABI",
		Long: `Print skillhost's version and the commit it was built from (for a build
from a checkout), the Go version that built it, the wazero runtime's
version and the version of the host-guest ABI it speaks. --version prints
the same on one line.`,
		Example: `  skillhost version
  skillhost version --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := buildVersion()
			if asJSON {
				b, _ := json.MarshalIndent(v, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			commit := v.Commit
			if commit == "" {
				commit = "unknown"
			}
			fmt.Fprintf(g.stdout, "skillhost %s\n  commit:   %s\n  go:       %s\n  wazero:   %s\n  abi:      %s\n  platform: %s\n",
				v.Version, commit, v.Go, v.Wazero, v.ABI, v.Platform)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON: {version, commit, go, wazero, abi, platform}")
	return cmd
}
