package skill

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// validate checks v (decoded with UseNumber) against the parts of s that
// encoding/json does not enforce: required properties, enum, numeric
// bounds, string lengths and item counts. Types, unknown properties and
// malformed JSON were already refused by the decoder. It returns "" when v
// passes, else a message naming the path. Patterns and formats are left to
// the host, which validates the full schema before calling a tool.
func validate(v any, s, root *schema, path string) string {
	if s == nil || s.Raw != nil {
		return ""
	}
	if s.Ref != "" {
		target := root
		if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok {
			target = root.Defs[name]
		}
		return validate(v, target, root, path)
	}
	where := func() string {
		if path == "" {
			return "the arguments"
		}
		return fmt.Sprintf("field %q", path)
	}
	if len(s.Enum) > 0 && v != nil && !inEnum(v, s.Enum) {
		allowed := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			allowed[i] = string(e)
		}
		return fmt.Sprintf("%s: %s is not one of %s", where(), show(v), strings.Join(allowed, ", "))
	}
	switch x := v.(type) {
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := x[name]; !ok {
				return fmt.Sprintf("missing required field %q", join(path, name))
			}
		}
		if s.Properties != nil {
			for i, name := range s.Properties.Names {
				if fv, ok := x[name]; ok {
					if msg := validate(fv, s.Properties.Schemas[i], root, join(path, name)); msg != "" {
						return msg
					}
				}
			}
		}
		if s.AdditionalProperties != nil {
			for _, k := range sortedMapKeys(x) {
				if msg := validate(x[k], s.AdditionalProperties, root, join(path, k)); msg != "" {
					return msg
				}
			}
		}
	case []any:
		if s.MinItems != nil && len(x) < *s.MinItems {
			return fmt.Sprintf("%s: needs at least %d items, got %d", where(), *s.MinItems, len(x))
		}
		if s.MaxItems != nil && len(x) > *s.MaxItems {
			return fmt.Sprintf("%s: allows at most %d items, got %d", where(), *s.MaxItems, len(x))
		}
		for i, item := range x {
			if msg := validate(item, s.Items, root, path+"["+strconv.Itoa(i)+"]"); msg != "" {
				return msg
			}
		}
	case string:
		n := utf8.RuneCountInString(x)
		if s.MinLength != nil && n < *s.MinLength {
			return fmt.Sprintf("%s: needs at least %d characters, got %d", where(), *s.MinLength, n)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return fmt.Sprintf("%s: allows at most %d characters, got %d", where(), *s.MaxLength, n)
		}
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return ""
		}
		if s.Minimum != "" && f < num(s.Minimum) {
			return fmt.Sprintf("%s: %s is less than the minimum %s", where(), x, s.Minimum)
		}
		if s.Maximum != "" && f > num(s.Maximum) {
			return fmt.Sprintf("%s: %s is more than the maximum %s", where(), x, s.Maximum)
		}
		if s.ExclusiveMinimum != "" && f <= num(s.ExclusiveMinimum) {
			return fmt.Sprintf("%s: %s must be more than %s", where(), x, s.ExclusiveMinimum)
		}
		if s.ExclusiveMaximum != "" && f >= num(s.ExclusiveMaximum) {
			return fmt.Sprintf("%s: %s must be less than %s", where(), x, s.ExclusiveMaximum)
		}
	}
	return ""
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func num(n json.Number) float64 {
	f, _ := n.Float64()
	return f
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// inEnum compares v with each allowed value: numbers by value, anything
// else by its compact JSON text.
func inEnum(v any, enum []json.RawMessage) bool {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		for _, e := range enum {
			if g, err2 := strconv.ParseFloat(string(e), 64); err == nil && err2 == nil && f == g {
				return true
			}
		}
		return false
	}
	b, _ := json.Marshal(v)
	for _, e := range enum {
		var c bytes.Buffer
		if json.Compact(&c, e) == nil && bytes.Equal(c.Bytes(), b) {
			return true
		}
	}
	return false
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
