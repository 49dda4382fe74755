package skill

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/skillhost/skillhost/abi"
)

// Invoke runs the registered tool name on the JSON arguments input, the
// way its Wasm export does, and returns the JSON output or the error the
// export would report. It needs no host, so tool authors can unit-test
// their tools natively with `go test`; host services (Config, HTTP,
// CallTool, ...) report that no host is present.
//
// An unknown name gives code not_found; input that is not a JSON object,
// has unknown fields, misses required fields or breaks an enum or bound
// gives invalid_input; a panic in the tool gives trap.
func Invoke(name string, input []byte) (output []byte, err error) {
	out, e := invoke(name, input)
	if e != nil {
		return nil, e
	}
	return out, nil
}

func invoke(name string, input []byte) (out []byte, e *abi.Error) {
	t := lookup(name)
	if t == nil {
		return nil, &abi.Error{Code: abi.CodeNotFound, Message: fmt.Sprintf("no tool %q in this module", name)}
	}
	defer func() {
		// Under TinyGo on wasm recover is not supported: a panic aborts the
		// call and the host reports a trap, which matches this code.
		if r := recover(); r != nil {
			out, e = nil, &abi.Error{Code: abi.CodeTrap, Message: fmt.Sprintf("tool %q panicked: %v", name, r)}
		}
	}()
	return t.invoke(input)
}

// Run runs the tool registered as name on the current call's input and
// sets its output or error through the host; it returns 0 on success and 1
// on failure, the value a tool export returns. Call it from the tool's
// export:
//
//	//go:wasmexport slugify
//	func slugify() int32 { return skill.Run("slugify") }
func Run(name string) int32 {
	out, e := invoke(name, env.input())
	return finish(out, e)
}

// runDescribe is the body of the describe export.
func runDescribe() int32 {
	b, err := json.Marshal(Description())
	if err != nil {
		return finish(nil, &abi.Error{Code: abi.CodeGuestError, Message: "encoding the description: " + err.Error()})
	}
	return finish(b, nil)
}

func finish(out []byte, e *abi.Error) int32 {
	if e != nil {
		b, err := json.Marshal(e)
		if err != nil {
			b = []byte(e.Message)
		}
		env.setError(b)
		return 1
	}
	env.output(out)
	return 0
}

// decodeInput reads the arguments object into v: empty input is read as
// {}, unknown fields and trailing data are refused, and the decoded value
// is checked against the schema for required fields, enums and bounds.
func decodeInput(input []byte, v any, s *schema) *abi.Error {
	input = bytes.TrimSpace(input)
	if len(input) == 0 {
		input = []byte("{}")
	}
	if input[0] != '{' && s.Type == "object" {
		return invalidInput("the arguments must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalidInput(describeDecodeError(err, input))
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalidInput("unexpected data after the arguments object")
	}
	var generic any
	d := json.NewDecoder(bytes.NewReader(input))
	d.UseNumber()
	if err := d.Decode(&generic); err != nil {
		return invalidInput(err.Error())
	}
	if msg := validate(generic, s, s, ""); msg != "" {
		return invalidInput(msg)
	}
	return nil
}

func invalidInput(msg string) *abi.Error {
	return &abi.Error{Code: abi.CodeInvalidInput, Message: "invalid arguments: " + msg}
}

// describeDecodeError turns an encoding/json error into a message naming
// the field or the byte offset.
func describeDecodeError(err error, input []byte) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the bad one included.
		return fmt.Sprintf("malformed JSON at byte offset %d: %s", max(syn.Offset-1, 0), strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %q: expected %s, got JSON %s", typ.Field, jsonKind(typ.Type.Kind().String(), typ.Type.String()), typ.Value)
		}
		return fmt.Sprintf("expected %s, got JSON %s", jsonKind(typ.Type.Kind().String(), typ.Type.String()), typ.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON"
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return msg
}

// jsonKind names a Go kind the way a JSON Schema reader would.
func jsonKind(kind, typeName string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return typeName
}
