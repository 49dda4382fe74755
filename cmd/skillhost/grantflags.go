package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/grant"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
)

// grantFlags are the operator's grants given on the command line.
type grantFlags struct {
	hosts     []string
	paths     []string
	private   bool
	config    []string
	env       []string
	timeout   time.Duration
	maxMemory string
	maxFuel   int64
	maxWrite  string
	maxOpen   int64
	logLevel  string
	flags     *pflag.FlagSet
}

func (f *grantFlags) register(fs *pflag.FlagSet) {
	f.flags = fs
	const packNote = "; a pack tool's: see call TOOL --dry-run"
	fs.StringArrayVar(&f.hosts, "allow-host", nil, "let the guest reach this host `GLOB` over HTTP, e.g. api.example.com or *.example.com (repeatable)")
	fs.StringArrayVar(&f.paths, "allow-path", nil, "mount HOST folder at GUEST path, read-only with :ro — `HOST:GUEST[:ro]` (repeatable)")
	fs.BoolVar(&f.private, "allow-private-network", false, "let HTTP reach loopback, private and link-local addresses (refused by default)")
	fs.StringArrayVar(&f.config, "config", nil, "guest config value `K=V`, read with config_get (repeatable)")
	fs.StringArrayVar(&f.env, "env", nil, "pass env var NAME (value from this environment) or NAME=VALUE to the guest — `NAME[=VALUE]` (repeatable)")
	fs.DurationVar(&f.timeout, "timeout", 0, fmt.Sprintf("wall-clock limit of the call, a `DURATION` such as 5s (--module: default %v%s)", host.DefaultTimeout, packNote))
	fs.StringVar(&f.maxMemory, "memory-max", "", fmt.Sprintf("cap on the guest's memory, a `SIZE` such as 64MiB (--module: default %s%s)", size(host.DefaultMaxMemoryBytes), packNote))
	fs.Int64Var(&f.maxFuel, "fuel-max", 0, "cap on the `N` instructions the call may run, the same on any machine (--module: default unlimited"+packNote+")")
	fs.StringVar(&f.maxWrite, "write-max", "", fmt.Sprintf("cap on what the call may write to its mounts, a `SIZE` such as 1MiB (--module: default %s%s)", size(host.DefaultMaxWriteBytes), packNote))
	fs.Int64Var(&f.maxOpen, "open-files-max", 0, fmt.Sprintf("cap on the `N` files the guest may hold open at once (--module: default %d%s)", host.DefaultMaxOpenFiles, packNote))
	fs.StringVar(&f.logLevel, "log-level", "warn", "lowest guest log `LEVEL` printed to stderr: trace, debug, info, warn, error or off")
	// The names of earlier versions still work, hidden, with a warning
	// (warnRenamed).
	for old, name := range renamedFlags {
		fl := fs.Lookup(name)
		fs.AddFlag(&pflag.Flag{Name: old, Usage: fl.Usage, Value: fl.Value, DefValue: fl.DefValue, Hidden: true})
	}
}

// renamedFlags are the limit flags' names of earlier versions, by the
// names they have now, which follow the Extism CLI's --memory-max.
var renamedFlags = map[string]string{"max-memory": "memory-max", "max-fuel": "fuel-max", "max-write": "write-max", "max-open-files": "open-files-max"}

// warnRenamed warns on w of each flag given by its former name.
func (f *grantFlags) warnRenamed(w io.Writer) {
	if f.flags == nil {
		return
	}
	for _, old := range []string{"max-memory", "max-fuel", "max-write", "max-open-files"} {
		if f.flags.Changed(old) {
			fmt.Fprintf(w, "skillhost: warning: --%s is now --%s\n", old, renamedFlags[old])
		}
	}
}

func (f *grantFlags) set() bool {
	return len(f.hosts)+len(f.paths)+len(f.config)+len(f.env) > 0 || f.private || f.timeout != 0 || f.maxMemory != "" || f.maxFuel != 0 ||
		f.maxWrite != "" || f.maxOpen != 0 || f.changed("open-files-max")
}

// grant turns the flags into a Grant.
func (f *grantFlags) grant() (skillhost.Grant, error) {
	var g skillhost.Grant
	g.AllowedHosts = f.hosts
	g.AllowPrivateNetwork = f.private
	for _, p := range f.paths {
		m, err := parseMount(p)
		if err != nil {
			return g, err
		}
		g.Mounts = append(g.Mounts, m)
	}
	for _, kv := range f.config {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			if !strings.Contains(kv, "=") && (strings.HasSuffix(kv, ".toml") || fileExists(kv)) {
				return g, usageErr("--config %s: --config K=V is a guest config value; name the operator config file with --config-file FILE (or $%s)", kv, packs.ConfigEnv)
			}
			return g, usageErr("--config %q must be KEY=VALUE, a guest config value", kv)
		}
		if g.Config == nil {
			g.Config = map[string]string{}
		}
		g.Config[k] = v
	}
	for _, e := range f.env {
		k, v, ok := strings.Cut(e, "=")
		if !ok {
			v = os.Getenv(k)
		}
		if k == "" {
			return g, usageErr("--env %q must be NAME or NAME=VALUE", e)
		}
		if g.Env == nil {
			g.Env = map[string]string{}
		}
		g.Env[k] = v
	}
	if f.timeout < 0 {
		return g, usageErr("--timeout %v must be positive", f.timeout)
	}
	g.Limits.Timeout = f.timeout
	if f.maxFuel < 0 {
		return g, usageErr("--fuel-max %d must be positive", f.maxFuel)
	}
	g.Limits.MaxFuel = f.maxFuel
	if f.maxMemory != "" {
		n, err := packs.ParseSize(f.maxMemory)
		if err != nil {
			return g, usageErr("--memory-max: %v", err)
		}
		if n > 4<<30 {
			return g, usageErr("--memory-max %s is above the 4 GiB a guest can address", f.maxMemory)
		}
		g.Limits.MaxMemoryBytes = n
	}
	if f.maxWrite != "" {
		n, err := packs.ParseSize(f.maxWrite)
		if err != nil {
			return g, usageErr("--write-max: %v", err)
		}
		if n == 0 {
			return g, usageErr("--write-max %s must be a positive size such as 1MiB; to refuse every write, mount the folder read-only with :ro", f.maxWrite)
		}
		g.Limits.MaxWriteBytes = int64(n)
	}
	switch {
	case f.maxOpen < 0 || f.maxOpen == 0 && f.changed("open-files-max"):
		return g, usageErr("--open-files-max %d must be a positive number of files", f.maxOpen)
	case f.maxOpen > grant.MaxOpenFilesCeiling:
		return g, usageErr("--open-files-max %d is above %d, the most files a process may hold open", f.maxOpen, grant.MaxOpenFilesCeiling)
	}
	g.Limits.MaxOpenFiles = f.maxOpen
	return g, nil
}

// changed reports whether the flag name, or its former name, was given.
func (f *grantFlags) changed(name string) bool {
	if f.flags == nil {
		return false
	}
	if f.flags.Changed(name) {
		return true
	}
	for old, n := range renamedFlags {
		if n == name && f.flags.Changed(old) {
			return true
		}
	}
	return false
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

func (f *grantFlags) level() (abi.LogLevel, error) {
	for _, l := range []abi.LogLevel{abi.LogTrace, abi.LogDebug, abi.LogInfo, abi.LogWarn, abi.LogError, abi.LogOff} {
		if l.String() == strings.ToLower(f.logLevel) {
			return l, nil
		}
	}
	return 0, usageErr("--log-level %q must be trace, debug, info, warn, error or off", f.logLevel)
}

// parseMount reads HOST:GUEST[:ro|:rw].
func parseMount(s string) (skillhost.Mount, error) {
	parts := strings.Split(s, ":")
	m := skillhost.Mount{}
	if n := len(parts); n == 3 && (parts[2] == "ro" || parts[2] == "rw") {
		m.ReadOnly = parts[2] == "ro"
		parts = parts[:2]
	}
	if len(parts) != 2 || parts[0] == "" || !strings.HasPrefix(parts[1], "/") {
		return m, usageErr("--allow-path %q must be HOST:GUEST[:ro] with an absolute GUEST path, e.g. ./data:/data:ro", s)
	}
	abs, err := filepath.Abs(parts[0])
	if err != nil {
		return m, usageErr("--allow-path %q: %v", s, err)
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return m, usageErr("--allow-path %q: %s is not a folder", s, abs)
	}
	m.HostPath, m.GuestPath = abs, parts[1]
	return m, nil
}

// merge adds the grants of b to a; b's non-zero limits win.
func merge(a, b skillhost.Grant) skillhost.Grant {
	out := a
	out.Mounts = append(append([]skillhost.Mount(nil), a.Mounts...), b.Mounts...)
	out.AllowedHosts = append(append([]string(nil), a.AllowedHosts...), b.AllowedHosts...)
	out.AllowPrivateNetwork = a.AllowPrivateNetwork || b.AllowPrivateNetwork
	out.Env = mergeMap(a.Env, b.Env)
	out.Config = mergeMap(a.Config, b.Config)
	out.Tools = append(append([]string(nil), a.Tools...), b.Tools...)
	out.Capabilities = append(append([]string(nil), a.Capabilities...), b.Capabilities...)
	if b.Limits.Timeout != 0 {
		out.Limits.Timeout = b.Limits.Timeout
	}
	if b.Limits.MaxMemoryBytes != 0 {
		out.Limits.MaxMemoryBytes = b.Limits.MaxMemoryBytes
	}
	if b.Limits.MaxFuel != 0 {
		out.Limits.MaxFuel = b.Limits.MaxFuel
	}
	if b.Limits.MaxWriteBytes != 0 {
		out.Limits.MaxWriteBytes = b.Limits.MaxWriteBytes
	}
	if b.Limits.MaxOpenFiles != 0 {
		out.Limits.MaxOpenFiles = b.Limits.MaxOpenFiles
	}
	return out
}

func mergeMap(a, b map[string]string) map[string]string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// describeGrant lists a grant, one capability a line; toolsNote, when set,
// is put in brackets after the tools.
func describeGrant(g skillhost.Grant, toolsNote string) string {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "    %-13s "+format+"\n", append([]any{label + ":"}, args...)...)
	}
	if len(g.Mounts) == 0 {
		line("filesystem", "none")
	}
	for _, m := range g.Mounts {
		mode := "rw"
		if m.ReadOnly {
			mode = "ro"
		}
		host := m.HostPath
		if host == "" {
			host = "(folder chosen by the operator)"
		}
		line("filesystem", "%s -> %s (%s)", host, m.GuestPath, mode)
	}
	if len(g.AllowedHosts) == 0 {
		line("network", "none")
	} else {
		private := ""
		if g.AllowPrivateNetwork {
			private = " (private addresses allowed)"
		}
		line("network", "%s%s", strings.Join(g.AllowedHosts, ", "), private)
	}
	env := make([]string, 0, len(g.Env))
	for k := range g.Env {
		env = append(env, k) // names only: values may be secrets
	}
	line("env", "%s", listOrNone(env))
	cfg := make([]string, 0, len(g.Config))
	for k := range g.Config {
		cfg = append(cfg, k)
	}
	line("config", "%s", listOrNone(cfg))
	if toolsNote != "" {
		line("tools", "%s (%s)", listOrNone(g.Tools), toolsNote)
	} else {
		line("tools", "%s", listOrNone(g.Tools))
	}
	line("services", "%s", listOrNone(g.Capabilities))
	return b.String()
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	sorted := append([]string(nil), s...)
	sort.Strings(sorted)
	return strings.Join(sorted, ", ")
}
