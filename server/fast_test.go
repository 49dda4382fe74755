package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// statelessPost sends one 2026-07-28 request with the given headers
// changed ("" deletes one) and returns the status, content type and body.
func statelessPost(t *testing.T, f *fixture, key, body string, headers map[string]string) (int, string, string) {
	t.Helper()
	req := statelessCall(f, key, "slugify", strings.NewReader(body))
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// statelessCall is a 2026-07-28 tools/call request of tool with the
// headers the revision asks for.
func statelessCall(f *fixture, key, tool string, body io.Reader) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, f.url, body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("MCP-Protocol-Version", stateless)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	return req
}

// The direct path answers only the plainest stateless call; a request it
// does not take is answered by the SDK as the protocol says: a header
// that disagrees with the body is refused, and a call asking for progress
// is answered on an event stream.
func TestFastPathLeavesTheRestToTheSDK(t *testing.T) {
	f := newFixture(t, twoTenants)
	meta := func(extra string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}` + extra + `}`
	}
	call := func(extraMeta string) string {
		return `{"jsonrpc":"2.0","id":"q1","method":"tools/call","params":{"name":"slugify","arguments":{"text":"A B"},` + meta(extraMeta) + `}}`
	}
	status, ct, body := statelessPost(t, f, keyA, call(""), nil)
	if status != 200 || !strings.HasPrefix(ct, "application/json") || !strings.Contains(body, `"id":"q1"`) || !strings.Contains(body, `a-b`) || !strings.Contains(body, "io.modelcontextprotocol/serverInfo") {
		t.Errorf("plain call: %d %s %s", status, ct, body)
	}
	status, _, body = statelessPost(t, f, keyA, call(""), map[string]string{"Mcp-Name": "word_count"})
	if status == 200 && strings.Contains(body, "a-b") {
		t.Errorf("a Mcp-Name that disagrees with the body was served: %d %s", status, body)
	}
	status, ct, body = statelessPost(t, f, keyA, call(`,"progressToken":"p1"`), nil)
	if status != 200 || !strings.HasPrefix(ct, "text/event-stream") || !strings.Contains(body, "a-b") {
		t.Errorf("a call with a progress token: %d %s %s", status, ct, body)
	}
	// Another tenant's tool is not served directly either: the SDK says
	// it is unknown.
	status, _, body = statelessPost(t, f, keyB, call(""), nil)
	if strings.Contains(body, "a-b") || !strings.Contains(body, `unknown tool`) {
		t.Errorf("tenant b calling slugify: %d %s", status, body)
	}
}
