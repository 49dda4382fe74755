package confwalk

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Rules are what a section's struct cannot say in its tags: keys read by
// hand, keys refused with a reason, switches fixed at one value. An owner
// package registers them for its section type with Register, at init.
type Rules struct {
	// Section is the top-level section of the file the type is, such as
	// "tool_search"; "" for a sub-table. The reader of the file decodes a
	// registered section into a new value of the type as it meets it
	// (NewSection), so that its problems are reported with the others.
	Section string
	// Hooks read the named keys by hand; the value returned, when ok, is
	// stored in the field of that tag. A hook records its own problems.
	Hooks map[string]func(w *Walker, kv Value) (v any, ok bool)
	// Fixed are switches listed as keys of the section that skillhost does
	// not let the operator turn (see Walker.Fixed).
	Fixed []FixedKey
	// Refused are keys that are not settings of the section, each with
	// the message that follows its path ("is not a setting: …").
	Refused map[string]string
	// Read, when set, reads the whole section by hand into dst, a pointer
	// to the registered type, recording its problems on w, in place of the
	// field-by-field decoding: for a section whose checks span its keys.
	// It reports whether the section was read without a problem.
	Read func(w *Walker, kv Value, dst any) bool
	// Bounds are the ranges of integer keys: the section's one bounds
	// table. A file's value outside is refused as it is read; Check
	// refuses a Go value outside, but for 0, which means "not set".
	Bounds map[string]Bound
	// Enums are the values string keys may take, in the order messages
	// list them; "" (not set) is always accepted from Go.
	Enums map[string][]string
}

// Bound is an integer range, both ends included.
type Bound struct{ Lo, Hi int64 }

// FixedKey is a switch that only accepts Want; Why says why.
type FixedKey struct {
	Key  string
	Want bool
	Why  string
}

var (
	rulesMu  sync.RWMutex
	rules    = map[reflect.Type]Rules{}
	sections = map[string]reflect.Type{}
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
	if r.Section != "" {
		if prev, dup := sections[r.Section]; dup {
			panic("confwalk: section " + r.Section + " registered for " + prev.String() + " and " + t.String())
		}
		sections[r.Section] = t
	}
	rules[t] = r
}

// NewSection returns a pointer to a new value of the type registered for
// the top-level section name, or false when no package linked in owns it.
func NewSection(name string) (any, bool) {
	rulesMu.RLock()
	defer rulesMu.RUnlock()
	t, ok := sections[name]
	if !ok {
		return nil, false
	}
	return reflect.New(t).Interface(), true
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

// field is one key of a section struct; owner is the struct type that
// declares it, whose rules apply to it (an embedded struct's own).
type field struct {
	name  string
	index []int
	owner reflect.Type
}

// fields returns the keys of a section struct, in field order. The
// fields of an embedded struct without a tag are the struct's own, as
// encoding/json has them.
func fields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("toml")
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			for _, sub := range fields(f.Type) {
				sub.index = append([]int{i}, sub.index...)
				out = append(out, sub)
			}
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out = append(out, field{name: name, index: f.Index, owner: t})
	}
	return out
}

// allRules returns the rules of t with the fixed and refused keys of the
// structs it embeds: the keys it has that are no field.
func allRules(t reflect.Type) Rules {
	r := rulesFor(t)
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.Anonymous || f.Tag.Get("toml") != "" || f.Type.Kind() != reflect.Struct {
			continue
		}
		sub := allRules(f.Type)
		r.Fixed = append(slices.Clip(r.Fixed), sub.Fixed...)
		if len(sub.Refused) > 0 {
			refused := maps.Clone(r.Refused)
			if refused == nil {
				refused = map[string]string{}
			}
			maps.Copy(refused, sub.Refused)
			r.Refused = refused
		}
	}
	return r
}

// Keys returns the keys a section struct of type t accepts, in the order
// of its fields, then its fixed switches: what the unknown-key message
// lists and what the documentation must list. t is a struct type.
func Keys(t reflect.Type) []string {
	var out []string
	for _, f := range fields(t) {
		out = append(out, f.name)
	}
	for _, f := range allRules(t).Fixed {
		out = append(out, f.Key)
	}
	return out
}

// SectionKeys returns the keys of the registered top-level section name,
// or of a table inside it (SectionKeys("skill_discovery", "directory")),
// or nil when no package linked in owns it: for messages that point a
// misplaced key to its section.
func SectionKeys(name string, path ...string) []string {
	rulesMu.RLock()
	t, ok := sections[name]
	rulesMu.RUnlock()
	if !ok {
		return nil
	}
	for _, p := range path {
		var next reflect.Type
		for _, f := range fields(t) {
			if ft := t.FieldByIndex(f.index).Type; f.name == p && ft.Kind() == reflect.Struct {
				next = ft
			}
		}
		if next == nil {
			return nil
		}
		t = next
	}
	return Keys(t)
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
	if r := rulesFor(rv.Elem().Type()); r.Read != nil {
		return r.Read(w, kv, dst) && len(w.errs) == before
	}
	lines := map[string]int{"": kv.Line}
	if !w.decodeStruct(kv, rv.Elem(), nil, lines) {
		return false
	}
	if v, ok := dst.(Validator); ok {
		w.rekey(kv, v.Validate(), lines)
	}
	// In file order, a key's own problems before what Validate found.
	sort.SliceStable(w.errs[before:], func(i, j int) bool {
		return w.errs[before+i].(*Error).Line < w.errs[before+j].(*Error).Line
	})
	return len(w.errs) == before
}

func (w *Walker) decodeStruct(kv Value, sv reflect.Value, rel Key, lines map[string]int) bool {
	keys, ok := w.Table(kv, fmt.Sprintf("a table ([%s])", kv.Key))
	if !ok {
		return false
	}
	t := sv.Type()
	r := allRules(t)
	byName := map[string]field{}
	for _, f := range fields(t) {
		byName[f.name] = f
	}
	for _, k := range keys {
		name := k.Key.Last()
		lines[rel.Child(name).String()] = k.Line
		f, known := byName[name]
		if known {
			r = allRules(t)
			own := rulesFor(f.owner)
			r.Hooks, r.Bounds, r.Enums = own.Hooks, own.Bounds, own.Enums
		}
		switch {
		case known && r.Hooks[name] != nil:
			if v, ok := r.Hooks[name](w, k); ok {
				sv.FieldByIndex(f.index).Set(reflect.ValueOf(v))
			}
		case known && r.Bounds[name] != (Bound{}):
			b := r.Bounds[name]
			if n, ok := w.Bounded(k, b.Lo, b.Hi); ok {
				sv.FieldByIndex(f.index).SetInt(int64(n))
			}
		case known && r.Enums[name] != nil:
			if v, ok := w.Enum(k, r.Enums[name]...); ok {
				sv.FieldByIndex(f.index).SetString(v)
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
			if keys := Keys(t); len(keys) == 1 {
				w.Errorf(k, "unknown key %q; expected %s", k.Key.String(), keys[0])
			} else {
				w.Unknown(k, strings.Join(keys, ", "))
			}
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
		// The strings read are kept when others are not, so that Validate
		// reports what is wrong with them too.
		if ss, _ := w.Strings(k, false); ss != nil {
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

// Check returns the errors of a section value given in Go against the
// Bounds and Enums registered for its type and for the types of its
// sub-tables, each built with Invalid: a section's Validate starts with
// it. A zero number or empty string is "not set" and passes.
func Check(section any) []error {
	return check(reflect.ValueOf(section), "")
}

func check(v reflect.Value, prefix string) []error {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	var errs []error
	for _, f := range fields(v.Type()) {
		r := rulesFor(f.owner)
		fv := v.FieldByIndex(f.index)
		key := prefix + f.name
		if b, ok := r.Bounds[f.name]; ok && fv.CanInt() {
			if n := fv.Int(); n != 0 && (n < b.Lo || n > b.Hi) {
				errs = append(errs, Invalid(key, "must be from %d to %d, got %d", b.Lo, b.Hi, n))
			}
		}
		if allowed, ok := r.Enums[f.name]; ok && fv.Kind() == reflect.String {
			if s := fv.String(); s != "" && !slices.Contains(allowed, s) {
				errs = append(errs, Invalid(key, "%q must be one of %s", s, strings.Join(allowed, ", ")))
			}
		}
		if fv.Kind() == reflect.Struct && fv.Type() != durationType {
			errs = append(errs, check(fv, key+".")...)
		}
	}
	return errs
}

// Fill sets each field of *dst that is zero (a nil switch, 0, "", a nil
// list) to the same field of src, going into sub-tables: what an embedder
// sets in Go wins over what the file sets, a switch set to false
// included, and the file fills the rest. dst is a pointer to a struct of
// src's type.
func Fill[T any](dst *T, src T) {
	fill(reflect.ValueOf(dst).Elem(), reflect.ValueOf(src))
}

func fill(dst, src reflect.Value) {
	for i := range dst.NumField() {
		d, s := dst.Field(i), src.Field(i)
		if !d.CanSet() {
			continue
		}
		if d.Kind() == reflect.Struct && d.Type() != durationType {
			fill(d, s)
			continue
		}
		if d.IsZero() {
			d.Set(s)
		}
	}
}

// Table returns the keys of a section value that are set (not zero), by
// their tags, sub-tables as maps: what the file would say to give it, for
// printing. section is a struct or a pointer to one.
func Table(section any) map[string]any {
	v := reflect.ValueOf(section)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	out := map[string]any{}
	for _, f := range fields(v.Type()) {
		fv := v.FieldByIndex(f.index)
		switch {
		case fv.IsZero():
		case fv.Kind() == reflect.Struct && fv.Type() != durationType:
			if sub := Table(fv.Interface()); len(sub) > 0 {
				out[f.name] = sub
			}
		case fv.Kind() == reflect.Pointer:
			out[f.name] = fv.Elem().Interface()
		case fv.Type() == durationType:
			out[f.name] = fv.Interface().(time.Duration).String()
		default:
			out[f.name] = fv.Interface()
		}
	}
	return out
}
