// Package skill is the Go guest SDK for skillhost: it turns typed Go
// functions into tools of a WebAssembly module that follows the Extism guest
// conventions, builds with standard Go (GOOS=wasip1) or TinyGo, and runs
// under skillhost or any Extism host.
//
// # Writing a tool
//
// Register each tool with Tool from a package-level variable (or an init
// function), and give it a one-line Wasm export that calls Run:
//
//	type SlugIn struct {
//		Text string `json:"text" desc:"Text to turn into a slug"`
//	}
//	type SlugOut struct {
//		Slug string `json:"slug"`
//	}
//
//	var slugTool = skill.Tool("slugify", func(in SlugIn) (SlugOut, error) {
//		return SlugOut{Slug: slug(in.Text)}, nil
//	}, skill.Describe("Turn text into a URL slug"))
//
//	//go:wasmexport slugify
//	func slugify() int32 { return slugTool.Run() }
//
//	func main() {}
//
// Reactor modules (-buildmode=c-shared) run package initialisation when they
// are instantiated but never run main, so tools registered inside main would
// not exist. The export name must match the tool's export (by default its
// name). The package itself exports describe, which returns an
// abi.Description: the ABI version and every tool with its input and output
// schemas, from which a manifest can be generated.
//
// # What a call does
//
// The export reads the call's input (the JSON arguments object; empty input
// counts as {}), decodes it into In and runs the function:
//
//   - Input that is not an object, is malformed, has unknown fields (they
//     are refused, matching "additionalProperties": false), misses a
//     required field, or breaks an enum, bound, length or item count gives
//     code invalid_input with a message naming the field or byte offset.
//   - A returned *Error (see InvalidInput, NotFound, Errorf ...) keeps its
//     code; wrapping it with fmt.Errorf("...: %w", err) keeps the code and
//     the added context. Any other error gives code guest_error.
//   - A panic gives code trap. Standard Go recovers it and the instance
//     stays usable; TinyGo has no recover on WebAssembly, so there the panic
//     aborts the call and the host reports a trap itself.
//   - Otherwise Out is encoded as JSON into the call's output.
//
// Errors go to the host through error_set as the JSON of abi.Error, and the
// export returns 1; success returns 0.
//
// # Schemas
//
// Input and output schemas are derived from the Go types by reflection,
// following encoding/json. The host's native Go tools (registry.Func) use
// the same inference, so a type has the same schema on either side:
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
//     with "$ref" ("#" when it is the root type itself).
//
// Channels, functions and complex numbers are refused when the tool is
// registered. Go doc comments are not available at run time, so
// descriptions come from tags.
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
//	pattern=RE         a regular expression (checked by the host only)
//	format=NAME        a format such as uri, email, date, date-time
//	minItems=N maxItems=N uniqueItems   array constraints
//	deprecated
//
// Values are written as plain text and read according to the field's type:
// strings literally, numbers and booleans parsed, anything else as JSON
// (default=["a","b"] for a slice). On a slice or array field, enum, bounds,
// lengths, pattern and format apply to the items; description, default,
// examples and item counts apply to the array. A malformed tag makes Tool
// panic with the field's path.
//
// # Host services
//
// Config, Var, SetVar, DeleteVar, Log, Logf and HTTP wrap the Extism kernel
// functions; CallTool and CallCapability call other tools and host services
// through skillhost's tool_call and capability_call imports (module
// extism:host/user). Each import is linked only when the module uses the
// function that needs it, so a module that never calls CallTool runs under
// hosts that do not provide tool_call.
//
// # Testing
//
// Everything except the Wasm kernel compiles natively: a tool package can
// call Invoke in ordinary Go tests, with the same decoding, validation and
// error codes as the export. Host services then return ErrNoHost.
package skill
