// Command skillhost runs WebAssembly skill tools from the command line:
// call a tool of the loaded packs, show what it is granted, or try a
// downloaded module directly under explicit grants.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
)

// Exit codes.
const (
	exitOK        = 0
	exitToolError = 1 // the tool ran and reported an error
	exitUsage     = 2 // bad usage, or a pack or module could not be loaded
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

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
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "skillhost:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "skillhost:", err)
	return exitUsage
}

type globals struct {
	config   string
	quiet    bool // problems already reported
	stateDir string
	packDirs []string
	noBundle bool
	noUser   bool
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "skillhost",
		Short:         "Run WebAssembly skill tools under capabilities, limits and timeouts",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see %s --help)", err, c.CommandPath())
	})
	pf := root.PersistentFlags()
	pf.StringVar(&g.config, "config", "", "operator config file (default $SKILLHOST_CONFIG, or ./skillhost.toml when it exists)")
	pf.StringVar(&g.stateDir, "state-dir", "", "state folder for the index and compilation cache (default: the config's state_dir, else $SKILLHOST_STATE_DIR, else .skillhost)")
	pf.StringArrayVar(&g.packDirs, "pack", nil, "load the pack in this folder too (repeatable)")
	pf.BoolVar(&g.noBundle, "no-bundled", false, "leave out the bundled pack")
	pf.BoolVar(&g.noUser, "no-user-sources", false, "leave out ~/.skillhost/skills and ./skills")
	root.AddCommand(newCallCmd(g), newShowCmd(g), newListCmd(g), newDescribeCmd(g), newEvalCmd(g),
		newValidateCmd(g), newSearchCmd(g), newIndexCmd(g))
	return root
}
