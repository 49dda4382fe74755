package confwalk

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"
)

// Rules are what a section's struct cannot say in its tags: keys read by
// hand, keys refused with a reason, switches fixed at one value. An owner
// package registers them for its section type with Register, at init.
type Rules struct {
	// Hooks read the named keys by hand; the value returned, when ok, is
	// stored in the field of that tag. A hook records its own problems.
	Hooks map[string]func(w *Walker, kv Value) (v any, ok bool)
	// Fixed are switches listed as keys of the section that skillhost does
	// not let the operator turn (see Walker.Fixed).
	Fixed []FixedKey
	// Refused are keys that are not settings of the section, each with
	// the message that follows its path ("is not a setting: …").
	Refused map[string]string
}

// FixedKey is a switch that only accepts Want; Why says why.
type FixedKey struct {
	Key  string
	Want bool
	Why  string
}

var (
	rulesMu sync.RWMutex
	rules   = map[reflect.Type]Rules{}
)

// Register sets the rules Decode follows for sections of type T. It
// panics when T is registered twice (a programmer error at init).
func Register[T any](r Rules) {
	t := reflect.TypeFor[T]()
	rulesMu.Lock()
	defer rulesMu.Unlock()
	if _, dup := rules[t]; dup {
		panic("confwalk: rules registered twice for " + t.String())
	}
	rules[t] = r
}

func rulesFor(t reflect.Type) Rules {
	rulesMu.RLock()
	defer rulesMu.RUnlock()
	return rules[t]
}

// Validator is a section that checks itself: Decode calls Validate after
// reading the section, and puts each error built with Invalid on the line
// of its key.
type Validator interface {
	Validate() error
}

// field is one key of a section struct.
type field struct {
	name  string
	index []int
}

// fields returns the keys of a section struct, in field order.
func fields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("toml")
		name, _, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out = append(out, field{name: name, index: f.Index})
	}
	return out
}

// Keys returns the keys a section struct of type t accepts, in the order
// of its fields, then its fixed switches: what the unknown-key message
// lists and what the documentation must list. t is a struct type.
func Keys(t reflect.Type) []string {
	var out []string
	for _, f := range fields(t) {
		out = append(out, f.name)
	}
	for _, f := range rulesFor(t).Fixed {
		out = append(out, f.Key)
	}
	return out
}

var durationType = reflect.TypeFor[time.Duration]()

// Decode reads the table kv into dst, a pointer to a struct whose exported
// fields carry `toml:"key"` tags: bool, *bool (nil: not set), string,
// int, int64, time.Duration (written "30s"), []string, and structs (a
// sub-table, decoded the same way). A key of the table no field names is
// reported with the keys the struct has; then, when dst is a Validator,
// Validate is called and its errors are put on their keys' lines. Decode
// reports whether the section was read without a problem.
func (w *Walker) Decode(kv Value, dst any) bool {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("confwalk: Decode into %T, want a pointer to a struct", dst))
	}
	before := len(w.errs)
	lines := map[string]int{"": kv.Line}
	if !w.decodeStruct(kv, rv.Elem(), nil, lines) {
		return false
	}
	if v, ok := dst.(Validator); ok {
		w.rekey(kv, v.Validate(), lines)
	}
	return len(w.errs) == before
}

func (w *Walker) decodeStruct(kv Value, sv reflect.Value, rel Key, lines map[string]int) bool {
	keys, ok := w.Table(kv, fmt.Sprintf("a table ([%s])", kv.Key))
	if !ok {
		return false
	}
	t := sv.Type()
	r := rulesFor(t)
	byName := map[string]field{}
	for _, f := range fields(t) {
		byName[f.name] = f
	}
	for _, k := range keys {
		name := k.Key.Last()
		lines[rel.Child(name).String()] = k.Line
		f, known := byName[name]
		switch {
		case known && r.Hooks[name] != nil:
			if v, ok := r.Hooks[name](w, k); ok {
				sv.FieldByIndex(f.index).Set(reflect.ValueOf(v))
			}
		case known:
			w.decodeField(k, sv.FieldByIndex(f.index), rel.Child(name), lines)
		case r.Refused[name] != "":
			w.Errorf(k, "%s %s", k.Key, r.Refused[name])
		default:
			if i := indexFixed(r.Fixed, name); i >= 0 {
				w.Fixed(k, r.Fixed[i].Want, r.Fixed[i].Why)
				continue
			}
			w.Unknown(k, strings.Join(Keys(t), ", "))
		}
	}
	return true
}

func indexFixed(fs []FixedKey, name string) int {
	for i, f := range fs {
		if f.Key == name {
			return i
		}
	}
	return -1
}

func (w *Walker) decodeField(k Value, fv reflect.Value, rel Key, lines map[string]int) {
	switch {
	case fv.Type() == durationType:
		if d, ok := w.Duration(k); ok {
			fv.SetInt(int64(d))
		}
		return
	case fv.Kind() == reflect.Struct:
		w.decodeStruct(k, fv, rel, lines)
		return
	}
	switch fv.Kind() {
	case reflect.Bool:
		if b, ok := w.Bool(k); ok {
			fv.SetBool(b)
		}
	case reflect.Pointer:
		if fv.Type().Elem().Kind() != reflect.Bool {
			panic("confwalk: unsupported field type " + fv.Type().String())
		}
		if b, ok := w.Bool(k); ok {
			fv.Set(reflect.ValueOf(&b))
		}
	case reflect.String:
		if s, ok := w.Str(k); ok {
			fv.SetString(s)
		}
	case reflect.Int, reflect.Int64:
		if n, ok := w.Int(k); ok {
			fv.SetInt(n)
		}
	case reflect.Slice:
		if fv.Type().Elem().Kind() != reflect.String {
			panic("confwalk: unsupported field type " + fv.Type().String())
		}
		if ss, ok := w.Strings(k, false); ok {
			fv.Set(reflect.ValueOf(ss).Convert(fv.Type()))
		}
	default:
		panic("confwalk: unsupported field type " + fv.Type().String())
	}
}

// rekey records the errors of a section's Validate: each *Error built by
// Invalid goes on the line of its key (the longest known prefix of its
// path), under the section's path; any other error on the section's line.
func (w *Walker) rekey(kv Value, err error, lines map[string]int) {
	if err == nil {
		return
	}
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	for _, e := range list {
		var ce *Error
		if !errors.As(e, &ce) || ce.File != "" || ce.Key == "" {
			w.Errorf(kv, "%s: %v", kv.Key, e)
			continue
		}
		full := kv.Key.String() + "." + ce.Key
		w.errs = append(w.errs, &Error{
			File: w.file,
			Line: lineFor(ce.Key, lines),
			Key:  full,
			Msg:  full + strings.TrimPrefix(ce.Msg, ce.Key),
		})
	}
}

// lineFor finds the line of key, a path inside a section, or of the
// nearest table that holds it.
func lineFor(key string, lines map[string]int) int {
	for k := key; ; {
		if l, ok := lines[k]; ok {
			return l
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			return lines[""]
		}
		k = k[:i]
	}
}
