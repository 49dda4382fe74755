package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readSeeds are requests that two decoders could read differently: keys
// in another case, repeated keys, a batch with an element the SDK cannot
// read, params of the wrong type, escapes in keys.
var readSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slugify","arguments":{"text":"x"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"ping","params":{"name":"slugify","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"ping","params":{"name":"slugify"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"slugify"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","Name":"b"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","n\u0061me":"b"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"b","arguments":{"x":1,"x":2}}}`,
	`[{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"x"}]`,
	`[{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a"}} trailing`,
	`[]`, `{}`, `null`, `[1,2`, `{"method":"tools/call","params":"x"}`,
}

// executed is what the MCP SDK ran of one request: the tools/call
// requests its receiving middleware saw.
type executed struct {
	Name string
	Args string
}

// sdkExecutes posts body to a stateless SDK handler speaking 2025-03-26
// (the last revision with batches) and returns the tool calls it ran.
func sdkExecutes(t *testing.T, body []byte) []executed {
	var mu sync.Mutex
	var ran []executed
	srv := mcp.NewServer(&mcp.Implementation{Name: "oracle"}, nil)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				if r, ok := req.(*mcp.CallToolRequest); ok {
					mu.Lock()
					ran = append(ran, executed{r.Params.Name, string(r.Params.Arguments)})
					mu.Unlock()
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
				}
			}
			return next(ctx, method, req)
		}
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-03-26")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if ctx.Err() != nil {
		t.Fatalf("the SDK did not answer %q", body)
	}
	mu.Lock()
	defer mu.Unlock()
	return ran
}

// FuzzOneReading is the differential test of the HTTP layer's reading of
// a request against the SDK's: for whatever a client posts, every tool
// call the SDK runs is one the HTTP layer read, with the same name and
// arguments, and a body the HTTP layer reads as one call is run as that
// call or not at all. A body that repeats a key is refused before either
// reads it, and is left out.
func FuzzOneReading(f *testing.F) {
	for _, seed := range readSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if checkKeys(body) != nil {
			return
		}
		rb := readBody(body)
		var read []executed
		for _, c := range rb.calls() {
			read = append(read, executed{c.params.Name, string(c.params.Arguments)})
		}
		ran := sdkExecutes(t, body)
		for _, r := range ran {
			if !slices.Contains(read, r) {
				t.Fatalf("the SDK ran tools/call %+v, which the HTTP layer read as %+v", r, read)
			}
		}
		if c, ok := rb.single(); ok {
			want := executed{c.params.Name, string(c.params.Arguments)}
			if len(ran) > 1 || (len(ran) == 1 && ran[0] != want) {
				t.Fatalf("the HTTP layer read one call %+v; the SDK ran %+v", want, ran)
			}
		} else if !rb.batch && len(ran) > 0 {
			t.Fatalf("the HTTP layer read no single call; the SDK ran %+v", ran)
		}
	})
}

// TestCheckKeys: a key given twice in any object, compared after
// unescaping, is refused; keys that differ only in case are different
// keys, as the SDK reads them.
func TestCheckKeys(t *testing.T) {
	for _, tc := range []struct {
		body string
		dup  bool
	}{
		{`{"a":1,"b":2}`, false},
		{`{"a":1,"a":2}`, true},
		{`{"method":"x","Method":"y"}`, false},
		{`{"a":{"b":1,"b":1}}`, true},
		{`[{"a":1},{"a":1}]`, false},
		{`{"a":"\"a\":","b":{"c":[1,{"a":2}]}}`, false},
		{`{"name":1,"n\u0061me":2}`, true},
		{`{"x":[{"y":1,"z":{"y":2}}],"x":0}`, true},
		{`{"a":1,"b":"}","a":2}`, true},
		{`{"a\\":1,"a\\":2}`, true},
		{`not json`, false},
	} {
		err := checkKeys([]byte(tc.body))
		if (err != nil) != tc.dup {
			t.Errorf("checkKeys(%s) = %v, want duplicate %v", tc.body, err, tc.dup)
		}
	}
	deep := bytes.Repeat([]byte("["), maxDepth+1)
	if err := checkKeys(deep); err == nil {
		t.Errorf("checkKeys of %d nested arrays: nil, want errTooDeep", maxDepth+1)
	}
}

// FuzzCheckKeys: checkKeys finds every repeated key encoding/json's
// tokenizer sees in a valid JSON text.
func FuzzCheckKeys(f *testing.F) {
	for _, seed := range readSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			checkKeys(data) // must not panic
			return
		}
		if hasDuplicate(data) && checkKeys(data) == nil {
			t.Fatalf("checkKeys missed a repeated key in %s", data)
		}
	})
}

// hasDuplicate is checkKeys' oracle: encoding/json's tokens.
func hasDuplicate(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := func() *frame {
			if len(stack) == 0 {
				return nil
			}
			return stack[len(stack)-1]
		}()
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &frame{object: v == '{', keys: map[string]bool{}, key: true})
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.object && top.key {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.object {
			top.key = true
		}
	}
}

// TestOneReadingOracle: the oracle runs calls (so FuzzOneReading compares
// something), and the requests that once slipped past the quotas read
// the same on both sides.
func TestOneReadingOracle(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []executed
	}{
		{readSeeds[0], []executed{{"slugify", `{"text":"x"}`}}},
		{readSeeds[1], []executed{{"slugify", `{}`}}},
		{readSeeds[7], []executed{{"a", ""}}},
	} {
		got := sdkExecutes(t, []byte(tc.body))
		if !slices.Equal(got, tc.want) {
			t.Errorf("the SDK ran %+v of %s, want %+v", got, tc.body, tc.want)
		}
		var read []executed
		for _, c := range readBody([]byte(tc.body)).calls() {
			read = append(read, executed{c.params.Name, string(c.params.Arguments)})
		}
		if !slices.Equal(read, tc.want) {
			t.Errorf("the HTTP layer read %+v of %s, want %+v", read, tc.body, tc.want)
		}
	}
}
