package skill

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/skillhost/skillhost/abi"
)

// argPlan reads the arguments of a tool whose input type is a flat struct
// (fields of string, bool, integer and float kinds, or pointers to them)
// in one pass over the JSON text, checking the schema on the way. It is
// made once, when the tool is registered, and takes only arguments it can
// read exactly as decodeInput does: plain objects whose keys are field
// names spelt exactly (without escapes), each once, with values of the
// field's JSON type and strings in valid UTF-8. Any other input, and any
// input that breaks the schema, is left to decodeInput, which gives the
// same value and reports the problem with its usual message.
type argPlan struct {
	root     *schema
	fields   []planField
	required []int // indices into fields, one per required property
}

// planField is one JSON property of the input struct.
type planField struct {
	name   string
	index  int          // the struct field's index
	kind   reflect.Kind // the value's kind, behind the pointer if ptr
	ptr    bool
	elem   reflect.Type // the pointed-to type when ptr
	schema *schema      // the property's schema
	check  bool         // schema has something validate checks on a value
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[json.Number]() // a string that encoding/json checks is a number
)

// decodesItself reports whether encoding/json would call a method of t
// (or *t) to decode it.
func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || pt.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

// newArgPlan returns the plan for input type t with schema s, or nil when
// t is not a flat struct the plan can read (decodeInput then reads every
// call's arguments).
func newArgPlan(t reflect.Type, s *schema) *argPlan {
	if t.Kind() != reflect.Struct || decodesItself(t) || s == nil || s.Raw != nil || s.Ref != "" ||
		s.Type != "object" || len(s.Enum) > 0 || s.AdditionalProperties != nil || s.Properties == nil {
		return nil
	}
	p := &argPlan{root: s}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts := tag, ""
		for j := 0; j < len(tag); j++ {
			if tag[j] == ',' {
				name, opts = tag[:j], tag[j+1:]
				break
			}
		}
		if opts != "" && opts != "omitempty" && opts != "omitzero" {
			return nil
		}
		if name == "" {
			name = f.Name
		}
		if !plainName(name) {
			return nil
		}
		pf := planField{name: name, index: i}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			if decodesItself(ft) {
				return nil
			}
			ft = ft.Elem()
			pf.ptr, pf.elem = true, ft
		}
		if decodesItself(ft) || ft == numberType {
			return nil
		}
		switch pf.kind = ft.Kind(); pf.kind {
		case reflect.Bool, reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
		default:
			return nil
		}
		if pf.schema = s.Properties.Get(name); pf.schema == nil {
			return nil
		}
		ps := pf.schema
		pf.check = ps.Raw == nil && (ps.Ref != "" || len(ps.Enum) > 0 || ps.MinLength != nil || ps.MaxLength != nil ||
			ps.Minimum != "" || ps.Maximum != "" || ps.ExclusiveMinimum != "" || ps.ExclusiveMaximum != "")
		for _, other := range p.fields {
			if other.name == name {
				return nil
			}
		}
		p.fields = append(p.fields, pf)
	}
	if len(p.fields) > 64 {
		return nil
	}
	for _, name := range s.Required {
		k := p.field(name)
		if k < 0 {
			return nil
		}
		p.required = append(p.required, k)
	}
	return p
}

// plainName reports whether a property name is made of letters, digits,
// '_', '-' and '.', which encoding/json takes as a tag name as it is.
func plainName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return name != ""
}

// field returns the index in p.fields of the property name, or -1.
func (p *argPlan) field(name string) int {
	for k := range p.fields {
		if p.fields[k].name == name {
			return k
		}
	}
	return -1
}

// fieldBytes is field for a name still in the input.
func (p *argPlan) fieldBytes(name []byte) int {
	for k := range p.fields {
		if p.fields[k].name == string(name) {
			return k
		}
	}
	return -1
}

// readArgs decodes the arguments input into *v, a zero value: through the
// plan p when it takes them, else (p nil, or input it leaves) through
// decodeInput.
func readArgs[In any](input []byte, v *In, s *schema, p *argPlan) *abi.Error {
	if p.read(input, v) {
		return nil
	}
	var zero In
	*v = zero
	return decodeInput(input, v, s)
}

// read decodes the arguments input into *v, a zero value of the plan's
// struct, when the plan can: it reports false for a nil plan and for input
// it leaves to decodeInput, and *v may then hold part of the input.
func (p *argPlan) read(input []byte, v any) bool {
	if p == nil {
		return false
	}
	input = bytes.TrimSpace(input)
	if len(input) == 0 {
		input = []byte("{}")
	}
	return p.decode(input, reflect.ValueOf(v).Elem())
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// decode reads input (trimmed, not empty) into the struct v points to,
// which must be zero, and checks it against the schema. It returns false
// when it cannot tell the input is valid: v may then hold part of the
// input.
func (p *argPlan) decode(input []byte, v reflect.Value) bool {
	if input[0] != '{' {
		return false
	}
	var seen uint64
	i := skipSpace(input, 1)
	if i < len(input) && input[i] == '}' {
		i++
	} else {
		for {
			// "key"
			if i >= len(input) || input[i] != '"' {
				return false
			}
			start := i + 1
			end := start
			for end < len(input) && input[end] != '"' && input[end] != '\\' {
				end++
			}
			if end >= len(input) || input[end] != '"' {
				return false
			}
			k := p.fieldBytes(input[start:end])
			if k < 0 || seen&(1<<k) != 0 {
				return false
			}
			seen |= 1 << k
			i = skipSpace(input, end+1)
			if i >= len(input) || input[i] != ':' {
				return false
			}
			i = skipSpace(input, i+1)
			var ok bool
			if i, ok = p.value(input, i, &p.fields[k], v); !ok {
				return false
			}
			i = skipSpace(input, i)
			if i >= len(input) {
				return false
			}
			if input[i] == '}' {
				i++
				break
			}
			if input[i] != ',' {
				return false
			}
			i = skipSpace(input, i+1)
		}
	}
	if i != len(input) {
		return false
	}
	for _, k := range p.required {
		if seen&(1<<k) == 0 {
			return false
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// value reads the value of field f at input[i:], stores it in v's field
// and checks it against the field's schema; it returns where the value
// ends.
func (p *argPlan) value(input []byte, i int, f *planField, v reflect.Value) (int, bool) {
	if i >= len(input) {
		return i, false
	}
	fv := v.Field(f.index)
	if f.ptr {
		nv := reflect.New(f.elem)
		fv.Set(nv)
		fv = nv.Elem()
	}
	var generic any
	switch f.kind {
	case reflect.String:
		if input[i] != '"' {
			return i, false
		}
		str, end, ok := readString(input, i)
		if !ok {
			return i, false
		}
		fv.SetString(str)
		i = end
		if f.check {
			generic = str
		}
	case reflect.Bool:
		switch {
		case hasPrefix(input[i:], "true"):
			fv.SetBool(true)
			i += 4
			generic = true
		case hasPrefix(input[i:], "false"):
			fv.SetBool(false)
			i += 5
			generic = false
		default:
			return i, false
		}
	default:
		end, integer := scanNumber(input, i)
		if end == i {
			return i, false
		}
		lit := string(input[i:end])
		switch f.kind {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if !integer {
				return i, false
			}
			n, err := strconv.ParseInt(lit, 10, 64)
			if err != nil || fv.OverflowInt(n) {
				return i, false
			}
			fv.SetInt(n)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if !integer || input[i] == '-' {
				return i, false
			}
			n, err := strconv.ParseUint(lit, 10, 64)
			if err != nil || fv.OverflowUint(n) {
				return i, false
			}
			fv.SetUint(n)
		case reflect.Float32, reflect.Float64:
			n, err := strconv.ParseFloat(lit, fv.Type().Bits())
			if err != nil || fv.OverflowFloat(n) {
				return i, false
			}
			fv.SetFloat(n)
		default:
			return i, false
		}
		i = end
		if f.check {
			generic = json.Number(lit)
		}
	}
	if f.check && validate(generic, f.schema, p.root, f.name) != "" {
		return i, false
	}
	return i, true
}

// readString reads the JSON string whose opening quote is b[i] as
// encoding/json does, escapes included, and returns where it ends. It
// reports false for a string that is not valid JSON, and for one holding
// invalid UTF-8, which it leaves to encoding/json.
func readString(b []byte, i int) (s string, end int, ok bool) {
	start := i + 1
	j := start
	ascii := true
	for ; j < len(b); j++ {
		c := b[j]
		if c == '"' || c == '\\' || c < ' ' {
			break
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if j >= len(b) || b[j] < ' ' || !ascii && !utf8.Valid(b[start:j]) {
		return "", i, false
	}
	if b[j] == '"' {
		return string(b[start:j]), j + 1, true
	}
	out := make([]byte, j-start, len(b)-start)
	copy(out, b[start:j])
	for j < len(b) {
		switch c := b[j]; {
		case c == '"':
			return string(out), j + 1, true
		case c < ' ':
			return "", i, false
		case c == '\\':
			if j+1 >= len(b) {
				return "", i, false
			}
			switch e := b[j+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(b, j+2)
				if r < 0 {
					return "", i, false
				}
				j += 6
				if utf16.IsSurrogate(r) {
					// A pair is one character; any other surrogate is
					// U+FFFD, and what follows it is read on its own.
					next := rune(-1)
					if j+1 < len(b) && b[j] == '\\' && b[j+1] == 'u' {
						next = hex4(b, j+2)
					}
					if d := utf16.DecodeRune(r, next); d != unicode.ReplacementChar {
						r = d
						j += 6
					} else {
						r = unicode.ReplacementChar
					}
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return "", i, false
			}
			j += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			j++
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return "", i, false
			}
			out = append(out, b[j:j+size]...)
			j += size
		}
	}
	return "", i, false
}

// hex4 returns the value of the four hex digits at b[i:], or -1.
func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

func hasPrefix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[:len(s)]) == s
}

// scanNumber returns where the JSON number starting at b[i] ends (i when
// there is none) and whether it has neither fraction nor exponent.
func scanNumber(b []byte, i int) (end int, integer bool) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return start, false
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		if i = digits(b, i+1); i < 0 {
			return start, false
		}
		integer = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i = digits(b, i); i < 0 {
			return start, false
		}
		integer = false
	}
	return i, integer
}

// digits returns where the run of at least one decimal digit at b[i:]
// ends, or -1 when there is none.
func digits(b []byte, i int) int {
	if i >= len(b) || b[i] < '0' || b[i] > '9' {
		return -1
	}
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
