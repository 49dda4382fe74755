package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/install"
	"github.com/skillhost/skillhost/install/sign"
	"github.com/skillhost/skillhost/install/trustconf"
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

// checkInstalled checks the installed folder against the lock: nothing
// to check when neither exists, else an error naming each folder that no
// longer matches.
func (g *globals) checkInstalled(in *install.Installer) error {
	_, lerr := os.Stat(in.LockFile)
	_, derr := os.Stat(in.Dir)
	if errors.Is(lerr, os.ErrNotExist) && errors.Is(derr, os.ErrNotExist) {
		return nil
	}
	lock, err := install.ReadLock(in.LockFile)
	if err != nil {
		return err
	}
	if err := lock.Check(in.Dir); err != nil {
		return fmt.Errorf("%w\n(nothing is loaded until the installed folder matches the lock: `skillhost install` puts back what it names)", err)
	}
	return nil
}

func newInstallCmd(g *globals) *cobra.Command {
	var (
		req           install.Request
		frozen        bool
		trust         trustFlags
		allowUnsigned bool
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

A remote source (an https:// archive or site, git, OCI) must come with a
signature by a signer trusted with --trusted-key or --identity, unless
--allow-unsigned is given; a signature that does not verify, or by someone
not trusted, is always refused. The signer is locked: an upgrade signed by
someone else needs --approve too.

Without SOURCE, install puts back every locked skill and pack whose folder
is missing or changed, from its source, and fails if the source no longer
gives the locked bytes.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := g.installer()
			if err != nil {
				return err
			}
			if in.Policy, err = g.policy(&trust, allowUnsigned); err != nil {
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
					return &exitError{code: exitToolError, err: withTrustHint(err)}
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
				return &exitError{code: exitToolError, err: withTrustHint(err)}
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
	f.BoolVar(&allowUnsigned, "allow-unsigned", false, "install a remote source (https://, git, OCI) that comes without a trusted signature")
	trust.add(cmd)
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
				if e.Signer != "" {
					fmt.Fprintf(g.stdout, "        signed by %s\n", signerText(e.Signer, e.Issuer))
				}
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

func newOutdatedCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "outdated",
		Short: "List installed skills and packs whose source has moved on since they were locked",
		Long: `For each entry of the lock, resolve its source again without installing
anything — a tag or branch to its commit, an OCI tag to its digest, an
archive or index entry to the digest of its bytes, a folder to the digest
of its files — and list those that differ from the lock. Exits 1 when any
does (upgrade installs them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := g.installer()
			if err != nil {
				return err
			}
			od, err := in.Outdated(cmd.Context())
			for _, o := range od {
				fmt.Fprintf(g.stdout, "%s\n  locked %s\n  now    %s\n", o.Name, o.Locked, o.Latest)
			}
			if err != nil {
				return &exitError{code: exitToolError, err: err}
			}
			if len(od) > 0 {
				return &exitError{code: exitToolError, err: fmt.Errorf("%d outdated (skillhost upgrade installs them)", len(od))}
			}
			fmt.Fprintln(g.stdout, "everything installed is what its source gives now")
			return nil
		},
	}
}

func newUpgradeCmd(g *globals) *cobra.Command {
	var (
		approve, allowUnsigned bool
		trust                  trustFlags
	)
	cmd := &cobra.Command{
		Use:   "upgrade [NAME...]",
		Short: "Install again, from their sources, the named installed skills and packs (all without NAME)",
		Long: `Install each named entry of the lock (every entry without NAME) again
from its source as the lock records it: a branch or tag at its commit now,
an OCI tag at its digest now. An upgrade that asks for more than the lock
approved, or is signed by someone else, stops and lists what is new until
it is run with --approve.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := g.installer()
			if err != nil {
				return err
			}
			if in.Policy, err = g.policy(&trust, allowUnsigned); err != nil {
				return err
			}
			lock, err := install.ReadLock(in.LockFile)
			if err != nil {
				return err
			}
			names := args
			if len(names) == 0 {
				for _, e := range lock.Entries {
					names = append(names, e.Name)
				}
			}
			for _, n := range names {
				e := lock.Find(n)
				if e == nil {
					return usageErr("%s is not installed (skillhost installed lists what is)", n)
				}
				got, err := in.Install(cmd.Context(), install.Request{Source: e.Source, Skills: []string{n}, Approve: approve})
				if err != nil {
					var ae *install.ApprovalError
					if errors.As(err, &ae) {
						fmt.Fprintf(g.stderr, "%s asks for more than %s approved:\n", ae.Name, install.LockFile)
						for _, m := range ae.More {
							fmt.Fprintf(g.stderr, "  + %s\n", m)
						}
						return &exitError{code: exitToolError, err: fmt.Errorf("%s not upgraded; run again with --approve to accept", n)}
					}
					return &exitError{code: exitToolError, err: withTrustHint(err)}
				}
				for _, e2 := range got {
					if e2.Digest == e.Digest {
						fmt.Fprintf(g.stdout, "%s is up to date\n", n)
					} else {
						fmt.Fprintf(g.stdout, "upgraded %s to %s\n", n, e2.Digest)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&approve, "approve", false, "accept capabilities or a signer beyond what the lock approved")
	cmd.Flags().BoolVar(&allowUnsigned, "allow-unsigned", false, "upgrade from a remote source that comes without a trusted signature")
	trust.add(cmd)
	return cmd
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
		Short: "Build skill and pack archives and push them to OCI registries",
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
	push := &cobra.Command{
		Use:   "push FILE oci://HOST/REPO:TAG",
		Short: "Push a pack archive to an OCI registry",
		Long: `Push FILE, an archive pack build wrote, to an OCI registry as a skillhost
pack artifact (` + install.ArtifactType + `), its Wasm modules also as manifests in
the CNCF Wasm OCI layout so other Wasm tools can pull them. Registry
credentials come from the docker config file ($DOCKER_CONFIG/config.json,
else ~/.docker/config.json). Prints the digest the tag names, to pin it
(install oci://HOST/REPO@DIGEST).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := g.installer()
			if err != nil {
				return err
			}
			d, err := in.Push(cmd.Context(), args[0], args[1])
			if err != nil {
				return &exitError{code: exitToolError, err: err}
			}
			fmt.Fprintf(g.stdout, "%s %s\n", args[1], d)
			return nil
		},
	}
	var (
		key    string
		bundle string
		trust  trustFlags
	)
	signCmd := &cobra.Command{
		Use:   "sign FILE --key KEY",
		Short: "Sign a pack archive with a key: writes FILE" + install.BundleSuffix,
		Long: `Sign FILE with the private KEY (as keygen writes it) and write the sigstore
bundle (cosign's format) beside it as FILE` + install.BundleSuffix + `. Publish
the bundle beside the archive: install fetches it from the same place,
and pack push attaches it to the pushed artifact.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if key == "" {
				return usageErr("pack sign needs --key KEY")
			}
			priv, err := os.ReadFile(key)
			if err != nil {
				return usageErr("%v", err)
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			b, err := sign.Sign(data, priv)
			if err != nil {
				return &exitError{code: exitToolError, err: fmt.Errorf("%s: %w", key, err)}
			}
			out := args[0] + install.BundleSuffix
			if err := os.WriteFile(out, b, 0o644); err != nil {
				return err
			}
			fmt.Fprintln(g.stdout, out)
			return nil
		},
	}
	signCmd.Flags().StringVar(&key, "key", "", "the private key `FILE` to sign with")
	verifyCmd := &cobra.Command{
		Use:   "verify FILE",
		Short: "Check a pack archive's signature: exit 0 when a trusted signer made it, 1 with the reason when not",
		Long: `Check the sigstore bundle of FILE (FILE` + install.BundleSuffix + `, or --bundle)
against the signers trusted: public keys (--trusted-key, repeatable) and
keyless identities (--identity with --issuer, checked against the sigstore
--trusted-root). Prints who signed; exits 1 with the reason when the
signature is missing, does not verify, or is by someone not trusted.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			if bundle == "" {
				bundle = args[0] + install.BundleSuffix
			}
			b, err := os.ReadFile(bundle)
			if err != nil {
				return &exitError{code: exitToolError, err: fmt.Errorf("%s is not signed: %v", args[0], err)}
			}
			pol, err := g.policy(&trust, false)
			if err != nil {
				return err
			}
			s, err := pol.Trust.Verify(data, b)
			if err != nil {
				return &exitError{code: exitToolError, err: err}
			}
			if s.Issuer != "" {
				fmt.Fprintf(g.stdout, "ok: signed by %s (issuer %s)\n", s.Identity, s.Issuer)
			} else {
				fmt.Fprintf(g.stdout, "ok: signed by key %s\n", s.Identity)
			}
			return nil
		},
	}
	verifyCmd.Flags().StringVar(&bundle, "bundle", "", "the sigstore bundle `FILE` (default: FILE"+install.BundleSuffix+")")
	trust.add(verifyCmd)
	cmd.AddCommand(build, push, signCmd, verifyCmd)
	return cmd
}

// trustFlags are the signers a command trusts, given on its command line.
type trustFlags struct {
	keys        []string
	revoked     []string
	identity    string
	identityRE  string
	issuer      string
	trustedRoot string
}

func (f *trustFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.keys, "trusted-key", nil, "trust signatures by the public key in `FILE` (repeatable)")
	fl.StringArrayVar(&f.revoked, "revoked-key", nil, "refuse the key `ID` (sha256:HEX), trusted or not (repeatable)")
	fl.StringVar(&f.identity, "identity", "", "trust keyless signatures by this `SUBJECT` (an email or workflow URL), with --issuer")
	fl.StringVar(&f.identityRE, "identity-regexp", "", "trust keyless signatures whose subject matches this whole `REGEXP`, with --issuer")
	fl.StringVar(&f.issuer, "issuer", "", "the OIDC `ISSUER` of the keyless identity")
	fl.StringVar(&f.trustedRoot, "trusted-root", "", "the sigstore trusted root `FILE` (trusted_root.json) keyless signatures chain to")
}

// policy is the trust policy of the operator config's [trust] section
// with the signers the flags name added; allowUnsigned lifts the
// requirement that remote sources be signed.
func (g *globals) policy(f *trustFlags, allowUnsigned bool) (*install.Policy, error) {
	op, err := packs.LoadConfig(g.configFile)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	pol, err := install.PolicyOf(trustconf.Of(op))
	if err != nil {
		return nil, usageErr("%v", err)
	}
	extra, err := f.trust()
	if err != nil {
		return nil, err
	}
	pol.Trust.Keys = append(pol.Trust.Keys, extra.Keys...)
	pol.Trust.Revoked = append(pol.Trust.Revoked, extra.Revoked...)
	pol.Trust.Identities = append(pol.Trust.Identities, extra.Identities...)
	if extra.TrustedRoot != nil {
		pol.Trust.TrustedRoot = extra.TrustedRoot
	}
	if allowUnsigned {
		pol.RequireSignature = false
	}
	return pol, nil
}

// trust reads the flags into a sign.Trust.
func (f *trustFlags) trust() (*sign.Trust, error) {
	tr := &sign.Trust{Revoked: f.revoked}
	for _, k := range f.keys {
		b, err := os.ReadFile(k)
		if err != nil {
			return nil, usageErr("--trusted-key: %v", err)
		}
		if _, err := sign.KeyID(b); err != nil {
			return nil, usageErr("--trusted-key %s: %v", k, err)
		}
		tr.Keys = append(tr.Keys, b)
	}
	if f.identity != "" || f.identityRE != "" || f.issuer != "" {
		if f.issuer == "" || (f.identity == "") == (f.identityRE == "") {
			return nil, usageErr("a keyless identity needs --issuer and one of --identity and --identity-regexp")
		}
		tr.Identities = []sign.Identity{{Issuer: f.issuer, Subject: f.identity, SubjectRegexp: f.identityRE}}
	}
	if f.trustedRoot != "" {
		b, err := os.ReadFile(f.trustedRoot)
		if err != nil {
			return nil, usageErr("--trusted-root: %v", err)
		}
		tr.TrustedRoot = b
	}
	return tr, nil
}

func newSignKeygenCmd(g *globals) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen --out PREFIX",
		Short: "Make a key pair to sign packs with: PREFIX.key (secret) and PREFIX.pub",
		Long: `Make an ECDSA P-256 key pair for pack sign: the private key in PREFIX.key
(mode 0600; keep it secret) and the public key in PREFIX.pub (give it to
those who install your packs, for their trust policy). Prints the key's
id, as locks and messages name it. Existing files are not overwritten.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr("keygen needs --out PREFIX")
			}
			priv, pub, err := sign.GenerateKey()
			if err != nil {
				return err
			}
			for _, f := range []struct {
				name string
				data []byte
				mode os.FileMode
			}{{out + ".key", priv, 0o600}, {out + ".pub", pub, 0o644}} {
				fh, err := os.OpenFile(f.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
				if err != nil {
					return usageErr("%v", err)
				}
				_, err = fh.Write(f.data)
				if cerr := fh.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return err
				}
			}
			id, _ := sign.KeyID(pub)
			fmt.Fprintf(g.stdout, "%s.key\n%s.pub\n%s\n", out, out, id)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write `PREFIX`.key and PREFIX.pub")
	return cmd
}

func signerText(identity, issuer string) string {
	if issuer != "" {
		return identity + " (issuer " + issuer + ")"
	}
	return "key " + identity
}

// restrictUnknownSigners holds the installed packs that no signer the
// trust policy trusts signed to install.Restrict's ceiling (unless
// [trust] restrict_unknown_signers = false), after any grant the command
// itself adds; g.ceilings records what each lost, for show.
func (g *globals) restrictUnknownSigners(in *install.Installer, cfg *skillhost.Config) error {
	lock, err := install.ReadLock(in.LockFile)
	if err != nil || len(lock.Entries) == 0 {
		return err
	}
	// The engine reads the same file: it is read once, here, and handed
	// over.
	op := cfg.Operator
	if op == nil {
		if op, err = packs.LoadConfig(cfg.ConfigFile); err != nil {
			return usageErr("%v", err)
		}
		cfg.Operator = op
	}
	pol, err := install.PolicyOf(trustconf.Of(op))
	if err != nil {
		return usageErr("%v", err)
	}
	if !pol.RestrictUnknown {
		return nil
	}
	unknown := map[string]*install.Entry{}
	for _, e := range lock.Entries {
		if e.Kind == "pack" && !pol.Trusts(e.Signer, e.Issuer) {
			unknown[e.Name] = e
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	inner := cfg.GrantFor
	cfg.GrantFor = func(pack string, tools []string, op skillhost.Grant) (skillhost.Grant, bool) {
		gr, changed := op, false
		if inner != nil {
			gr, changed = inner(pack, tools, op)
		}
		e, ok := unknown[pack]
		if !ok {
			return gr, changed
		}
		gr, why := install.Restrict(gr)
		if g.ceilings == nil {
			g.ceilings = map[string][]string{}
		}
		who := "no one"
		if e.Signer != "" {
			who = signerText(e.Signer, e.Issuer) + ", whom [trust] does not trust"
		}
		g.ceilings[pack] = append([]string{pack + " was installed signed by " + who}, why...)
		return gr, changed || len(why) > 0
	}
	return nil
}

// withTrustHint says, after an unsigned or untrusted source's error, how
// an operator who means it goes on.
func withTrustHint(err error) error {
	switch {
	case errors.Is(err, install.ErrUnsigned):
		return fmt.Errorf("%w\n(ask its publisher for a signature; to install it unsigned, where it runs without network, writable mounts or services, add --allow-unsigned)", err)
	case errors.Is(err, sign.ErrUntrusted):
		return fmt.Errorf("%w\n(trust its signer with --trusted-key FILE, or keys or identities in [trust] of skillhost.toml)", err)
	}
	return err
}
