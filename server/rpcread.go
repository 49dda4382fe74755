package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// One reading of a request.
//
// The HTTP layer looks at a request before the MCP SDK runs it, to admit
// its tool call into the tenant's quotas and to answer the plainest calls
// itself (fast.go). Whatever it reads must be what the SDK will execute,
// so it reads with the SDK's own decoders: the SDK's jsonrpc.DecodeMessage
// for the envelope, and, for params and batches, the same JSON library
// with the same option (keys matched case-sensitively). Two decoders may
// still differ on a key given twice in one object (one keeps the first,
// another the last), so a request that repeats a key anywhere is refused
// before either reads it (checkKeys). And a call the HTTP layer did not
// admit under its name is admitted where the SDK runs it (callTool), so a
// reading that differed would cost a second admission, never a skipped
// one.

// maxDepth is the deepest nesting of arrays and objects a request may
// have: the SDK refuses deeper ones.
const maxDepth = 1000

// errDuplicateKey is a request object that names a key twice.
var errDuplicateKey = errors.New("a key appears twice in one object")

// errTooDeep is a request nested deeper than maxDepth.
var errTooDeep = fmt.Errorf("the request nests arrays and objects deeper than %d levels", maxDepth)

// checkKeys reports a JSON text whose objects repeat a key (compared
// after unescaping), or that nests deeper than maxDepth. It does not
// validate the rest: a text that is not JSON is the decoders' to refuse.
// The error names the key and where it is.
func checkKeys(data []byte) error {
	type frame struct {
		object bool
		keys   map[string]struct{}
	}
	var stack []frame
	expectKey := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) >= maxDepth {
				return errTooDeep
			}
			stack = append(stack, frame{object: c == '{'})
			expectKey = c == '{'
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].object
		case ':':
			expectKey = false
		case '"':
			end, escaped := stringEnd(data, i)
			if end < 0 {
				return nil // unterminated: not JSON
			}
			if expectKey && len(stack) > 0 && stack[len(stack)-1].object {
				key := data[i+1 : end]
				if escaped {
					var s string
					if json.Unmarshal(data[i:end+1], &s) != nil {
						return nil // not JSON
					}
					key = []byte(s)
				} else if !utf8.Valid(key) {
					// Decoders differ on invalid UTF-8 (some replace it,
					// some keep the bytes): compare what the replacing
					// ones would see, which can only find more repeats.
					key = bytes.ToValidUTF8(key, []byte("\uFFFD"))
				}
				f := &stack[len(stack)-1]
				if f.keys == nil {
					f.keys = make(map[string]struct{}, 4)
				}
				if _, dup := f.keys[string(key)]; dup {
					return fmt.Errorf("%w: %s", errDuplicateKey, strconv.Quote(truncate(string(key))))
				}
				f.keys[string(key)] = struct{}{}
			}
			expectKey = false
			i = end
		}
	}
	return nil
}

// stringEnd returns the index of the quote that ends the JSON string
// starting at data[start], and whether the string holds an escape; -1
// when it does not end.
func stringEnd(data []byte, start int) (end int, escaped bool) {
	for i := start + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i, escaped
		}
	}
	return -1, escaped
}

// sdkUnmarshal decodes data as the MCP SDK decodes messages and params:
// the first JSON value of data, object keys matched to struct fields
// case-sensitively.
func sdkUnmarshal(data []byte, v any) error {
	dec := segjson.NewDecoder(bytes.NewReader(data))
	dec.DontMatchCaseInsensitiveStructFields()
	return dec.Decode(v)
}

// rpcBody is a POST body as the SDK reads it.
type rpcBody struct {
	// batch is true for a JSON array of messages.
	batch bool
	// msgs are the messages the SDK reads from the body; nil when it
	// cannot read the body (the SDK then answers with an error).
	msgs []jsonrpc.Message
}

// readBody reads body as the SDK's streamable transport does: an array of
// messages (a batch), else one message.
func readBody(body []byte) rpcBody {
	var raw []json.RawMessage
	if sdkUnmarshal(body, &raw) == nil {
		b := rpcBody{batch: true}
		for _, r := range raw {
			m, err := jsonrpc.DecodeMessage(r)
			if err != nil {
				return rpcBody{batch: true}
			}
			b.msgs = append(b.msgs, m)
		}
		return b
	}
	m, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return rpcBody{}
	}
	return rpcBody{msgs: []jsonrpc.Message{m}}
}

// toolCall is a tools/call request as the SDK reads it.
type toolCall struct {
	req    *jsonrpc.Request
	params *mcp.CallToolParamsRaw
}

// single returns the one tools/call request of a body that holds only it,
// with its params read as the SDK reads them; ok is false for anything
// else (a batch, another method, params the SDK refuses).
func (b rpcBody) single() (call toolCall, ok bool) {
	if b.batch || len(b.msgs) != 1 {
		return toolCall{}, false
	}
	req, isReq := b.msgs[0].(*jsonrpc.Request)
	if !isReq || req.Method != "tools/call" || !req.IsCall() {
		return toolCall{}, false
	}
	var p *mcp.CallToolParamsRaw
	if req.Params == nil || sdkUnmarshal(req.Params, &p) != nil || p == nil {
		return toolCall{}, false
	}
	return toolCall{req: req, params: p}, true
}

// calls returns the tools/call requests of the body whose params the SDK
// can read, in order: the calls it would run.
func (b rpcBody) calls() []toolCall {
	var out []toolCall
	for _, m := range b.msgs {
		one := rpcBody{msgs: []jsonrpc.Message{m}}
		if c, ok := one.single(); ok {
			out = append(out, c)
		}
	}
	return out
}
