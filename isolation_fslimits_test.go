package skillhost_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/host"
)

// fsPack has a module that asks for less than the defaults on the mount
// limits and one that asks for more.
const fsPack = `name: fs
modules:
  - name: small
    path: echo.wasm
    limits: {max_write: 1MiB, max_open_files: 8}
    tools: [{name: echo_small, export: echo}]
  - name: big
    path: echo.wasm
    limits: {max_write: 1GiB, max_open_files: 1000}
    tools: [{name: echo_big, export: echo}]
`

// max_write and max_open_files are held to the operator's ceilings like
// every other limit: a pack can lower them, never raise them.
func TestFilesystemLimitsCapped(t *testing.T) {
	pack := writePackFiles(t, fsPack, map[string]string{"echo.wasm": "wat/echo.wasm"})
	limits := func(e *skillhost.Engine, tool string) (host.Limits, map[string]skillhost.Origin) {
		t.Helper()
		tl, err := e.Tool(tool)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tl.Effective, host.Intersect(tl.Requested, tl.Operator)); d != "" {
			t.Errorf("%s: Effective is not Intersect(Requested, Operator) (-effective +intersect)\n%s", tool, d)
		}
		return tl.Effective.Limits, tl.LimitFrom
	}
	type want struct {
		write, open         int64
		writeFrom, openFrom skillhost.Origin
	}
	check := func(e *skillhost.Engine, tool string, w want) {
		t.Helper()
		l, from := limits(e, tool)
		got := want{l.MaxWriteBytes, l.MaxOpenFiles, from["max_write_bytes"], from["max_open_files"]}
		if got != w {
			t.Errorf("%s: write quota, open files = %+v; want %+v", tool, got, w)
		}
	}

	// No operator values: the pack lowers the defaults, and cannot raise them.
	e := open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t, "")})
	check(e, "echo_small", want{1 << 20, 8, skillhost.OriginPack, skillhost.OriginPack})
	check(e, "echo_big", want{host.DefaultMaxWriteBytes, host.DefaultMaxOpenFiles, skillhost.OriginDefault, skillhost.OriginDefault})

	// [limits] and the pack's section set ceilings, above the defaults too.
	e = open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t,
		"[limits]\nmax_write = \"128MiB\"\nmax_open_files = 4\n[packs.fs]\nlimits = {max_open_files = 100}\n")})
	check(e, "echo_small", want{1 << 20, 8, skillhost.OriginPack, skillhost.OriginPack})
	check(e, "echo_big", want{128 << 20, 100, skillhost.OriginOperatorDefault, skillhost.OriginOperator})

	// An embedder's default limits are operator defaults too.
	e = open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t, "[limits]\nmax_open_files = 4\n"),
		DefaultLimits: host.Limits{MaxWriteBytes: 2 << 20, MaxOpenFiles: 2}})
	check(e, "echo_small", want{1 << 20, 2, skillhost.OriginPack, skillhost.OriginOperatorDefault})
	check(e, "echo_big", want{2 << 20, 2, skillhost.OriginOperatorDefault, skillhost.OriginOperatorDefault})
}

// A pack's isolation is its section's, else the [sandbox] default, else
// the host's default (in-process); it reaches the operator's grant and so
// the effective one. A Config.Grants entry that does not say gets the
// [sandbox] default too.
func TestPackIsolation(t *testing.T) {
	pack := writePackFiles(t, fsPack, map[string]string{"echo.wasm": "wat/echo.wasm"})
	tests := []struct {
		name   string
		toml   string
		grants map[string]skillhost.Grant
		op     host.Isolation // the operator's grant and the effective one
		iso    host.Isolation // Tool.Isolation
		from   skillhost.Origin
	}{
		{"nothing", "", nil, host.IsolationDefault, host.IsolationInProcess, skillhost.OriginDefault},
		{"sandbox", "[sandbox]\nisolation = \"process\"\n", nil, host.IsolationProcess, host.IsolationProcess, skillhost.OriginOperatorDefault},
		{"sandbox in-process", "[sandbox]\nisolation = \"in-process\"\n", nil, host.IsolationInProcess, host.IsolationInProcess, skillhost.OriginOperatorDefault},
		{"section", "[packs.fs]\nisolation = \"process\"\n", nil, host.IsolationProcess, host.IsolationProcess, skillhost.OriginOperator},
		{"section over sandbox", "[sandbox]\nisolation = \"process\"\n[packs.fs]\nisolation = \"in-process\"\n", nil,
			host.IsolationInProcess, host.IsolationInProcess, skillhost.OriginOperator},
		{"section without isolation", "[sandbox]\nisolation = \"process\"\n[packs.fs]\nallowed_hosts = [\"api.example.com\"]\n", nil,
			host.IsolationProcess, host.IsolationProcess, skillhost.OriginOperatorDefault},
		{"another pack's section", "[packs.other]\nisolation = \"process\"\n", nil, host.IsolationDefault, host.IsolationInProcess, skillhost.OriginDefault},
		{"embedder grant", "[sandbox]\nisolation = \"process\"\n", map[string]skillhost.Grant{"fs": {}},
			host.IsolationProcess, host.IsolationProcess, skillhost.OriginOperatorDefault},
		{"embedder isolation", "[sandbox]\nisolation = \"process\"\n", map[string]skillhost.Grant{"fs": {Isolation: host.IsolationInProcess}},
			host.IsolationInProcess, host.IsolationInProcess, skillhost.OriginOperator},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t, tt.toml), Grants: tt.grants})
			for _, name := range []string{"echo_small", "echo_big"} {
				tl, err := e.Tool(name)
				if err != nil {
					t.Fatal(err)
				}
				if tl.Requested.Isolation != host.IsolationDefault {
					t.Errorf("%s: requested isolation %q; a manifest has none", name, tl.Requested.Isolation)
				}
				if tl.Operator.Isolation != tt.op || tl.Effective.Isolation != tt.op {
					t.Errorf("%s: operator isolation %q, effective %q; want %q", name, tl.Operator.Isolation, tl.Effective.Isolation, tt.op)
				}
				if tl.Isolation != tt.iso || tl.IsolationFrom != tt.from {
					t.Errorf("%s: isolation %q from %q; want %q from %q", name, tl.Isolation, tl.IsolationFrom, tt.iso, tt.from)
				}
			}
		})
	}
}
