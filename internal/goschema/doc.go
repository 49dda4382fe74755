// Package goschema infers JSON Schemas (2020-12) from Go types by
// reflection. It is the one inference skillhost has: the Go guest SDK
// (guests/go/skill) uses it for the tools of a Wasm module and the
// registry's Func for native Go tools, so a type gets the same schema
// whichever side runs it. It builds for GOOS=wasip1 and with TinyGo, and
// uses no reflection beyond what both support.
//
// # Rules
//
// The schema follows encoding/json:
//
//   - struct → "type": "object" with "properties" in field order,
//     "required", and "additionalProperties": false. Field names come from
//     json tags; `json:"-"` and unexported fields are skipped; embedded
//     structs without a json name are inlined (outer fields win).
//   - string → string; bool → boolean; int and uint kinds → integer (uints
//     with "minimum": 0); float kinds → number; ",string" fields → string.
//   - slices and arrays → array with "items" (arrays also fix minItems and
//     maxItems); []byte → string with "contentEncoding": "base64".
//   - maps with string (or integer, or TextMarshaler) keys → object with
//     "additionalProperties" of the value schema.
//   - pointers → the schema of what they point to.
//   - time.Time → string with "format": "date-time"; json.Number → number;
//     any, json.RawMessage and other json.Marshaler types → {} (no
//     constraint); other TextMarshaler types → string.
//   - A type with a JSONSchema() json.RawMessage method (Schemaer) supplies
//     its own schema.
//   - A recursive named struct is defined once in "$defs" and referenced
//     with "$ref" ("#" when it is the root type itself); inference never
//     loops.
//
// Channels, functions and complex numbers are refused, naming the field.
// Go doc comments are not available at run time (reflection cannot see
// them), so descriptions come from tags.
//
// A field is required unless its json tag has omitempty or omitzero, it is
// a pointer, it has a default, or its jsonschema tag says optional; the
// jsonschema tag "required" makes any field required.
//
// # Tag grammar
//
// Two tags annotate a field's schema:
//
//	desc:"free text"
//	jsonschema:"key=value,key=value,flag"
//
// desc sets the description and may contain any characters. jsonschema is a
// comma-separated list of keys, some with values. A comma inside balanced
// [...] or {...} does not end a value (default=[1,2], pattern=^[a-z,]+$);
// elsewhere a backslash escapes a comma, a pipe or a backslash
// (description=Small\, fast). Keys:
//
//	description=TEXT   (or desc=) the description
//	title=TEXT         a short title
//	required           the field is required even with omitempty
//	optional           the field is optional even without omitempty
//	default=V          the default value; implies optional
//	example=V|V        example values (examples= also accepted)
//	enum=V|V|V         the allowed values
//	minimum=N maximum=N exclusiveMinimum=N exclusiveMaximum=N
//	minLength=N maxLength=N   string length in characters
//	pattern=RE         a regular expression
//	format=NAME        a format such as uri, email, date, date-time
//	minItems=N maxItems=N uniqueItems   array constraints
//	deprecated
//
// Values are written as plain text and read according to the field's type:
// strings literally, numbers and booleans parsed, anything else as JSON
// (default=["a","b"] for a slice). On a slice or array field, enum, bounds,
// lengths, pattern and format apply to the items; description, default,
// examples and item counts apply to the array. A malformed tag is an error
// naming the field's path.
package goschema
