package skill

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

type greetIn struct {
	Name  string   `json:"name" desc:"Who to greet" jsonschema:"minLength=1"`
	Times int      `json:"times,omitempty" jsonschema:"minimum=1,maximum=3,default=1"`
	Style string   `json:"style,omitempty" jsonschema:"enum=plain|loud"`
	Tags  []string `json:"tags,omitempty" jsonschema:"maxItems=2"`
	Inner *struct {
		Note string `json:"note"`
	} `json:"inner,omitempty"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

var greet = Tool("test_greet", func(in greetIn) (greetOut, error) {
	switch in.Name {
	case "plain-error":
		return greetOut{}, errors.New("something broke")
	case "coded":
		return greetOut{}, NotFound("no such person")
	case "wrapped":
		return greetOut{}, fmt.Errorf("looking up %q: %w", in.Name, NotFound("no such person"))
	case "odd-code":
		return greetOut{}, &Error{Code: "made_up", Message: "odd"}
	case "empty-message":
		return greetOut{}, &Error{Code: abi.CodeUnavailable}
	case "panic":
		var p *greetIn
		_ = p.Name
	}
	g := "hello " + in.Name
	if in.Style == "loud" {
		g = strings.ToUpper(g)
	}
	return greetOut{Greeting: strings.Repeat(g+" ", max(in.Times, 1))[:len(g)]}, nil
}, Describe("Greet someone"), Tags("test", "demo"), Export("greet_export"),
	Idempotent(), Category("text"), Example("A loud greeting", greetIn{Name: "Ada", Style: "loud"}))

// test_post declares the flags of a tool that reaches out: its risk is
// derived from them.
var _ = Tool("test_post", func(struct{}) (struct{}, error) { return struct{}{}, nil },
	Describe("Post a message"), SideEffects(), RequiresNetwork(), RequiresFilesystem(),
	Example("No arguments", json.RawMessage(`{}`)))

var _ = Tool("test_nan", func(struct{}) (float64, error) { return math.NaN(), nil })

var _ = Tool("test_any", func(in map[string]any) (map[string]any, error) { return in, nil },
	Describe("Echo any object"))

func TestInvoke(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		input    string
		want     string   // output JSON
		wantCode abi.Code // when failing
		wantMsg  string   // substring of the message
	}{
		{name: "valid", tool: "test_greet", input: `{"name":"ann"}`, want: `{"greeting":"hello ann"}`},
		{name: "enum value", tool: "test_greet", input: ` {"name":"ann","style":"loud"} `, want: `{"greeting":"HELLO ANN"}`},
		{name: "empty input is {}", tool: "test_any", input: ``, want: `{}`},
		{name: "unknown tool", tool: "nope", input: `{}`, wantCode: abi.CodeNotFound, wantMsg: `no tool "nope"`},
		{name: "syntax error", tool: "test_greet", input: `{"name":}`, wantCode: abi.CodeInvalidInput, wantMsg: "malformed JSON at byte offset 8"},
		{name: "truncated", tool: "test_greet", input: `{"name":"a"`, wantCode: abi.CodeInvalidInput, wantMsg: "JSON"},
		{name: "not an object", tool: "test_greet", input: `["ann"]`, wantCode: abi.CodeInvalidInput, wantMsg: "must be a JSON object"},
		{name: "unknown field", tool: "test_greet", input: `{"name":"a","nmae":"b"}`, wantCode: abi.CodeInvalidInput, wantMsg: `unknown field "nmae"`},
		{name: "unknown nested field", tool: "test_greet", input: `{"name":"a","inner":{"note":"x","n":1}}`, wantCode: abi.CodeInvalidInput, wantMsg: `unknown field "n"`},
		{name: "wrong type", tool: "test_greet", input: `{"name":"a","times":"two"}`, wantCode: abi.CodeInvalidInput, wantMsg: `field "times": expected an integer, got JSON string`},
		{name: "missing required", tool: "test_greet", input: `{"times":2}`, wantCode: abi.CodeInvalidInput, wantMsg: `missing required field "name"`},
		{name: "missing nested required", tool: "test_greet", input: `{"name":"a","inner":{}}`, wantCode: abi.CodeInvalidInput, wantMsg: `missing required field "inner.note"`},
		{name: "enum", tool: "test_greet", input: `{"name":"a","style":"quiet"}`, wantCode: abi.CodeInvalidInput, wantMsg: `field "style": "quiet" is not one of "plain", "loud"`},
		{name: "maximum", tool: "test_greet", input: `{"name":"a","times":4}`, wantCode: abi.CodeInvalidInput, wantMsg: `field "times": 4 is more than the maximum 3`},
		{name: "minLength", tool: "test_greet", input: `{"name":""}`, wantCode: abi.CodeInvalidInput, wantMsg: `field "name": needs at least 1 characters`},
		{name: "maxItems", tool: "test_greet", input: `{"name":"a","tags":["x","y","z"]}`, wantCode: abi.CodeInvalidInput, wantMsg: `field "tags": allows at most 2 items`},
		{name: "trailing data", tool: "test_greet", input: `{"name":"a"} {}`, wantCode: abi.CodeInvalidInput, wantMsg: "after the arguments"},
		{name: "plain error", tool: "test_greet", input: `{"name":"plain-error"}`, wantCode: abi.CodeGuestError, wantMsg: "something broke"},
		{name: "coded error", tool: "test_greet", input: `{"name":"coded"}`, wantCode: abi.CodeNotFound, wantMsg: "no such person"},
		{name: "wrapped coded error", tool: "test_greet", input: `{"name":"wrapped"}`, wantCode: abi.CodeNotFound, wantMsg: `looking up "wrapped": no such person`},
		{name: "unknown code", tool: "test_greet", input: `{"name":"odd-code"}`, wantCode: abi.CodeGuestError, wantMsg: "odd"},
		{name: "empty message", tool: "test_greet", input: `{"name":"empty-message"}`, wantCode: abi.CodeUnavailable, wantMsg: "unavailable"},
		{name: "panic", tool: "test_greet", input: `{"name":"panic"}`, wantCode: abi.CodeTrap, wantMsg: `tool "test_greet" panicked`},
		{name: "after panic", tool: "test_greet", input: `{"name":"bo"}`, want: `{"greeting":"hello bo"}`},
		{name: "output not encodable", tool: "test_nan", input: `{}`, wantCode: abi.CodeGuestError, wantMsg: "encoding the output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Invoke(tt.tool, []byte(tt.input))
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("Invoke: %v", err)
				}
				if diff := cmp.Diff(tt.want, string(out)); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Invoke error = %v (output %s), want an *Error", err, out)
			}
			if e.Code != tt.wantCode || !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("error = %q %q, want code %q with %q", e.Code, e.Message, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestRunThroughKernel(t *testing.T) {
	k := useFake(t)
	k.in = []byte(`{"name":"ann","times":2}`)
	if rc := greet.Run(); rc != 0 {
		t.Fatalf("Run = %d, error %s", rc, k.err)
	}
	if diff := cmp.Diff(`{"greeting":"hello ann"}`, string(k.out)); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}

	k = useFake(t)
	k.in = []byte(`{"name":"coded"}`)
	if rc := Run("test_greet"); rc != 1 {
		t.Fatalf("Run = %d, want 1", rc)
	}
	// What error_set received parses back, with the abi helper the host
	// uses, to the same code and message.
	got := abi.ParseError(k.err)
	want := &abi.Error{Code: abi.CodeNotFound, Message: "no such person"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error_set (-want +got):\n%s", diff)
	}
	if k.out != nil {
		t.Errorf("output set on failure: %s", k.out)
	}
}

func TestDescribeGolden(t *testing.T) {
	k := useFake(t)
	if rc := runDescribe(); rc != 0 {
		t.Fatalf("describe = %d: %s", rc, k.err)
	}
	var d abi.Description
	if err := json.Unmarshal(k.out, &d); err != nil {
		t.Fatal(err)
	}
	if d.ABI != abi.Version {
		t.Errorf("abi = %q, want %q", d.ABI, abi.Version)
	}
	pretty, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	pretty = append(pretty, '\n')
	golden := filepath.Join("testdata", "describe.golden.json")
	testenv.Golden(t, golden, pretty, *update)
}

func TestToolPanicsOnBadRegistration(t *testing.T) {
	ok := func(struct{}) (int, error) { return 0, nil }
	tests := []struct {
		name string
		reg  func()
		want string
	}{
		{"empty name", func() { Tool("", ok) }, "empty name"},
		{"nil fn", func() { Tool[struct{}, int]("test_nil", nil) }, "nil function"},
		{"duplicate name", func() { Tool("test_greet", ok) }, "registered twice"},
		{"duplicate export", func() { Tool("test_other", ok, Export("greet_export")) }, `share the export "greet_export"`},
		{"reserved export", func() { Tool("describe", ok) }, "reserved export"},
		{"reserved underscore", func() { Tool("test_init", ok, Export("_initialize")) }, "reserved export"},
		{"input not an object", func() { Tool("test_str", func(string) (int, error) { return 0, nil }) }, "must encode as a JSON object"},
		{"bad input type", func() {
			Tool("test_chan", func(struct {
				C chan int `json:"c"`
			}) (int, error) {
				return 0, nil
			})
		}, "field c"},
		{"example not matching the input", func() {
			Tool("test_bad_example", ok, Example("a field In does not have", map[string]any{"nope": 1}))
		}, `tool "test_bad_example" example 0 does not fit the input schema`},
		{"example not JSON", func() {
			Tool("test_chan_example", ok, Example("a channel", make(chan int)))
		}, `tool "test_chan_example" example 0`},
		{"bad output tag", func() {
			Tool("test_out", func(struct{}) (struct {
				N int `json:"n" jsonschema:"enum=x"`
			}, error) {
				return struct {
					N int `json:"n" jsonschema:"enum=x"`
				}{}, nil
			})
		}, `tool "test_out" output`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("no panic")
				}
				if !strings.Contains(fmt.Sprint(r), tt.want) {
					t.Errorf("panic %q does not contain %q", r, tt.want)
				}
			}()
			tt.reg()
		})
	}
	if lookup("test_other") != nil || lookup("test_str") != nil || lookup("test_bad_example") != nil {
		t.Error("a refused tool was registered")
	}
}
