package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The json_query path language, a small subset of jq / JSONPath:
//
//	path     = ["$"] { step }            "" , "." and "$" select the whole document
//	step     = "." name                  object member: .items  .user_name  .$ref
//	         | "." quoted                member with any characters: ."first name"
//	         | "[" quoted "]"            the same: ["first name"]  ['a.b']
//	         | "[" int "]"               array element; negative counts from the end: [-1]
//	         | "[" [int] ":" [int] "]"   array slice, end exclusive: [1:3]  [:2]  [-2:]
//	         | "[]" | "[*]" | ".*"       every element of an array / value of an object
//	         | ".." name                 every member with that name at any depth: ..id
//	name     = letter, digit, "_", "$" or "-", not starting with a digit or "-"
//	quoted   = a JSON string ("...") or a single-quoted string without escapes
//
// A path without [], [*], .*, slices or .. selects one value; a missing
// member or index is an error. With them it selects a list of values, and
// members or indexes missing from some elements are skipped.

type stepKind int

const (
	stepMember stepKind = iota
	stepIndex
	stepSlice
	stepAll
	stepDescend
)

type step struct {
	kind       stepKind
	name       string
	index      int
	start, end *int
	text       string // the step as written, for messages
}

// parsePath parses a json_query path.
func parsePath(p string) ([]step, error) {
	s := strings.TrimSpace(p)
	s = strings.TrimPrefix(s, "$")
	if s == "." {
		return nil, nil
	}
	var steps []step
	i := 0
	errAt := func(format string, args ...any) error {
		return fmt.Errorf("path %q at offset %d: %s", p, i, fmt.Sprintf(format, args...))
	}
	for i < len(s) {
		begin := i
		switch {
		case strings.HasPrefix(s[i:], ".."):
			i += 2
			name, n := readName(s[i:])
			if n == 0 {
				return nil, errAt("expected a member name after ..")
			}
			i += n
			steps = append(steps, step{kind: stepDescend, name: name, text: s[begin:i]})
		case s[i] == '.':
			i++
			if i < len(s) && s[i] == '*' {
				i++
				steps = append(steps, step{kind: stepAll, text: s[begin:i]})
				continue
			}
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				name, n, err := readQuoted(s[i:])
				if err != nil {
					return nil, errAt("%v", err)
				}
				i += n
				steps = append(steps, step{kind: stepMember, name: name, text: s[begin:i]})
				continue
			}
			name, n := readName(s[i:])
			if n == 0 {
				if i == len(s) || s[i] == '[' {
					continue // "." before "[" or at the end: identity
				}
				return nil, errAt("expected a member name after .")
			}
			i += n
			steps = append(steps, step{kind: stepMember, name: name, text: s[begin:i]})
		case s[i] == '[':
			i++
			for i < len(s) && s[i] == ' ' {
				i++
			}
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				name, n, err := readQuoted(s[i:])
				if err != nil {
					return nil, errAt("%v", err)
				}
				i += n
				if err := expectClose(s, &i); err != nil {
					return nil, errAt("%v", err)
				}
				steps = append(steps, step{kind: stepMember, name: name, text: s[begin:i]})
				continue
			}
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, errAt("missing ]")
			}
			inner := strings.TrimSpace(s[i : i+j])
			i += j + 1
			st := step{text: s[begin:i]}
			switch {
			case inner == "" || inner == "*":
				st.kind = stepAll
			case strings.Contains(inner, ":"):
				st.kind = stepSlice
				a, b, _ := strings.Cut(inner, ":")
				var err error
				if st.start, err = optInt(a); err != nil {
					return nil, errAt("bad slice start %q", a)
				}
				if st.end, err = optInt(b); err != nil {
					return nil, errAt("bad slice end %q", b)
				}
			default:
				n, err := strconv.Atoi(inner)
				if err != nil {
					return nil, errAt("expected an index, a slice, * or a quoted name inside [], got %q", inner)
				}
				st.kind, st.index = stepIndex, n
			}
			steps = append(steps, st)
		default:
			name, n := readName(s[i:])
			if n == 0 || begin != 0 {
				return nil, errAt("unexpected %q (steps start with . or [)", s[i:i+1])
			}
			// a leading bare name is accepted: "items[0]" = ".items[0]"
			i += n
			steps = append(steps, step{kind: stepMember, name: name, text: s[begin:i]})
		}
	}
	return steps, nil
}

func expectClose(s string, i *int) error {
	for *i < len(s) && s[*i] == ' ' {
		*i++
	}
	if *i >= len(s) || s[*i] != ']' {
		return fmt.Errorf("missing ]")
	}
	*i++
	return nil
}

func optInt(s string) (*int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	return &n, err
}

func readName(s string) (string, int) {
	n := 0
	for n < len(s) {
		c := s[n]
		ok := c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 ||
			n > 0 && (c >= '0' && c <= '9' || c == '-')
		if !ok {
			break
		}
		n++
	}
	return s[:n], n
}

// readQuoted reads a JSON string or a single-quoted string at the start
// of s and returns its value and length.
func readQuoted(s string) (string, int, error) {
	if s[0] == '\'' {
		j := strings.IndexByte(s[1:], '\'')
		if j < 0 {
			return "", 0, fmt.Errorf("unterminated quoted name")
		}
		return s[1 : 1+j], j + 2, nil
	}
	for j := 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			v, err := strconv.Unquote(s[:j+1])
			if err != nil {
				return "", 0, fmt.Errorf("bad quoted name %s", s[:j+1])
			}
			return v, j + 1, nil
		}
	}
	return "", 0, fmt.Errorf("unterminated quoted name")
}

// isMulti reports whether the path can select several values.
func isMulti(steps []step) bool {
	for _, s := range steps {
		if s.kind == stepAll || s.kind == stepSlice || s.kind == stepDescend {
			return true
		}
	}
	return false
}

// missingError says which step of a single-value path found nothing.
type missingError struct {
	at, msg string
}

func (e *missingError) Error() string {
	if e.at == "" {
		return e.msg + " at the document root"
	}
	return e.msg + " at " + e.at
}

// evaluate applies the steps to doc (decoded with UseNumber). In strict
// mode (single-value paths) a step that finds nothing is an error; in
// lenient mode it drops that branch. limit bounds the number of values.
func evaluate(doc any, steps []step, strict bool, limit int) ([]any, bool, error) {
	cur := []any{doc}
	walked := ""
	truncated := false
	for _, st := range steps {
		var next []any
		add := func(v any) {
			if len(next) >= limit {
				truncated = true
				return
			}
			next = append(next, v)
		}
		for _, v := range cur {
			switch st.kind {
			case stepMember:
				obj, ok := v.(map[string]any)
				if !ok {
					if strict {
						return nil, false, &missingError{walked, fmt.Sprintf("cannot read member %q of %s", st.name, kindOf(v))}
					}
					continue
				}
				m, ok := obj[st.name]
				if !ok {
					if strict {
						return nil, false, &missingError{walked, fmt.Sprintf("no member %q", st.name)}
					}
					continue
				}
				add(m)
			case stepIndex:
				arr, ok := v.([]any)
				if !ok {
					if strict {
						return nil, false, &missingError{walked, fmt.Sprintf("cannot index %s with [%d]", kindOf(v), st.index)}
					}
					continue
				}
				i := st.index
				if i < 0 {
					i += len(arr)
				}
				if i < 0 || i >= len(arr) {
					if strict {
						return nil, false, &missingError{walked, fmt.Sprintf("index %d out of range (length %d)", st.index, len(arr))}
					}
					continue
				}
				add(arr[i])
			case stepSlice:
				arr, ok := v.([]any)
				if !ok {
					continue
				}
				a, b := 0, len(arr)
				if st.start != nil {
					a = clampIndex(*st.start, len(arr))
				}
				if st.end != nil {
					b = clampIndex(*st.end, len(arr))
				}
				for i := a; i < b; i++ {
					add(arr[i])
				}
			case stepAll:
				switch x := v.(type) {
				case []any:
					for _, e := range x {
						add(e)
					}
				case map[string]any:
					for _, k := range sortedKeys(x) {
						add(x[k])
					}
				}
			case stepDescend:
				descend(v, st.name, add)
			}
		}
		cur = next
		walked += st.text
	}
	return cur, truncated, nil
}

func clampIndex(i, n int) int {
	if i < 0 {
		i += n
	}
	return max(0, min(i, n))
}

// descend calls add for every member named name at any depth under v, in
// document order (object keys sorted).
func descend(v any, name string, add func(any)) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if k == name {
				add(x[k])
			}
			descend(x[k], name, add)
		}
	case []any:
		for _, e := range x {
			descend(e, name, add)
		}
	}
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	}
	return "a number"
}
