package fastschema

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"slices"
)

// Plan is a compiled schema of the subset: it checks JSON text against
// the schema without decoding it. A Plan is immutable and safe for
// concurrent use.
type Plan struct {
	root *node
}

// draft202012 is the only $schema a plan accepts (at the root): the draft
// the registry compiles schemas with when they name none.
const draft202012 = "https://json-schema.org/draft/2020-12/schema"

// maxSchemaDepth bounds the nesting of subschemas a plan compiles.
const maxSchemaDepth = 32

// maxRequired is the most required names one object schema may list (they
// are tracked in a 64-bit mask).
const maxRequired = 64

// typeMask is a set of JSON Schema types.
type typeMask uint8

const (
	tNull typeMask = 1 << iota
	tBoolean
	tInteger
	tNumber
	tString
	tArray
	tObject
)

var typeNames = map[string]typeMask{
	"null": tNull, "boolean": tBoolean, "integer": tInteger, "number": tNumber,
	"string": tString, "array": tArray, "object": tObject,
}

// node is one compiled (sub)schema.
type node struct {
	never bool // the schema false
	any   bool // no constraint at all (true, {}, only annotations)

	types typeMask // 0: every type

	// sets are the enum and const keywords: a value must be a member of
	// each set. Members are scalars only.
	sets [][]scalar

	// strings
	minLen, maxLen int // -1: none
	pattern        *regexp.Regexp
	format         format

	// numbers
	minimum, maximum, exclMin, exclMax *decimal
	numeric                            bool // any of the four, or enum or const

	// arrays
	items              *node // nil: any items
	minItems, maxItems int   // -1: none

	// objects
	props    []prop         // properties, then required names not among them
	index    map[string]int // props by name, for objects with many properties
	reqMask  uint64         // the bits of every required name
	noExtra  bool           // additionalProperties: false
	extra    *node          // additionalProperties schema (nil: any)
	objCheck bool           // some object keyword is present
}

// prop is a property name the object keywords mention.
type prop struct {
	name   string
	schema *node  // nil when the name is only required, not in properties
	bit    uint64 // its bit in reqMask, 0 when not required
}

// scalar is a member of an enum or a const: null, a boolean, a number or a
// string.
type scalar struct {
	kind byte // 'n' null, 'b' boolean, 'd' number, 's' string
	b    bool
	d    *decimal
	s    string
}

var anyNode = &node{any: true, minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}

// Compile returns the plan of schema when schema keeps to the subset (see
// the package documentation), and false otherwise: the caller then
// validates with the full validator.
func Compile(schema json.RawMessage) (*Plan, bool) {
	d := json.NewDecoder(bytes.NewReader(schema))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, false
	}
	n, ok := compileNode(v, 0)
	if !ok {
		return nil, false
	}
	return &Plan{root: n}, true
}

func compileNode(v any, depth int) (*node, bool) {
	if depth > maxSchemaDepth {
		return nil, false
	}
	switch v := v.(type) {
	case bool:
		if v {
			return anyNode, true
		}
		return &node{never: true}, true
	case map[string]any:
		return compileObject(v, depth)
	}
	return nil, false
}

func compileObject(m map[string]any, depth int) (*node, bool) {
	n := &node{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	constrained := false
	var required []string
	var properties map[string]any
	for k, v := range m {
		ok := true
		switch k {
		// Annotations: checked for the type the meta-schema wants, else
		// ignored, as the validator ignores them.
		case "$schema":
			ok = depth == 0 && v == draft202012
		case "title", "description", "$comment", "contentEncoding", "contentMediaType":
			_, ok = v.(string)
		case "deprecated", "readOnly", "writeOnly":
			_, ok = v.(bool)
		case "examples":
			_, ok = v.([]any)
		case "default":

		case "type":
			constrained = true
			n.types, ok = compileTypes(v)
		case "enum":
			constrained = true
			var set []scalar
			set, ok = compileEnum(v)
			n.sets = append(n.sets, set)
		case "const":
			constrained = true
			var s scalar
			s, ok = compileScalar(v)
			n.sets = append(n.sets, []scalar{s})
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			constrained = true
			var d *decimal
			d, ok = compileNumber(v)
			switch k {
			case "minimum":
				n.minimum = d
			case "maximum":
				n.maximum = d
			case "exclusiveMinimum":
				n.exclMin = d
			default:
				n.exclMax = d
			}
			n.numeric = true
		case "minLength", "maxLength", "minItems", "maxItems":
			constrained = true
			var c int
			c, ok = compileCount(v)
			switch k {
			case "minLength":
				n.minLen = c
			case "maxLength":
				n.maxLen = c
			case "minItems":
				n.minItems = c
			default:
				n.maxItems = c
			}
		case "pattern":
			constrained = true
			var s string
			if s, ok = v.(string); ok {
				re, err := regexp.Compile(s)
				ok = err == nil
				n.pattern = re
			}
		case "format":
			var s string
			if s, ok = v.(string); ok {
				n.format, ok = formatOf(s)
				constrained = constrained || n.format != fmtNone
			}
		case "items":
			constrained = true
			n.items, ok = compileNode(v, depth+1)
		case "properties":
			constrained = true
			properties, ok = v.(map[string]any)
		case "required":
			constrained = true
			required, ok = compileRequired(v)
		case "additionalProperties":
			constrained = true
			var extra *node
			if extra, ok = compileNode(v, depth+1); ok {
				switch {
				case extra.never:
					n.noExtra = true
				case !extra.any:
					n.extra = extra
				}
			}
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
	if len(n.sets) > 0 {
		n.numeric = true
	}
	if !constrained {
		return anyNode, true
	}
	// properties in a fixed order (map order is random), then the required
	// names they do not declare.
	names := make([]string, 0, len(properties))
	for name := range properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s, ok := compileNode(properties[name], depth+1)
		if !ok {
			return nil, false
		}
		n.props = append(n.props, prop{name: name, schema: s})
	}
	for i, name := range required {
		bit := uint64(1) << i
		n.reqMask |= bit
		if j := slices.IndexFunc(n.props, func(p prop) bool { return p.name == name }); j >= 0 {
			n.props[j].bit = bit
		} else {
			n.props = append(n.props, prop{name: name, bit: bit})
		}
	}
	if len(n.props) > 8 {
		n.index = make(map[string]int, len(n.props))
		for i, p := range n.props {
			n.index[p.name] = i
		}
	}
	n.objCheck = len(n.props) > 0 || n.noExtra || n.extra != nil
	return n, true
}

func compileTypes(v any) (typeMask, bool) {
	switch v := v.(type) {
	case string:
		t, ok := typeNames[v]
		return t, ok
	case []any:
		var mask typeMask
		for _, e := range v {
			s, ok := e.(string)
			t := typeNames[s]
			if !ok || t == 0 || mask&t != 0 {
				return 0, false
			}
			mask |= t
		}
		return mask, mask != 0
	}
	return 0, false
}

func compileEnum(v any) ([]scalar, bool) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, false
	}
	set := make([]scalar, len(arr))
	for i, e := range arr {
		if set[i], ok = compileScalar(e); !ok {
			return nil, false
		}
	}
	return set, true
}

func compileScalar(v any) (scalar, bool) {
	switch v := v.(type) {
	case nil:
		return scalar{kind: 'n'}, true
	case bool:
		return scalar{kind: 'b', b: v}, true
	case string:
		return scalar{kind: 's', s: v}, true
	case json.Number:
		d, ok := compileNumber(v)
		return scalar{kind: 'd', d: d}, ok
	}
	return scalar{}, false
}

func compileNumber(v any) (*decimal, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	d := new(decimal)
	if !d.parse([]byte(num)) {
		return nil, false
	}
	return d, true
}

// compileCount reads a non-negative integer keyword (minLength…): any
// JSON form of an integer, as the validator reads them, up to 2³¹-1.
func compileCount(v any) (int, bool) {
	d, ok := compileNumber(v)
	if !ok || d.neg || !d.isInt() || d.exp > 10 {
		return 0, false
	}
	c := 0
	for i := 0; i < d.exp; i++ {
		c *= 10
		if i < d.n {
			c += int(d.d[i] - '0')
		}
	}
	if c > 1<<31-1 {
		return 0, false
	}
	return c, true
}

func compileRequired(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok || len(arr) > maxRequired {
		return nil, false
	}
	names := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok || slices.Contains(names, s) {
			return nil, false
		}
		names = append(names, s)
	}
	return names, true
}
