package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

type nativeIn struct {
	Name  string    `json:"name" desc:"Who" jsonschema:"minLength=1"`
	Times int       `json:"times,omitempty" jsonschema:"minimum=0,maximum=5"`
	Mode  string    `json:"mode,omitempty" jsonschema:"enum=plain|loud|panic|fail|coded|wrapped|nan"`
	Tags  []string  `json:"tags,omitempty"`
	Data  []byte    `json:"data,omitempty"`
	At    time.Time `json:"at,omitzero"`
	Inner *struct {
		N int `json:"n"`
	} `json:"inner,omitempty"`
	Meta map[string]float64 `json:"meta,omitempty"`
}

type nativeOut struct {
	Greeting string  `json:"greeting"`
	Bytes    int     `json:"bytes,omitempty"`
	Score    float64 `json:"score,omitempty"`
}

var errNativeCoded = &registry.ToolError{Code: abi.CodeNotFound, Message: "no such person"}

type nativeCtxKey struct{}

func nativeGreet(ctx context.Context, in nativeIn) (nativeOut, error) {
	switch in.Mode {
	case "panic":
		var p *nativeIn
		_ = p.Name // a nil dereference
	case "fail":
		return nativeOut{}, errors.New("something broke")
	case "coded":
		return nativeOut{}, errNativeCoded
	case "wrapped":
		return nativeOut{}, fmt.Errorf("looking up %q: %w", in.Name, errNativeCoded)
	case "nan":
		return nativeOut{Score: math.NaN()}, nil
	}
	g := "hello " + in.Name
	if in.Mode == "loud" {
		g = strings.ToUpper(g)
	}
	if s, ok := ctx.Value(nativeCtxKey{}).(string); ok {
		g += s
	}
	return nativeOut{Greeting: strings.TrimSpace(strings.Repeat(g+" ", max(in.Times, 1))), Bytes: len(in.Data)}, nil
}

func newNativeGreet(t testing.TB) registry.Native {
	t.Helper()
	n, err := registry.Func("greet", nativeGreet, &registry.FuncOptions{
		Description: "Greet someone.",
		Examples:    []packs.Example{{Args: json.RawMessage(`{"name":"ann","mode":"loud"}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFuncExecute(t *testing.T) {
	greet := newNativeGreet(t)
	tests := []struct {
		name     string
		args     string
		want     string   // output JSON
		wantCode abi.Code // when failing
		wantMsg  string   // substring of the message
	}{
		{name: "valid", args: `{"name":"ann"}`, want: `{"greeting":"hello ann"}`},
		{name: "every field", args: ` {"name":"ann","times":2,"mode":"loud","tags":["a"],"data":"AAEC","at":"2025-01-02T03:04:05Z","inner":{"n":1},"meta":{"x":1.5}} `,
			want: `{"greeting":"HELLO ANN HELLO ANN","bytes":3}`},
		{name: "empty args are {}", args: ``, want: `{"greeting":"hello"}`},
		{name: "blank args are {}", args: " \n\t", want: `{"greeting":"hello"}`},
		{name: "array", args: `["ann"]`, wantCode: abi.CodeInvalidInput, wantMsg: "invalid arguments: the arguments must be a JSON object"},
		{name: "null", args: `null`, wantCode: abi.CodeInvalidInput, wantMsg: "must be a JSON object"},
		{name: "string", args: `"ann"`, wantCode: abi.CodeInvalidInput, wantMsg: "must be a JSON object"},
		{name: "malformed", args: `{"name":}`, wantCode: abi.CodeInvalidInput, wantMsg: "malformed JSON at byte offset 8"},
		{name: "truncated", args: `{"name":"a"`, wantCode: abi.CodeInvalidInput, wantMsg: "truncated JSON"},
		{name: "wrong type", args: `{"name":1}`, wantCode: abi.CodeInvalidInput, wantMsg: `field "name": expected a string, got JSON number`},
		{name: "wrong nested type", args: `{"name":"a","inner":{"n":"x"}}`, wantCode: abi.CodeInvalidInput, wantMsg: `field "inner.n": expected an integer, got JSON string`},
		{name: "fraction for an int", args: `{"name":"a","times":1.5}`, wantCode: abi.CodeInvalidInput, wantMsg: `field "times": expected an integer, got JSON number 1.5`},
		{name: "bad base64", args: `{"name":"a","data":"!!"}`, wantCode: abi.CodeInvalidInput, wantMsg: "illegal base64"},
		{name: "bad time", args: `{"name":"a","at":"yesterday"}`, wantCode: abi.CodeInvalidInput, wantMsg: "invalid arguments"},
		{name: "unknown field", args: `{"name":"a","nmae":"b"}`, wantCode: abi.CodeInvalidInput, wantMsg: `unknown field "nmae"`},
		{name: "unknown nested field", args: `{"name":"a","inner":{"n":1,"m":2}}`, wantCode: abi.CodeInvalidInput, wantMsg: `unknown field "m"`},
		{name: "trailing data", args: `{"name":"a"} x`, wantCode: abi.CodeInvalidInput, wantMsg: "unexpected data after the arguments object"},
		{name: "two objects", args: `{}{}`, wantCode: abi.CodeInvalidInput, wantMsg: "unexpected data after the arguments object"},
		{name: "panic", args: `{"name":"a","mode":"panic"}`, wantCode: abi.CodeInternal, wantMsg: `tool "greet" failed inside the host: panic: runtime error: invalid memory address or nil pointer dereference`},
		{name: "unencodable output", args: `{"name":"a","mode":"nan"}`, wantCode: abi.CodeInternal, wantMsg: `tool "greet": encoding its output: unsupported value: NaN`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := greet.Execute(context.Background(), json.RawMessage(tt.args))
			if tt.wantCode == "" {
				if err != nil {
					t.Fatal(err)
				}
				if string(out) != tt.want {
					t.Errorf("output %s, want %s", out, tt.want)
				}
				return
			}
			if out != nil {
				t.Errorf("output %s with an error", out)
			}
			var te *registry.ToolError
			if !errors.As(err, &te) {
				t.Fatalf("error %#v is not a *ToolError", err)
			}
			if te.Code != tt.wantCode || !strings.Contains(te.Message, tt.wantMsg) {
				t.Errorf("error %s: %q, want %s containing %q", te.Code, te.Message, tt.wantCode, tt.wantMsg)
			}
			if strings.Contains(te.Message, "goroutine") || strings.Contains(te.Message, ".go:") {
				t.Errorf("the message shows a stack: %s", te.Message)
			}
		})
	}
}

// The function's error is returned as it is: the registry keeps a
// *ToolError's code and makes anything else a guest_error.
func TestFuncErrorsPassThrough(t *testing.T) {
	greet := newNativeGreet(t)
	_, err := greet.Execute(context.Background(), json.RawMessage(`{"name":"a","mode":"coded"}`))
	if err != errNativeCoded {
		t.Errorf("err = %#v, want the function's *ToolError", err)
	}
	_, err = greet.Execute(context.Background(), json.RawMessage(`{"name":"a","mode":"wrapped"}`))
	var te *registry.ToolError
	if !errors.As(err, &te) || te != errNativeCoded || !strings.HasPrefix(err.Error(), `looking up "a": `) {
		t.Errorf("err = %v, want the wrapped *ToolError", err)
	}
	_, err = greet.Execute(context.Background(), json.RawMessage(`{"name":"a","mode":"fail"}`))
	if err == nil || err.Error() != "something broke" || errors.As(err, &te) {
		t.Errorf("err = %#v, want the plain error", err)
	}
}

func TestFuncPassesTheContext(t *testing.T) {
	greet := newNativeGreet(t)
	ctx := context.WithValue(context.Background(), nativeCtxKey{}, "!")
	out, err := greet.Execute(ctx, json.RawMessage(`{"name":"ann"}`))
	if err != nil || string(out) != `{"greeting":"hello ann!"}` {
		t.Errorf("Execute = %s, %v", out, err)
	}
}

func TestFuncInputForms(t *testing.T) {
	ctx := context.Background()
	desc := &registry.FuncOptions{Description: "d"}

	ptr, err := registry.Func("ptr", func(_ context.Context, p *SchemaPoint) (float64, error) {
		return p.X + p.Y, nil
	}, desc)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := ptr.Execute(ctx, json.RawMessage(`{"x":1,"y":2}`)); err != nil || string(out) != "3" {
		t.Errorf("pointer input: %s, %v", out, err)
	}

	// map[string]any takes any object; numbers decode as encoding/json does.
	anyMap, err := registry.Func("any_map", func(_ context.Context, m map[string]any) (map[string]any, error) {
		return m, nil
	}, desc)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := anyMap.Execute(ctx, json.RawMessage(`{"b":[1,"x"],"a":{"n":null}}`)); err != nil || string(out) != `{"a":{"n":null},"b":[1,"x"]}` {
		t.Errorf("map input: %s, %v", out, err)
	}
	if _, err := anyMap.Execute(ctx, json.RawMessage(`[]`)); err == nil {
		t.Error("map input took an array")
	}

	strMap, err := registry.Func("str_map", func(_ context.Context, m map[string]string) (int, error) {
		return len(m), nil
	}, desc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strMap.Execute(ctx, json.RawMessage(`{"a":1}`)); err == nil || !strings.Contains(err.Error(), `expected a string, got JSON number`) {
		t.Errorf("map[string]string took a number: %v", err)
	}

	// A hand-written input schema that allows other properties: unknown
	// fields are ignored, as the schema lets them through.
	open, err := registry.Func("open", func(_ context.Context, p SchemaPoint) (SchemaPoint, error) {
		return p, nil
	}, &registry.FuncOptions{Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"number"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := open.Execute(ctx, json.RawMessage(`{"x":1,"z":true}`)); err != nil || string(out) != `{"x":1,"y":0}` {
		t.Errorf("open schema: %s, %v", out, err)
	}
	// One that says additionalProperties false at the top: refused.
	closed, err := registry.Func("closed", func(_ context.Context, m map[string]any) (int, error) {
		return len(m), nil
	}, &registry.FuncOptions{Description: "d", InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"a":{}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := closed.Execute(ctx, json.RawMessage(`{"a":1,"b":2}`)); err != nil || string(out) != "2" {
		// Maps take every key whatever the decoder is told: the registry's
		// validation refuses b before Execute runs.
		t.Errorf("closed map: %s, %v", out, err)
	}
}

func TestFuncOutputForms(t *testing.T) {
	ctx := context.Background()
	desc := &registry.FuncOptions{Description: "d"}
	run := func(t *testing.T, n registry.Native) (string, error) {
		t.Helper()
		out, err := n.Execute(ctx, nil)
		return string(out), err
	}
	mustFunc := func(n registry.Native, err error) registry.Native {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	text := mustFunc(registry.Func("text", func(context.Context, struct{}) (string, error) {
		return "a \"quoted\" line\n<é>", nil
	}, desc))
	if got, err := run(t, text); err != nil || got != `"a \"quoted\" line\n\u003cé\u003e"` {
		t.Errorf("string output: %s, %v", got, err)
	}
	if d := text.Describe(); string(d.OutputSchema) != `{"type":"string"}` {
		t.Errorf("string output schema %s", d.OutputSchema)
	}

	type named string
	namedText := mustFunc(registry.Func("named", func(context.Context, struct{}) (named, error) { return "n", nil }, desc))
	if got, err := run(t, namedText); err != nil || got != `"n"` {
		t.Errorf("named string output: %s, %v", got, err)
	}

	var raw json.RawMessage
	rawTool := mustFunc(registry.Func("raw", func(context.Context, struct{}) (json.RawMessage, error) { return raw, nil }, desc))
	if d := rawTool.Describe(); d.OutputSchema != nil {
		t.Errorf("json.RawMessage output declares the schema %s", d.OutputSchema)
	}
	for _, tc := range []struct{ raw, want, err string }{
		{raw: `{ "kept" : [1, 2] }`, want: `{ "kept" : [1, 2] }`},
		{raw: " \n[true]\n", want: `[true]`},
		{raw: "", want: `null`},
		{raw: `{"a":`, err: `internal: tool "raw" returned invalid JSON`},
		{raw: `plain text`, err: `internal: tool "raw" returned invalid JSON`},
	} {
		raw = json.RawMessage(tc.raw)
		got, err := run(t, rawTool)
		if tc.err != "" {
			var te *registry.ToolError
			if !errors.As(err, &te) || err.Error() != tc.err {
				t.Errorf("raw %q: err %v, want %s", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("raw %q: %s, %v; want %s", tc.raw, got, err, tc.want)
		}
	}

	anyTool := mustFunc(registry.Func("any", func(context.Context, struct{}) (any, error) { return nil, nil }, desc))
	if got, err := run(t, anyTool); err != nil || got != "null" {
		t.Errorf("nil any: %s, %v", got, err)
	}
	if d := anyTool.Describe(); d.OutputSchema != nil {
		t.Errorf("any output declares the schema %s", d.OutputSchema)
	}
	nilPtr := mustFunc(registry.Func("nil_ptr", func(context.Context, struct{}) (*SchemaPoint, error) { return nil, nil }, desc))
	if got, err := run(t, nilPtr); err != nil || got != "null" {
		t.Errorf("nil pointer: %s, %v", got, err)
	}
	// An output json.Marshal refuses (a json.RawMessage field that is not
	// JSON) is the tool's failure, with code internal.
	badField := mustFunc(registry.Func("bad_field", func(context.Context, struct{}) (struct {
		R json.RawMessage `json:"r"`
	}, error) {
		return struct {
			R json.RawMessage `json:"r"`
		}{R: json.RawMessage(`{`)}, nil
	}, desc))
	if _, err := run(t, badField); err == nil || !strings.Contains(err.Error(), `internal: tool "bad_field": encoding its output`) {
		t.Errorf("invalid nested raw JSON: %v", err)
	}
}

// Describe returns a copy: changing it changes nothing for the next caller.
func TestFuncDescribeIsACopy(t *testing.T) {
	greet := newNativeGreet(t)
	d := greet.Describe()
	want, _ := json.Marshal(d)
	d.InputSchema[0] = 'X'
	d.Examples[0].Args[0] = 'X'
	d.Tags = append(d.Tags, "x")
	again, _ := json.Marshal(greet.Describe())
	if !bytes.Equal(want, again) {
		t.Errorf("Describe changed:\n%s\n%s", want, again)
	}
	if d.Loading != "" || d.Category != "" || d.DisplayName != "" {
		t.Errorf("Func filled in what the registry defaults: %+v", d)
	}
}

type nativeEvents struct {
	mu  sync.Mutex
	all []registry.Event
}

func (e *nativeEvents) Event(_ context.Context, ev registry.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// Through a registry: arguments are validated against the inferred schema
// before the function runs, outputs against the output schema after, and
// a panic is recovered by the registry, which records the stack as an
// event and shows the model only that the tool failed.
func TestFuncInARegistry(t *testing.T) {
	ev := &nativeEvents{}
	greet := newNativeGreet(t)
	ctx := context.Background()
	reg, err := registry.New(ctx, nil, registry.Options{Natives: []registry.Native{greet}, Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	tool, ok := reg.Tool("greet")
	if !ok || tool.Kind != registry.KindNative || tool.Loading != packs.LoadingDeferred {
		t.Fatalf("registered as %+v", tool)
	}
	run, err := reg.NewRun(registry.RunContext{Tenant: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Call(ctx, "greet", json.RawMessage(`{"name":"ann","mode":"loud"}`), nil)
	if err != nil || res.IsError || string(res.Output) != `{"greeting":"HELLO ANN"}` {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	for _, tc := range []struct {
		args string
		code abi.Code
		msg  string
	}{
		{`{"name":""}`, abi.CodeInvalidInput, "$.name"},
		{`{"name":"a","times":9}`, abi.CodeInvalidInput, "$.times"},
		{`{"name":"a","mode":"quiet"}`, abi.CodeInvalidInput, "$.mode"},
		{`{"times":1}`, abi.CodeInvalidInput, `missing required field "name"`},
		{`{"name":"a","mode":"coded"}`, abi.CodeNotFound, "no such person"},
		{`{"name":"a","mode":"fail"}`, abi.CodeGuestError, "something broke"},
		{`{"name":"a","mode":"panic"}`, abi.CodeInternal, `tool "greet" failed inside the host`},
	} {
		res, err := run.Call(ctx, "greet", json.RawMessage(tc.args), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		if !res.IsError || res.Error.Code != tc.code || !strings.Contains(res.Error.Message, tc.msg) {
			t.Errorf("%s: %+v, want %s containing %q", tc.args, res.Error, tc.code, tc.msg)
		}
		if res.IsError && (strings.Contains(res.Error.Message, "goroutine") || strings.Contains(res.Error.Message, "native_test.go")) {
			t.Errorf("%s: the model is shown a stack: %s", tc.args, res.Error.Message)
		}
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	var panics []registry.Event
	for _, e := range ev.all {
		if e.Name == registry.EventToolPanic {
			panics = append(panics, e)
		}
	}
	if len(panics) != 1 {
		t.Fatalf("%d panic events", len(panics))
	}
	if stack, _ := panics[0].Fields["stack"].(string); !strings.Contains(stack, "nativeGreet") {
		t.Errorf("the panic event's stack does not show the function:\n%s", stack)
	}
}

// FuzzFuncExecute checks Execute's argument decoding: any bytes give
// either JSON output or a *ToolError with a known code and a message,
// never a panic that escapes.
func FuzzFuncExecute(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"name":"a"}`, `{"name":"a","times":"x"}`, `[1]`, `{"name":"a"} x`, `null`,
		`{"name":"a","inner":{"n":1}}`, `{"name":"a","inner":null}`, `{"name":"\u00e9","tags":[]}`, `{"name":"a","mode":"panic"}`,
		`{"name":"a","mode":"nan"}`, `{"data":"AAEC","at":"2025-01-02T03:04:05Z","meta":{"x":1e400}}`, `{"name":"a","nmae":1}`,
		"{\"name\":\"\xff\"}", `{"name":"a"`, `{"times":99999999999999999999}`, `{"at":"2025-13-45T99:99:99Z"}`} {
		f.Add([]byte(s))
	}
	greet := newNativeGreet(f)
	anyMap, err := registry.Func("any_map", func(_ context.Context, m map[string]any) (map[string]any, error) {
		return m, nil
	}, &registry.FuncOptions{Description: "d"})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, args []byte) {
		for _, n := range []registry.Native{greet, anyMap} {
			out, err := n.Execute(ctx, args)
			if err == nil {
				if !json.Valid(out) {
					t.Fatalf("%s: output %q is not JSON", n.Describe().Name, out)
				}
				continue
			}
			if out != nil {
				t.Fatalf("%s: output %q with an error", n.Describe().Name, out)
			}
			var te *registry.ToolError
			if !errors.As(err, &te) {
				if n == greet && (errors.Is(err, errNativeCoded) || err.Error() == "something broke" || strings.HasPrefix(err.Error(), "looking up")) {
					continue // the function's own errors
				}
				t.Fatalf("%s: error %#v is not a *ToolError", n.Describe().Name, err)
			}
			if !te.Code.Known() || te.Message == "" {
				t.Fatalf("%s: incomplete error %#v", n.Describe().Name, te)
			}
		}
	})
}
