package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/server/serveconf"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts")

// confKey is the key of the transcripts' tenant.
const confKey = "conformance-key"

// conformanceTenant limits its tenant to a few tools so that the
// transcripts show the protocol, not the whole bundled pack.
var conformanceTenant = `
[server]
shared_packs = ["core", "secret"]

[tenants.t]
api_keys = ["` + serveconf.HashKey(confKey) + `"]
tools = ["slugify", "secret_echo", "tool_search"]
`

// step is one HTTP exchange of a transcript.
type step struct {
	note    string
	headers map[string]string
	body    string
}

// transcript runs steps against the fixture and writes what was sent and
// what came back, bodies as indented JSON with sorted keys, session ids
// and other values that change from run to run replaced.
func transcript(t *testing.T, f *fixture, key string, steps []step) string {
	t.Helper()
	var out strings.Builder
	session := ""
	for _, s := range steps {
		req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(s.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+key)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		for k, v := range s.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			session = id
		}
		fmt.Fprintf(&out, "## %s\n--> %s\n<-- %d %s\n", s.note, canonical(t, []byte(s.body)), resp.StatusCode, baseType(resp.Header.Get("Content-Type")))
		for _, msg := range messages(body, resp.Header.Get("Content-Type")) {
			fmt.Fprintf(&out, "%s\n", canonical(t, msg))
		}
		out.WriteString("\n")
	}
	return out.String()
}

func baseType(ct string) string {
	b, _, _ := strings.Cut(ct, ";")
	return strings.TrimSpace(b)
}

// messages splits a response body into its JSON-RPC messages: the data
// lines of an event stream, or the JSON body.
func messages(body []byte, contentType string) [][]byte {
	if baseType(contentType) != "text/event-stream" {
		if len(bytes.TrimSpace(body)) == 0 {
			return nil
		}
		return [][]byte{body}
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, []byte(data))
		}
	}
	return out
}

// canonical indents JSON with sorted keys; anything else is kept as text.
func canonical(t *testing.T, b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return strings.TrimSpace(string(b))
	}
	scrub(v)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String())
}

// scrub replaces values that differ between runs.
func scrub(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch k {
			case "version":
				if _, ok := val.(string); ok {
					x[k] = "<version>"
				}
			default:
				scrub(val)
			}
		}
	case []any:
		for _, e := range x {
			scrub(e)
		}
	}
}

// The 2025-11-25 revision: initialize, a session, tools/list, a call, a
// tool error, a deferred tool activated by its first call, an unknown
// tool.
func TestConformanceStateful(t *testing.T) {
	f := newFixture(t, conformanceTenant)
	key := confKey
	got := transcript(t, f, key, []step{
		{note: "initialize", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"conformance","version":"1"}}}`},
		{note: "initialized", headers: map[string]string{"MCP-Protocol-Version": stateful}, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{note: "tools/list shows the visible catalog", headers: map[string]string{"MCP-Protocol-Version": stateful}, body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
		{note: "a call", headers: map[string]string{"MCP-Protocol-Version": stateful}, body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slugify","arguments":{"text":"Hello, World!"}}}`},
		{note: "a tool error is a result with isError", headers: map[string]string{"MCP-Protocol-Version": stateful}, body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slugify","arguments":{"text":5}}}`},
		{note: "a deferred tool's first call activates it", headers: map[string]string{"MCP-Protocol-Version": stateful}, body: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"secret_echo","arguments":{"text":"hi"}}}`},
		{note: "tools/list now shows it", headers: map[string]string{"MCP-Protocol-Version": stateful}, body: `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`},
		{note: "an unknown tool is a protocol error", headers: map[string]string{"MCP-Protocol-Version": stateful}, body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`},
	})
	testenv.Golden(t, filepath.Join("testdata", "conformance", "stateful.txt"), []byte(got), *update)
}

// The 2026-07-28 revision: no session, every request carries its
// protocol version; a deferred tool is found with tool_search and called
// in a later request.
func TestConformanceStateless(t *testing.T) {
	f := newFixture(t, conformanceTenant)
	key := confKey
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"conformance","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	h := func(method, name string) map[string]string {
		m := map[string]string{"MCP-Protocol-Version": stateless, "Mcp-Method": method}
		if name != "" {
			m["Mcp-Name"] = name
		}
		return m
	}
	got := transcript(t, f, key, []step{
		{note: "server/discover", headers: h("server/discover", ""), body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`},
		{note: "tools/list, cached privately", headers: h("tools/list", ""), body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`},
		{note: "a call", headers: h("tools/call", "slugify"), body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slugify","arguments":{"text":"Hello, World!"},` + meta + `}}`},
		{note: "tool_search finds a deferred tool", headers: h("tools/call", "tool_search"), body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"tool_search","arguments":{"query":"secret_echo","search_type":"exact"},` + meta + `}}`},
		{note: "its first call, in a later request, runs it", headers: h("tools/call", "secret_echo"), body: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"secret_echo","arguments":{"text":"hi"},` + meta + `}}`},
		{note: "an unknown tool is a protocol error", headers: h("tools/call", "nope"), body: `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{},` + meta + `}}`},
	})
	testenv.Golden(t, filepath.Join("testdata", "conformance", "stateless.txt"), []byte(got), *update)
}
