package packs

// What MCP clients accept of a tool's schemas. The MCP schema of the
// revisions skillhost serves (testdata/mcp-schema) requires a tool's
// inputSchema to be a JSON object with "type": "object", and up to
// 2025-11-25 its "properties", and those of the outputSchema, to map
// names to objects, and "required" to be a list of strings. JSON Schema itself allows more (a
// boolean schema anywhere a schema goes), and clients built on the
// official TypeScript SDK refuse a whole tools/list when one tool breaks
// the rule. FitInputSchema and FitOutputSchema bring a tool's schemas
// into that form when an equivalent one exists, and say exactly what is
// wrong when none does.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/skillhost/skillhost/internal/jsonobj"
)

// Keys of a tool's schemas, as pack.yaml writes them; ToolSchemaError.Field
// is one of them.
const (
	InputSchemaField  = "input_schema"
	OutputSchemaField = "output_schema"
)

// ToolSchemaError is a part of a tool's schema that MCP clients refuse
// and that has no equivalent form they accept. It matches ErrToolSchema.
type ToolSchemaError struct {
	// Field is InputSchemaField or OutputSchemaField.
	Field string
	// Path locates the part in the schema, as a JSON path: "$" for the
	// schema itself, "$.properties.query" below it.
	Path string
	// Got says what is there: "false", "an array", `"string"`.
	Got string
	// Want says what a client accepts there.
	Want string
	// at is Path as an instance location, for manifest errors.
	at []string
}

func (e *ToolSchemaError) Error() string {
	return fmt.Sprintf("%s at %s is %s; MCP clients accept %s", e.Field, e.Path, e.Got, e.Want)
}

// Is makes a *ToolSchemaError match ErrToolSchema.
func (e *ToolSchemaError) Is(target error) bool { return target == ErrToolSchema }

// What a client accepts, in the words of ToolSchemaError.Want.
const (
	wantSchemaObject  = `a JSON Schema object ({} for a value of any type)`
	wantObjectRoot    = `an object schema ({"type": "object", "properties": {…}}), as MCP sends a tool's arguments as one JSON object`
	wantObjectType    = `"object", as MCP sends a tool's arguments as one JSON object`
	wantPropertiesMap = `an object that maps each property name to its schema`
	wantRequiredList  = `a list of property names`
	wantSchemaString  = `a string naming the JSON Schema dialect`
	anyValueSchema    = `{}`
	noValueSchema     = `{"not":{}}`
	emptyObjectSchema = `{"type":"object","properties":{}}`
)

// FitInputSchema returns a tool's input schema in the form MCP clients
// accept. Parts that break the MCP schema's rules but have an exact
// equivalent that keeps them are rewritten, and the rest of the document
// is kept byte for byte:
//
//   - a schema of true (any arguments) becomes
//     {"type":"object","properties":{}};
//   - a root "type" list that holds "object" becomes "object" (arguments
//     are always an object: the registry refuses anything else);
//   - a root without "type" gets "type": "object", put first, and one
//     without "properties" gets "properties": {}, after "type": OpenAI
//     refuses a function whose object parameters have no properties
//     ("object schema missing properties"), which is what a map input,
//     a custom JSON encoding or a "$ref" root declares;
//   - a property whose schema is true becomes {}, and false {"not":{}}.
//
// Anything else that breaks the rules is refused, each part with a
// *ToolSchemaError (joined): a schema of false or of something that is
// not a schema, a root "type" without "object", "properties" that is not
// an object or holds a property whose schema is neither an object nor a
// boolean, "required" that is not a list of strings, "$schema" that is
// not a string. An empty raw is returned as it is: the tool takes an
// object of any properties. raw is never changed; the result is raw
// itself when nothing is rewritten.
func FitInputSchema(raw json.RawMessage) (json.RawMessage, error) {
	return fitSchema(InputSchemaField, raw)
}

// FitOutputSchema is FitInputSchema for an output schema, with one
// difference: a schema whose root "type" is not exactly "object" (a
// boolean schema, a string, a type list) is kept as it is. MCP gets no
// outputSchema for such a tool (see registry.MCPTools), so no client
// checks it; only an object root's parts are checked and rewritten.
func FitOutputSchema(raw json.RawMessage) (json.RawMessage, error) {
	return fitSchema(OutputSchemaField, raw)
}

// FitSchemas applies FitInputSchema and FitOutputSchema to t's schemas,
// replacing those that were rewritten, and returns their errors joined.
// The errors are *ToolSchemaError values, whose Field names the schema.
func (t *ToolSpec) FitSchemas() error {
	in, inErr := FitInputSchema(t.InputSchema)
	out, outErr := FitOutputSchema(t.OutputSchema)
	if inErr == nil {
		t.InputSchema = in
	}
	if outErr == nil {
		t.OutputSchema = out
	}
	return joinErrors(inErr, outErr)
}

// joinErrors joins the non-nil errors, flattening joined ones, so that a
// caller sees one *ToolSchemaError per leaf; nil when there are none.
func joinErrors(errs ...error) error {
	var all []error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			all = append(all, j.Unwrap()...)
			continue
		}
		all = append(all, err)
	}
	switch len(all) {
	case 0:
		return nil
	case 1:
		return all[0]
	}
	return &joined{all}
}

// joined is what errors.Join makes, with the messages joined by "; "
// instead of line breaks, so that a tool's problems read as one line.
type joined struct{ errs []error }

func (j *joined) Error() string {
	parts := make([]string, len(j.errs))
	for i, e := range j.errs {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

func (j *joined) Unwrap() []error { return j.errs }

// edit replaces the bytes [start, end) of a document with text.
type edit struct {
	start, end int
	text       string
}

func fitSchema(field string, raw json.RawMessage) (json.RawMessage, error) {
	doc := bytes.Trim(raw, " \t\r\n") // JSON's white space, not Unicode's
	if len(doc) == 0 {
		return raw, nil
	}
	fail := func(at []string, got, want string) *ToolSchemaError {
		return &ToolSchemaError{Field: field, Path: jsonPath(at), Got: got, Want: want, at: at}
	}
	if !json.Valid(doc) {
		return nil, fail(nil, "not JSON", wantSchemaObject)
	}
	output := field == OutputSchemaField
	if doc[0] != '{' {
		switch {
		case output:
			return raw, nil // not an object schema: not sent to MCP clients
		case string(doc) == "true":
			return json.RawMessage(emptyObjectSchema), nil
		case string(doc) == "false":
			return nil, fail(nil, "false, a schema no arguments match", wantObjectRoot)
		}
		return nil, fail(nil, kindOf(doc), wantObjectRoot)
	}
	root, _ := jsonobj.Members(doc) // valid JSON, an object: members cannot fail
	if output && !objectTyped(root, doc) {
		return raw, nil
	}
	var edits []edit
	var errs []error
	typeEnd, hasProperties := -1, false
	for _, m := range root {
		v := doc[m.Start:m.End]
		at := []string{m.Key}
		switch m.Key {
		case "type":
			if output {
				continue // an output schema is checked only when its type says "object"
			}
			typeEnd = m.End
			if rewrite, got := fitRootType(v); got != "" {
				errs = append(errs, fail(at, got, wantObjectType))
			} else if rewrite != "" {
				edits = append(edits, edit{m.Start, m.End, rewrite})
			}
		case "properties":
			hasProperties = true
			if v[0] != '{' {
				errs = append(errs, fail(at, kindOf(v), wantPropertiesMap))
				continue
			}
			props, _ := jsonobj.Members(v)
			for _, p := range props {
				pv := v[p.Start:p.End]
				switch {
				case string(pv) == "true":
					edits = append(edits, edit{m.Start + p.Start, m.Start + p.End, anyValueSchema})
				case string(pv) == "false":
					edits = append(edits, edit{m.Start + p.Start, m.Start + p.End, noValueSchema})
				case pv[0] != '{':
					errs = append(errs, fail([]string{m.Key, p.Key}, kindOf(pv), wantSchemaObject))
				}
			}
		case "required":
			var names []string
			if json.Unmarshal(v, &names) != nil || v[0] != '[' {
				errs = append(errs, fail(at, describeValue(v), wantRequiredList))
			}
		case "$schema":
			if v[0] != '"' {
				errs = append(errs, fail(at, kindOf(v), wantSchemaString))
			}
		}
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs...)
	}
	if !output {
		edits = append(edits, rootObjectEdits(doc, len(root) > 0, typeEnd, hasProperties)...)
		slices.SortStableFunc(edits, func(a, b edit) int { return a.start - b.start })
	}
	if len(edits) == 0 {
		return raw, nil
	}
	var b bytes.Buffer
	last := 0
	for _, e := range edits { // members come in document order, so edits do too
		b.Write(doc[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(doc[last:])
	return b.Bytes(), nil
}

// rootObjectEdits returns the insertions that give an input schema's
// root what OpenAI requires of a function's parameters and the MCP schema
// of a tool's inputSchema: "type": "object" (put first) when it has no
// "type", and "properties": {} (after "type") when it has no
// "properties". Arguments are always an object and an empty
// "properties" constrains nothing, so the schema accepts what it did.
// typeEnd is the end of the root's last "type" value, -1 when it has
// none; members says the root has any.
func rootObjectEdits(doc []byte, members bool, typeEnd int, hasProperties bool) []edit {
	switch {
	case !members:
		return []edit{{0, len(doc), `{"type":"object","properties":{}}`}}
	case typeEnd < 0 && !hasProperties:
		return []edit{{1, 1, `"type":"object","properties":{},`}}
	case typeEnd < 0:
		return []edit{{1, 1, `"type":"object",`}}
	case !hasProperties:
		return []edit{{typeEnd, typeEnd, `,"properties":{}`}}
	}
	return nil
}

// objectTyped reports whether the root's "type" is "object" in one of
// the places it is written: a key written twice is read differently by
// different decoders, so a schema any of them may send as an object
// schema is checked.
func objectTyped(root []jsonobj.Member, doc []byte) bool {
	for _, m := range root {
		var s string
		if m.Key == "type" && json.Unmarshal(doc[m.Start:m.End], &s) == nil && s == "object" {
			return true
		}
	}
	return false
}

// fitRootType checks an input schema's root "type" value v: "object" is
// kept, a list that holds "object" is to be rewritten to it (rewrite),
// and anything else is refused (got says what it is).
func fitRootType(v []byte) (rewrite, got string) {
	switch v[0] {
	case '"':
		var s string
		json.Unmarshal(v, &s)
		if s == "object" {
			return "", ""
		}
		return "", strconv.Quote(s)
	case '[':
		var list []any
		json.Unmarshal(v, &list)
		for _, x := range list {
			if x == "object" {
				return `"object"`, ""
			}
		}
		return "", "the list " + string(compactRaw(v)) + `, without "object"`
	}
	return "", kindOf(v)
}

// kindOf names the JSON type of a value, for messages: "an array",
// "a string", "true".
func kindOf(v []byte) string {
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return string(v)
	case 'n':
		return "null"
	}
	return "a number"
}

// describeValue is kindOf, followed by the value itself when it is
// short: `an array ["a",1]`.
func describeValue(v []byte) string {
	k := kindOf(v)
	if c := compactRaw(v); len(c) <= 40 && (v[0] == '[' || v[0] == '"' || v[0] == '{' || v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		return k + " " + string(c)
	}
	return k
}

func compactRaw(v []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// jsonPath writes an instance location inside a schema as a JSON path:
// "$", "$.properties.query", `$.properties["a b"]`.
func jsonPath(at []string) string {
	var b strings.Builder
	b.WriteByte('$')
	for _, k := range at {
		if isIdentifier(k) {
			b.WriteString("." + k)
		} else {
			b.WriteString("[" + strconv.Quote(k) + "]")
		}
	}
	return b.String()
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}

// unjoin flattens joined errors into their leaves.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}
