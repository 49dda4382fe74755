package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/internal/goschema"
	"github.com/skillhost/skillhost/packs"
)

// FuncOptions describe a tool built by Func, beyond its name and the
// schemas inferred from its Go types. Description is required; every
// other field may be left at its zero value.
type FuncOptions struct {
	// Description says what the tool does and when a model should use
	// it. Required.
	Description string
	// InputSchema and OutputSchema replace the schemas inferred from In
	// and Out. An input schema must be a JSON object schema.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Examples are sample calls; each one's Args must match the input
	// schema and decode into In.
	Examples []packs.Example
	Tags     []string
	// Category groups tools in listings (default packs.DefaultCategory).
	Category string
	// DisplayName is the name shown to people (default: the name
	// humanised).
	DisplayName string
	Icon        string
	Version     string
	// SideEffects, Idempotent, RequiresNetwork and RequiresFilesystem
	// describe the tool and feed its derived risk level (packs.Tool.Risk).
	SideEffects        bool
	Idempotent         bool
	RequiresNetwork    bool
	RequiresFilesystem bool
	// RiskLevel is SAFE, MODERATE, DANGEROUS or CRITICAL; AUTO or empty
	// derives it.
	RiskLevel string
	Hidden    bool
	// Loading is packs.LoadingAlways or packs.LoadingDeferred; empty lets
	// the registry apply its default for native tools.
	Loading string
	// ConfigParams are the settings an operator may give the tool.
	ConfigParams []packs.ConfigParam
}

// Func returns a native tool named name that runs fn: the typed form of a
// Native, with its input and output JSON Schemas inferred from In and Out.
//
// # Schemas
//
// The inference is the one the Go guest SDK uses (see the documentation
// of github.com/skillhost/skillhost/guests/go/skill for every rule and the
// full tag grammar), so a type has the same schema in a native tool and in
// a Wasm tool:
//
//   - A struct is an object with "additionalProperties": false. Property
//     names come from json tags, with encoding/json's rules: `json:"-"` and
//     unexported fields are left out, embedded structs without a json name
//     are inlined (an outer field wins over an embedded one).
//   - A field is required unless its json tag has omitempty or omitzero,
//     its type is a pointer (*T), it has a default, or its jsonschema tag
//     says optional; `jsonschema:"required"` makes any field required.
//   - The desc tag gives a field's description: `desc:"What it is"`. The
//     jsonschema tag adds keywords: `jsonschema:"enum=fast|slow,default=fast"`,
//     minimum, maximum, minLength, pattern, format, example, title,
//     deprecated and others. Go doc comments are not read: reflection
//     cannot see them at run time.
//   - Slices and arrays are arrays, maps with string keys objects,
//     time.Time a "date-time" string, []byte a base64 string
//     ("contentEncoding": "base64"), any and json.RawMessage unconstrained.
//     A recursive struct is defined once in "$defs" and referenced with
//     "$ref". Channels, functions and complex numbers are refused.
//
// In must be a struct, a pointer to a struct, or a map with string keys
// (map[string]any for free-form arguments); any other type, a type the
// inference refuses, or a malformed tag is an error naming it. When Out
// says nothing of its shape (any, json.RawMessage, a json.Marshaler
// without a JSONSchema method) the tool declares no output schema.
//
// # Calls
//
// Execute decodes the arguments into In with encoding/json (empty
// arguments mean {}), refusing unknown fields exactly when the input
// schema says "additionalProperties": false at its top level (always, for
// an inferred struct schema; the refusal then applies at every depth, as
// nested inferred structs say the same). A value that does not fit In, or
// trailing data, is a *ToolError with code invalid_input. Required fields,
// enums and bounds are the registry's to check: it validates the
// arguments against the input schema before Execute runs.
//
// fn's error is returned as it is: a *ToolError keeps its code, any other
// error becomes a guest_error (see Native). A panic in fn is a *ToolError
// with code internal: inside a registry's run (RunFrom(ctx) is set) the
// registry recovers it, records the panic and its stack as an event and
// shows the model only that the tool failed; called directly, Execute
// recovers it itself and the message gives the panic value, never the
// stack.
//
// The result is Out as JSON: a string Out is returned as a JSON string, a
// json.RawMessage as it is (it must be valid JSON; empty means null), and
// any other type as json.Marshal encodes it. A value that cannot be
// encoded is a *ToolError with code internal.
//
// Func also checks the description: a name, a description, schemas that
// compile, examples that match, a known Loading and RiskLevel. Its errors
// wrap ErrInvalidTool.
func Func[In, Out any](name string, fn func(context.Context, In) (Out, error), opts *FuncOptions) (Native, error) {
	fail := func(format string, args ...any) (Native, error) {
		return nil, fmt.Errorf("%w: native tool %q: %s", ErrInvalidTool, name, fmt.Sprintf(format, args...))
	}
	switch {
	case name == "":
		return nil, fmt.Errorf("%w: a native tool needs a name", ErrInvalidTool)
	case fn == nil:
		return fail("nil function")
	case opts == nil || strings.TrimSpace(opts.Description) == "":
		return fail("a description is required (FuncOptions.Description)")
	}
	switch opts.Loading {
	case "", packs.LoadingAlways, packs.LoadingDeferred:
	default:
		return fail("loading %q is not %q or %q", opts.Loading, packs.LoadingAlways, packs.LoadingDeferred)
	}
	switch opts.RiskLevel {
	case "", "AUTO", "SAFE", "MODERATE", "DANGEROUS", "CRITICAL":
	default:
		return fail("risk level %q is not AUTO, SAFE, MODERATE, DANGEROUS or CRITICAL", opts.RiskLevel)
	}
	if err := checkFuncConfigParams(opts.ConfigParams); err != nil {
		return fail("%v", err)
	}

	inType, outType := reflect.TypeFor[In](), reflect.TypeFor[Out]()
	if !funcInputType(inType) {
		return fail("input type %s must be a struct, a pointer to a struct, or a map with string keys", inType)
	}
	input := opts.InputSchema
	if len(input) == 0 {
		var err error
		if input, err = goschema.For(inType); err != nil {
			return fail("input type %s: %v", inType, err)
		}
		if string(input) == "{}" { // a custom JSON encoding: an object is all we know
			input = json.RawMessage(`{"type":"object"}`)
		}
	}
	strict, err := funcInputSchema(input)
	if err != nil {
		if len(opts.InputSchema) == 0 {
			return fail("input type %s does not encode as a JSON object: %v", inType, err)
		}
		return fail("input schema: %v", err)
	}
	inSchema, err := packs.CompileSchema(input)
	if err != nil {
		return fail("input schema: %v", err)
	}

	output := opts.OutputSchema
	if len(output) == 0 && outType != funcRawType {
		if output, err = goschema.For(outType); err != nil {
			return fail("output type %s: %v", outType, err)
		}
		if string(output) == "{}" { // any, or a custom encoding: no constraint
			output = nil
		}
	}
	if len(output) > 0 {
		if _, err := packs.CompileSchema(output); err != nil {
			return fail("output schema: %v", err)
		}
	}

	t := &funcTool[In, Out]{fn: fn, strict: strict, rawOut: outType == funcRawType}
	t.desc = packs.ToolSpec{
		Name:               name,
		DisplayName:        opts.DisplayName,
		Description:        opts.Description,
		Icon:               opts.Icon,
		Version:            opts.Version,
		InputSchema:        slices.Clone(input),
		OutputSchema:       slices.Clone(output),
		Examples:           cloneFuncExamples(opts.Examples),
		Tags:               slices.Clone(opts.Tags),
		Category:           opts.Category,
		SideEffects:        opts.SideEffects,
		Idempotent:         opts.Idempotent,
		RequiresNetwork:    opts.RequiresNetwork,
		RequiresFilesystem: opts.RequiresFilesystem,
		RiskLevel:          opts.RiskLevel,
		Hidden:             opts.Hidden,
		Loading:            opts.Loading,
		ConfigParams:       cloneFuncParams(opts.ConfigParams),
	}
	for i, ex := range t.desc.Examples {
		if err := t.checkExample(inSchema, ex); err != nil {
			return fail("example %d: %v", i+1, err)
		}
	}
	return t, nil
}

var funcRawType = reflect.TypeFor[json.RawMessage]()

// funcTool is the Native Func returns.
type funcTool[In, Out any] struct {
	desc packs.ToolSpec
	fn   func(context.Context, In) (Out, error)
	// strict refuses unknown fields: the input schema says
	// "additionalProperties": false.
	strict bool
	// rawOut: Out is json.RawMessage, passed through.
	rawOut bool
}

// Describe returns the tool's description; each call returns a copy.
func (t *funcTool[In, Out]) Describe() packs.ToolSpec {
	d := t.desc
	d.InputSchema = slices.Clone(d.InputSchema)
	d.OutputSchema = slices.Clone(d.OutputSchema)
	d.Examples = cloneFuncExamples(d.Examples)
	d.Tags = slices.Clone(d.Tags)
	d.ConfigParams = cloneFuncParams(d.ConfigParams)
	return d
}

// Execute decodes args into In, runs the function and encodes its result.
func (t *funcTool[In, Out]) Execute(ctx context.Context, args json.RawMessage) (out json.RawMessage, err error) {
	if RunFrom(ctx) == nil {
		// Outside a registry nothing else would stop a panic. Inside one,
		// the registry recovers it and records the stack as an event.
		defer func() {
			if p := recover(); p != nil {
				out, err = nil, &ToolError{Code: abi.CodeInternal,
					Message: fmt.Sprintf("tool %q failed inside the host: panic: %v", t.desc.Name, p)}
			}
		}()
	}
	in, terr := t.decode(args)
	if terr != nil {
		return nil, terr
	}
	res, err := t.fn(ctx, in)
	if err != nil {
		return nil, err
	}
	return t.encode(res)
}

// decode reads the arguments object into a new In.
func (t *funcTool[In, Out]) decode(args []byte) (In, *ToolError) {
	var v In
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if args[0] != '{' {
		return v, funcInvalidArgs("the arguments must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	if t.strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&v); err != nil {
		return v, funcInvalidArgs(funcDecodeError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, funcInvalidArgs("unexpected data after the arguments object")
	}
	return v, nil
}

// encode turns the function's result into the tool's JSON output.
func (t *funcTool[In, Out]) encode(res Out) (json.RawMessage, error) {
	if t.rawOut {
		raw := bytes.TrimSpace(any(res).(json.RawMessage))
		if len(raw) == 0 {
			return json.RawMessage("null"), nil
		}
		if !json.Valid(raw) {
			return nil, &ToolError{Code: abi.CodeInternal, Message: fmt.Sprintf("tool %q returned invalid JSON", t.desc.Name)}
		}
		return raw, nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, &ToolError{Code: abi.CodeInternal, Message: fmt.Sprintf("tool %q: encoding its output: %s", t.desc.Name, strings.TrimPrefix(err.Error(), "json: "))}
	}
	return b, nil
}

// checkExample checks one example's arguments against the input schema
// and the Go type.
func (t *funcTool[In, Out]) checkExample(s *jsonschema.Schema, ex packs.Example) error {
	if len(bytes.TrimSpace(ex.Args)) == 0 {
		return errors.New("no args")
	}
	vs, err := packs.ValidateJSON(s, ex.Args)
	if err != nil {
		return err
	}
	if len(vs) > 0 {
		msgs := make([]string, len(vs))
		for i, v := range vs {
			msgs[i] = v.String()
		}
		return fmt.Errorf("args do not match the input schema: %s", strings.Join(msgs, "; "))
	}
	if _, terr := t.decode(ex.Args); terr != nil {
		return fmt.Errorf("args do not decode into %s: %s", reflect.TypeFor[In](), terr.Message)
	}
	return nil
}

// funcInputType reports whether t decodes from a JSON object the way a
// tool's arguments need: a struct, a pointer to one, or a map with string
// keys. Structs that encode as something else (time.Time) are caught by
// their schema.
func funcInputType(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		return true
	}
	switch t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Map:
		return t.Key().Kind() == reflect.String
	}
	return false
}

// funcInputSchema checks that an input schema describes a JSON object and
// reports whether it refuses properties it does not name
// ("additionalProperties": false at the top level).
func funcInputSchema(doc json.RawMessage) (strict bool, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil || top == nil {
		return false, errors.New("not a JSON object")
	}
	if typ, ok := top["type"]; ok && string(typ) != `"object"` {
		return false, fmt.Errorf(`the arguments are a JSON object, but the schema's type is %s`, typ)
	}
	return string(top["additionalProperties"]) == "false", nil
}

// checkFuncConfigParams checks what a manifest's schema would: each param has
// a unique name and a known type, and a secret has no default.
func checkFuncConfigParams(params []packs.ConfigParam) error {
	seen := map[string]bool{}
	for _, p := range params {
		switch {
		case p.Name == "":
			return errors.New("a config param needs a name")
		case seen[p.Name]:
			return fmt.Errorf("config param %q is declared twice", p.Name)
		case p.Type == packs.ParamSecret && len(p.Default) > 0:
			return fmt.Errorf("config param %q is a secret and cannot have a default", p.Name)
		}
		seen[p.Name] = true
		switch p.Type {
		case packs.ParamString, packs.ParamNumber, packs.ParamBoolean, packs.ParamSelect, packs.ParamText,
			packs.ParamSecret, packs.ParamPath, packs.ParamURL, packs.ParamCode:
		default:
			return fmt.Errorf("config param %q has an unknown type %q", p.Name, p.Type)
		}
	}
	return nil
}

func cloneFuncExamples(in []packs.Example) []packs.Example {
	if in == nil {
		return nil
	}
	out := make([]packs.Example, len(in))
	for i, e := range in {
		out[i] = packs.Example{Args: slices.Clone(e.Args), Description: e.Description, Tags: slices.Clone(e.Tags)}
	}
	return out
}

func cloneFuncParams(in []packs.ConfigParam) []packs.ConfigParam {
	if in == nil {
		return nil
	}
	out := make([]packs.ConfigParam, len(in))
	for i, p := range in {
		p.Default = slices.Clone(p.Default)
		p.Options = slices.Clone(p.Options)
		out[i] = p
	}
	return out
}

func funcInvalidArgs(msg string) *ToolError {
	return &ToolError{Code: abi.CodeInvalidInput, Message: "invalid arguments: " + msg}
}

// funcDecodeError turns an encoding/json error into a message naming
// the field or the byte offset, in the words of a JSON Schema reader.
func funcDecodeError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the bad one included.
		return fmt.Sprintf("malformed JSON at byte offset %d: %s", max(syn.Offset-1, 0), strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		want := funcJSONKind(typ.Type)
		if typ.Field != "" {
			return fmt.Sprintf("field %q: expected %s, got JSON %s", typ.Field, want, typ.Value)
		}
		return fmt.Sprintf("expected %s, got JSON %s", want, typ.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// funcJSONKind names the JSON type a Go type decodes from.
func funcJSONKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}
