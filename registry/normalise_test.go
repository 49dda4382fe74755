package registry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// raw is a native tool returning fixed bytes.
type raw struct {
	name string
	out  []byte
}

func (r raw) Describe() packs.ToolSpec {
	return packs.ToolSpec{Name: r.name, Description: "Returns fixed bytes.", Loading: packs.LoadingAlways}
}
func (r raw) Execute(context.Context, json.RawMessage) (json.RawMessage, error) { return r.out, nil }

// Results are normalised: JSON stays JSON, text becomes a JSON string,
// binary output and output past the result cap are refused with a tool
// error saying why.
func TestResultsAreNormalised(t *testing.T) {
	reg, err := registry.New(context.Background(), nil, registry.Options{
		MaxResultBytes: 64,
		Natives: []registry.Native{
			raw{"json", []byte(` {"a":1} `)},
			raw{"text", []byte("plain text, not JSON")},
			raw{"empty", nil},
			raw{"binary", []byte{0xff, 0xfe, 0x00, 0x01}},
			raw{"big", []byte(`"` + strings.Repeat("x", 100) + `"`)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	run, err := reg.NewRun(registry.RunContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"json": `{"a":1}`, "text": `"plain text, not JSON"`, "empty": `null`} {
		res, err := run.Call(context.Background(), name, nil, nil)
		if err != nil || res.IsError || string(res.Output) != want {
			t.Errorf("%s: %+v, %v; want output %s", name, res, err, want)
		}
	}
	for name, want := range map[string]string{"binary": "binary output", "big": "result cap"} {
		res, err := run.Call(context.Background(), name, nil, nil)
		if err != nil || !res.IsError || !strings.Contains(res.Error.Message, want) {
			t.Errorf("%s: %+v, %v; want a tool error about the %s", name, res, err, want)
		}
	}
}

// Config values given for one call are checked against the tool's config
// params with the messages the operator's config gets.
func TestCheckToolConfig(t *testing.T) {
	min, max := 1.0, 10.0
	tool := &packs.ToolSpec{Name: "fetch", ConfigParams: []packs.ConfigParam{
		{Name: "retries", Type: packs.ParamNumber, Min: &min, Max: &max},
		{Name: "mode", Type: packs.ParamSelect, Options: []string{"fast", "safe"}},
		{Name: "token", Type: packs.ParamSecret},
	}}
	if err := packs.CheckToolConfig(tool, map[string]string{"retries": "3", "mode": "safe", "token": "s3cret"}); err != nil {
		t.Errorf("good values: %v", err)
	}
	err := packs.CheckToolConfig(tool, map[string]string{"retries": "30", "mode": "slow", "colour": "red", "token": ""})
	if err == nil {
		t.Fatal("bad values passed")
	}
	for _, want := range []string{"config retries is 30; it must be at most 10", `unknown config key colour`, "mode", "its settings are mode, retries, token"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Error("a secret's value is in the message")
	}
}

// schemaTool is a native tool with an input schema that returns {}.
type schemaTool struct {
	name   string
	schema string
}

func (s schemaTool) Describe() packs.ToolSpec {
	return packs.ToolSpec{Name: s.name, Description: "Checks its arguments.", Loading: packs.LoadingAlways, InputSchema: json.RawMessage(s.schema)}
}
func (schemaTool) Execute(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

// A number too large for the validator's arithmetic is refused as a bad
// argument; it once panicked inside the validator, before any recovery.
func TestHugeNumbersInArguments(t *testing.T) {
	reg, err := registry.New(context.Background(), nil, registry.Options{Natives: []registry.Native{
		schemaTool{"bounded", `{"type":"object","properties":{"x":{"type":"number","minimum":0,"maximum":10}}}`},
		schemaTool{"multiple", `{"type":"object","properties":{"x":{"type":"number","multipleOf":0.5}}}`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	run, _ := reg.NewRun(registry.RunContext{}, nil)
	for _, name := range []string{"bounded", "multiple"} {
		for _, args := range []string{`{"x":1e1000001}`, `{"x":-1e1000001}`, `{"x":1e-1000001}`} {
			res, err := run.Call(context.Background(), name, json.RawMessage(args), nil)
			if err != nil || res == nil {
				t.Fatalf("%s %s: %+v, %v", name, args, res, err)
			}
			if !res.IsError && name == "bounded" && args != `{"x":1e-1000001}` {
				t.Errorf("%s %s passed", name, args)
			}
		}
	}
}
