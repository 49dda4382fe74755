package install

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/skillhost/skillhost/packs"
)

// Capabilities are what an installed skill or pack asks to be granted,
// as the lock records them when they are approved: an upgrade that asks
// for anything more stops until it is approved again.
type Capabilities struct {
	// Hosts are the hostname globs its modules may reach over HTTP.
	Hosts []string `toml:"hosts,omitempty" json:"hosts,omitempty"`
	// Paths are the guest folders its modules mount, each "PATH:ro" or
	// "PATH:rw".
	Paths []string `toml:"paths,omitempty" json:"paths,omitempty"`
	// Env are the environment variable names it reads.
	Env []string `toml:"env,omitempty" json:"env,omitempty"`
	// Services are the host services it calls ("mail.send").
	Services []string `toml:"services,omitempty" json:"services,omitempty"`
	// Tools are the tools its modules may call, and a skill's
	// allowed_tools.
	Tools []string `toml:"tools,omitempty" json:"tools,omitempty"`
	// Scripts are the files of its skills that run as scripts, by path.
	Scripts []string `toml:"scripts,omitempty" json:"scripts,omitempty"`
	// Ceilings are the largest per-call limits its modules ask for.
	Ceilings Ceilings `toml:"limits" json:"limits"`
}

// Ceilings are the largest limits a pack's modules declare; zero is
// "none declared" (the operator's defaults apply).
type Ceilings struct {
	Timeout   string `toml:"timeout,omitempty" json:"timeout,omitempty"`
	MaxMemory uint64 `toml:"max_memory,omitempty" json:"max_memory,omitempty"`
	MaxFuel   int64  `toml:"max_fuel,omitempty" json:"max_fuel,omitempty"`
	MaxWrite  int64  `toml:"max_write,omitempty" json:"max_write,omitempty"`
	MaxHTTP   int64  `toml:"max_http_response,omitempty" json:"max_http_response,omitempty"`
}

// scriptExts are the file name endings of skill files that run.
var scriptExts = []string{".py", ".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".wasm", ".rb", ".pl"}

// isScript says whether a skill's file runs: anything under scripts/,
// or a file whose ending names an interpreter or a module.
func isScript(p string) bool {
	if strings.HasPrefix(p, "scripts/") {
		return true
	}
	return slices.Contains(scriptExts, strings.ToLower(path.Ext(p)))
}

// capabilitiesOf gathers what the packs and skills of one unit ask for.
func capabilitiesOf(sc *packs.SourceContents) Capabilities {
	var c Capabilities
	var timeout time.Duration
	for _, p := range sc.Packs {
		for _, m := range p.Modules {
			r := m.Request
			c.Hosts = append(c.Hosts, r.AllowedHosts...)
			for _, mr := range r.Mounts {
				mode := "ro"
				if !mr.ReadOnly {
					mode = "rw"
				}
				c.Paths = append(c.Paths, mr.Guest+":"+mode)
			}
			c.Env = append(c.Env, r.Env...)
			c.Services = append(c.Services, r.Services...)
			c.Tools = append(c.Tools, r.Tools...)
			l := m.Limits
			timeout = max(timeout, l.Timeout)
			c.Ceilings.MaxMemory = max(c.Ceilings.MaxMemory, l.MaxMemoryBytes)
			c.Ceilings.MaxFuel = max(c.Ceilings.MaxFuel, l.MaxFuel)
			c.Ceilings.MaxWrite = max(c.Ceilings.MaxWrite, l.MaxWriteBytes)
			c.Ceilings.MaxHTTP = max(c.Ceilings.MaxHTTP, l.MaxHTTPResponseBytes)
		}
	}
	for _, s := range sc.Skills {
		if s.Subagent != nil {
			c.Env = append(c.Env, s.Subagent.Env...)
			c.Services = append(c.Services, s.Subagent.Capabilities...)
		}
		c.Tools = append(c.Tools, s.AllowedTools...)
		dir := path.Dir(s.File)
		for _, r := range s.Resources {
			if isScript(r.Path) {
				c.Scripts = append(c.Scripts, path.Join(dir, r.Path))
			}
		}
	}
	if timeout > 0 {
		c.Ceilings.Timeout = timeout.String()
	}
	for _, l := range []*[]string{&c.Hosts, &c.Paths, &c.Env, &c.Services, &c.Tools, &c.Scripts} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return c
}

// Beyond lists, one a line, what c asks for that approved does not
// allow: a new host, path (or ro turned rw), env name, service, tool or
// script, or a larger limit. An empty list means c asks for the same or
// less.
func (c Capabilities) Beyond(approved Capabilities) []string {
	var out []string
	more := func(what string, have, ok []string) {
		for _, h := range have {
			if !slices.Contains(ok, h) {
				out = append(out, fmt.Sprintf("%s %s", what, h))
			}
		}
	}
	more("host", c.Hosts, approved.Hosts)
	for _, p := range c.Paths {
		// A read-only mount approved read-write is less, not more.
		if slices.Contains(approved.Paths, p) || (strings.HasSuffix(p, ":ro") && slices.Contains(approved.Paths, strings.TrimSuffix(p, ":ro")+":rw")) {
			continue
		}
		out = append(out, "path "+p)
	}
	more("env", c.Env, approved.Env)
	more("service", c.Services, approved.Services)
	more("tool", c.Tools, approved.Tools)
	more("script", c.Scripts, approved.Scripts)
	a, b := c.Ceilings, approved.Ceilings
	if a.Timeout != "" {
		at, _ := time.ParseDuration(a.Timeout)
		bt, _ := time.ParseDuration(b.Timeout)
		if b.Timeout == "" || at > bt {
			out = append(out, fmt.Sprintf("limit timeout %s (approved %s)", a.Timeout, orNone(b.Timeout)))
		}
	}
	larger := func(name string, x, y int64) {
		if x > 0 && (y == 0 || x > y) {
			out = append(out, fmt.Sprintf("limit %s %d (approved %s)", name, x, orNone(fmt.Sprint(y))))
		}
	}
	larger("max_memory", int64(min(a.MaxMemory, 1<<62)), int64(min(b.MaxMemory, 1<<62)))
	larger("max_fuel", a.MaxFuel, b.MaxFuel)
	larger("max_write", a.MaxWrite, b.MaxWrite)
	larger("max_http_response", a.MaxHTTP, b.MaxHTTP)
	return out
}

func orNone(s string) string {
	if s == "" || s == "0" {
		return "none"
	}
	return s
}
