// Command skillhost runs WebAssembly skill tools from the command line:
// serve the loaded packs' tools and skills over MCP (serve), call a tool
// and show what it is granted, find tools and skills as a model would,
// check skill and pack files, install packs, and try a downloaded module
// directly under explicit grants. docs/cli.md describes every command.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
)

func main() {
	// A process-isolated call runs in this executable started again as a
	// worker; serve it and exit before anything else runs.
	host.ServeWorkerIfChild()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the CLI and returns its exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root, g := newRootWith(stdin, stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if strings.HasPrefix(err.Error(), "unknown command ") {
		err = unknownCommand(root, err)
	}
	ee := asExit(err)
	// call --json reports every failure as a JSON object on stdout, also
	// one met while its flags were read.
	asJSON := cmd != nil && cmd.Name() == "call" && (g.callJSON || hasFlag(args, "--json"))
	report(ee, asJSON, stdout, stderr)
	return ee.code
}

// hasFlag reports whether args hold the boolean flag name, set true,
// before any "--".
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case name, name + "=true", name + "=1":
			return true
		}
	}
	return false
}

type globals struct {
	configFile string
	oldConfig  string // the global --config of earlier versions, refused
	quiet      bool   // problems already reported
	stateDir   string
	packDirs   []string
	// ceilings are what the trust policy took from the grants of
	// installed packs no trusted signer signed, by pack (for show).
	ceilings  map[string][]string
	noBundle  bool
	noUser    bool
	callJSON  bool // call --json
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
	stderrTTY bool // progress lines go to stderr
}

func newRootWith(stdin io.Reader, stdout, stderr io.Writer) (*cobra.Command, *globals) {
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr, stderrTTY: isTerminal(stderr)}
	root := &cobra.Command{
		Use:   "skillhost",
		Short: "Run WebAssembly skill tools under capabilities, limits and timeouts",
		Long: `skillhost runs WebAssembly skill tools under capabilities, limits and
timeouts, and finds tools and skills for a model. See docs/cli.md.

Exit status: 0 success; 1 a tool failed or its arguments were refused (or
validate found problems); 2 the command line is wrong or something did not
load.`,
		Version:       versionLine(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("config") && cmd.Name() != "call" {
				return usageErr("--config %s: the operator config file is named with --config-file FILE (or $%s); --config K=V is a guest config value of call", g.oldConfig, packs.ConfigEnv)
			}
			tuneGC(cmd)
			return nil
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%s (see %s --help)", strings.TrimSuffix(err.Error(), "\n"), c.CommandPath())
	})
	pf := root.PersistentFlags()
	pf.StringVar(&g.configFile, "config-file", "", "operator config `FILE` (default $"+packs.ConfigEnv+", else ./"+packs.ConfigFile+" when it exists)")
	pf.StringVar(&g.oldConfig, "config", "", "")
	pf.MarkHidden("config")
	pf.StringVar(&g.stateDir, "state-dir", "", "one `DIR` for the compilation cache and the index (default: the config's state_dir, else $SKILLHOST_STATE_DIR, else the user's cache and data folders)")
	pf.StringArrayVar(&g.packDirs, "pack", nil, "load the pack in this `DIR` too (repeatable)")
	pf.BoolVar(&g.noBundle, "no-bundled", false, "leave out the bundled pack")
	pf.BoolVar(&g.noUser, "no-user-sources", false, "leave out ~/.skillhost/skills and ./skills")
	root.Flags().BoolP("version", "v", false, "print the version of skillhost, its Go, wazero and ABI")
	root.AddCommand(newCallCmd(g), newShowCmd(g), newListCmd(g), newDescribeCmd(g), newEvalCmd(g),
		newValidateCmd(g), newSearchCmd(g), newIndexCmd(g), newVersionCmd(g), newCacheCmd(g), newRunScriptCmd(g), newInitCmd(g), newServeCmd(g),
		newInstallCmd(g), newInstalledCmd(g), newOutdatedCmd(g), newUpgradeCmd(g), newUninstallCmd(g), newPackCmd(g), newSignKeygenCmd(g))
	return root, g
}

// longRunning marks, in a command's Annotations, a command that runs
// until it is stopped.
const longRunning = "long-running"

// tuneGC lets the heap of a one-shot command grow to five times its live
// size before collecting (GOGC=400) unless $GOGC says otherwise: such a
// process lives a fraction of a second, in which collections triggered by
// loading packs and compiling a module cost about a quarter of a call's
// time, and what it allocates is freed when it exits. A long-running
// command keeps the runtime's default.
func tuneGC(cmd *cobra.Command) {
	if _, set := os.LookupEnv("GOGC"); set || cmd.Annotations[longRunning] != "" {
		return
	}
	debug.SetGCPercent(400)
}
