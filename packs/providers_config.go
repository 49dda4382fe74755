package packs

import (
	"fmt"
	"regexp"
	"time"
)

// CapabilitiesConfig is the [capabilities] section: the host services a
// guest reaches through capability_call.
type CapabilitiesConfig struct {
	// Providers are the [capabilities.providers.<namespace>] sections, in
	// file order, disabled ones included.
	Providers []CapabilityProvider `json:"providers,omitempty"`
}

// CapabilityProvider is a [capabilities.providers.<namespace>] section:
// an external command that answers the capability calls of one namespace
// ("mail" answers "mail.send") as newline-delimited JSON on its standard
// input and output. An engine starts it on the first call, keeps it
// running, and stops it when the engine closes.
type CapabilityProvider struct {
	// Namespace is the section's name.
	Namespace string `json:"namespace"`
	// Command is the program and its arguments. Required.
	Command []string `json:"command"`
	// Timeout bounds one request, from the call to its answer; 0 means the
	// built-in default (30 s). A guest's own deadline may end it sooner.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Env are variables set for the command on top of the engine's own
	// environment; their values are secrets, never printed.
	Env map[string]Secret `json:"env,omitempty"`
	// Enabled is false when the section says enabled = false: the
	// namespace then has no provider.
	Enabled bool `json:"enabled"`
	// Line is where the section starts.
	Line int `json:"-"`
}

const (
	capabilitiesKeys       = "providers"
	capabilityProviderKeys = "command, timeout, env, enabled"
)

// namespaceRE is a capability namespace: the part of a service id before
// its first dot (serviceRE).
var namespaceRE = regexp.MustCompile(`^[a-z0-9_-]+$`)

// capabilities reads the [capabilities] section.
func (r *tomlReader) capabilities(c *Config, kv tomlValue) {
	keys, ok := r.Table(kv, "a table ([capabilities])")
	if !ok {
		return
	}
	for _, k := range keys {
		switch k.Key.Last() {
		case "providers":
			r.capabilityProviders(c, k)
		default:
			r.Errorf(k, "unknown key %q; expected one of %s", k.Key.String(), capabilitiesKeys)
		}
	}
}

// capabilityProviders reads the [capabilities.providers.<namespace>]
// sections.
func (r *tomlReader) capabilityProviders(c *Config, kv tomlValue) {
	sections, ok := r.Table(kv, "a table of [capabilities.providers.<namespace>] sections")
	if !ok {
		return
	}
	for _, sec := range sections {
		ns := sec.Key.Last()
		if !namespaceRE.MatchString(ns) {
			r.Errorf(sec, "[%s]: the namespace %q must be lowercase letters, digits, - and _ (the part of a service id such as mail.send before the dot)", sec.Key, ns)
			continue
		}
		keys, ok := r.Table(sec, fmt.Sprintf("a table ([%s])", sec.Key))
		if !ok {
			continue
		}
		p := CapabilityProvider{Namespace: ns, Enabled: true, Line: sec.Line}
		bad := false
		for _, k := range keys {
			switch k.Key.Last() {
			case "command":
				cmd, ok := r.Strings(k, false)
				if !ok {
					bad = true
					continue
				}
				if len(cmd) == 0 || cmd[0] == "" {
					r.Errorf(k, "%s must name the program to start, with its arguments, such as [\"mail-bridge\", \"--stdio\"]", k.Key)
					bad = true
					continue
				}
				p.Command = cmd
			case "timeout":
				if d, ok := r.Duration(k); ok {
					p.Timeout = d
				} else {
					bad = true
				}
			case "env":
				vars, ok := r.Table(k, "a table of NAME = \"value\"")
				if !ok {
					bad = true
					continue
				}
				for _, v := range vars {
					name := v.Key.Last()
					if !envRE.MatchString(name) {
						r.Errorf(v, "%q in %s is not a valid environment variable name; use A-Z, 0-9 and _, not starting with a digit", name, k.Key)
						bad = true
						continue
					}
					if s, ok := r.Str(v); ok {
						if p.Env == nil {
							p.Env = map[string]Secret{}
						}
						p.Env[name] = NewSecret(s)
					} else {
						bad = true
					}
				}
			case "enabled":
				if b, ok := r.Bool(k); ok {
					p.Enabled = b
				} else {
					bad = true
				}
			default:
				r.Errorf(k, "unknown key %q; expected one of %s", k.Key.String(), capabilityProviderKeys)
				bad = true
			}
		}
		if p.Command == nil && !bad {
			r.Errorf(sec, "[%s] needs command, the program that serves the %s.* capabilities and its arguments, such as [\"mail-bridge\", \"--stdio\"]", sec.Key, ns)
			continue
		}
		if !bad {
			c.Capabilities.Providers = append(c.Capabilities.Providers, p)
		}
	}
}

// EnabledProviders returns the providers whose section is enabled.
func (c CapabilitiesConfig) EnabledProviders() []CapabilityProvider {
	var out []CapabilityProvider
	for _, p := range c.Providers {
		if p.Enabled {
			out = append(out, p)
		}
	}
	return out
}
