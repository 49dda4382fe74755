package server_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/server"
)

// A Go tool whose name no model API carries is listed over MCP under its
// API name, and a tools/call by that name runs it; tools/list holds only
// names the strictest API rule allows.
func TestMappedToolNamesOverMCP(t *testing.T) {
	ctx := context.Background()
	type in struct {
		City string `json:"city"`
	}
	weather, err := registry.Func("weather.get", func(ctx context.Context, a in) (string, error) {
		return "sunny in " + a.City, nil
	}, &registry.FuncOptions{Description: "Current weather of a city.", Loading: packs.LoadingAlways})
	if err != nil {
		t.Fatal(err)
	}
	e, err := skillhost.Open(ctx, skillhost.Config{StateDir: testenv.StateDir(), IndexPath: filepath.Join(t.TempDir(), "index.db"),
		NoUserSources: true, NoBundled: true, Tools: []skillhost.Native{weather}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	srv, err := server.New(e, &server.Options{Version: "test", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	c := mcp.NewClient(&mcp.Implementation{Name: "skillhost-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + server.MCPPath, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	mapped := packs.APIToolName("weather.get")
	names := toolNames(t, cs)
	rule := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`) // OpenAI Chat Completions' function names
	for _, n := range names {
		if !rule.MatchString(n) {
			t.Errorf("tools/list has %q", n)
		}
	}
	if !slices.Contains(names, mapped) {
		t.Fatalf("tools/list %v; want %s", names, mapped)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mapped, Arguments: map[string]any{"city": "Porto"}})
	if err != nil || res.IsError || !strings.Contains(text(res), "sunny in Porto") {
		t.Fatalf("tools/call %s: %+v, %v", mapped, res, err)
	}
}
