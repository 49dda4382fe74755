package server

import (
	"encoding/json"
	"testing"
)

// FuzzToolCalls: whatever a client posts, reading the tool calls out of
// it never panics, finds a call only where a message says tools/call,
// and reports the first call's id as it was sent.
func FuzzToolCalls(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slugify","arguments":{"text":"x"}}}`,
		`[{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`[]`, `{}`, `null`, `[1,2`, `{"method":"tools/call","params":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, _ := parseRPC(body)
		names, id := toolCalls(msgs)
		if len(names) == 0 {
			if id != nil {
				t.Fatalf("an id %s without a call", id)
			}
			return
		}
		var one struct {
			Method string `json:"method"`
		}
		var batch []struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &one) == nil && one.Method != "tools/call" && json.Unmarshal(body, &batch) != nil {
			t.Fatalf("calls %q found in a message whose method is %q", names, one.Method)
		}
	})
}
