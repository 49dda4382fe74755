package fastschema

import (
	"unicode/utf8"
)

// verdict is what the scanner concludes about a document.
type verdict uint8

const (
	// valid: the document is JSON and valid against the schema.
	valid verdict = iota
	// invalid: the document is not JSON, or breaks the schema.
	invalid
	// unsure: the fast path does not decide (a string with invalid UTF-8
	// that a keyword reads, a number beyond its limits, deep nesting…).
	unsure
)

// maxDepth bounds the nesting of arrays and objects the fast path reads.
const maxDepth = 512

// Valid reports whether doc is a JSON document valid against the plan's
// schema. False means the fast path could not say it is: the document may
// be invalid, or only outside what the fast path decides; the caller then
// runs the full validator. Valid does not allocate, but to decode a string
// with escapes that a pattern must match. A nil plan is never valid.
func (p *Plan) Valid(doc []byte) bool {
	return p != nil && p.check(doc) == valid
}

// check scans doc and returns its verdict.
func (p *Plan) check(doc []byte) verdict {
	s := scanner{b: doc}
	s.ws()
	if !s.value(p.root, 0) {
		return s.v
	}
	s.ws()
	if s.i != len(s.b) {
		return invalid
	}
	return valid
}

// scanner reads one document. A method that returns false has set v.
type scanner struct {
	b []byte
	i int
	v verdict
}

func (s *scanner) fail() bool   { s.v = invalid; return false }
func (s *scanner) unsure() bool { s.v = unsure; return false }

func (s *scanner) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// str is a scanned JSON string.
type str struct {
	raw    []byte // between the quotes
	esc    bool   // has escapes
	bad    bool   // has invalid UTF-8 or a lone surrogate escape
	nrunes int    // code points of the decoded string (when !bad)
}

// scanString reads the string starting at s.i (a '"').
func (s *scanner) scanString(out *str) bool {
	b := s.b
	i := s.i + 1
	start := i
	*out = str{}
	n := 0
	for {
		// the run of plain ASCII characters first
		j := i
		for j < len(b) && plain[b[j]] {
			j++
		}
		n += j - i
		i = j
		if i >= len(b) {
			return s.fail()
		}
		c := b[i]
		switch {
		case c == '"':
			out.raw = b[start:i]
			out.nrunes = n
			s.i = i + 1
			return true
		case c < 0x20:
			return s.fail()
		case c < 0x80 && c != '\\':
			i++
			n++
		case c == '\\':
			out.esc = true
			if i+1 >= len(b) {
				return s.fail()
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				n++
			case 'u':
				r, ok := hex4(b, i+2)
				if !ok {
					return s.fail()
				}
				i += 6
				n++
				if r >= 0xD800 && r < 0xDC00 {
					if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
						if r2, ok := hex4(b, i+2); ok && r2 >= 0xDC00 && r2 < 0xE000 {
							i += 6
							continue
						}
					}
					out.bad = true
				} else if r >= 0xDC00 && r < 0xE000 {
					out.bad = true
				}
			default:
				return s.fail()
			}
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out.bad = true
			}
			i += size
			n++
		}
	}
}

// plain holds the bytes that stand for themselves in a JSON string: ASCII
// but control characters, '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// hex4 reads the four hex digits of a \u escape at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

// nextRune decodes the rune of a scanned string's raw text at i (escapes
// included), returning it and the index after it. raw has no bad parts.
func nextRune(raw []byte, i int) (rune, int) {
	c := raw[i]
	if c != '\\' {
		if c < 0x80 {
			return rune(c), i + 1
		}
		r, size := utf8.DecodeRune(raw[i:])
		return r, i + size
	}
	switch raw[i+1] {
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'u':
		r, _ := hex4(raw, i+2)
		if r >= 0xD800 && r < 0xDC00 {
			r2, _ := hex4(raw, i+8)
			return (r-0xD800)<<10 | (r2 - 0xDC00) + 0x10000, i + 12
		}
		return r, i + 6
	}
	return rune(raw[i+1]), i + 2 // " \ /
}

// equals reports whether the decoded string is t.
func (x *str) equals(t string) bool {
	if !x.esc {
		return string(x.raw) == t
	}
	raw := x.raw
	j := 0
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(raw); {
		var r rune
		r, i = nextRune(raw, i)
		n := utf8.EncodeRune(buf[:], r)
		if j+n > len(t) || string(buf[:n]) != t[j:j+n] {
			return false
		}
		j += n
	}
	return j == len(t)
}

// decode appends the decoded string to dst.
func (x *str) decode(dst []byte) []byte {
	if !x.esc {
		return append(dst, x.raw...)
	}
	for i := 0; i < len(x.raw); {
		var r rune
		r, i = nextRune(x.raw, i)
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// value reads one value at s.i (after white space) against n.
func (s *scanner) value(n *node, depth int) bool {
	if s.i >= len(s.b) {
		return s.fail()
	}
	if n.never {
		return s.fail()
	}
	if n.any {
		return s.skip(depth)
	}
	c := s.b[s.i]
	switch c {
	case '{':
		if !n.allows(tObject) || len(n.sets) > 0 {
			return s.fail()
		}
		return s.object(n, depth)
	case '[':
		if !n.allows(tArray) || len(n.sets) > 0 {
			return s.fail()
		}
		return s.array(n, depth)
	case '"':
		if !n.allows(tString) {
			return s.fail()
		}
		return s.string(n)
	case 't', 'f', 'n':
		lit, kind := "null", tNull
		if c == 't' {
			lit, kind = "true", tBoolean
		} else if c == 'f' {
			lit, kind = "false", tBoolean
		}
		if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
			return s.fail()
		}
		s.i += len(lit)
		if !n.allows(kind) {
			return s.fail()
		}
		for _, set := range n.sets {
			found := false
			for _, x := range set {
				if (kind == tNull && x.kind == 'n') || (kind == tBoolean && x.kind == 'b' && x.b == (c == 't')) {
					found = true
					break
				}
			}
			if !found {
				return s.fail()
			}
		}
		return true
	}
	return s.number(n)
}

// allows reports whether n's type keyword allows t (not for numbers).
func (n *node) allows(t typeMask) bool { return n.types == 0 || n.types&t != 0 }

// number reads a number: the JSON grammar, then n's number keywords.
func (s *scanner) number(n *node) bool {
	b := s.b
	start := s.i
	i := s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return s.fail()
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return s.fail()
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return s.fail()
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	s.i = i
	if n.types != 0 && n.types&tNumber == 0 && n.types&tInteger == 0 {
		return s.fail()
	}
	needInt := n.types != 0 && n.types&tNumber == 0
	if !needInt && !n.numeric {
		return true
	}
	var d decimal
	if !d.parse(b[start:i]) {
		return s.unsure()
	}
	if needInt && !d.isInt() {
		return s.fail()
	}
	if (n.minimum != nil && d.cmp(n.minimum) < 0) ||
		(n.maximum != nil && d.cmp(n.maximum) > 0) ||
		(n.exclMin != nil && d.cmp(n.exclMin) <= 0) ||
		(n.exclMax != nil && d.cmp(n.exclMax) >= 0) {
		return s.fail()
	}
	for _, set := range n.sets {
		found := false
		for _, x := range set {
			if x.kind == 'd' && d.cmp(x.d) == 0 {
				found = true
				break
			}
		}
		if !found {
			return s.fail()
		}
	}
	return true
}

// string reads a string against n's string keywords.
func (s *scanner) string(n *node) bool {
	var x str
	if !s.scanString(&x) {
		return false
	}
	if len(n.sets) == 0 && n.minLen < 0 && n.maxLen < 0 && n.pattern == nil && n.format == fmtNone {
		return true
	}
	if x.bad {
		// The validator reads the string with U+FFFD in place of each
		// bad part; leave that to it.
		return s.unsure()
	}
	if (n.minLen >= 0 && x.nrunes < n.minLen) || (n.maxLen >= 0 && x.nrunes > n.maxLen) {
		return s.fail()
	}
	for _, set := range n.sets {
		found := false
		for i := range set {
			if set[i].kind == 's' && x.equals(set[i].s) {
				found = true
				break
			}
		}
		if !found {
			return s.fail()
		}
	}
	if n.pattern != nil {
		var ok bool
		if x.esc {
			ok = n.pattern.Match(x.decode(nil))
		} else {
			ok = n.pattern.Match(x.raw)
		}
		if !ok {
			return s.fail()
		}
	}
	if n.format != fmtNone {
		text := x.raw
		if x.esc {
			var buf [256]byte
			if len(x.raw) > len(buf) {
				return s.unsure()
			}
			text = x.decode(buf[:0])
		}
		switch n.format.check(text) {
		case invalid:
			return s.fail()
		case unsure:
			return s.unsure()
		}
	}
	return true
}

// array reads an array against n's array keywords.
func (s *scanner) array(n *node, depth int) bool {
	if depth >= maxDepth {
		return s.unsure()
	}
	items := n.items
	if items == nil {
		items = anyNode
	}
	s.i++ // [
	s.ws()
	count := 0
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
	} else {
		for {
			if !s.value(items, depth+1) {
				return false
			}
			count++
			s.ws()
			if s.i >= len(s.b) {
				return s.fail()
			}
			c := s.b[s.i]
			s.i++
			if c == ']' {
				break
			}
			if c != ',' {
				return s.fail()
			}
			s.ws()
		}
	}
	if (n.minItems >= 0 && count < n.minItems) || (n.maxItems >= 0 && count > n.maxItems) {
		return s.fail()
	}
	return true
}

// object reads an object against n's object keywords. A name given twice
// is checked each time: the validator sees the last value only, so every
// value passing means the last one does.
func (s *scanner) object(n *node, depth int) bool {
	if depth >= maxDepth {
		return s.unsure()
	}
	s.i++ // {
	s.ws()
	var seen uint64
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
	} else {
		for {
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return s.fail()
			}
			var key str
			if !s.scanString(&key) {
				return false
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return s.fail()
			}
			s.i++
			s.ws()
			sub := anyNode
			if n.objCheck {
				if key.bad {
					return s.unsure()
				}
				j := n.lookup(&key)
				var schema *node
				if j >= 0 {
					seen |= n.props[j].bit
					schema = n.props[j].schema
				}
				switch {
				case schema != nil:
					sub = schema
				case n.noExtra:
					return s.fail()
				case n.extra != nil:
					sub = n.extra
				}
			}
			if !s.value(sub, depth+1) {
				return false
			}
			s.ws()
			if s.i >= len(s.b) {
				return s.fail()
			}
			c := s.b[s.i]
			s.i++
			if c == '}' {
				break
			}
			if c != ',' {
				return s.fail()
			}
			s.ws()
		}
	}
	if seen&n.reqMask != n.reqMask {
		return s.fail()
	}
	return true
}

// lookup returns the index in n.props of the key, or -1.
func (n *node) lookup(key *str) int {
	if !key.esc {
		if n.index != nil {
			if j, ok := n.index[string(key.raw)]; ok {
				return j
			}
			return -1
		}
		for j := range n.props {
			if n.props[j].name == string(key.raw) {
				return j
			}
		}
		return -1
	}
	for j := range n.props {
		if key.equals(n.props[j].name) {
			return j
		}
	}
	return -1
}

// skip reads any one JSON value, checking only that it is JSON. Nesting
// is tracked in a bit stack (1: object, 0: array).
func (s *scanner) skip(depth int) bool {
	var stack [maxDepth / 64]uint64
	level := 0
	b := s.b
	var x str
	for {
		// a value
		if s.i >= len(b) {
			return s.fail()
		}
		switch c := b[s.i]; c {
		case '{', '[':
			if depth+level >= maxDepth {
				return s.unsure()
			}
			if c == '{' {
				stack[level/64] |= 1 << (level % 64)
			} else {
				stack[level/64] &^= 1 << (level % 64)
			}
			level++
			s.i++
			s.ws()
			if s.i < len(b) && b[s.i] == c+2 { // } or ]
				s.i++
				level--
				break
			}
			if c == '{' {
				if !s.key(&x) {
					return false
				}
			}
			continue
		case '"':
			if !s.scanString(&x) {
				return false
			}
		case 't':
			if !s.literal("true") {
				return false
			}
		case 'f':
			if !s.literal("false") {
				return false
			}
		case 'n':
			if !s.literal("null") {
				return false
			}
		default:
			if !s.number(anyNode) {
				return false
			}
		}
		// after a value: close what ends here, or go on to the next
		for {
			if level == 0 {
				return true
			}
			s.ws()
			if s.i >= len(b) {
				return s.fail()
			}
			obj := stack[(level-1)/64]&(1<<((level-1)%64)) != 0
			c := b[s.i]
			s.i++
			if c == ',' {
				s.ws()
				if obj && !s.key(&x) {
					return false
				}
				break
			}
			if (obj && c == '}') || (!obj && c == ']') {
				level--
				continue
			}
			return s.fail()
		}
	}
}

// key reads `"name" :` and the white space after it.
func (s *scanner) key(x *str) bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return s.fail()
	}
	if !s.scanString(x) {
		return false
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return s.fail()
	}
	s.i++
	s.ws()
	return true
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return s.fail()
	}
	s.i += len(lit)
	return true
}
