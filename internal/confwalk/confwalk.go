// Package confwalk reads the operator's skillhost.toml for the packages that
// own its sections. Parse decodes the file and returns its top-level keys
// as Values, in file order; a reader routes each to the package that owns
// that section, which reads it with the Walker: by hand, key by key (Table,
// Str, Bounded, Enum, Strings, Duration…), or with Decode, which fills a
// plain Go struct from its `toml:"…"` tags and then calls its Validate
// method. An owner registers its section type with Register, at init: the
// rules its tags cannot say (one bounds table, enums, fixed and refused
// keys, a hand-written reader) and the top-level name the file's reader
// routes to it (NewSection). Check holds a Go value to the same bounds and
// enums, and Fill gives the fields an embedder left zero the file's
// values.
//
// Every problem is reported, not only the first: each is an *Error naming
// the file, the line of the key and its dotted path ("FILE:LINE: message"),
// and Walker.Err joins them. Every *Error matches ErrBadConfig with
// errors.Is, and so do the errors a section's Validate builds with Invalid,
// so that one sentinel stands for a bad setting whether it came from the
// file or from an embedder's Go value.
package confwalk

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// ErrBadConfig is matched by every configuration error of every layer:
// a problem in the operator's file, or a setting an embedder gives that
// cannot work. The packages that own a section re-export it under their
// own name (host.ErrBadConfig, registry.ErrBadConfig…); they are one value.
var ErrBadConfig = errors.New("invalid configuration")

// Error is one problem in the operator's config file, or in a section
// value an embedder gave (then File is "" and Line 0).
type Error struct {
	File string
	Line int    // 0 when unknown
	Key  string // the TOML key path, e.g. "sources.max_depth"
	Msg  string
}

func (e *Error) Error() string {
	if e.File == "" {
		return e.Msg
	}
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	return loc + ": " + e.Msg
}

// Is makes every *Error match ErrBadConfig.
func (e *Error) Is(target error) bool { return target == ErrBadConfig }

// Invalid returns the error a section's Validate gives for one of its
// keys: key is the path inside the section ("max_results",
// "directory.max_entries", "always_loaded_patterns[1]") and the message
// reads "<key> <format…>". When the section was read from a file,
// Decode puts the error on the key's line with the key's whole path.
func Invalid(key, format string, args ...any) error {
	return &Error{Key: key, Msg: key + " " + fmt.Sprintf(format, args...)}
}

// Key is a key path. Elements of arrays are segments such as "[1]", so
// messages can say packs.core.mounts[1].guest.
type Key []string

// Child returns the path of the key name under k.
func (k Key) Child(name string) Key { return append(slices.Clip(k), name) }

// Index returns the path of the i-th element of the array at k.
func (k Key) Index(i int) Key { return append(slices.Clip(k), "["+strconv.Itoa(i)+"]") }

// Last returns the last segment of k ("" for the root).
func (k Key) Last() string {
	if len(k) == 0 {
		return ""
	}
	return k[len(k)-1]
}

// String writes k as TOML does, quoting the segments that need it.
func (k Key) String() string {
	var b strings.Builder
	for i, seg := range k {
		if strings.HasPrefix(seg, "[") {
			b.WriteString(seg)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(toml.Key{seg}.String())
	}
	return b.String()
}

// Value is one key of the document and its value: a string, int64,
// float64, bool, time.Time, map[string]any (a table) or []any.
type Value struct {
	Key  Key
	Val  any
	Line int
	prim toml.Primitive
	// hasPrim is false for values inside arrays, which have no key of
	// their own (their line is the array's).
	hasPrim bool
}

// Walker reads the values of one decoded file and collects the problems
// it finds. It is used by one goroutine.
type Walker struct {
	md   *toml.MetaData
	file string
	base string
	errs []error
}

// Parse decodes a config file's bytes and returns a Walker over it and its
// top-level keys in file order. file names it in errors and its folder is
// the base of relative paths (Path). A file larger than maxBytes, or one
// that is not TOML, is an *Error with the line where known.
func Parse(file string, data []byte, maxBytes int) (*Walker, []Value, error) {
	if len(data) > maxBytes {
		return nil, nil, &Error{File: file, Msg: fmt.Sprintf("config is larger than %d bytes", maxBytes)}
	}
	var top map[string]toml.Primitive
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&top)
	if err != nil {
		return nil, nil, syntaxError(file, data, err)
	}
	w := &Walker{md: &md, file: file, base: filepath.Dir(file)}
	return w, w.children(top, nil), nil
}

// File is the file read, as named to Parse.
func (w *Walker) File() string { return w.file }

// Base is the folder relative paths are taken from.
func (w *Walker) Base() string { return w.base }

// Err returns every problem found so far, joined, or nil.
func (w *Walker) Err() error { return errors.Join(w.errs...) }

// Failed reports whether any problem was found so far.
func (w *Walker) Failed() bool { return len(w.errs) > 0 }

// syntaxError turns a decode error into an *Error with its line.
func syntaxError(file string, data []byte, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &Error{File: file, Msg: "invalid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")}
	}
	msg := pe.Message
	if m := dupKeyRE.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("key %q is defined twice; each key and table may appear once", m[1])
	} else if m := badUTF8RE.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("invalid UTF-8 byte %s; the config must be UTF-8 text", m[1])
	} else {
		msg = "invalid TOML: " + msg
	}
	return &Error{File: file, Line: errorLine(data, pe.Position), Msg: msg}
}

// errorLine is the line of a syntax error: the line of its first byte, so
// an error found at a line's newline is put on that line, not the next.
func errorLine(data []byte, pos toml.Position) int {
	if pos.Start >= 0 && pos.Start < len(data) {
		return bytes.Count(data[:pos.Start], []byte("\n")) + 1
	}
	return pos.Line
}

var (
	dupKeyRE  = regexp.MustCompile(`^Key '(.*)' has already been defined\.?$`)
	badUTF8RE = regexp.MustCompile(`^invalid UTF-8 byte:? (0x[0-9a-fA-F]+)`)
)

// errProbe is returned by lineProbe to make the decoder report a key's
// position.
var errProbe = errors.New("position probe")

// lineProbe is a decode target that fails on purpose: the decoder wraps the
// failure in a toml.ParseError carrying the position of the key decoded.
type lineProbe struct{}

func (lineProbe) UnmarshalTOML(any) error { return errProbe }

func (w *Walker) lineOf(p toml.Primitive) int {
	var pe toml.ParseError
	if err := w.md.PrimitiveDecode(p, &lineProbe{}); errors.As(err, &pe) {
		return pe.Position.Line
	}
	return 0
}

// children returns the keys of a table in file order.
func (w *Walker) children(m map[string]toml.Primitive, parent *Value) []Value {
	out := make([]Value, 0, len(m))
	for name, p := range m {
		kv := Value{prim: p, hasPrim: true}
		if parent == nil {
			kv.Key = Key{name}
		} else {
			kv.Key = parent.Key.Child(name)
		}
		_ = w.md.PrimitiveDecode(p, &kv.Val)
		kv.Line = w.lineOf(p)
		out = append(out, kv)
	}
	for i := range out {
		if out[i].Line == 0 {
			out[i].Line = w.firstLine(out[i])
		}
		if out[i].Line == 0 && parent != nil {
			out[i].Line = parent.Line
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Key.Last() < out[j].Key.Last()
	})
	return out
}

// firstLine finds a line for a table that was created implicitly (by a
// [a.b] header, so [a] has no line): the first line of its keys.
func (w *Walker) firstLine(kv Value) int {
	if !kv.hasPrim {
		return 0
	}
	if _, ok := kv.Val.(map[string]any); !ok {
		return 0
	}
	var m map[string]toml.Primitive
	if w.md.PrimitiveDecode(kv.prim, &m) != nil {
		return 0
	}
	best := 0
	for _, p := range m {
		l := w.lineOf(p)
		if l == 0 {
			var sub any
			_ = w.md.PrimitiveDecode(p, &sub)
			l = w.firstLine(Value{prim: p, hasPrim: true, Val: sub})
		}
		if l > 0 && (best == 0 || l < best) {
			best = l
		}
	}
	return best
}

// Errorf records a problem at kv's line, under kv's key.
func (w *Walker) Errorf(kv Value, format string, args ...any) {
	w.errs = append(w.errs, &Error{File: w.file, Line: kv.Line, Key: kv.Key.String(), Msg: fmt.Sprintf(format, args...)})
}

// Unknown records that kv is not a key its table has; expected lists the
// keys it has, in the order the message gives them.
func (w *Walker) Unknown(kv Value, expected string) {
	w.Errorf(kv, "unknown key %q; expected one of %s", kv.Key.String(), expected)
}

// TypeName names the TOML type of a decoded value for messages.
func TypeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case map[string]any:
		return "table"
	case []any, []map[string]any:
		return "array"
	case time.Time:
		return "datetime"
	}
	return fmt.Sprintf("%T", v)
}

// WrongType records that kv is not of the type the message calls want
// ("a string", "true or false").
func (w *Walker) WrongType(kv Value, want string) {
	w.Errorf(kv, "%s must be %s, got %s", kv.Key, want, TypeName(kv.Val))
}

// Table returns the keys of a table value in file order; want says what
// the value must be when it is not a table.
func (w *Walker) Table(kv Value, want string) ([]Value, bool) {
	m, ok := kv.Val.(map[string]any)
	if !ok {
		w.WrongType(kv, want)
		return nil, false
	}
	if kv.hasPrim {
		var pm map[string]toml.Primitive
		if err := w.md.PrimitiveDecode(kv.prim, &pm); err == nil {
			return w.children(pm, &kv), true
		}
	}
	// A table inside an array: its keys have no positions of their own.
	out := make([]Value, 0, len(m))
	for _, name := range SortedNames(m) {
		out = append(out, Value{Key: kv.Key.Child(name), Val: m[name], Line: kv.Line})
	}
	return out, true
}

// SortedNames returns the keys of m, sorted.
func SortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Str reads a string.
func (w *Walker) Str(kv Value) (string, bool) {
	s, ok := kv.Val.(string)
	if !ok {
		w.WrongType(kv, "a string")
	}
	return s, ok
}

// Bool reads true or false.
func (w *Walker) Bool(kv Value) (bool, bool) {
	b, ok := kv.Val.(bool)
	if !ok {
		w.WrongType(kv, "true or false")
	}
	return b, ok
}

// Int reads an integer.
func (w *Walker) Int(kv Value) (int64, bool) {
	n, ok := kv.Val.(int64)
	if !ok {
		w.WrongType(kv, "an integer")
	}
	return n, ok
}

// Array returns the elements of an array value; their lines are the
// array's.
func (w *Walker) Array(kv Value, want string) ([]Value, bool) {
	var items []any
	switch a := kv.Val.(type) {
	case []any:
		items = a
	case []map[string]any:
		for _, m := range a {
			items = append(items, m)
		}
	default:
		w.WrongType(kv, want)
		return nil, false
	}
	out := make([]Value, len(items))
	for i, v := range items {
		out[i] = Value{Key: kv.Key.Index(i), Val: v, Line: kv.Line}
	}
	return out, true
}

// Strings reads an array of strings; integers are accepted and written in
// decimal when ints is true (chat IDs are often numbers).
func (w *Walker) Strings(kv Value, ints bool) ([]string, bool) {
	want := "an array of strings"
	if ints {
		want = "an array of strings or integers"
	}
	items, ok := w.Array(kv, want)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		switch v := it.Val.(type) {
		case string:
			out = append(out, v)
		case int64:
			if ints {
				out = append(out, strconv.FormatInt(v, 10))
				continue
			}
			w.WrongType(it, "a string")
			ok = false
		default:
			if ints {
				w.WrongType(it, "a string or an integer")
			} else {
				w.WrongType(it, "a string")
			}
			ok = false
		}
	}
	return out, ok
}

// Path reads a file path: "~" is the home folder, relative paths are taken
// from the config file's folder.
func (w *Walker) Path(kv Value) (string, bool) {
	s, ok := w.Str(kv)
	if !ok {
		return "", false
	}
	if s == "" {
		w.Errorf(kv, "%s must not be empty", kv.Key)
		return "", false
	}
	p, err := ExpandHome(s)
	if err != nil {
		w.Errorf(kv, "%s: %v", kv.Key, err)
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.base, p)
	}
	return filepath.Clean(p), true
}

// ExpandHome replaces a leading "~" or "~/" with the user's home folder.
func ExpandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, `~\`) {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot expand ~ in %q: %v", p, err)
	}
	return filepath.Join(home, p[1:]), nil
}

// Enum reads a string that must be one of allowed.
func (w *Walker) Enum(kv Value, allowed ...string) (string, bool) {
	s, ok := w.Str(kv)
	if !ok {
		return "", false
	}
	if !slices.Contains(allowed, s) {
		w.Errorf(kv, "%s %q must be one of %s", kv.Key, s, strings.Join(allowed, ", "))
		return "", false
	}
	return s, true
}

// Bounded reads an integer from lo to hi.
func (w *Walker) Bounded(kv Value, lo, hi int64) (int, bool) {
	n, ok := w.Int(kv)
	if !ok {
		return 0, false
	}
	if n < lo || n > hi {
		w.Errorf(kv, "%s must be from %d to %d, got %d", kv.Key, lo, hi, n)
		return 0, false
	}
	return int(n), true
}

// Fixed reads a switch skillhost does not let the operator turn: want is
// accepted (and changes nothing), the other value is an error saying why.
func (w *Walker) Fixed(kv Value, want bool, why string) {
	if b, ok := w.Bool(kv); ok && b != want {
		w.Errorf(kv, "%s cannot be %t: %s", kv.Key, b, why)
	}
}

// Duration reads a positive duration written as a string: "30s", "1m30s".
func (w *Walker) Duration(kv Value) (time.Duration, bool) {
	s, ok := kv.Val.(string)
	if !ok {
		w.WrongType(kv, "a duration such as \"30s\"")
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		if n, err := strconv.Atoi(s); err == nil {
			w.Errorf(kv, "%s %q has no unit; write %q", kv.Key, s, fmt.Sprint(n)+"s")
			return 0, false
		}
		w.Errorf(kv, "%s %q is not a positive duration; write one such as \"30s\" or \"2m\"", kv.Key, s)
		return 0, false
	}
	return d, true
}

// Size reads a size: "512MiB" or a number of bytes, at least 1.
func (w *Walker) Size(kv Value) (uint64, bool) {
	switch v := kv.Val.(type) {
	case int64:
		if v < 1 {
			w.Errorf(kv, "%s must be at least 1 byte, got %d", kv.Key, v)
			return 0, false
		}
		return uint64(v), true
	case string:
		n, err := ParseSize(v)
		if err != nil || n == 0 {
			w.Errorf(kv, "%s %q is not a size; write one such as \"512MiB\" or \"2GiB\"", kv.Key, v)
			return 0, false
		}
		return n, true
	}
	w.WrongType(kv, "a size such as \"512MiB\" or a number of bytes")
	return 0, false
}

// ParseSize parses a size such as "64MiB", "512KB", "1G" or "1024" (bytes).
// K, M and G are binary (KiB, MiB, GiB); KB, MB and GB are decimal.
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q must start with a number, e.g. 64MiB", s)
	}
	n, err := strconv.ParseUint(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	units := map[string]uint64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
	mult, ok := units[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("size %q has an unknown unit; use B, KB, MB, GB, KiB, MiB or GiB", s)
	}
	if n > (1<<63)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// Fork returns a Walker over the same file with no problems recorded, to
// read a section later and collect its problems apart. The two must not
// be used at once.
func (w *Walker) Fork() *Walker { return &Walker{md: w.md, file: w.file, base: w.base} }
