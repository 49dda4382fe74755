package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Bounds on what decodeYAML accepts. They keep a hostile document from
// costing more than its size suggests.
const (
	// maxDocumentBytes is the default size cap of one YAML or JSON document.
	maxDocumentBytes = 1 << 20
	// maxDepth bounds the nesting of mappings and sequences, aliases
	// included: deeper documents are refused instead of recursed into.
	maxDepth = 128
	// minAliasAllowance is how many nodes aliases may add to any document;
	// larger documents may add as many nodes as they hold (see
	// aliasBudget).
	minAliasAllowance = 100_000
)

var (
	// jsonNumberRE matches the JSON number grammar; such scalars are kept
	// verbatim so that big or precise numbers survive.
	jsonNumberRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	// surrogateEscapeRE finds a \u escape of a UTF-16 surrogate, which YAML
	// refuses; used to locate that error.
	surrogateEscapeRE = regexp.MustCompile(`\\u[dD][89a-fA-F][0-9a-fA-F]{2}`)
)

// aliasBudget is the most nodes a document of tree nodes may expand to
// once its aliases are followed: a document may double in size, and
// small ones may add minAliasAllowance nodes. A billion-laughs document
// (nine levels of ten aliases) would need 10^9.
func aliasBudget(tree int) int {
	return tree + max(minAliasAllowance, tree)
}

// decodeYAML reads one YAML document (JSON is read as YAML, its subset)
// into a node tree, refusing what a manifest must never be: more than
// maxDocumentBytes, invalid UTF-8, several documents, duplicate or
// non-string mapping keys, nesting deeper than maxDepth, aliases that
// refer to themselves or expand the document past aliasBudget. Every
// problem is a *ManifestError naming file and, where known, the line; all
// found are joined.
//
// An empty document (nothing but blanks and comments) is not an error: it
// returns a DocumentNode without content, which converts to null.
func decodeYAML(file string, data []byte) (*yaml.Node, error) {
	return decodeYAMLLimit(file, data, maxDocumentBytes)
}

// decodeYAMLLimit is decodeYAML with a caller's size cap.
func decodeYAMLLimit(file string, data []byte, maxBytes int) (*yaml.Node, error) {
	if len(data) > maxBytes {
		return nil, &ManifestError{File: file, Msg: fmt.Sprintf("is %d bytes; at most %d allowed", len(data), maxBytes)}
	}
	if !utf8.Valid(data) {
		off := invalidUTF8Offset(data)
		return nil, &ManifestError{File: file, Line: lineAt(data, off),
			Msg: fmt.Sprintf("invalid UTF-8 at byte offset %d; the file must be UTF-8 text", off)}
	}
	if looksLikeJSON(data) {
		var err error
		if data, err = joinSurrogates(file, data); err != nil {
			return nil, err
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &yaml.Node{Kind: yaml.DocumentNode}, nil
		}
		return nil, syntaxError(file, data, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(file, data, err)
	case !emptyDocument(&next):
		return nil, &ManifestError{File: file, Line: next.Line,
			Msg: fmt.Sprintf("a second YAML document starts at line %d; expected exactly one document", next.Line)}
	}
	c := nodeCheck{file: file, memo: map[*yaml.Node]nodeSize{}, active: map[*yaml.Node]bool{}}
	c.budget = aliasBudget(countNodes(&doc))
	c.walk(&doc, 0)
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return &doc, nil
}

// emptyDocument reports whether a document node holds nothing: a trailing
// "---" after the document proper.
func emptyDocument(n *yaml.Node) bool {
	if len(n.Content) == 0 {
		return true
	}
	c := n.Content[0]
	return len(n.Content) == 1 && c.Kind == yaml.ScalarNode && c.Value == "" && c.Tag == "!!null" && c.Style == 0
}

func invalidUTF8Offset(data []byte) int {
	for off := 0; off < len(data); {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			return off
		}
		off += size
	}
	return len(data)
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(data []byte, off int) int {
	off = min(off, len(data))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// syntaxError turns a yaml.v3 parse error into a *ManifestError, finding
// the line where the library gives none and explaining the usual causes.
func syntaxError(file string, data []byte, err error) error {
	text := strings.TrimPrefix(err.Error(), "yaml: ")
	me := &ManifestError{File: file, Msg: text}
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		me.Line, _ = strconv.Atoi(m[1])
		me.Msg = m[2]
	}
	switch {
	case strings.Contains(text, "tab character") || me.Line > 0 && tabIndented(data, me.Line):
		me.Msg = "a tab is used for indentation; YAML indentation must use spaces"
	case strings.Contains(text, "control characters"):
		if i := bytes.IndexFunc(data, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f }); i >= 0 {
			me.Line = lineAt(data, i)
			me.Msg = fmt.Sprintf("control character %U at byte offset %d; only printable text, tabs and newlines are allowed", data[i], i)
		}
	case strings.Contains(text, "Unicode character escape"):
		if loc := surrogateEscapeRE.FindIndex(data); loc != nil {
			me.Line = lineAt(data, loc[0])
			me.Msg = fmt.Sprintf("escape %s is half of a UTF-16 surrogate pair; write the character itself or a complete pair", data[loc[0]:loc[1]])
		}
	case strings.Contains(text, "exceeded max depth"):
		me.Msg = fmt.Sprintf("nesting is deeper than %d levels", maxDepth)
	default:
		explainSyntax(me, data)
	}
	return me
}

// explainSyntax rewrites the yaml.v3 messages people meet most often in
// hand-written headers into what went wrong and how to fix it, and
// corrects the line of parser errors, which yaml.v3 reports as the line
// before the block or flow collection it was reading.
func explainSyntax(me *ManifestError, data []byte) {
	msg := me.Msg
	line := func(n int) string {
		lines := bytes.Split(data, []byte("\n"))
		if n < 1 || n > len(lines) {
			return ""
		}
		return strings.TrimRight(string(lines[n-1]), "\r")
	}
	switch {
	case msg == "mapping values are not allowed in this context":
		text := line(me.Line)
		if _, value, ok := strings.Cut(text, ": "); ok && strings.Contains(value, ": ") {
			me.Msg = `the value holds ": ", which YAML reads as the start of a mapping; put the whole value in quotes (description: "...")`
		} else {
			me.Msg = `unexpected ": " here; if this line is a field, indent it like the fields above it, and if it continues a value, put that value in quotes`
		}
	case msg == "found character that cannot start any token":
		text := strings.TrimSpace(line(me.Line))
		if _, value, ok := strings.Cut(text, ":"); ok {
			text = strings.TrimSpace(value)
		}
		text = strings.TrimSpace(strings.TrimPrefix(text, "- "))
		if r, _ := utf8.DecodeRuneInString(text); text != "" && r != utf8.RuneError {
			me.Msg = fmt.Sprintf("a YAML value cannot start with %q; put the whole value in quotes", r)
		} else {
			me.Msg = "YAML syntax error: " + msg + "; put the value in quotes"
		}
	case msg == "found unexpected end of stream" && strings.ContainsAny(line(me.Line), `"'`):
		me.Msg = "the quoted value that starts on this line is never closed; add the closing quote"
	case strings.HasPrefix(msg, "did not find expected"):
		if l := problemLine(data, msg, me.Line); l > 0 {
			me.Line = l
		} else if me.Line > 0 {
			me.Line++
		}
		switch msg {
		case "did not find expected key", "did not find expected '-' indicator":
			me.Msg = "this line does not continue the mapping or list above it; check its indentation, and quote values " +
				`that hold quote marks, ": " or " #" (inside '...' write an apostrophe as '')`
		case "did not find expected ',' or ']'":
			me.Msg = "the [ list opened on this line is not closed with ], or a comma is missing between its items"
		case "did not find expected ',' or '}'":
			me.Msg = "the { mapping opened on this line is not closed with }, or a comma is missing between its entries"
		case "did not find expected <document start>":
			me.Msg = "content after the end of the YAML document (a ... line); the header must be a single YAML document"
		default:
			me.Msg = "YAML syntax error: " + msg
		}
	case strings.HasPrefix(msg, "unknown anchor '") && strings.HasSuffix(msg, "' referenced"):
		name := strings.TrimSuffix(strings.TrimPrefix(msg, "unknown anchor '"), "' referenced")
		if i := bytes.Index(data, []byte("*"+name)); i >= 0 {
			me.Line = lineAt(data, i)
		}
		me.Msg = fmt.Sprintf("alias *%s refers to no anchor; define &%s before it, or write the value out", name, name)
	default:
		if l := problemLine(data, msg, me.Line); l > 0 {
			me.Line = l
		}
		me.Msg = "YAML syntax error: " + msg
	}
}

// problemLine finds where a yaml.v3 parser error really is: the first
// line at or after from such that the text up to the end of that line
// fails with the same message. It parses at most 200 prefixes and 4 MiB
// in all, and returns 0 when it gives up.
func problemLine(data []byte, msg string, from int) int {
	budget := 4 << 20
	off := 0
	for n := 1; off < len(data); n++ {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off + 1
		}
		off = end
		if n < from {
			continue
		}
		if n > from+200 || budget < off {
			return 0
		}
		budget -= off
		var doc yaml.Node
		err := yaml.Unmarshal(data[:off], &doc)
		if err == nil {
			continue
		}
		got := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
			got = m[2]
		}
		if got == msg {
			return n
		}
	}
	return 0
}

// tabIndented reports whether the given 1-based line of data starts
// with blanks that include a tab.
func tabIndented(data []byte, line int) bool {
	lines := bytes.SplitN(data, []byte("\n"), line+1)
	if line > len(lines) {
		return false
	}
	l := lines[line-1]
	indent := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
	return bytes.IndexByte(indent, '\t') >= 0
}

// looksLikeJSON reports whether data starts, after blanks, like a JSON
// object or array.
func looksLikeJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// joinSurrogates rewrites the JSON escape of a character outside the
// Basic Multilingual Plane, a UTF-16 surrogate pair such as
// "\ud83d\ude00", as the single YAML escape "\U0001F600": YAML escapes
// name code points and refuses surrogate halves. Only double-quoted
// strings are touched; a lone surrogate is an error with its line.
func joinSurrogates(file string, data []byte) ([]byte, error) {
	if !bytes.Contains(data, []byte(`\u`)) && !bytes.Contains(data, []byte(`\U`)) {
		return data, nil
	}
	var out []byte
	inString, lineStart := false, true
	for i := 0; i < len(data); i++ {
		b := data[i]
		switch {
		case !inString && b == '#' && lineStart:
			// A YAML comment in flow style: skip to the end of the line.
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i--
			continue
		case !inString:
			if b == '"' {
				inString = true
			}
			lineStart = b == ' ' || b == '\t' || b == '\n' || b == ','
		case b == '"':
			inString = false
		case b == '\\' && i+1 < len(data):
			hi, ok := hexEscape(data, i)
			if !ok || !utf16IsSurrogate(hi) {
				if out != nil {
					out = append(out, b, data[i+1])
				}
				i++
				continue
			}
			lo, ok := hexEscape(data, i+6)
			if hi >= 0xdc00 || !ok || lo < 0xdc00 || lo > 0xdfff {
				return nil, &ManifestError{File: file, Line: lineAt(data, i),
					Msg: fmt.Sprintf("escape %s is half of a UTF-16 surrogate pair; write the character itself or a complete pair", data[i:i+6])}
			}
			if out == nil {
				out = append(make([]byte, 0, len(data)), data[:i]...)
			}
			r := 0x10000 + (hi-0xd800)<<10 + (lo - 0xdc00)
			out = fmt.Appendf(out, `\U%08X`, r)
			i += 11
			continue
		}
		if out != nil {
			out = append(out, b)
		}
	}
	if out == nil {
		return data, nil
	}
	return out, nil
}

// hexEscape reads a \uXXXX escape at data[i:].
func hexEscape(data []byte, i int) (rune, bool) {
	if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 16)
	return rune(v), err == nil
}

func utf16IsSurrogate(r rune) bool { return r >= 0xd800 && r <= 0xdfff }

// nodeSize is the expanded size and height of a node, aliases followed.
type nodeSize struct{ nodes, height int }

// nodeCheck walks a parsed document once, checking keys, depth and alias
// expansion. Anchored nodes are measured once and memoised, so the walk is
// linear in the document however its aliases multiply.
type nodeCheck struct {
	file   string
	budget int
	total  int
	memo   map[*yaml.Node]nodeSize
	active map[*yaml.Node]bool
	errs   []error
	failed bool // the alias or depth bound was hit: stop walking
}

func (c *nodeCheck) fail(line int, format string, args ...any) {
	c.errs = append(c.errs, &ManifestError{File: c.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// walk checks n at the given depth and returns its expanded size.
func (c *nodeCheck) walk(n *yaml.Node, depth int) nodeSize {
	if c.failed || n == nil {
		return nodeSize{}
	}
	if n.Kind == yaml.AliasNode {
		t := n.Alias
		if t == nil || c.active[t] {
			c.fail(n.Line, "alias *%s refers to a node that contains it, which would repeat without end; write the value out", n.Value)
			c.failed = true
			return nodeSize{}
		}
		s, ok := c.memo[t]
		if !ok {
			s = nodeSize{nodes: 1, height: 1}
		}
		return c.grow(n, depth, s)
	}
	if depth >= maxDepth {
		c.fail(n.Line, "nesting is deeper than %d levels", maxDepth)
		c.failed = true
		return nodeSize{}
	}
	if n.Kind != yaml.DocumentNode {
		c.total++
	}
	if n.Anchor != "" {
		c.active[n] = true
		defer delete(c.active, n)
	}
	s := nodeSize{nodes: 1, height: 1}
	add := func(k nodeSize) {
		s.nodes = min(s.nodes+k.nodes, c.budget+1)
		s.height = max(s.height, k.height+1)
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		d := depth + 1
		if n.Kind == yaml.DocumentNode {
			d = depth
		}
		for _, e := range n.Content {
			add(c.walk(e, d))
		}
	case yaml.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			c.checkKey(k, seen)
			c.total++
			add(nodeSize{nodes: 1})
			add(c.walk(n.Content[i+1], depth+1))
		}
	}
	if n.Anchor != "" {
		c.memo[n] = s
	}
	return s
}

// grow accounts for the expansion of an alias.
func (c *nodeCheck) grow(n *yaml.Node, depth int, s nodeSize) nodeSize {
	c.total = min(c.total+s.nodes, c.budget+1)
	if c.total > c.budget {
		c.fail(n.Line, "alias *%s expands the document past %d nodes; refusing what looks like an alias bomb (write the values out instead of nesting aliases)", n.Value, c.budget)
		c.failed = true
		return nodeSize{}
	}
	if depth+s.height > maxDepth {
		c.fail(n.Line, "alias *%s nests the document deeper than %d levels", n.Value, maxDepth)
		c.failed = true
		return nodeSize{}
	}
	return s
}

// checkKey refuses mapping keys that are not strings and keys seen
// before in the same mapping.
func (c *nodeCheck) checkKey(k *yaml.Node, seen map[string]int) {
	if k.Kind != yaml.ScalarNode {
		what := map[yaml.Kind]string{yaml.MappingNode: "a mapping", yaml.SequenceNode: "a sequence", yaml.AliasNode: "an alias"}[k.Kind]
		c.fail(k.Line, "a mapping key is %s; keys must be strings", what)
		return
	}
	switch tag := k.ShortTag(); tag {
	case "!!str", "!!merge":
	default:
		c.fail(k.Line, "key %s is %s; keys must be strings (quote it: %q)", k.Value, tagNoun(tag), k.Value)
		return
	}
	if first, ok := seen[k.Value]; ok {
		c.fail(k.Line, "key %q is repeated; it was first defined at line %d", k.Value, first)
		return
	}
	seen[k.Value] = k.Line
}

func tagNoun(tag string) string {
	switch tag {
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	case "!!timestamp":
		return "a timestamp"
	}
	return "tagged " + tag
}

// countNodes counts the nodes of a tree without following aliases.
func countNodes(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	total := 1
	for _, c := range n.Content {
		total += countNodes(c)
	}
	return total
}

// nodeValue converts a node tree into plain JSON values: map[string]any,
// []any, string, json.Number, bool and nil. Aliases are expanded and
// merge keys (<<) applied, within aliasBudget and maxDepth. Scalars
// follow the YAML tags yaml.v3 resolves (YAML 1.2 core schema): yes, no,
// on and off are strings, not booleans; timestamps stay strings as
// written; integers written in other bases (0x1F, 0o17) or with
// underscores become decimal; numbers already in JSON form are kept
// verbatim, so big integers and long decimals survive. Infinity, NaN,
// non-string keys and unknown tags are errors naming the line.
func nodeValue(file string, n *yaml.Node) (any, error) {
	cv := converter{file: file, budget: aliasBudget(countNodes(n))}
	return cv.value(n, 0)
}

type converter struct {
	file   string
	budget int
	count  int
}

func (cv *converter) errorf(n *yaml.Node, format string, args ...any) error {
	return &ManifestError{File: cv.file, Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

func (cv *converter) value(n *yaml.Node, depth int) (any, error) {
	if n == nil {
		return nil, nil
	}
	if cv.count++; cv.count > cv.budget {
		return nil, cv.errorf(n, "aliases expand the document past %d nodes; refusing what looks like an alias bomb", cv.budget)
	}
	if depth >= maxDepth {
		return nil, cv.errorf(n, "nesting is deeper than %d levels", maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return cv.value(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, cv.errorf(n, "alias *%s refers to no anchor", n.Value)
		}
		return cv.value(n.Alias, depth)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := cv.value(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		var merges []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, cv.errorf(k, "a mapping key must be a string")
			}
			switch k.ShortTag() {
			case "!!merge":
				merges = append(merges, v)
				continue
			case "!!str":
			default:
				return nil, cv.errorf(k, "key %s is %s; keys must be strings (quote it: %q)", k.Value, tagNoun(k.ShortTag()), k.Value)
			}
			if _, dup := out[k.Value]; dup {
				return nil, cv.errorf(k, "key %q is repeated", k.Value)
			}
			val, err := cv.value(v, depth+1)
			if err != nil {
				return nil, err
			}
			out[k.Value] = val
		}
		for _, m := range merges {
			if err := cv.merge(out, m, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case yaml.ScalarNode:
		return cv.scalar(n)
	}
	return nil, cv.errorf(n, "unsupported YAML node")
}

// merge applies a merge key's value (a mapping, or a sequence of them) to
// out; keys already present win, and earlier mappings win over later.
func (cv *converter) merge(out map[string]any, m *yaml.Node, depth int) error {
	src := m
	for src.Kind == yaml.AliasNode && src.Alias != nil {
		src = src.Alias
	}
	switch src.Kind {
	case yaml.SequenceNode:
		for _, e := range src.Content {
			if err := cv.merge(out, e, depth); err != nil {
				return err
			}
		}
		return nil
	case yaml.MappingNode:
		v, err := cv.value(src, depth)
		if err != nil {
			return err
		}
		for k, val := range v.(map[string]any) {
			if _, ok := out[k]; !ok {
				out[k] = val
			}
		}
		return nil
	}
	return cv.errorf(m, "the value of << must be a mapping or a list of mappings")
}

func (cv *converter) scalar(n *yaml.Node) (any, error) {
	switch tag := n.ShortTag(); tag {
	case "!!str", "!!timestamp", "!!binary":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		switch strings.ToLower(n.Value) {
		case "true", "yes", "on", "y":
			return true, nil
		case "false", "no", "off", "n":
			return false, nil
		}
		return nil, cv.errorf(n, "%q is tagged !!bool but is not true or false", n.Value)
	case "!!int", "!!float":
		if jsonNumberRE.MatchString(n.Value) {
			return json.Number(n.Value), nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, cv.errorf(n, "%q is tagged %s but is not a number", n.Value, tag)
		}
		switch x := v.(type) {
		case int:
			return json.Number(strconv.Itoa(x)), nil
		case int64:
			return json.Number(strconv.FormatInt(x, 10)), nil
		case uint64:
			return json.Number(strconv.FormatUint(x, 10)), nil
		case float64:
			if math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, cv.errorf(n, "%s is not a finite number; JSON has no infinity or NaN", n.Value)
			}
			return json.Number(strconv.FormatFloat(x, 'g', -1, 64)), nil
		}
		return nil, cv.errorf(n, "%q is tagged %s but is not a number", n.Value, tag)
	default:
		return nil, cv.errorf(n, "tag %s is not supported; use plain YAML values", n.Tag)
	}
}
