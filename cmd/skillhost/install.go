package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/install"
	"github.com/skillhost/skillhost/packs"
)

// installedDir is the installed folder inside a workspace: beside the
// lock, hidden, so that the workspace source (./skills) never reads it.
const installedDir = ".skillhost/installed"

// installer returns the installer of the workspace: the lock beside the
// operator config file (the one --config-file or $SKILLHOST_CONFIG names,
// else the working directory's), and the installed folder beside the
// lock.
func (g *globals) installer() (*install.Installer, error) {
	ws := "."
	cfg := g.configFile
	if cfg == "" {
		cfg = os.Getenv(packs.ConfigEnv)
	}
	if cfg != "" {
		ws = filepath.Dir(cfg)
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return &install.Installer{Dir: filepath.Join(abs, filepath.FromSlash(installedDir)), LockFile: filepath.Join(abs, install.LockFile)}, nil
}

// installedSource returns the installed folder to load as an installed
// source, after checking it against the lock: "" when nothing was ever
// installed, an error naming each folder that no longer matches.
func (g *globals) installedSource() (string, error) {
	in, err := g.installer()
	if err != nil {
		return "", err
	}
	_, lerr := os.Stat(in.LockFile)
	_, derr := os.Stat(in.Dir)
	if errors.Is(lerr, os.ErrNotExist) && errors.Is(derr, os.ErrNotExist) {
		return "", nil
	}
	lock, err := install.ReadLock(in.LockFile)
	if err != nil {
		return "", err
	}
	if err := lock.Check(in.Dir); err != nil {
		return "", fmt.Errorf("%w\n(the installed skills are not loaded; `skillhost install` puts back what the lock names)", err)
	}
	return in.Dir, nil
}

func newInstallCmd(g *globals) *cobra.Command {
	var (
		req    install.Request
		frozen bool
	)
	cmd := &cobra.Command{
		Use:   "install [SOURCE]",
		Short: "Install skills and packs from a folder, an archive or an https:// source, or what the lock names",
		Long: `Install the skills and packs of SOURCE into the workspace's installed
folder (` + installedDir + ` beside ` + install.LockFile + `), and record
each in ` + install.LockFile + `: its source, the digest of what was fetched, the
digest of its files and the capabilities it asks for.

SOURCE is a folder, a .tar.gz, .tgz, .tar or .zip archive, an https:// URL of
such an archive (append #sha256=HEX to pin it), or an https:// site serving
/.well-known/agent-skills/index.json. A source of several skills installs
the ones named with --skill, or all of them with --all.

Every source is fetched into a staging folder, checked, unpacked with
unsafe entries refused (links, devices, absolute or .. names, names that
collide on a case-insensitive disk, bombs), validated as skillhost loads
it, and only then moved into place; nothing is run. Installing again
upgrades: an upgrade that asks for more than the lock approved (a host, a
mount, an env name, a service, a tool, a script, a larger limit) stops and
lists what is new until it is run with --approve.

Without SOURCE, install puts back every locked skill and pack whose folder
is missing or changed, from its source, and fails if the source no longer
gives the locked bytes.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := g.installer()
			if err != nil {
				return err
			}
			if len(args) == 0 {
				if len(req.Skills) > 0 || req.All || req.Digest != "" || req.Approve {
					return usageErr("--skill, --all, --digest and --approve need a SOURCE")
				}
				if _, err := os.Stat(in.LockFile); err != nil {
					if frozen {
						return usageErr("--frozen: no %s at %s", install.LockFile, in.LockFile)
					}
					fmt.Fprintf(g.stdout, "nothing to install: no %s\n", in.LockFile)
					return nil
				}
				st, err := in.Sync(cmd.Context())
				for _, s := range st {
					fmt.Fprintf(g.stdout, "%-9s %s\n", s.Action, s.Name)
				}
				if err != nil {
					return &exitError{code: exitToolError, err: err}
				}
				return nil
			}
			if frozen {
				return usageErr("--frozen installs what the lock names; it takes no SOURCE")
			}
			req.Source = args[0]
			got, err := in.Install(cmd.Context(), req)
			for _, e := range got {
				fmt.Fprintf(g.stdout, "installed %s %s (%s) into %s\n", e.Kind, e.Name, e.Digest, filepath.Join(in.Dir, e.Name))
			}
			if err != nil {
				var ae *install.ApprovalError
				if errors.As(err, &ae) {
					fmt.Fprintf(g.stderr, "%s asks for more than %s approved:\n", ae.Name, install.LockFile)
					for _, m := range ae.More {
						fmt.Fprintf(g.stderr, "  + %s\n", m)
					}
					return &exitError{code: exitToolError, err: fmt.Errorf("not installed; run again with --approve to accept")}
				}
				return &exitError{code: exitToolError, err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&req.Skills, "skill", nil, "install the skill or pack `NAME` of a source of several (repeatable)")
	f.BoolVar(&req.All, "all", false, "install every skill and pack of the source")
	f.StringVar(&req.Digest, "digest", "", "the archive's `sha256:HEX`: refuse other bytes")
	f.BoolVar(&req.Approve, "approve", false, "accept capabilities beyond what the lock approved")
	f.BoolVar(&frozen, "frozen", false, "without SOURCE: fail when there is no lock")
	return cmd
}

func newInstalledCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "installed",
		Short: "List the installed skills and packs, their sources and whether their files still match the lock",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := g.installer()
			if err != nil {
				return err
			}
			lock, err := install.ReadLock(in.LockFile)
			if err != nil {
				return err
			}
			if len(lock.Entries) == 0 {
				fmt.Fprintf(g.stdout, "nothing installed (%s)\n", in.LockFile)
			}
			bad := 0
			for _, e := range lock.Entries {
				state := "ok"
				got, err := install.DirDigest(filepath.Join(in.Dir, e.Name))
				switch {
				case err != nil:
					state, bad = "MISSING", bad+1
				case got != e.Digest:
					state, bad = "CHANGED", bad+1
				}
				fmt.Fprintf(g.stdout, "%-7s %-5s %s %s\n        from %s\n", state, e.Kind, e.Name, e.Version, e.Source)
				if caps := describeCaps(e.Approved); caps != "" {
					fmt.Fprintf(g.stdout, "        approved: %s\n", caps)
				}
			}
			if err := lock.Check(in.Dir); err != nil && bad == 0 {
				fmt.Fprintln(g.stdout, err)
				bad++
			}
			if bad > 0 {
				return &exitError{code: exitToolError, err: fmt.Errorf("%d installed folder(s) do not match %s", bad, in.LockFile)}
			}
			return nil
		},
	}
}

// describeCaps says in one line what an approval allows.
func describeCaps(c install.Capabilities) string {
	var parts []string
	add := func(what string, l []string) {
		if len(l) > 0 {
			parts = append(parts, what+" "+strings.Join(l, ", "))
		}
	}
	add("hosts", c.Hosts)
	add("paths", c.Paths)
	add("env", c.Env)
	add("services", c.Services)
	add("tools", c.Tools)
	add("scripts", c.Scripts)
	return strings.Join(parts, "; ")
}

func newUninstallCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "uninstall NAME...",
		Short: "Remove installed skills and packs and their lock entries",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := g.installer()
			if err != nil {
				return err
			}
			for _, name := range args {
				if err := in.Uninstall(name); err != nil {
					return &exitError{code: exitToolError, err: err}
				}
				fmt.Fprintf(g.stdout, "uninstalled %s\n", name)
			}
			return nil
		},
	}
}

func newPackCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pack",
		Short: "Build skill and pack archives to publish",
	}
	var out string
	build := &cobra.Command{
		Use:   "build DIR -o FILE",
		Short: "Write a folder (a pack, a skill or several) as a reproducible .tar.gz",
		Long: `Write DIR as a .tar.gz that installs: entries sorted, fixed times, modes
and owners, so the same files give the same bytes on any machine. Links and
special files are refused; .git, .hg, .svn and .skillhost are left out.
Prints the archive's sha256, to pin it (install URL#sha256=HEX).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr("pack build needs -o FILE")
			}
			tmp, err := os.CreateTemp(filepath.Dir(out), ".pack-*")
			if err != nil {
				return usageErr("%v", err)
			}
			defer os.Remove(tmp.Name())
			if err := install.Build(tmp, args[0], install.ArchiveLimits{}); err != nil {
				tmp.Close()
				return &exitError{code: exitToolError, err: err}
			}
			if err := tmp.Close(); err != nil {
				return err
			}
			if err := os.Rename(tmp.Name(), out); err != nil {
				return err
			}
			sum, err := install.FileDigest(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "%s %s\n", out, sum)
			return nil
		},
	}
	build.Flags().StringVarP(&out, "output", "o", "", "the archive `FILE` to write")
	cmd.AddCommand(build)
	return cmd
}
