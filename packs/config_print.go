package packs

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/skillhost/skillhost/internal/confwalk"
)

// Printing the operator's config without its secrets: every value that
// must not leak is a Secret (or a ConfigValue), and every way of printing
// a Config goes through String, which writes them as "[redacted]".

// redacted is what every Secret prints as.
const redacted = "[redacted]"

// Secret is a value from the operator's config that must not leak, such as
// an API key. Every way of printing or encoding it (fmt verbs, JSON, text,
// slog) gives "[redacted]"; only Value returns the value.
type Secret struct{ v string }

// NewSecret wraps v.
func NewSecret(v string) Secret { return Secret{v: v} }

// Value returns the secret value. Call it only to hand the value to the
// thing that needs it, never to print it.
func (s Secret) Value() string { return s.v }

// String returns "[redacted]".
func (s Secret) String() string { return redacted }

// GoString returns "[redacted]".
func (s Secret) GoString() string { return redacted }

// Format writes "[redacted]" whatever the verb.
func (s Secret) Format(f fmt.State, verb rune) { io.WriteString(f, redacted) }

// MarshalJSON encodes the secret as "[redacted]".
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText encodes the secret as "[redacted]".
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue logs the secret as "[redacted]".
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// String renders the config as TOML with every secret value redacted, for
// `skillhost show`.
func (c *Config) String() string {
	if c == nil {
		return "<nil>"
	}
	doc := map[string]any{"state_dir": c.StateDir}
	src := map[string]any{
		"bundled":   c.Sources.Bundled,
		"user":      c.Sources.User,
		"workspace": c.Sources.Workspace,
		"max_depth": c.Sources.MaxDepth,
	}
	if len(c.Sources.Installed) > 0 {
		src["installed"] = c.Sources.Installed
	}
	doc["sources"] = src
	skills := map[string]any{}
	if sec := skillTOML(c.Defaults); len(sec) > 0 {
		skills[defaultsSection] = sec
	}
	for name, sc := range c.Skills {
		skills[name] = skillTOML(sc)
	}
	if len(skills) > 0 {
		doc["skills"] = skills
	}
	if l := confwalk.Table(c.Limits); len(l) > 0 {
		doc["limits"] = l
	}
	if c.Sandbox.Isolation != "" {
		doc["sandbox"] = confwalk.Table(c.Sandbox)
	}
	for name, v := range c.owned {
		if kv, ok := v.(tomlValue); ok {
			doc[name] = kv.Val
		} else if t := confwalk.Table(v); len(t) > 0 {
			doc[name] = t
		}
	}
	if len(c.Packs) > 0 {
		pk := map[string]any{}
		for name, g := range c.Packs {
			pk[name] = packTOML(g)
		}
		doc["packs"] = pk
	}
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(doc); err != nil {
		return "config: " + err.Error()
	}
	return b.String()
}

func skillTOML(sc SkillConfig) map[string]any {
	m := map[string]any{}
	if sc.Enabled != nil {
		m["enabled"] = *sc.Enabled
	}
	if sc.Model != "" {
		m["model"] = sc.Model
	}
	if sc.MaxIterations != 0 {
		m["max_iterations"] = sc.MaxIterations
	}
	if sc.AllowChatIDs != nil {
		m["allow_chat_ids"] = sc.AllowChatIDs
	}
	for k := range sc.Env {
		m[k] = redacted
	}
	return m
}

func packTOML(g PackGrant) map[string]any {
	m := map[string]any{
		"enabled":         g.Enabled,
		"update_existing": g.UpdateExisting,
	}
	// A scope_mode the section does not set is left to the default one
	// ([skill_discovery] scope_mode), as the file had it.
	if g.scopeSet {
		m["scope_mode"] = g.ScopeMode
	}
	if len(g.AllowedHosts) > 0 {
		m["allowed_hosts"] = g.AllowedHosts
	}
	if g.AllowPrivateNetwork {
		m["allow_private_network"] = true
	}
	if len(g.Mounts) > 0 {
		var ms []map[string]any
		for _, mt := range g.Mounts {
			ms = append(ms, map[string]any{"host": mt.HostPath, "guest": mt.GuestPath, "read_only": mt.ReadOnly})
		}
		m["mounts"] = ms
	}
	if len(g.Env) > 0 {
		env := map[string]any{}
		for k := range g.Env {
			env[k] = redacted
		}
		m["env"] = env
	}
	if len(g.Services) > 0 {
		m["services"] = g.Services
	}
	if len(g.Tools) > 0 {
		m["tools"] = g.Tools
	}
	if len(g.Config) > 0 {
		cfg := map[string]any{}
		for k := range g.Config {
			cfg[k] = redacted
		}
		m["config"] = cfg
	}
	if len(g.Pinned) > 0 {
		m["pinned"] = g.Pinned
	}
	if l := confwalk.Table(g.Limits); len(l) > 0 {
		m["limits"] = l
	}
	if g.Isolation != "" {
		m["isolation"] = g.Isolation
	}
	return m
}

// Format prints the config as String does, whatever the verb, so that no
// verb can reach a secret through reflection.
func (c *Config) Format(f fmt.State, verb rune) { io.WriteString(f, c.String()) }

// LogValue logs the config without values of secrets: the file, the state
// folder, the sources and the names of configured skills and packs.
func (c *Config) LogValue() slog.Value {
	if c == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(
		slog.String("file", c.File),
		slog.String("state_dir", c.StateDir),
		slog.Bool("bundled", c.Sources.Bundled),
		slog.Any("installed", c.Sources.Installed),
		slog.String("user", c.Sources.User),
		slog.String("workspace", c.Sources.Workspace),
		slog.Int("max_depth", c.Sources.MaxDepth),
		slog.String("isolation", string(c.Sandbox.Isolation)),
		slog.Any("skills", sortedNames(c.Skills)),
		slog.Any("packs", sortedNames(c.Packs)),
	)
}

// Interface guards: printing and logging go through the redacting methods.
var (
	_ fmt.Formatter  = Secret{}
	_ slog.LogValuer = Secret{}
	_ fmt.Formatter  = (*Config)(nil)
	_ slog.LogValuer = (*Config)(nil)
)
