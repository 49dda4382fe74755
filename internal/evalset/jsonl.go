package evalset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
)

const (
	fileCatalog = "catalog"
	fileQueries = "queries"

	// maxLineBytes bounds one JSONL line; a tool definition is a few KB.
	maxLineBytes = 8 << 20
	// maxNameBytes bounds a tool name.
	maxNameBytes = 256
)

var utf8BOM = []byte("\xef\xbb\xbf")

// readLines calls fn for every non-blank line of r with its 1-based number.
// A UTF-8 byte-order mark before the first line and a trailing CR are
// dropped.
func readLines(r io.Reader, file string, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if n == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &LineError{File: file, Line: n + 1, Detail: fmt.Sprintf("line is longer than %d MiB; expected one JSON object per line", maxLineBytes>>20)}
		}
		return fmt.Errorf("evalset: reading %s: %w", file, err)
	}
	return nil
}

// member is one key and value of a JSON object, in source order.
type member struct {
	key   string
	value json.RawMessage
}

// object is a JSON object's members in source order.
type object []member

// get returns the value of key, or nil when absent.
func (o object) get(key string) json.RawMessage {
	for _, m := range o {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// decodeObject reads raw as one JSON object, keeping member order. It
// refuses trailing data and keys that appear twice, which a map decode would
// silently resolve to the last one.
func decodeObject(raw []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxDetail(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("found %s", kindOfToken(tok))
	}
	var obj object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxDetail(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("found %v where a key was expected", tok)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("value of %q: %v", key, syntaxDetail(err))
		}
		if obj.get(key) != nil {
			return nil, fmt.Errorf("key %q appears twice", key)
		}
		obj = append(obj, member{key: key, value: value})
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxDetail(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the object")
	}
	return obj, nil
}

// syntaxDetail turns a decoder error into text without the package prefix.
func syntaxDetail(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("unexpected end of line")
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// kind names the JSON type of raw for error messages.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func kindOfToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return fmt.Sprintf("%q", v.String())
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// stringValue decodes raw as a JSON string.
func stringValue(raw json.RawMessage) (string, bool) {
	var s string
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// checkName reports what is wrong with a tool name, or "" when it is fine.
func checkName(name string) string {
	switch {
	case name == "":
		return "expected a non-empty tool name"
	case len(name) > maxNameBytes:
		return fmt.Sprintf("tool name is %d bytes long; expected at most %d", len(name), maxNameBytes)
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Sprintf("tool name %q contains %q; expected no spaces or control characters", name, r)
		}
	}
	return ""
}
