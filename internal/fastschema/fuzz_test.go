package fastschema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/skillhost/skillhost/packs"
)

// FuzzPlanMatchesJSONSchema checks the fast path against the full
// validator. The first input is a schema: JSON text when it starts with
// '{' (the seeds are the bundled pack's schemas), otherwise the choices of
// a small schema generator. The second is a document: JSON text, or, when
// it starts with a zero byte, the choices of a document generator that
// writes values close to the schema's edges (its names, enum members,
// bounds, formats; escapes, duplicates, odd number forms, bad UTF-8).
//
// Whenever both the validator and Compile accept the schema: a valid
// verdict must be the validator's valid, an invalid verdict its invalid
// (but for documents with a repeated name), and Valid is the valid
// verdict. Compile must not accept a schema the validator refuses.
func FuzzPlanMatchesJSONSchema(f *testing.F) {
	schemas, examples := bundledSchemas(f)
	for name, schema := range schemas {
		f.Add([]byte(schema), []byte(`{}`))
		for _, ex := range examples[name] {
			f.Add([]byte(schema), []byte(ex))
		}
		f.Add([]byte(schema), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	for _, tc := range keywordCases {
		for doc := range tc.docs {
			f.Add([]byte(tc.schema), []byte(doc))
		}
	}
	for i := range 64 {
		f.Add([]byte{byte(i), byte(i * 7), byte(i * 13), 3, 1, 4, 1, 5, 9, 2, 6}, []byte{0, byte(i), 2, byte(i * 3), 5, 7})
	}
	f.Fuzz(func(t *testing.T, schemaIn, docIn []byte) {
		schema := string(schemaIn)
		var voc *vocabulary
		if len(schemaIn) == 0 || schemaIn[0] != '{' {
			g := &gen{b: schemaIn}
			voc = &vocabulary{}
			schema = g.schema(voc, 0)
		}
		plan, ok := Compile(json.RawMessage(schema))
		full, err := packs.CompileSchema(json.RawMessage(schema))
		if ok && err != nil {
			t.Fatalf("Compile accepts a schema the validator refuses (%v): %s", err, schema)
		}
		if !ok || err != nil {
			return
		}
		doc := docIn
		if len(docIn) > 0 && docIn[0] == 0 {
			if voc == nil {
				voc = vocabularyOf(schema)
			}
			g := &gen{b: docIn[1:]}
			var sb strings.Builder
			g.doc(&sb, voc, 0)
			doc = []byte(sb.String())
		}
		agree(t, schema, full, plan, doc)
	})
}

// gen turns fuzz bytes into choices; past the end every choice is 0.
type gen struct {
	b []byte
	i int
}

func (g *gen) next() int {
	if g.i >= len(g.b) {
		return 0
	}
	g.i++
	return int(g.b[g.i-1])
}

// pick returns a choice in [0, n).
func (g *gen) pick(n int) int { return g.next() % n }

func pickFrom[T any](g *gen, xs []T) T { return xs[g.pick(len(xs))] }

// vocabulary is what documents are made of: the names, strings and
// numbers the schema mentions, and some more.
type vocabulary struct {
	names, strings, numbers []string
}

var (
	namePool   = []string{"a", "b", "text", "n", "é", "a b", "", "url", "p9"}
	stringPool = []string{
		"", "a", "ab", "abc", "é", "😀", "x1", "2024-02-29T12:00:00Z", "2023-02-29", "23:59:60Z", "12:00:00+01:00",
		"123e4567-e89b-12d3-a456-426614174000", "a@b.co", "a..b@c", "example.com", "127.0.0.1", "01.2.3.4",
		"http://a.b:80/x?y#z", "mailto:x", "http://[::1]/", "//x", "-a", "A", "snake",
	}
	numberPool = []string{
		"0", "-0", "1", "-1", "1.0", "1.5", "2", "10", "1e1", "1E+1", "0.1e1", "10e-1", "100", "-1.5", "0.30000000000000004",
		"3e-1", "1e400", "1e-400", "1e999", "1e1001", "1e1000001", "12345678901234567890", "0.000", "2.0", "1.0000000000000000000001",
	}
	typePool    = []string{"null", "boolean", "integer", "number", "string", "array", "object"}
	formatPool  = []string{"date-time", "date", "time", "uuid", "email", "hostname", "ipv4", "uri", "iri", "ipv6", "int64", "regex"}
	patternPool = []string{"^a", "[0-9]+", `^\p{L}+$`, "é", "^.{2}$", "a|b", "(?i)abc", "^$", `\d`, "("}
)

// schema writes a schema as JSON text, adding what it mentions to voc.
func (g *gen) schema(voc *vocabulary, depth int) string {
	switch c := g.pick(16); {
	case c == 0 || depth > 5:
		return "true"
	case c == 1 && depth > 0:
		return "false"
	}
	m := map[string]any{}
	for n := g.pick(5) + depth%2; n > 0; n-- {
		switch k := g.pick(26); k {
		case 0, 1:
			if g.pick(3) == 0 {
				var ts []any
				for j := g.pick(3) + 1; j > 0; j-- {
					ts = append(ts, pickFrom(g, typePool))
				}
				m["type"] = ts
			} else {
				m["type"] = pickFrom(g, typePool)
			}
		case 2:
			var e []any
			for j := g.pick(4); j > 0; j-- {
				e = append(e, g.scalar(voc))
			}
			m["enum"] = e
		case 3:
			m["const"] = g.scalar(voc)
		case 4, 5, 6, 7:
			kw := []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}[k-4]
			num := pickFrom(g, numberPool)
			voc.numbers = append(voc.numbers, num)
			m[kw] = json.Number(num)
		case 8, 9, 10, 11:
			kw := []string{"minLength", "maxLength", "minItems", "maxItems"}[k-8]
			m[kw] = json.Number(pickFrom(g, []string{"0", "1", "2", "3", "5", "2.0", "1e1", "-1", "1.5"}))
		case 12:
			m["pattern"] = pickFrom(g, patternPool)
		case 13:
			m["format"] = pickFrom(g, formatPool)
		case 14, 15, 16:
			props := map[string]any{}
			for j := g.pick(3) + 1; j > 0; j-- {
				name := pickFrom(g, namePool)
				voc.names = append(voc.names, name)
				props[name] = json.RawMessage(g.schema(voc, depth+1))
			}
			m["properties"] = props
		case 17:
			var req []any
			for j := g.pick(3); j > 0; j-- {
				name := pickFrom(g, namePool)
				voc.names = append(voc.names, name)
				req = append(req, name)
			}
			m["required"] = req
		case 18, 19:
			m["additionalProperties"] = json.RawMessage(g.schema(voc, depth+1))
		case 20, 21:
			m["items"] = json.RawMessage(g.schema(voc, depth+1))
		case 22:
			m[pickFrom(g, []string{"description", "title", "$comment"})] = "x"
			m["default"] = g.scalar(voc)
			m["examples"] = []any{g.scalar(voc)}
		case 23:
			m[pickFrom(g, []string{"deprecated", "readOnly", "writeOnly"})] = g.pick(2) == 0
		case 24:
			// outside the subset, or not a schema at all
			kw := pickFrom(g, []string{"uniqueItems", "multipleOf", "$ref", "minProperties", "nullable", "title", "type", "$schema", "contentEncoding"})
			m[kw] = json.RawMessage(pickFrom(g, []string{"true", "2", `"#"`, `"x"`, "1", `"https://json-schema.org/draft/2020-12/schema"`, "[]"}))
		case 25:
			if depth == 0 {
				m["$schema"] = "https://json-schema.org/draft/2020-12/schema"
			}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// scalar returns an enum or const member.
func (g *gen) scalar(voc *vocabulary) any {
	switch g.pick(5) {
	case 0:
		return nil
	case 1:
		return g.pick(2) == 0
	case 2:
		num := pickFrom(g, numberPool)
		voc.numbers = append(voc.numbers, num)
		return json.Number(num)
	case 3:
		return []any{1}
	}
	s := pickFrom(g, stringPool)
	voc.strings = append(voc.strings, s)
	return s
}

// vocabularyOf collects the names, strings and numbers of a schema given
// as text.
func vocabularyOf(schema string) *vocabulary {
	voc := &vocabulary{}
	d := json.NewDecoder(strings.NewReader(schema))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return voc
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				voc.names = append(voc.names, k)
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case string:
			voc.strings = append(voc.strings, v)
		case json.Number:
			voc.numbers = append(voc.numbers, string(v))
		}
	}
	walk(v)
	return voc
}

// doc writes a JSON-ish value: mostly JSON, sometimes broken.
func (g *gen) doc(sb *strings.Builder, voc *vocabulary, depth int) {
	ws := func() {
		if g.pick(8) == 0 {
			sb.WriteString(pickFrom(g, []string{" ", "\n", "\t", "\r\n ", "\u00a0", "\f"}))
		}
	}
	ws()
	if depth > 6 {
		sb.WriteString("1")
		return
	}
	switch c := g.pick(16); {
	case c < 5:
		sb.WriteByte('{')
		n := g.pick(4)
		if depth == 0 {
			n++
		}
		for i := 0; i < n; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			ws()
			g.str(sb, pickFrom(g, append(voc.names, namePool...)))
			ws()
			sb.WriteByte(':')
			g.doc(sb, voc, depth+1)
		}
		if g.pick(16) == 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('}')
	case c < 7:
		sb.WriteByte('[')
		for i, n := 0, g.pick(4); i < n; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			g.doc(sb, voc, depth+1)
		}
		sb.WriteByte(']')
	case c < 11:
		g.str(sb, pickFrom(g, append(voc.strings, stringPool...)))
	case c < 14:
		sb.WriteString(pickFrom(g, append(voc.numbers, numberPool...)))
	case c == 14:
		sb.WriteString(pickFrom(g, []string{"true", "false", "null", "nul", "1.", "-", "01", "+1", ".5", "[", "}", `"`}))
	default:
		// a number or string near a bound: a digit changed
		s := []byte(pickFrom(g, append(voc.numbers, numberPool...)))
		i := g.pick(len(s))
		if s[i] >= '0' && s[i] <= '8' {
			s[i]++
		}
		sb.Write(s)
	}
	ws()
}

// str writes s as a JSON string, sometimes with escapes, invalid UTF-8 or
// a lone surrogate.
func (g *gen) str(sb *strings.Builder, s string) {
	sb.WriteByte('"')
	mode := g.pick(8)
	for _, r := range s {
		switch {
		case mode == 1 && r < 0x10000:
			sb.WriteString(`\u`)
			const hex = "0123456789abcdef"
			sb.WriteByte(hex[r>>12&15])
			sb.WriteByte(hex[r>>8&15])
			sb.WriteByte(hex[r>>4&15])
			sb.WriteByte(hex[r&15])
		case mode == 1:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(sb, `\u%04x\u%04X`, r1, r2)
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r == '/' && mode == 2:
			sb.WriteString(`\/`)
		case r < 0x20:
			sb.WriteString(`\n`)
		default:
			sb.WriteRune(r)
		}
	}
	switch mode {
	case 3:
		sb.WriteString("\xff")
	case 4:
		sb.WriteString(`\ud800`)
	case 5:
		sb.WriteString(pickFrom(g, []string{`\t`, `\u00e9`, `\x`, "\x01", `\u12`, "é"}))
	}
	sb.WriteByte('"')
}
