package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testenv"
)

// everyTool shows every tool from the start: the built-ins, the bundled
// pack's and the fixture's own.
const everyTool = `
[tool_search]
always_loaded_patterns = ["*"]
`

// postMCP sends one JSON-RPC message to f with headers and returns the
// messages of the answer and its session id.
func postMCP(t *testing.T, f *fixture, headers map[string]string, body string) ([][]byte, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s: %s %s", body, resp.Status, data)
	}
	return messages(data, resp.Header.Get("Content-Type")), resp.Header.Get("Mcp-Session-Id")
}

// listToolsAt answers tools/list as the server sends it to a client of
// MCP revision rev: in a session opened with initialize before
// 2026-07-28, in a request of its own from then on.
func listToolsAt(t *testing.T, f *fixture, rev string) json.RawMessage {
	t.Helper()
	var msgs [][]byte
	if rev >= stateless {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + rev + `","io.modelcontextprotocol/clientInfo":{"name":"schema-check","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
		msgs, _ = postMCP(t, f, map[string]string{"MCP-Protocol-Version": rev, "Mcp-Method": "tools/list"},
			`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta+`}}`)
	} else {
		init, session := postMCP(t, f, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+rev+
			`","capabilities":{},"clientInfo":{"name":"schema-check","version":"1"}}}`)
		var ir struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if len(init) != 1 || json.Unmarshal(init[0], &ir) != nil || ir.Result.ProtocolVersion != rev {
			t.Fatalf("initialize at %s: %s", rev, init)
		}
		h := map[string]string{"MCP-Protocol-Version": rev, "Mcp-Session-Id": session}
		postMCP(t, f, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		msgs, _ = postMCP(t, f, h, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if len(msgs) != 1 || json.Unmarshal(msgs[0], &resp) != nil || resp.Result == nil {
		t.Fatalf("tools/list at %s: %s", rev, msgs)
	}
	return resp.Result
}

// What the server sends for tools/list, in every revision it serves, is
// a valid ListToolsResult under that revision's published schema, and
// each tool in it a valid Tool: the built-ins (run_skill_script's output
// schema among them), the bundled pack's tools and a native tool.
func TestListToolsMatchesThePublishedSchemas(t *testing.T) {
	f := newFixture(t, everyTool)
	for _, rev := range testenv.MCPRevisions {
		t.Run(rev, func(t *testing.T) {
			result := listToolsAt(t, f, rev)
			if err := testenv.ValidateMCP(rev, "ListToolsResult", result); err != nil {
				t.Errorf("tools/list result is not a valid %s ListToolsResult: %v", rev, err)
			}
			var list struct {
				Tools []json.RawMessage `json:"tools"`
			}
			if err := json.Unmarshal(result, &list); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				var named struct {
					Name string `json:"name"`
				}
				json.Unmarshal(tool, &named)
				names = append(names, named.Name)
				if err := testenv.ValidateMCP(rev, "Tool", tool); err != nil {
					t.Errorf("tool %s is not a valid %s Tool: %v\n%s", named.Name, rev, err, tool)
				}
			}
			for _, want := range []string{"run_skill_script", "tool_search", "load_skill", "slugify", "secret_echo", "slow_wait"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list at %s has no %s: %v", rev, want, names)
				}
			}
			// One skill tool family: the search family is not listed.
			for _, not := range []string{"skill_search", "skill_get", "skill_list"} {
				if slices.Contains(names, not) {
					t.Errorf("tools/list at %s has %s beside the load family: %v", rev, not, names)
				}
			}
		})
	}
}

// A tool whose output schema is not an object one (slow_wait answers a
// string) has it listed, and its results as structured content, for a
// client of 2026-07-28, which allows any schema; a client of an earlier
// revision gets neither, as its schema requires an object.
func TestOutputSchemasFollowTheRevision(t *testing.T) {
	f := newFixture(t, everyTool)
	schemaOf := func(rev string) json.RawMessage {
		var list struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(listToolsAt(t, f, rev), &list); err != nil {
			t.Fatal(err)
		}
		for _, tool := range list.Tools {
			if tool.Name == "slow_wait" {
				return tool.OutputSchema
			}
		}
		t.Fatalf("no slow_wait at %s", rev)
		return nil
	}
	if s := schemaOf("2025-06-18"); s != nil {
		t.Errorf("2025-06-18 lists slow_wait with output schema %s", s)
	}
	if s := schemaOf(stateless); string(s) != `{"type":"string"}` {
		t.Errorf("2026-07-28 lists slow_wait with output schema %s", s)
	}

	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + stateless + `","io.modelcontextprotocol/clientInfo":{"name":"rev-check","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	msgs, _ := postMCP(t, f, map[string]string{"MCP-Protocol-Version": stateless, "Mcp-Method": "tools/call", "Mcp-Name": "slow_wait"},
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow_wait","arguments":{"seconds":0},`+meta+`}}`)
	var resp struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		} `json:"result"`
	}
	if len(msgs) != 1 || json.Unmarshal(msgs[0], &resp) != nil || resp.Result.IsError || string(resp.Result.StructuredContent) != `"waited"` {
		t.Fatalf("slow_wait at 2026-07-28: %s", msgs)
	}
	if err := testenv.ValidateMCP(stateless, "CallToolResult", mustResult(t, msgs[0])); err != nil {
		t.Errorf("the result is not a valid %s CallToolResult: %v", stateless, err)
	}
}

func mustResult(t *testing.T, msg []byte) json.RawMessage {
	t.Helper()
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(msg, &r); err != nil {
		t.Fatal(err)
	}
	return r.Result
}
