package skillhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
)

// stateDir is shared by the tests and examples so modules compile once.
var stateDir = testenv.StateDir()

func ExampleEngine_Call() {
	ctx := context.Background()
	e, err := skillhost.Open(ctx, skillhost.Config{StateDir: stateDir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close(ctx)
	res, err := e.Call(ctx, "slugify", json.RawMessage(`{"text":"Hello, Wörld!"}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(res.Output))
	// Output: {"slug":"hello-world"}
}

func open(t *testing.T, cfg skillhost.Config) *skillhost.Engine {
	t.Helper()
	if cfg.StateDir == "" {
		cfg.StateDir = stateDir
	}
	if cfg.IndexPath == "" {
		cfg.IndexPath = filepath.Join(t.TempDir(), "index.db")
	}
	cfg.NoUserSources = true
	e, err := skillhost.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p := e.Problems(); len(p) > 0 && !cfg.NoBundled {
		t.Fatalf("problems loading: %v", p)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// writePack makes a pack folder with one module copied from the fixtures.
func writePack(t *testing.T, manifest, fixture, as string) string {
	t.Helper()
	dir := t.TempDir()
	wasm, err := os.ReadFile(filepath.Join("testdata", "guests", fixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, as), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pack.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestEngineCall(t *testing.T) {
	e := open(t, skillhost.Config{})
	ctx := context.Background()
	res, err := e.Call(ctx, "slugify", json.RawMessage(`{"text":"Déjà vu"}`), nil)
	if err != nil || res.IsError || string(res.Output) != `{"slug":"deja-vu"}` {
		t.Errorf("slugify = %+v, %v", res, err)
	}
	res, err = e.Call(ctx, "slugify", json.RawMessage(`{"text":5}`), nil)
	if err != nil || !res.IsError || res.Error.Code != abi.CodeInvalidInput {
		t.Errorf("bad argument type: %+v, %v", res, err)
	}
	if _, err := e.Call(ctx, "nope", nil, nil); !errors.Is(err, skillhost.ErrToolNotFound) {
		t.Errorf("unknown tool: %v", err)
	}
	// Arguments that are not a JSON object are the model's mistake: a
	// tool error it can read, not a Go error.
	for _, args := range []string{`[1]`, `"text"`, `{`} {
		res, err := e.Call(ctx, "slugify", json.RawMessage(args), nil)
		if err != nil || !res.IsError || res.Error.Code != abi.CodeInvalidInput {
			t.Errorf("args %s: %+v, %v", args, res, err)
		}
	}
	names := []string{}
	for _, tool := range e.Tools() {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "slugify") {
		t.Errorf("Tools() = %v", names)
	}
}

const capsPack = `name: caps
modules:
  - name: caps
    path: caps.wasm
    request:
      mounts: [{guest: /data, read_only: true}]
      env: [API_KEY]
      allowed_hosts: ["api.example.com"]
    tools:
      - {name: getenv, requires_filesystem: false}
      - {name: read_file, requires_filesystem: true}
`

func TestEngineGrants(t *testing.T) {
	pack := writePack(t, capsPack, "go/gocaps/gocaps.wasm", "caps.wasm")
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "f.txt"), []byte("granted"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	text := func(res *skillhost.Result) string {
		var s string
		_ = json.Unmarshal(res.Output, &s)
		return s
	}

	// Without an operator grant a workspace pack gets nothing but the
	// default limits.
	defaults := host.NewConfig().Resolve(host.Limits{})
	e := open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true})
	tool, err := e.Tool("read_file")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(skillhost.Grant{Limits: defaults}, tool.Effective); d != "" {
		t.Errorf("ungranted effective grant (-want +got)\n%s", d)
	}
	res, err := e.Call(ctx, "read_file", json.RawMessage(`{"arg":"/data/f.txt"}`), nil)
	if err != nil || !strings.HasPrefix(text(res), "error: ") {
		t.Errorf("ungranted read_file: %+v %v", res, err)
	}
	res, err = e.Call(ctx, "getenv", json.RawMessage(`{"arg":"API_KEY"}`), nil)
	if err != nil || text(res) != "<unset>" {
		t.Errorf("ungranted getenv: %+v %v", res, err)
	}

	// With one, the module gets the intersection.
	e = open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Grants: map[string]skillhost.Grant{
		"caps": {
			Mounts:       []skillhost.Mount{{HostPath: data, GuestPath: "/data"}},
			Env:          map[string]string{"API_KEY": "k-123", "OTHER": "x"},
			AllowedHosts: []string{"*.example.com"},
		},
	}})
	tool, _ = e.Tool("read_file")
	want := skillhost.Grant{
		Mounts:       []skillhost.Mount{{HostPath: data, GuestPath: "/data", ReadOnly: true}},
		Env:          map[string]string{"API_KEY": "k-123"},
		AllowedHosts: []string{"api.example.com"},
		Limits:       defaults,
	}
	if d := cmp.Diff(want, tool.Effective); d != "" {
		t.Errorf("effective grant (-want +got)\n%s", d)
	}
	res, err = e.Call(ctx, "read_file", json.RawMessage(`{"arg":"/data/f.txt"}`), nil)
	if err != nil || text(res) != "granted" {
		t.Errorf("granted read_file: %+v %v", res, err)
	}
	res, err = e.Call(ctx, "getenv", json.RawMessage(`{"arg":"API_KEY"}`), nil)
	if err != nil || text(res) != "k-123" {
		t.Errorf("granted getenv: %+v %v", res, err)
	}
}

func TestEngineDuplicateTools(t *testing.T) {
	a := writePack(t, "name: a\nmodules:\n  - name: m\n    path: m.wasm\n    tools: [{name: echo}]\n", "wat/echo.wasm", "m.wasm")
	b := writePack(t, "name: b\nmodules:\n  - name: m\n    path: m.wasm\n    tools: [{name: echo}]\n", "wat/echo.wasm", "m.wasm")
	e := open(t, skillhost.Config{NoBundled: true, PackDirs: []string{a, b}})
	// The later folder wins, and the override is reported.
	if tool, err := e.Tool("echo"); err != nil || tool.Pack != "b" {
		t.Errorf("echo = %+v, %v; want pack b's", tool, err)
	}
	ov := e.Overrides()
	if len(ov) != 1 || ov[0].Name != "echo" || ov[0].Kind != "tool" {
		t.Errorf("overrides = %v, want echo replaced", ov)
	}
	// Two packs declaring one tool in the same folder are a problem naming both.
	root := t.TempDir()
	for _, d := range []string{a, b} {
		if err := os.CopyFS(filepath.Join(root, filepath.Base(filepath.Dir(d+"/x"))+"-"+filepath.Base(d)), os.DirFS(d)); err != nil {
			t.Fatal(err)
		}
	}
	e = open(t, skillhost.Config{NoBundled: true, PackDirs: []string{root}})
	var found bool
	for _, p := range e.Problems() {
		found = found || errors.Is(p, packs.ErrDuplicateName)
	}
	if !found {
		t.Errorf("problems = %v, want a duplicate name", e.Problems())
	}
}

// A guest's tool_call goes through the engine, and only to granted tools.
func TestEngineToolCall(t *testing.T) {
	pack := writePack(t, "name: caller\nmodules:\n  - name: m\n    path: m.wasm\n    request: {tools: [slugify]}\n    tools: [{name: call_tool}]\n", "go/gocaps/gocaps.wasm", "m.wasm")
	ctx := context.Background()
	args := json.RawMessage(`{"name":"slugify","args":{"text":"Nested Call"}}`)
	for name, tt := range map[string]struct {
		grant skillhost.Grant
		want  abi.ToolResult
	}{
		"granted":     {skillhost.Grant{Tools: []string{"*"}}, abi.ToolResult{Output: json.RawMessage(`{"slug":"nested-call"}`)}},
		"not granted": {skillhost.Grant{}, abi.ToolResult{IsError: true, Error: &abi.Error{Code: abi.CodePermissionDenied, Message: `tool "slugify" is not among the tools this module may call`}}},
	} {
		t.Run(name, func(t *testing.T) {
			e := open(t, skillhost.Config{PackDirs: []string{pack}, Grants: map[string]skillhost.Grant{"caller": tt.grant}})
			res, err := e.Call(ctx, "call_tool", args, nil)
			if err != nil || res.IsError {
				t.Fatalf("call_tool: %+v, %v", res, err)
			}
			var got abi.ToolResult
			if err := json.Unmarshal(res.Output, &got); err != nil {
				t.Fatalf("tool result %s: %v", res.Output, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}
