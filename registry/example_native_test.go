package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// WordCountIn is the input of the word_count tool in ExampleFunc: its
// schema comes from the json, desc and jsonschema tags.
type WordCountIn struct {
	Text string `json:"text" desc:"The text to count" jsonschema:"minLength=1"`
	// Unit is optional: omitempty (a pointer would do too).
	Unit string `json:"unit,omitempty" desc:"What to count" jsonschema:"enum=words|lines,default=words"`
}

// WordCountOut is the output of the word_count tool.
type WordCountOut struct {
	Count int `json:"count"`
}

// Func turns a typed function into a native tool; the schemas are
// inferred from its input and output types.
func ExampleFunc() {
	tool, err := registry.Func("word_count", func(ctx context.Context, in WordCountIn) (WordCountOut, error) {
		if in.Unit == "lines" {
			return WordCountOut{Count: len(strings.Split(in.Text, "\n"))}, nil
		}
		if strings.TrimSpace(in.Text) == "" {
			return WordCountOut{}, &registry.ToolError{Code: abi.CodeInvalidInput, Message: "the text is blank"}
		}
		return WordCountOut{Count: len(strings.Fields(in.Text))}, nil
	}, &registry.FuncOptions{
		Description: "Count the words or lines of a text.",
		Idempotent:  true,
		Examples:    []packs.Example{{Args: json.RawMessage(`{"text":"one two three"}`)}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	d := tool.Describe()
	fmt.Println(d.Name, d.Risk())
	fmt.Println(string(d.InputSchema))
	fmt.Println(string(d.OutputSchema))

	// The registry validates the arguments before it calls Execute; here
	// Execute is called directly.
	ctx := context.Background()
	out, err := tool.Execute(ctx, json.RawMessage(`{"text":"one two three"}`))
	fmt.Println(string(out), err)
	_, err = tool.Execute(ctx, json.RawMessage(`{"text":" "}`))
	fmt.Println(err)
	_, err = tool.Execute(ctx, json.RawMessage(`{"txt":"one"}`))
	fmt.Println(err)
	// Output:
	// word_count SAFE
	// {"type":"object","properties":{"text":{"type":"string","description":"The text to count","minLength":1},"unit":{"type":"string","description":"What to count","enum":["words","lines"],"default":"words"}},"required":["text"],"additionalProperties":false}
	// {"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}
	// {"count":3} <nil>
	// invalid_input: the text is blank
	// invalid_input: invalid arguments: unknown field "txt"
}

// Clock is a hand-written native tool: the class form, for tools whose
// schemas are written rather than inferred, or that need state.
type Clock struct {
	Now func() time.Time
}

var _ registry.Native = Clock{}

// Describe returns the tool's description, with schemas written by hand.
func (Clock) Describe() packs.ToolSpec {
	return packs.ToolSpec{
		Name:         "clock_now",
		Description:  "The current time in a time zone.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"zone":{"type":"string","description":"An IANA zone name","default":"UTC"}},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"time":{"type":"string","format":"date-time"}},"required":["time"]}`),
	}
}

// Execute reads the arguments the registry has validated and returns JSON.
func (c Clock) Execute(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var in struct {
		Zone string `json:"zone"`
	}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, &registry.ToolError{Code: abi.CodeInvalidInput, Message: err.Error()}
		}
	}
	if in.Zone == "" {
		in.Zone = "UTC"
	}
	loc, err := time.LoadLocation(in.Zone)
	if err != nil {
		return nil, &registry.ToolError{Code: abi.CodeNotFound, Message: fmt.Sprintf("no time zone %q", in.Zone)}
	}
	return json.Marshal(map[string]string{"time": c.Now().In(loc).Format(time.RFC3339)})
}

// A Native written by hand is called the same way: Describe once, Execute
// per call.
func ExampleNative() {
	var tool registry.Native = Clock{Now: func() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }}
	d := tool.Describe()
	fmt.Println(d.Name+":", d.Description)

	out, err := tool.Execute(context.Background(), json.RawMessage(`{}`))
	fmt.Println(string(out), err)

	_, err = tool.Execute(context.Background(), json.RawMessage(`{"zone":"Nowhere/Atlantis"}`))
	var te *registry.ToolError
	fmt.Println(errors.As(err, &te), te.Code)
	// Output:
	// clock_now: The current time in a time zone.
	// {"time":"2025-03-01T12:00:00Z"} <nil>
	// true not_found
}
