package registry_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// apiNameRE is the strictest rule of the model APIs, OpenAI Chat
// Completions': "Must be a-z, A-Z, 0-9, or contain underscores and
// dashes, with a maximum length of 64" (openai-go v3,
// shared.FunctionDefinitionParam.Name). Anthropic and OpenAI Responses
// allow the same characters up to 128.
var apiNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// namedNative is a native tool that answers with its own name.
type namedNative struct{ name, loading string }

func (n namedNative) Describe() packs.ToolSpec {
	return packs.ToolSpec{Name: n.name, Description: "Answers with its name.", Loading: n.loading,
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
}

func (n namedNative) Execute(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.Marshal(map[string]string{"tool": n.name})
}

// A name a model API cannot carry is registered under a rendered name
// that every API carries, and a call by either name reaches the tool; a
// name no API could carry even mapped is refused, naming the tool and the
// rule.
func TestToolNamesAreMappedOrRefused(t *testing.T) {
	long70, long130 := strings.Repeat("n", 70), strings.Repeat("n", 130)
	for _, c := range []struct {
		name    string
		refused bool
	}{
		{name: "plain_name"},
		{name: "weather.get"},
		{name: "Get Weather"},
		{name: long70},
		{name: "météo/aujourd'hui"},
		{name: long130, refused: true},
		{name: "new\nline", refused: true},
		{name: "bidi\u202ename", refused: true},
		{name: " padded", refused: true},
		{name: "bad\xffutf8", refused: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			reg, err := registry.New(context.Background(), nil, registry.Options{
				Natives: []registry.Native{namedNative{c.name, packs.LoadingDeferred}}})
			if c.refused {
				var ne *packs.ToolNameError
				if !errors.Is(err, registry.ErrInvalidTool) || !errors.Is(err, packs.ErrToolName) || !errors.As(err, &ne) ||
					ne.Name != c.name || !strings.Contains(err.Error(), packs.APINameRule) {
					t.Fatalf("New: %v; want ErrInvalidTool and a *packs.ToolNameError naming the tool and the rule", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tl, ok := reg.Tool(c.name)
			if !ok {
				t.Fatalf("%q is not registered", c.name)
			}
			if !apiNameRE.MatchString(tl.APIName) || (apiNameRE.MatchString(c.name) != (tl.APIName == c.name)) {
				t.Errorf("API name %q of %q", tl.APIName, c.name)
			}
			if byAPI, ok := reg.Tool(tl.APIName); !ok || byAPI != tl {
				t.Errorf("Tool(%q) does not find %q", tl.APIName, c.name)
			}
			// Every rendering shows the API name, and a call by it reaches
			// the tool (activating it, as a call by its name would).
			for _, got := range renderedNames(t, []*registry.Tool{tl}) {
				if got != tl.APIName {
					t.Errorf("a rendering shows %q, want %q", got, tl.APIName)
				}
			}
			run, err := reg.NewRun(registry.RunContext{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !run.Reachable(tl.APIName) || run.Visible(tl.APIName) {
				t.Errorf("before a call: reachable %v, visible %v", run.Reachable(tl.APIName), run.Visible(tl.APIName))
			}
			for _, name := range []string{tl.APIName, c.name} {
				res, err := run.Call(context.Background(), name, nil, nil)
				if err != nil || res.IsError {
					t.Fatalf("Call(%q): %+v, %v", name, res, err)
				}
				var out struct{ Tool string }
				if json.Unmarshal(res.Output, &out); out.Tool != c.name {
					t.Errorf("Call(%q) ran %q", name, out.Tool)
				}
			}
			if !run.Visible(c.name) || !run.Visible(tl.APIName) {
				t.Errorf("the call did not activate the tool")
			}
		})
	}
}

// renderedNames returns the names every rendering gives tools.
func renderedNames(t *testing.T, tools []*registry.Tool) []string {
	t.Helper()
	var names []string
	for _, ot := range registry.OpenAITools(tools, registry.RenderOptions{}) {
		names = append(names, ot.Function.Name)
	}
	r, err := registry.OpenAIResponsesTools(tools, nil, "", registry.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ot := range flatResponses(r) {
		names = append(names, ot.Name)
	}
	a, err := registry.AnthropicTools(tools, nil, "", registry.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range a {
		names = append(names, at.Name)
	}
	for _, mt := range registry.MCPTools(tools, registry.RenderOptions{}) {
		names = append(names, mt.Name)
	}
	for _, ref := range registry.ToolReferences(tools) {
		names = append(names, ref.ToolName)
	}
	return names
}

// A tool whose rendered name is another tool's name, in either order of
// registration, is refused as a duplicate naming both.
func TestMappedNameCollisions(t *testing.T) {
	mapped := packs.APIToolName("weather.get")
	for _, order := range [][]string{{"weather.get", mapped}, {mapped, "weather.get"}} {
		_, err := registry.New(context.Background(), nil, registry.Options{Natives: []registry.Native{
			namedNative{order[0], packs.LoadingAlways}, namedNative{order[1], packs.LoadingAlways}}})
		if !errors.Is(err, registry.ErrDuplicateTool) || !strings.Contains(err.Error(), `"weather.get"`) || !strings.Contains(err.Error(), mapped) {
			t.Errorf("registering %q then %q: %v; want ErrDuplicateTool naming both", order[0], order[1], err)
		}
	}
	// Two names that map alike but for the hash are two tools.
	reg, err := registry.New(context.Background(), nil, registry.Options{Natives: []registry.Native{
		namedNative{"a.b", packs.LoadingAlways}, namedNative{"a b", packs.LoadingAlways}, namedNative{"a_b", packs.LoadingAlways}}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tl := range reg.Tools() {
		if seen[tl.APIName] {
			t.Errorf("API name %q given twice", tl.APIName)
		}
		seen[tl.APIName] = true
	}
}

// tool_search names a tool as the renderings show it, so the model calls
// it by a name it was given; an exact search by that name finds it too.
func TestToolSearchAnswersWithAPINames(t *testing.T) {
	ctx := context.Background()
	idx, err := index.Open(ctx, filepath.Join(t.TempDir(), "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	reg, err := registry.New(ctx, nil, registry.Options{
		Natives:  []registry.Native{namedNative{"weather.get", packs.LoadingDeferred}},
		Builtins: registry.Builtins(registry.BuiltinOptions{Index: idx}),
	})
	if err != nil {
		t.Fatal(err)
	}
	var tools []index.ToolRecord
	for _, tl := range reg.Tools() {
		tools = append(tools, index.ToolRecord{Name: tl.Name, Description: tl.Description, LoadingMode: tl.Loading})
	}
	if _, err := idx.SyncTools(ctx, tools); err != nil {
		t.Fatal(err)
	}
	run, err := reg.NewRun(registry.RunContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mapped := packs.APIToolName("weather.get")
	for _, args := range []string{`{"query":"answers with its name"}`, `{"query":"` + mapped + `","search_type":"exact"}`} {
		res, err := run.Call(ctx, registry.ToolSearchName, json.RawMessage(args), nil)
		if err != nil || res.IsError {
			t.Fatalf("tool_search %s: %+v, %v", args, res, err)
		}
		found := registry.FoundTools(reg, res.Output)
		if !strings.Contains(string(res.Output), `"name":"`+mapped+`"`) || len(found) != 1 || found[0].Name != "weather.get" {
			t.Errorf("tool_search %s answered %s; want %s named as rendered", args, res.Output, mapped)
		}
	}
}

// A tool whose icon is an image file of its pack is shown to MCP clients
// with the file inline; a file that is not the image its name says is a
// problem, and the tool is registered without an icon.
func TestPackIconFiles(t *testing.T) {
	manifest := "name: iconic\ndescription: Tools with icons.\nmodules:\n  - name: m\n    path: m.wasm\n    tools:\n" +
		"      - {name: good, description: Has an icon., icon: icons/good.png, input_schema: {type: object}}\n" +
		"      - {name: fake, description: Has a fake icon., icon: icons/fake.png, input_schema: {type: object}}\n"
	dir := writeModulePack(t, manifest, "testdata/guests/wat/echo.wasm")
	png := "\x89PNG\r\n\x1a\n" + "pixels"
	if err := os.MkdirAll(filepath.Join(dir, "icons"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "icons", "good.png"), []byte(png), 0o644)
	os.WriteFile(filepath.Join(dir, "icons", "fake.png"), []byte("<svg onload=alert(1)>"), 0o644)
	reg, err := registry.New(context.Background(), catalog(t, dir), registry.Options{Host: newHost(t)})
	if err != nil {
		t.Fatal(err)
	}
	if p := reg.Problems(); len(p) != 1 || !errors.Is(p[0], packs.ErrIcon) || !strings.Contains(p[0].Error(), `tool "fake"`) {
		t.Errorf("problems %v; want the fake icon of tool fake", p)
	}
	mt := registry.MCPTools(reg.Tools(), registry.RenderOptions{})
	if len(mt) != 2 {
		t.Fatalf("rendered %d tools, want 2", len(mt))
	}
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte(png))
	for _, tool := range mt {
		switch tool.Name {
		case "good":
			if len(tool.Icons) != 1 || tool.Icons[0].Src != want || tool.Icons[0].MIMEType != "image/png" {
				t.Errorf("good: icons %+v", tool.Icons)
			}
		case "fake":
			if len(tool.Icons) != 0 {
				t.Errorf("fake: icons %+v, want none", tool.Icons)
			}
		}
	}
}
