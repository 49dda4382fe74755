package packs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxCanonicalDepth bounds the nesting canonicalJSON follows, so a value
// that contains itself is an error instead of a stack overflow.
const maxCanonicalDepth = 512

// canonicalJSON encodes v as canonical JSON: object keys sorted by byte
// order (which is Unicode code point order for UTF-8) at every depth, no
// whitespace between tokens, UTF-8 output with only '"', '\\' and control
// characters escaped (no HTML escaping, no \u escapes for non-ASCII), and
// numbers in one form per value:
//
//   - a number written without fraction or exponent is printed as its exact
//     decimal integer, however large ("-0" becomes "0");
//   - any other number, and every Go float, is taken as a float64 and
//     printed in the shortest form that reads back to the same float64,
//     with encoding/json's choice of notation: plain digits from 1e-6 up to
//     1e21 ("1.5", and "1", "100" for 1.0 and 1e2), an exponent outside
//     that ("1e+21", "1e-7"). A whole float thus prints as the integer
//     literal that means the same float, so a value and its round trip
//     through encoding/json always give the same bytes.
//
// Invalid UTF-8 in a string is replaced by U+FFFD, as encoding/json does.
// NaN and infinities are errors. Values of types other than the generic
// JSON ones (nil, bool, string, numbers, json.Number, map[string]T, []T)
// go through encoding/json first, so struct tags and MarshalJSON methods
// are honoured.
func canonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeCanonical(&buf, v, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// contentHash is the lowercase hex sha256 of canonicalJSON(v). A value that
// cannot be encoded (NaN, a cycle) hashes as the error text, so the result
// is always 64 hex digits; callers that need to tell use canonicalJSON.
func contentHash(v any) string {
	b, err := canonicalJSON(v)
	if err != nil {
		b = []byte("canonical json error: " + err.Error())
	}
	return sha256Hex(b)
}

// sha256Hex is the lowercase hex sha256 of b.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func writeCanonical(buf *bytes.Buffer, v any, depth int) error {
	if depth > maxCanonicalDepth {
		return fmt.Errorf("canonical json: nesting deeper than %d levels (a value containing itself?)", maxCanonicalDepth)
	}
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case string:
		writeCanonicalString(buf, x)
	case json.Number:
		return writeCanonicalNumber(buf, string(x))
	case int:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case int8:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case int16:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case int32:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case uint:
		buf.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint8:
		buf.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint16:
		buf.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint32:
		buf.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint64:
		buf.WriteString(strconv.FormatUint(x, 10))
	case float32:
		return writeCanonicalFloat(buf, float64(x))
	case float64:
		return writeCanonicalFloat(buf, x)
	case map[string]any:
		return writeCanonicalObject(buf, x, depth)
	case map[string]string:
		return writeCanonicalObject(buf, x, depth)
	case []any:
		return writeCanonicalArray(buf, x, depth)
	case []string:
		return writeCanonicalArray(buf, x, depth)
	case []map[string]any:
		return writeCanonicalArray(buf, x, depth)
	default:
		return writeCanonicalMarshalled(buf, v, depth)
	}
	return nil
}

func writeCanonicalObject[T any](buf *bytes.Buffer, m map[string]T, depth int) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Keys are compared as they will be written: invalid UTF-8 is replaced
	// first so the order matches the output.
	type entry struct{ out, key string }
	entries := make([]entry, len(keys))
	for i, k := range keys {
		entries[i] = entry{strings.ToValidUTF8(k, "\uFFFD"), k}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := strings.Compare(a.out, b.out); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	buf.WriteByte('{')
	for i, e := range entries {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeCanonicalString(buf, e.out)
		buf.WriteByte(':')
		if err := writeCanonical(buf, m[e.key], depth+1); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

func writeCanonicalArray[T any](buf *bytes.Buffer, a []T, depth int) error {
	buf.WriteByte('[')
	for i, e := range a {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := writeCanonical(buf, e, depth+1); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

// writeCanonicalMarshalled encodes a value of any other type with
// encoding/json, reads it back as generic JSON and writes that.
func writeCanonicalMarshalled(buf *bytes.Buffer, v any, depth int) error {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("canonical json: %w", err)
	}
	dec := json.NewDecoder(&tmp)
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return fmt.Errorf("canonical json: reading back %T: %w", v, err)
	}
	return writeCanonical(buf, g, depth)
}

const hexDigits = "0123456789abcdef"

func writeCanonicalString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				buf.WriteString(s[start:i])
				buf.WriteString("\uFFFD")
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		buf.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			buf.WriteByte('\\')
			buf.WriteByte(c)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			buf.WriteString(`\u00`)
			buf.WriteByte(hexDigits[c>>4])
			buf.WriteByte(hexDigits[c&0xF])
		}
		i++
		start = i
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}

// writeCanonicalNumber writes a JSON number literal in canonical form.
func writeCanonicalNumber(buf *bytes.Buffer, lit string) error {
	if lit == "" {
		return fmt.Errorf("canonical json: empty number")
	}
	if !strings.ContainsAny(lit, ".eE") {
		n, ok := new(big.Int).SetString(lit, 10)
		if !ok {
			return fmt.Errorf("canonical json: %q is not a number", lit)
		}
		buf.WriteString(n.String())
		return nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return fmt.Errorf("canonical json: %q is not a finite float64 number", lit)
	}
	return writeCanonicalFloat(buf, f)
}

func writeCanonicalFloat(buf *bytes.Buffer, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("canonical json: %v cannot be written as JSON", f)
	}
	if f == 0 {
		buf.WriteByte('0') // also -0
		return nil
	}
	// The shortest round-trip form, with encoding/json's choice between
	// plain and exponent notation.
	abs := math.Abs(f)
	format := byte('f')
	if abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	buf.Write(b)
	return nil
}
