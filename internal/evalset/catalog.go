package evalset

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// MaxParamDepth is how many schema levels LoadCatalog walks for Params.
// Each step into a property, into array items or into an anyOf, oneOf or
// allOf branch is one level, so a property of the objects in an array
// property is three levels down.
const MaxParamDepth = 6

// schemaKeys are the names a tool definition may give its input schema: the
// OpenAI function shape, the MCP tool shape and the Anthropic tool shape.
var schemaKeys = []string{"parameters", "inputSchema", "input_schema"}

const catalogShape = `{"name": "...", "description": "...", "parameters": {JSON Schema}} or {"type": "function", "function": {...}}`

// LoadCatalog reads a catalog: one tool definition per line, either in the
// OpenAI function shape {"name", "description", "parameters"} or wrapped as
// {"type": "function", "function": {...}}. The schema may also be given as
// "inputSchema" or "input_schema", as MCP and Anthropic tool lists write it.
// Blank lines are skipped.
//
// The first bad line stops the read with a *LineError naming the line, the
// field and what was expected; a name defined twice is an error naming both
// lines. A catalog with no tools is an error too.
func LoadCatalog(r io.Reader) ([]Tool, error) {
	var tools []Tool
	seen := make(map[string]int)
	err := readLines(r, fileCatalog, func(n int, line []byte) error {
		t, nameField, err := parseTool(n, line)
		if err != nil {
			return err
		}
		if first, dup := seen[t.Name]; dup {
			return &LineError{File: fileCatalog, Line: n, Field: nameField, FirstLine: first,
				Detail: fmt.Sprintf("tool %q is already defined on line %d; expected unique names", t.Name, first)}
		}
		seen[t.Name] = n
		tools = append(tools, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(tools) == 0 {
		return nil, fmt.Errorf("%w: no tool definitions; expected one %s per line", ErrBadCatalog, catalogShape)
	}
	return tools, nil
}

// parseTool reads one catalog line. It also returns the JSON path of the
// name, for the duplicate check.
func parseTool(n int, line []byte) (Tool, string, error) {
	fail := func(field, format string, args ...any) (Tool, string, error) {
		return Tool{}, "", &LineError{File: fileCatalog, Line: n, Field: field, Detail: fmt.Sprintf(format, args...)}
	}
	top, err := decodeObject(line)
	if err != nil {
		return fail("", "expected a JSON object %s: %v", catalogShape, err)
	}
	def, prefix := top, ""
	typ := top.get("type")
	if fn := top.get("function"); fn != nil {
		if typ != nil {
			if s, ok := stringValue(typ); !ok || s != "function" {
				return fail("type", `expected "function" beside a "function" object, found %s`, string(typ))
			}
		}
		if def, err = decodeObject(fn); err != nil {
			return fail("function", "expected an object with name, description and parameters: %v", err)
		}
		prefix = "function."
	} else if s, ok := stringValue(typ); ok && s == "function" && top.get("name") == nil {
		return fail("function", `missing; "type": "function" expects the definition in a "function" object`)
	}

	var t Tool
	t.Line = n
	rawName := def.get("name")
	if rawName == nil {
		return fail(prefix+"name", "missing; expected %s", catalogShape)
	}
	name, ok := stringValue(rawName)
	if !ok {
		return fail(prefix+"name", "expected a string, found %s", kind(rawName))
	}
	if msg := checkName(name); msg != "" {
		return fail(prefix+"name", "%s", msg)
	}
	t.Name = name

	if raw := def.get("description"); raw != nil && !isNull(raw) {
		d, ok := stringValue(raw)
		if !ok {
			return fail(prefix+"description", "expected a string, found %s", kind(raw))
		}
		t.Description = d
	}

	var schemaKey string
	for _, k := range schemaKeys {
		raw := def.get(k)
		if raw == nil || isNull(raw) {
			continue
		}
		if schemaKey != "" {
			return fail(prefix+k, "the schema is already given as %q; expected only one of %s", schemaKey, strings.Join(schemaKeys, ", "))
		}
		schemaKey = k
		schema, err := decodeObject(raw)
		if err != nil {
			return fail(prefix+k, "expected a JSON Schema object: %v", err)
		}
		w := paramWalker{seen: make(map[string]bool)}
		if err := w.walk(schema, "", prefix+k, 0); err != nil {
			return fail(err.path, "%s", err.detail)
		}
		t.Parameters = append(json.RawMessage(nil), raw...)
		t.Params = w.params
	}
	return t, prefix + "name", nil
}

// paramWalker collects the parameters of a JSON Schema.
type paramWalker struct {
	params []Param
	seen   map[string]bool
}

// schemaError is a problem at a JSON path inside a schema.
type schemaError struct{ path, detail string }

func (w *paramWalker) add(name, description string) {
	if w.seen[name] {
		// A name seen in an earlier anyOf branch keeps its first entry,
		// unless that entry had no description.
		for i := range w.params {
			if w.params[i].Name == name && w.params[i].Description == "" {
				w.params[i].Description = description
			}
		}
		return
	}
	w.seen[name] = true
	w.params = append(w.params, Param{Name: name, Description: description})
}

// walk records the properties of schema under the dotted prefix and
// descends into nested objects, array items and anyOf/oneOf/allOf
// branches. path is the JSON path of schema for error messages.
func (w *paramWalker) walk(schema object, prefix, path string, depth int) *schemaError {
	if depth >= MaxParamDepth {
		return nil
	}
	if raw := schema.get("properties"); raw != nil {
		props, err := decodeObject(raw)
		if err != nil {
			return &schemaError{path + ".properties", fmt.Sprintf("expected an object mapping parameter names to schemas: %v", err)}
		}
		for _, p := range props {
			ppath := path + ".properties." + p.key
			if p.key == "" {
				return &schemaError{path + ".properties", "expected non-empty parameter names"}
			}
			name := p.key
			if prefix != "" {
				name = prefix + "." + p.key
			}
			if isBool(p.value) {
				w.add(name, "")
				continue
			}
			sub, err := decodeObject(p.value)
			if err != nil {
				return &schemaError{ppath, fmt.Sprintf("expected a JSON Schema object: %v", err)}
			}
			desc := ""
			if raw := sub.get("description"); raw != nil && !isNull(raw) {
				d, ok := stringValue(raw)
				if !ok {
					return &schemaError{ppath + ".description", fmt.Sprintf("expected a string, found %s", kind(raw))}
				}
				desc = d
			}
			w.add(name, desc)
			if err := w.walk(sub, name, ppath, depth+1); err != nil {
				return err
			}
		}
	}
	if raw := schema.get("items"); raw != nil && !isBool(raw) {
		switch kind(raw) {
		case "an object":
			if err := w.walkSub(raw, prefix, path+".items", depth); err != nil {
				return err
			}
		case "an array":
			if err := w.walkList(raw, prefix, path+".items", depth); err != nil {
				return err
			}
		default:
			return &schemaError{path + ".items", fmt.Sprintf("expected a schema object or an array of them, found %s", kind(raw))}
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if raw := schema.get(k); raw != nil {
			if err := w.walkList(raw, prefix, path+"."+k, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkSub walks one subschema one level down.
func (w *paramWalker) walkSub(raw json.RawMessage, prefix, path string, depth int) *schemaError {
	sub, err := decodeObject(raw)
	if err != nil {
		return &schemaError{path, fmt.Sprintf("expected a JSON Schema object: %v", err)}
	}
	return w.walk(sub, prefix, path, depth+1)
}

// walkList walks an array of subschemas one level down.
func (w *paramWalker) walkList(raw json.RawMessage, prefix, path string, depth int) *schemaError {
	var list []json.RawMessage
	if kind(raw) != "an array" || json.Unmarshal(raw, &list) != nil {
		return &schemaError{path, fmt.Sprintf("expected an array of schema objects, found %s", kind(raw))}
	}
	for i, item := range list {
		if isBool(item) {
			continue
		}
		if err := w.walkSub(item, prefix, fmt.Sprintf("%s[%d]", path, i), depth); err != nil {
			return err
		}
	}
	return nil
}

func isBool(raw json.RawMessage) bool { return kind(raw) == "a boolean" }
