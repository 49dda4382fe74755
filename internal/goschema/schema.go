package goschema

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Schemaer is implemented by types that describe their own JSON schema.
// The inference uses the returned document as is (field tags may still add
// a description, default or examples) instead of deriving one by
// reflection; use it for types with custom JSON encodings.
type Schemaer interface {
	JSONSchema() json.RawMessage
}

// Schema is a JSON schema document (the 2020-12 keywords tools need),
// marshalled with its keywords and properties in a fixed order so the same
// Go types always produce the same bytes.
type Schema struct {
	Ref                  string            `json:"$ref,omitempty"`
	Type                 string            `json:"type,omitempty"`
	Format               string            `json:"format,omitempty"`
	Title                string            `json:"title,omitempty"`
	Description          string            `json:"description,omitempty"`
	Enum                 []json.RawMessage `json:"enum,omitempty"`
	Default              json.RawMessage   `json:"default,omitempty"`
	Examples             []json.RawMessage `json:"examples,omitempty"`
	Minimum              json.Number       `json:"minimum,omitempty"`
	Maximum              json.Number       `json:"maximum,omitempty"`
	ExclusiveMinimum     json.Number       `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum     json.Number       `json:"exclusiveMaximum,omitempty"`
	MinLength            *int              `json:"minLength,omitempty"`
	MaxLength            *int              `json:"maxLength,omitempty"`
	Pattern              string            `json:"pattern,omitempty"`
	ContentEncoding      string            `json:"contentEncoding,omitempty"`
	Items                *Schema           `json:"items,omitempty"`
	MinItems             *int              `json:"minItems,omitempty"`
	MaxItems             *int              `json:"maxItems,omitempty"`
	UniqueItems          bool              `json:"uniqueItems,omitempty"`
	Properties           *Properties       `json:"properties,omitempty"`
	Required             []string          `json:"required,omitempty"`
	AdditionalProperties *Schema           `json:"additionalProperties,omitempty"`
	// NoAdditional, when true, marshals "additionalProperties": false.
	NoAdditional bool               `json:"-"`
	Deprecated   bool               `json:"deprecated,omitempty"`
	Defs         map[string]*Schema `json:"$defs,omitempty"`

	// Raw, when set, is a schema a Schemaer supplied; it is marshalled
	// instead of the fields above (merged with any annotations).
	Raw json.RawMessage `json:"-"`
}

// Properties is an ordered list of named property schemas; it marshals as
// a JSON object whose keys keep the Go field order.
type Properties struct {
	Names   []string
	Schemas []*Schema
}

// Get returns the schema of the property name, or nil.
func (p *Properties) Get(name string) *Schema {
	for i, n := range p.Names {
		if n == name {
			return p.Schemas[i]
		}
	}
	return nil
}

// MarshalJSON writes the properties in order.
func (p *Properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range p.Names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(n)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(p.Schemas[i])
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalJSON writes the schema with "additionalProperties": false when
// NoAdditional is set, and a Schemaer's document merged with annotations.
func (s *Schema) MarshalJSON() ([]byte, error) {
	type plain Schema
	if s.Raw != nil {
		return s.marshalRaw()
	}
	b, err := json.Marshal((*plain)(s))
	if err != nil || !s.NoAdditional {
		return b, err
	}
	// Insert "additionalProperties":false before "$defs" (or at the end) so
	// it sits with the other object keywords.
	tail := []byte("}")
	if i := bytes.Index(b, []byte(`,"$defs":`)); i >= 0 && s.Defs != nil {
		tail = b[i:]
		b = b[:i]
	} else {
		b = b[:len(b)-1]
	}
	out := append([]byte{}, b...)
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = append(out, `"additionalProperties":false`...)
	return append(out, tail...), nil
}

func (s *Schema) marshalRaw() ([]byte, error) {
	if s.Description == "" && s.Default == nil && s.Examples == nil && s.Title == "" && !s.Deprecated {
		return s.Raw, nil
	}
	var m map[string]any
	if err := json.Unmarshal(s.Raw, &m); err != nil {
		return nil, err
	}
	if s.Title != "" {
		m["title"] = s.Title
	}
	if s.Description != "" {
		m["description"] = s.Description
	}
	if s.Default != nil {
		m["default"] = s.Default
	}
	if s.Examples != nil {
		m["examples"] = s.Examples
	}
	if s.Deprecated {
		m["deprecated"] = true
	}
	return json.Marshal(m)
}

// Of returns the JSON Schema inferred for T's JSON encoding, as For does.
func Of[T any]() (json.RawMessage, error) {
	return For(reflect.TypeFor[T]())
}

// For returns the JSON Schema inferred for t's JSON encoding, as used for
// tool input and output schemas. It fails on types JSON cannot carry
// (channels, functions, complex numbers, maps whose keys do not encode as
// strings) and on malformed field tags, naming the field. See the package
// documentation for the rules and the tag grammar.
func For(t reflect.Type) (json.RawMessage, error) {
	s, err := Derive(t)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// Derive returns the schema inferred for t as a document the caller may
// inspect (the guest SDK checks arguments against it) before marshalling
// it. The errors are those of For.
func Derive(t reflect.Type) (s *Schema, err error) {
	g := &generator{
		inProgress: map[reflect.Type]string{},
		used:       map[reflect.Type]bool{},
		defs:       map[string]*Schema{},
		defNames:   map[reflect.Type]string{},
		root:       deref(t),
	}
	defer func() {
		if r := recover(); r != nil {
			if se, ok := r.(schemaError); ok {
				s, err = nil, se
				return
			}
			panic(r)
		}
	}()
	s = g.schema(t, "")
	if len(g.defs) > 0 {
		// The root struct is never in $defs (it is referenced as "#"), so
		// s is an inline schema that can carry the definitions.
		s.Defs = g.defs
	}
	return s, nil
}

type schemaError string

func (e schemaError) Error() string { return string(e) }

func failf(path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = "field " + path + ": " + msg
	}
	panic(schemaError(msg))
}

type generator struct {
	// inProgress maps struct types being generated to their $ref.
	inProgress map[reflect.Type]string
	// used records which in-progress types were referenced recursively.
	used     map[reflect.Type]bool
	defs     map[string]*Schema
	defNames map[reflect.Type]string
	root     reflect.Type
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	numberType    = reflect.TypeFor[json.Number]()
	schemaerType  = reflect.TypeFor[Schemaer]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// implements reports whether t or *t implements the interface iface.
func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

// schemaOf calls t's JSONSchema method.
func schemaOf(t reflect.Type) json.RawMessage {
	return reflect.New(t).Interface().(Schemaer).JSONSchema()
}

func (g *generator) schema(t reflect.Type, path string) *Schema {
	t = deref(t)
	switch t {
	case timeType:
		return &Schema{Type: "string", Format: "date-time"}
	case rawType:
		return &Schema{}
	case numberType:
		return &Schema{Type: "number"}
	}
	if t.Kind() != reflect.Interface && implements(t, schemaerType) {
		raw := schemaOf(t)
		if !json.Valid(raw) {
			failf(path, "%s.JSONSchema returned invalid JSON", t)
		}
		return &Schema{Raw: raw}
	}
	if t.Kind() != reflect.Interface && implements(t, marshalerType) {
		return &Schema{} // custom JSON encoding: no constraint we can know
	}
	if t.Kind() != reflect.Interface && implements(t, textMarshaler) {
		return &Schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &Schema{Type: "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: "integer", Minimum: "0"}
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Interface:
		return &Schema{}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !implements(t.Elem(), marshalerType) && !implements(t.Elem(), textMarshaler) {
			return &Schema{Type: "string", ContentEncoding: "base64"}
		}
		return &Schema{Type: "array", Items: g.schema(t.Elem(), path+"[]")}
	case reflect.Array:
		n := t.Len()
		return &Schema{Type: "array", Items: g.schema(t.Elem(), path+"[]"), MinItems: &n, MaxItems: &n}
	case reflect.Map:
		k := t.Key()
		switch {
		case k.Kind() == reflect.String, implements(k, textMarshaler):
		case k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr:
		default:
			failf(path, "map key type %s does not encode as a JSON object key", k)
		}
		return &Schema{Type: "object", AdditionalProperties: g.schema(t.Elem(), path+"{}")}
	case reflect.Struct:
		return g.structSchema(t, path)
	}
	failf(path, "type %s cannot be represented in JSON", t)
	return nil
}

func (g *generator) structSchema(t reflect.Type, path string) *Schema {
	if ref, ok := g.inProgress[t]; ok {
		g.used[t] = true
		return &Schema{Ref: ref}
	}
	ref := "#"
	if t != g.root {
		ref = "#/$defs/" + g.defName(t)
	}
	g.inProgress[t] = ref
	defer delete(g.inProgress, t)

	s := &Schema{Type: "object", Properties: &Properties{}, NoAdditional: true}
	seen := map[string]bool{}
	g.addFields(s, t, path, seen, map[reflect.Type]bool{t: true})
	if len(s.Properties.Names) == 0 {
		s.Properties = nil
	}
	if g.used[t] && ref != "#" {
		g.defs[g.defName(t)] = s
		return &Schema{Ref: ref}
	}
	return s
}

// defName picks a unique $defs name for t: its Go name, with a numeric
// suffix when two packages use the same one.
func (g *generator) defName(t reflect.Type) string {
	if n, ok := g.defNames[t]; ok {
		return n
	}
	base := t.Name()
	if base == "" {
		base = "T"
	}
	if i := strings.IndexByte(base, '['); i >= 0 { // generic instantiation
		base = base[:i]
	}
	name := base
	for i := 2; ; i++ {
		taken := false
		for _, n := range g.defNames {
			if n == name {
				taken = true
				break
			}
		}
		if !taken {
			break
		}
		name = base + strconv.Itoa(i)
	}
	g.defNames[t] = name
	return name
}

// addFields adds t's JSON fields to s, inlining embedded structs the way
// encoding/json does; names already present (from a shallower level) win.
func (g *generator) addFields(s *Schema, t reflect.Type, path string, seen map[string]bool, embedding map[reflect.Type]bool) {
	type embedded struct {
		t    reflect.Type
		path string
	}
	var later []embedded
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := deref(f.Type)
			if ft.Kind() == reflect.Struct {
				if !embedding[ft] {
					later = append(later, embedded{ft, path})
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		fpath := name
		if path != "" {
			fpath = path + "." + name
		}
		fs, required := g.field(f, opts, fpath)
		s.Properties.Names = append(s.Properties.Names, name)
		s.Properties.Schemas = append(s.Properties.Schemas, fs)
		if required {
			s.Required = append(s.Required, name)
		}
	}
	for _, e := range later {
		embedding[e.t] = true
		g.addFields(s, e.t, e.path, seen, embedding)
		delete(embedding, e.t)
	}
}

// field builds one property's schema from its type and tags, and reports
// whether it is required.
func (g *generator) field(f reflect.StructField, jsonOpts, path string) (*Schema, bool) {
	ft := f.Type
	var s *Schema
	if hasOpt(jsonOpts, "string") && isScalar(deref(ft).Kind()) {
		// ",string" encodes numbers and bools as JSON strings.
		s = &Schema{Type: "string"}
	} else {
		s = g.schema(ft, path)
	}
	if s.Ref != "" && (f.Tag.Get("desc") != "" || f.Tag.Get("jsonschema") != "") {
		// Keep the shared definition intact: annotate a copy of the ref.
		s = &Schema{Ref: s.Ref}
	} else if s.Ref == "" {
		cp := *s
		s = &cp
	}

	required := ft.Kind() != reflect.Pointer && !hasOpt(jsonOpts, "omitempty") && !hasOpt(jsonOpts, "omitzero")
	if d := f.Tag.Get("desc"); d != "" {
		s.Description = d
	}
	tag, ok := f.Tag.Lookup("jsonschema")
	if !ok {
		return s, required
	}
	// Keywords about values apply to the items of an array field.
	valueTarget := s
	vt := deref(ft)
	if s.Type == "array" && s.Items != nil && (vt.Kind() == reflect.Slice || vt.Kind() == reflect.Array) {
		items := *s.Items
		s.Items = &items
		valueTarget = s.Items
		vt = deref(vt.Elem())
	}
	for _, kv := range splitTag(tag, ',') {
		key, val, hasVal := strings.Cut(kv, "=")
		key = strings.TrimSpace(key)
		need := func() {
			if !hasVal {
				failf(path, "jsonschema key %q needs a value", key)
			}
		}
		switch key {
		case "":
		case "required":
			required = true
		case "optional":
			required = false
		case "description", "desc":
			need()
			s.Description = val
		case "title":
			need()
			s.Title = val
		case "deprecated":
			s.Deprecated = true
		case "default":
			need()
			s.Default = tagValue(deref(ft), val, path, key)
			required = false
		case "example", "examples":
			need()
			for _, v := range splitTag(val, '|') {
				s.Examples = append(s.Examples, tagValue(deref(ft), v, path, key))
			}
		case "enum":
			need()
			for _, v := range splitTag(val, '|') {
				valueTarget.Enum = append(valueTarget.Enum, tagValue(vt, v, path, key))
			}
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			need()
			if _, err := strconv.ParseFloat(val, 64); err != nil {
				failf(path, "jsonschema %s=%q is not a number", key, val)
			}
			n := json.Number(val)
			switch key {
			case "minimum":
				valueTarget.Minimum = n
			case "maximum":
				valueTarget.Maximum = n
			case "exclusiveMinimum":
				valueTarget.ExclusiveMinimum = n
			default:
				valueTarget.ExclusiveMaximum = n
			}
		case "minLength", "maxLength", "minItems", "maxItems":
			need()
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				failf(path, "jsonschema %s=%q is not a non-negative integer", key, val)
			}
			switch key {
			case "minLength":
				valueTarget.MinLength = &n
			case "maxLength":
				valueTarget.MaxLength = &n
			case "minItems":
				s.MinItems = &n
			default:
				s.MaxItems = &n
			}
		case "uniqueItems":
			s.UniqueItems = true
		case "pattern":
			need()
			valueTarget.Pattern = val
		case "format":
			need()
			valueTarget.Format = val
		default:
			failf(path, "unknown jsonschema key %q", key)
		}
	}
	return s, required
}

func isScalar(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

func hasOpt(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// splitTag splits s at sep. A backslash escapes a following comma, pipe or
// backslash. When sep is a comma, commas inside balanced [...] or {...}
// do not split, so JSON values (default=[1,2]) and character classes
// (pattern=^[a-z,]+$) need no escaping.
func splitTag(s string, sep byte) []string {
	var parts []string
	var cur strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case ',', '|', '\\':
				cur.WriteByte(s[i+1])
			default: // keep the backslash: it belongs to a pattern
				cur.WriteByte(c)
				cur.WriteByte(s[i+1])
			}
			i++
			continue
		}
		if sep == ',' {
			switch c {
			case '[', '{':
				depth++
			case ']', '}':
				if depth > 0 {
					depth--
				}
			}
		}
		if c == sep && depth == 0 {
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	return append(parts, cur.String())
}

// tagValue turns the text of an enum, default or example into JSON for a
// value of type t: strings are taken literally, numbers and booleans are
// parsed, anything else must be written as JSON.
func tagValue(t reflect.Type, text, path, key string) json.RawMessage {
	t = deref(t)
	var v any
	switch {
	case t.Kind() == reflect.String, t == timeType,
		t.Kind() == reflect.Struct && implements(t, textMarshaler):
		v = text
	case t.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			failf(path, "jsonschema %s value %q is not a boolean", key, text)
		}
		v = b
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uintptr:
		if _, err := strconv.ParseInt(text, 10, 64); err != nil {
			if _, err := strconv.ParseUint(text, 10, 64); err != nil {
				failf(path, "jsonschema %s value %q is not an integer", key, text)
			}
		}
		return json.RawMessage(text)
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			failf(path, "jsonschema %s value %q is not a number", key, text)
		}
		return json.RawMessage(text)
	default:
		if !json.Valid([]byte(text)) {
			failf(path, "jsonschema %s value %q must be JSON for type %s", key, text, t)
		}
		var buf bytes.Buffer
		_ = json.Compact(&buf, []byte(text))
		return buf.Bytes()
	}
	b, _ := json.Marshal(v)
	return b
}
