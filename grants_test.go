package skillhost_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
)

// writePackFiles makes a pack folder from a manifest and fixtures, by the
// name each gets in the pack.
func writePackFiles(t *testing.T, manifest string, fixtures map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for as, fixture := range fixtures {
		wasm, err := os.ReadFile(filepath.Join("testdata", "guests", fixture))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, as), wasm, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "pack.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// callerPack calls other tools through call_tool; its request is the
// manifest's request.tools line.
func callerPack(t *testing.T, requestTools string) string {
	return writePackFiles(t, `name: caller
modules:
  - name: m
    path: m.wasm
    request:
      tools: `+requestTools+`
      services: [mail.send]
      env: [API_KEY]
    tools: [{name: call_tool}]
`, map[string]string{"m.wasm": "go/gocaps/gocaps.wasm"})
}

// secretsPack holds a mounted secret its read_file tool can read, and a
// getenv tool that asks for the API_KEY variable.
const secretsPack = `name: secrets
modules:
  - name: m
    path: m.wasm
    request:
      mounts: [{guest: /data, read_only: true}]
      env: [API_KEY]
    tools: [{name: read_file}, {name: getenv}]
`

// nested calls name with args through the caller's call_tool and returns
// the tool result the caller got back.
func nested(t *testing.T, e *skillhost.Engine, name, args string) abi.ToolResult {
	t.Helper()
	res, err := e.Call(context.Background(), "call_tool", json.RawMessage(`{"name":"`+name+`","args":`+args+`}`), nil)
	if err != nil || res.IsError {
		t.Fatalf("call_tool %s: %+v, %v", name, res, err)
	}
	var got abi.ToolResult
	if err := json.Unmarshal(res.Output, &got); err != nil {
		t.Fatalf("tool result %s: %v", res.Output, err)
	}
	return got
}

// A module calls only the tools the operator's section lists: a request
// alone grants nothing, and a request "*" is expanded only against the
// operator's list.
func TestToolCompositionDenyByDefault(t *testing.T) {
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "secret.txt"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	secrets := writePack(t, secretsPack, "go/gocaps/gocaps.wasm", "m.wasm")
	secretsSection := "[packs.secrets]\nmounts = [{host = \"" + data + "\", guest = \"/data\", read_only = true}]\n"
	readSecret := `{"arg":"/data/secret.txt"}`
	denied := abi.ToolResult{IsError: true, Error: &abi.Error{Code: abi.CodePermissionDenied, Message: `tool "read_file" is not among the tools this module may call`}}
	granted := abi.ToolResult{Output: json.RawMessage(`"s3cret"`)}

	for _, tt := range []struct {
		name, request, section string
		tools                  []string
		want                   abi.ToolResult
	}{
		{"a section granting only a timeout", "[read_file]", "limits = {timeout = \"20s\"}", nil, denied},
		{"no section", "[read_file]", "", nil, denied},
		{"the tool granted", "[read_file]", "tools = [\"read_file\"]", []string{"read_file"}, granted},
		{"another tool granted", "[read_file, getenv]", "tools = [\"getenv\"]", []string{"getenv"}, denied},
		{"a request * with no operator tools", "[\"*\"]", "limits = {timeout = \"20s\"}", nil, denied},
		{"a request * under an operator list", "[\"*\"]", "tools = [\"read_file\"]", []string{"read_file"}, granted},
		{"an operator * under a request list", "[read_file, getenv]", "tools = [\"*\"]", []string{"read_file", "getenv"}, granted},
		{"* on both sides", "[\"*\"]", "tools = [\"*\"]", []string{"*"}, granted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			toml := secretsSection
			if tt.section != "" {
				toml += "[packs.caller]\n" + tt.section + "\n"
			}
			e := open(t, skillhost.Config{PackDirs: []string{secrets, callerPack(t, tt.request)}, NoBundled: true, Operator: operator(t, toml)})
			tool, err := e.Tool("call_tool")
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.tools, tool.Effective.Tools); d != "" {
				t.Errorf("effective tools (-want +got)\n%s", d)
			}
			// Services follow the same rule: the request asks for
			// mail.send, no section grants it.
			if len(tool.Effective.Capabilities) != 0 {
				t.Errorf("effective services = %v; want none", tool.Effective.Capabilities)
			}
			if d := cmp.Diff(tt.want, nested(t, e, "read_file", readSecret)); d != "" {
				t.Errorf("reading the secret through read_file (-want +got)\n%s", d)
			}
		})
	}

	// Services are granted by the operator's list only, "*" in the
	// request included.
	e := open(t, skillhost.Config{PackDirs: []string{secrets, callerPack(t, "[]")}, NoBundled: true,
		Operator: operator(t, secretsSection+"[packs.caller]\nservices = [\"mail.send\", \"sms.send\"]\n")})
	if tool, _ := e.Tool("call_tool"); !cmp.Equal(tool.Effective.Capabilities, []string{"mail.send"}) {
		t.Errorf("services requested [mail.send], granted [mail.send sms.send]: effective %v", tool.Effective.Capabilities)
	}
}

// A called tool runs under its own pack's grant, not its caller's, and
// under the caller's deadline.
func TestToolCallRunsWithCalleesGrant(t *testing.T) {
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "secret.txt"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	secrets := writePack(t, secretsPack, "go/gocaps/gocaps.wasm", "m.wasm")
	slow := writePack(t, "name: slow\nmodules:\n  - name: m\n    path: m.wasm\n    tools: [{name: spin}]\n", "wat/loop.wasm", "m.wasm")
	e := open(t, skillhost.Config{PackDirs: []string{secrets, slow, callerPack(t, "[\"*\"]")}, NoBundled: true, Operator: operator(t, `
[packs.secrets]
mounts = [{host = "`+data+`", guest = "/data", read_only = true}]

[packs.caller]
tools = ["read_file", "getenv", "spin"]
env = {API_KEY = "the-caller's-key"}
limits = {timeout = "2s"}
`)})
	// The caller has no mount, yet reads the secret through read_file,
	// which runs with the secrets pack's mount.
	if got := nested(t, e, "read_file", `{"arg":"/data/secret.txt"}`); string(got.Output) != `"s3cret"` {
		t.Errorf("read_file through the caller = %+v; want the callee's mount read", got)
	}
	// The callee does not get the caller's env value.
	var env string
	if got := nested(t, e, "getenv", `{"arg":"API_KEY"}`); json.Unmarshal(got.Output, &env) != nil || env != "<unset>" {
		t.Errorf("getenv through the caller = %s %+v; want API_KEY unset in the callee", got.Output, got.Error)
	}
	// The callee's own timeout is the 30 s default; the caller's 2 s
	// deadline ends it.
	if spin, _ := e.Tool("spin"); spin.Effective.Limits.Timeout != host.DefaultTimeout {
		t.Fatalf("spin timeout = %v; want the default %v", spin.Effective.Limits.Timeout, host.DefaultTimeout)
	}
	start := time.Now()
	res, err := e.Call(context.Background(), "call_tool", json.RawMessage(`{"name":"spin","args":{}}`), nil)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the nested spin ran %v: the caller's deadline did not bound it", took)
	}
	if err != nil {
		t.Fatal(err)
	}
	// The caller is stopped at its deadline too: a result it produces
	// after its deadline does not count.
	if !res.IsError || res.Error.Code != abi.CodeTimeout {
		t.Errorf("call_tool spin = %s %+v; want the caller timed out", res.Output, res.Error)
	}
}

// heavyPack asks for limits far above the built-in defaults: a year's
// timeout and 1 GiB of memory; its small module asks for 1 MiB.
const heavyPack = `name: heavy
modules:
  - name: spin
    path: loop.wasm
    limits: {timeout: 87600h, max_memory: 1GiB}
    tools: [{name: spin}]
  - name: grow
    path: membomb.wasm
    limits: {timeout: 87600h, max_memory: 1GiB}
    tools: [{name: grow}]
  - name: small
    path: membomb.wasm
    limits: {max_memory: 1MiB}
    tools: [{name: grow_small, export: grow}]
`

// A pack's limits are held to the operator's ceilings: the section's
// limits, else the [limits] defaults, else the built-in defaults. A pack
// can lower a limit, never raise it.
func TestPackLimitsCapped(t *testing.T) {
	pack := writePackFiles(t, heavyPack, map[string]string{"loop.wasm": "wat/loop.wasm", "membomb.wasm": "wat/membomb.wasm"})
	ctx := context.Background()
	pages := func(e *skillhost.Engine, tool string) string {
		t.Helper()
		res, err := e.Call(ctx, tool, nil, nil)
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v, %v", tool, res, err)
		}
		return string(res.Output)
	}
	limits := func(e *skillhost.Engine, tool string) (host.Limits, map[string]skillhost.Origin) {
		t.Helper()
		tl, err := e.Tool(tool)
		if err != nil {
			t.Fatal(err)
		}
		return tl.Effective.Limits, tl.LimitFrom
	}

	// No operator section: the built-in defaults.
	e := open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t, "")})
	l, from := limits(e, "grow")
	if l.Timeout != host.DefaultTimeout || l.MaxMemoryBytes != host.DefaultMaxMemoryBytes {
		t.Errorf("grow limits = %+v; want the built-in defaults", l)
	}
	if from["timeout"] != skillhost.OriginDefault || from["max_memory_bytes"] != skillhost.OriginDefault {
		t.Errorf("grow limit sources = %v; want default", from)
	}
	if got := pages(e, "grow"); got != "4096" { // 256 MiB of 64 KiB pages
		t.Errorf("grow reached %s pages; want 4096 (256 MiB)", got)
	}
	if l, from := limits(e, "grow_small"); l.MaxMemoryBytes != 1<<20 || from["max_memory_bytes"] != skillhost.OriginPack {
		t.Errorf("grow_small memory = %d from %s; want the pack's 1 MiB", l.MaxMemoryBytes, from["max_memory_bytes"])
	}
	if got := pages(e, "grow_small"); got != "16" {
		t.Errorf("grow_small reached %s pages; want 16 (1 MiB)", got)
	}

	// The operator's default holds the pack's year-long timeout to 300 ms.
	e = open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t, "[limits]\ntimeout = \"300ms\"\n")})
	if l, from := limits(e, "spin"); l.Timeout != 300*time.Millisecond || from["timeout"] != skillhost.OriginOperatorDefault {
		t.Errorf("spin timeout = %v from %s; want the operator default 300ms", l.Timeout, from["timeout"])
	}
	start := time.Now()
	res, err := e.Call(ctx, "spin", nil, nil)
	if err != nil || !res.IsError || res.Error.Code != abi.CodeTimeout || time.Since(start) > 10*time.Second {
		t.Errorf("spin = %+v, %v after %v; want a timeout at 300ms", res, err, time.Since(start))
	}

	// A section raising the ceilings above the defaults: the pack gets
	// the smaller of its request and the section.
	e = open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t,
		"[limits]\nmax_output = \"2MiB\"\n[packs.heavy]\nlimits = {timeout = \"1h\", max_memory = \"512MiB\"}\n")})
	l, from = limits(e, "grow")
	want := host.NewConfig().Resolve(host.Limits{Timeout: time.Hour, MaxMemoryBytes: 512 << 20, MaxOutputBytes: 2 << 20})
	if d := cmp.Diff(want, l); d != "" {
		t.Errorf("grow limits (-want +got)\n%s", d)
	}
	for name, want := range map[string]skillhost.Origin{
		"timeout": skillhost.OriginOperator, "max_memory_bytes": skillhost.OriginOperator,
		"max_output_bytes": skillhost.OriginOperatorDefault, "max_log_bytes": skillhost.OriginDefault, "max_fuel": skillhost.OriginDefault,
	} {
		if from[name] != want {
			t.Errorf("%s from %q; want %q", name, from[name], want)
		}
	}
	if got := pages(e, "grow"); got != "8192" { // 512 MiB
		t.Errorf("grow reached %s pages; want 8192 (512 MiB)", got)
	}
	if l, from := limits(e, "grow_small"); l.MaxMemoryBytes != 1<<20 || l.Timeout != time.Hour || from["max_memory_bytes"] != skillhost.OriginPack {
		t.Errorf("grow_small = %+v from %v; want the pack's 1 MiB and the section's 1h", l, from)
	}

	// An embedder's default limits are operator defaults too, and win
	// over the file's.
	e = open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t, "[limits]\ntimeout = \"300ms\"\n"),
		DefaultLimits: host.Limits{Timeout: 2 * time.Second}})
	if l, from := limits(e, "spin"); l.Timeout != 2*time.Second || from["timeout"] != skillhost.OriginOperatorDefault {
		t.Errorf("spin timeout = %v from %s; want Config.DefaultLimits' 2s", l.Timeout, from["timeout"])
	}
}

// The bundled pack keeps working when the operator says nothing about it:
// it requests no tools or services and is granted none.
func TestBundledWithoutSection(t *testing.T) {
	e := open(t, skillhost.Config{})
	for _, tool := range e.Tools() {
		if tool.Pack != "core" {
			continue
		}
		if len(tool.Requested.Tools)+len(tool.Requested.Capabilities) > 0 {
			t.Errorf("bundled %s requests tools %v, services %v: grant them in docs/config.md's default", tool.Name, tool.Requested.Tools, tool.Requested.Capabilities)
		}
		if tool.GrantFrom != skillhost.GrantFromNone || len(tool.Effective.Tools) > 0 || len(tool.Effective.Mounts) > 0 || len(tool.Effective.AllowedHosts) > 0 {
			t.Errorf("bundled %s without a section: %s grant %+v", tool.Name, tool.GrantFrom, tool.Effective)
		}
		if tool.Effective.Limits.Timeout == 0 || tool.Effective.Limits.Timeout > host.DefaultTimeout {
			t.Errorf("bundled %s timeout %v", tool.Name, tool.Effective.Limits.Timeout)
		}
	}
	res, err := e.Call(context.Background(), "word_count", json.RawMessage(`{"text":"one two"}`), nil)
	if err != nil || res.IsError || !strings.Contains(string(res.Output), `"words":2`) {
		t.Errorf("word_count = %+v, %v", res, err)
	}
}
