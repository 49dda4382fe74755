// Package trustconf is the [trust] section of skillhost.toml: who the
// operator trusts to sign what `skillhost install` installs, whether
// remote sources must be signed, and which registries, git hosts and
// sites sources may name. It is its own small package, with no signature
// code, so that every reader of the operator's file (the engine
// included) knows the section without linking sigstore.
package trustconf

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/skillhost/skillhost/internal/confwalk"
	"github.com/skillhost/skillhost/packs"
)

// Config is the [trust] section.
//
//	[trust]
//	require_signature = true              # remote sources must be signed (the default)
//	restrict_unknown_signers = true       # unsigned installs run without network, rw mounts, services
//	keys = ["keys/release.pub"]           # PEM public keys, relative to the config file
//	revoked = ["sha256:…"]                # key ids refused even when trusted
//	trusted_root = "trusted_root.json"    # sigstore trusted root for keyless signatures
//	registries = ["ghcr.io"]              # the only OCI registries sources may name
//	git_hosts = ["github.com"]            # the only git hosts
//	sites = ["skills.example.com"]        # the only https:// hosts of archives and indexes
//
//	[[trust.identities]]                  # keyless signers
//	issuer = "https://token.actions.githubusercontent.com"
//	subject_regexp = 'https://github\.com/acme/skills/.*'
type Config struct {
	// RequireSignature refuses remote sources without a trusted
	// signature; nil is true.
	RequireSignature *bool `toml:"require_signature"`
	// Keys are files of trusted PEM public keys, resolved against the
	// config file's folder.
	Keys []string `toml:"keys"`
	// Revoked are ids of keys refused even when trusted.
	Revoked []string `toml:"revoked"`
	// TrustedRoot is the sigstore trusted root file keyless signatures
	// chain to.
	TrustedRoot string `toml:"trusted_root"`
	// Identities are the keyless signers trusted.
	Identities []Identity `toml:"identities"`
	// RestrictUnknownSigners runs installed packs that no trusted signer
	// signed without network, writable mounts or host services, whatever
	// their grant says; nil is true.
	RestrictUnknownSigners *bool `toml:"restrict_unknown_signers"`
	// Registries, GitHosts and Sites limit the hosts sources may name;
	// empty allows any.
	Registries []string `toml:"registries"`
	GitHosts   []string `toml:"git_hosts"`
	Sites      []string `toml:"sites"`
}

// Identity is one keyless signer: the OIDC issuer and the subject, exact
// or as a regular expression the whole subject must match.
type Identity struct {
	Issuer        string `toml:"issuer"`
	Subject       string `toml:"subject"`
	SubjectRegexp string `toml:"subject_regexp"`
}

// Restrict says whether installed packs no trusted signer signed are
// held to the restricted ceiling.
func (c *Config) Restrict() bool {
	return c.RestrictUnknownSigners == nil || *c.RestrictUnknownSigners
}

// Require says whether remote sources must be signed.
func (c *Config) Require() bool { return c.RequireSignature == nil || *c.RequireSignature }

var (
	keyIDRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	hostRE  = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$`)
)

// Validate checks the section.
func (c *Config) Validate() error {
	var errs []error
	for i, k := range c.Keys {
		if k == "" {
			errs = append(errs, confwalk.Invalid(fmt.Sprintf("keys[%d]", i), "is empty; want the file of a PEM public key"))
		}
	}
	for i, id := range c.Revoked {
		if !keyIDRE.MatchString(id) {
			errs = append(errs, confwalk.Invalid(fmt.Sprintf("revoked[%d]", i), "%q is not a key id; want sha256: and 64 lowercase hex digits (skillhost keygen prints it)", id))
		}
	}
	for i, id := range c.Identities {
		key := fmt.Sprintf("identities[%d]", i)
		switch {
		case id.Issuer == "":
			errs = append(errs, confwalk.Invalid(key, "has no issuer; a keyless signer is trusted for one OIDC issuer"))
		case (id.Subject == "") == (id.SubjectRegexp == ""):
			errs = append(errs, confwalk.Invalid(key, "needs one of subject and subject_regexp; there is no \"any signer\""))
		case id.SubjectRegexp != "":
			if _, err := regexp.Compile(id.SubjectRegexp); err != nil {
				errs = append(errs, confwalk.Invalid(key+".subject_regexp", "%q: %v", id.SubjectRegexp, err))
			}
		}
	}
	if len(c.Identities) > 0 && c.TrustedRoot == "" {
		errs = append(errs, confwalk.Invalid("trusted_root", "is needed to verify the keyless signatures of identities"))
	}
	for _, l := range []struct {
		key   string
		hosts []string
	}{{"registries", c.Registries}, {"git_hosts", c.GitHosts}, {"sites", c.Sites}} {
		for i, h := range l.hosts {
			if !hostRE.MatchString(h) {
				errs = append(errs, confwalk.Invalid(fmt.Sprintf("%s[%d]", l.key, i), "%q is not a host name (lowercase, host or host:port)", h))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return joined(errs)
}

type joined []error

func (j joined) Error() string {
	s := make([]string, len(j))
	for i, e := range j {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}
func (j joined) Unwrap() []error { return j }

// Resolve returns c with its file names made absolute against the folder
// of the config file.
func (c Config) Resolve(configFile string) Config {
	if configFile == "" {
		return c
	}
	base := filepath.Dir(configFile)
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	keys := make([]string, len(c.Keys))
	for i, k := range c.Keys {
		keys[i] = abs(k)
	}
	c.Keys, c.TrustedRoot = keys, abs(c.TrustedRoot)
	return c
}

// owner is the name the reader is registered under.
const owner = "trust"

func init() {
	confwalk.Register[Config](confwalk.Rules{Hooks: map[string]func(*confwalk.Walker, confwalk.Value) (any, bool){
		"identities": readIdentities,
	}})
	packs.RegisterReader(owner, []string{"trust"}, read)
}

func read(w *confwalk.Walker, tables map[string][]confwalk.Value) any {
	c := &Config{}
	for _, kv := range tables["trust"] {
		w.Decode(kv, c)
	}
	return c
}

// readIdentities reads [[trust.identities]].
func readIdentities(w *confwalk.Walker, kv confwalk.Value) (any, bool) {
	items, ok := w.Array(kv, "an array of tables ([[trust.identities]])")
	if !ok {
		return nil, false
	}
	var out []Identity
	for _, it := range items {
		keys, ok := w.Table(it, "a table with issuer and subject or subject_regexp")
		if !ok {
			continue
		}
		var id Identity
		for _, k := range keys {
			s, ok := w.Str(k)
			if !ok {
				continue
			}
			switch k.Key.Last() {
			case "issuer":
				id.Issuer = s
			case "subject":
				id.Subject = s
			case "subject_regexp":
				id.SubjectRegexp = s
			default:
				w.Unknown(k, "issuer, subject, subject_regexp")
			}
		}
		out = append(out, id)
	}
	return out, true
}

// Of returns the [trust] section of an operator config read from a file,
// with its file names resolved; for any other config, the default (no
// one trusted, remote sources must be signed).
func Of(op *packs.Config) Config {
	if c, ok := op.Owned(owner).(*Config); ok && c != nil {
		return c.Resolve(op.File)
	}
	return Config{}
}
