package packs

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"
)

// schemaFiles holds the JSON Schemas of the formats packs reads, one
// <name>.schema.json per format.
//
//go:embed schemas/*.json
var schemaFiles embed.FS

// schemaBase is the URL the embedded schemas are known by; they may refer
// to each other relative to it. Nothing is ever fetched from it.
const schemaBase = "https://skillhost.invalid/schemas/"

var (
	compiledMu sync.Mutex
	compiled   = map[string]*jsonschema.Schema{}

	// plainKeyRE matches a mapping key written as .key in a field path;
	// others are written ["key"].
	plainKeyRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	// yamlBoolWordRE matches the YAML 1.1 booleans that YAML 1.2 (and
	// yaml.v3) read as strings.
	yamlBoolWordRE = regexp.MustCompile(`^(?i:yes|no|on|off|y|n)$`)

	printer = message.NewPrinter(language.English)
)

// embeddedLoader serves the embedded schemas and refuses every other URL,
// so no schema, embedded or a pack author's, can make the compiler read
// a file or reach the network.
type embeddedLoader struct{}

func (embeddedLoader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, schemaBase)
	if !ok {
		return nil, fmt.Errorf("schema %s: only local references (#/...) are allowed", url)
	}
	data, err := schemaFiles.ReadFile("schemas/" + name)
	if err != nil {
		return nil, fmt.Errorf("schema %s: not shipped with skillhost", name)
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// refusingLoader loads nothing: a pack's own schemas may only refer
// within themselves.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: only references within the schema (#/...) are allowed", url)
}

// embeddedSchema returns the compiled embedded schema <name>.schema.json,
// compiling it on first use.
func embeddedSchema(name string) (*jsonschema.Schema, error) {
	compiledMu.Lock()
	defer compiledMu.Unlock()
	if s, ok := compiled[name]; ok {
		return s, nil
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(embeddedLoader{})
	s, err := c.Compile(schemaBase + name + ".schema.json")
	if err != nil {
		return nil, fmt.Errorf("packs: embedded schema %q: %v", name, err)
	}
	compiled[name] = s
	return s, nil
}

// packSchemaURL is the URL a pack's own schema is compiled under.
const packSchemaURL = "https://skillhost.invalid/pack-schema.json"

// compileSchema compiles a JSON Schema a pack brings (a tool's input
// schema, say), given as plain JSON values. References outside the schema
// are refused; formats are asserted. When the schema breaks the JSON
// Schema rules the error wraps the *jsonschema.ValidationError against
// the meta-schema (see schemaCompileErrors).
func compileSchema(doc any) (*jsonschema.Schema, error) {
	key, err := json.Marshal(doc)
	if err != nil {
		return compileSchemaOnce(doc) // the compiler says what is wrong
	}
	if s := packSchemas.get(string(key)); s != nil {
		return s, nil
	}
	s, err := compileSchemaOnce(doc)
	if err == nil {
		packSchemas.put(string(key), s)
	}
	return s, err
}

// packSchemas remembers the schemas compileSchema compiled, by their JSON:
// checking a schema against the meta-schema costs about half a
// millisecond, and a pack's schemas are compiled once when its manifest is
// checked and again when the registry is built, and again on every
// reload. A compiled schema is immutable, so one serves every caller.
var packSchemas = &schemaCache{max: 4096}

// schemaCache is a map of compiled schemas that starts afresh when full.
type schemaCache struct {
	mu  sync.Mutex
	max int
	m   map[string]*jsonschema.Schema
}

func (c *schemaCache) get(key string) *jsonschema.Schema {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

func (c *schemaCache) put(key string, s *jsonschema.Schema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[string]*jsonschema.Schema)
	}
	c.m[key] = s
}

// compileSchemaOnce compiles doc with a compiler of its own.
func compileSchemaOnce(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	if err := c.AddResource(packSchemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(packSchemaURL)
}

// schemaCompileErrors describes a compileSchema failure of the schema at
// node (field path prefix): one *ManifestError per rule the schema
// breaks, each located inside it, or a single one naming the unresolvable
// reference. intro starts each message.
func schemaCompileErrors(err error, file string, node *yaml.Node, prefix, intro string) []error {
	var sve *jsonschema.SchemaValidationError
	var verr *jsonschema.ValidationError
	if errors.As(err, &sve) && errors.As(sve.Err, &verr) {
		var out []error
		for _, e := range reportValidation(verr, file, node, "") {
			me := e.(*ManifestError)
			out = append(out, &ManifestError{File: file, Line: me.Line, Field: prefix, Msg: intro + ": " + me.relative()})
		}
		return out
	}
	var lerr *jsonschema.LoadURLError
	msg := strings.ReplaceAll(err.Error(), packSchemaURL, "")
	if errors.As(err, &lerr) {
		msg = fmt.Sprintf("reference %s: only references within the schema (#/...) are allowed", lerr.URL)
	}
	line := 0
	if node != nil {
		line = node.Line
	}
	return []error{&ManifestError{File: file, Line: line, Field: prefix, Msg: intro + ": " + msg}}
}

// relative returns the error without its file and line: the field and
// message, as a clause of a larger message.
func (e *ManifestError) relative() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	return strings.TrimPrefix(e.Error(), loc+": ")
}

// checkSchema validates a document against the embedded schema
// schemas/<schema>.schema.json. It returns one *ManifestError per
// violation, sorted by line, each with the line of the offending node in
// doc, the field as a path ("steps[2].action", "metadata.author") and a
// message saying what was wrong and what was expected. A node that cannot
// be converted to JSON values (an unknown tag, infinity) is reported the
// same way.
func checkSchema(schema, file string, doc *yaml.Node) []error {
	s, err := embeddedSchema(schema)
	if err != nil {
		return []error{err}
	}
	v, err := nodeValue(file, doc)
	if err != nil {
		return []error{err}
	}
	return validateNode(s, v, file, doc, "")
}

// validateNode validates v, the JSON values of node, against s and maps
// every violation back to node. prefix is the field path of node itself
// ("" for a document root).
func validateNode(s *jsonschema.Schema, v any, file string, node *yaml.Node, prefix string) (errs []error) {
	defer func() {
		// The validator panics on numbers math/big cannot hold (an
		// exponent of a million digits): such a file is refused.
		if p := recover(); p != nil {
			line := 0
			if node != nil {
				line = node.Line
			}
			errs = []error{&ManifestError{File: file, Line: line, Field: prefix, Msg: "holds a number too large to check; use a number within ±1e1000"}}
		}
	}()
	err := s.Validate(v)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		line := 0
		if node != nil {
			line = node.Line
		}
		return []error{&ManifestError{File: file, Line: line, Field: prefix, Msg: err.Error()}}
	}
	return reportValidation(verr, file, node, prefix)
}

// reportValidation maps a validation error tree onto node.
func reportValidation(verr *jsonschema.ValidationError, file string, node *yaml.Node, prefix string) []error {
	r := reporter{file: file, root: node, prefix: prefix, seen: map[string]bool{}}
	r.walk(verr)
	slices.SortStableFunc(r.errs, func(a, b *ManifestError) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Msg, b.Msg)
	})
	out := make([]error, len(r.errs))
	for i, e := range r.errs {
		out[i] = e
	}
	return out
}

// lineOffset adds delta to the line of every *ManifestError in errs
// (joined errors included) that has one: for a document embedded in a
// larger file, such as frontmatter in Markdown.
func lineOffset(errs []error, delta int) {
	for _, err := range errs {
		shiftLines(err, delta)
	}
}

func shiftLines(err error, delta int) {
	switch e := err.(type) {
	case *ManifestError:
		if e.Line > 0 {
			e.Line += delta
		}
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			shiftLines(inner, delta)
		}
	}
}

// reporter turns a validation error tree into ManifestErrors.
type reporter struct {
	file   string
	root   *yaml.Node
	prefix string
	errs   []*ManifestError
	seen   map[string]bool
}

func (r *reporter) add(line int, field, msg string) {
	if field == "" && (strings.HasPrefix(msg, "is ") || strings.HasPrefix(msg, "has ") || strings.HasPrefix(msg, "must ")) {
		msg = "the document " + msg
	}
	key := fmt.Sprint(line, field, msg)
	if r.seen[key] {
		return
	}
	r.seen[key] = true
	r.errs = append(r.errs, &ManifestError{File: r.file, Line: line, Field: field, Msg: msg})
}

// walk reports the leaves of e. Alternatives (anyOf, oneOf) that all
// failed are reported through the one that came closest to matching.
func (r *reporter) walk(e *jsonschema.ValidationError) {
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf:
		if len(e.Causes) > 0 {
			r.alternatives(e)
			return
		}
	case *kind.OneOf:
		if len(k.Subschemas) >= 2 {
			_, line, field := r.locate(e.InstanceLocation)
			r.add(line, field, fmt.Sprintf("matches more than one of the allowed forms (%d and %d); it must match exactly one", k.Subschemas[0], k.Subschemas[1]))
			return
		}
		if len(e.Causes) > 0 {
			r.alternatives(e)
			return
		}
	case *kind.PropertyNames:
		r.propertyName(e, k.Property)
		return
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			r.walk(c)
		}
		return
	}
	r.leaf(e)
}

// alternatives reports an anyOf or oneOf of which no branch matched.
func (r *reporter) alternatives(e *jsonschema.ValidationError) {
	// When every branch fails on the value's type alone, say which types
	// would do.
	var want []string
	var got string
	allType := true
	for _, c := range e.Causes {
		for _, l := range leaves(c) {
			t, ok := l.ErrorKind.(*kind.Type)
			if !ok || !slices.Equal(l.InstanceLocation, e.InstanceLocation) {
				allType = false
				break
			}
			got = t.Got
			for _, w := range t.Want {
				if !slices.Contains(want, w) {
					want = append(want, w)
				}
			}
		}
	}
	if allType && len(want) > 0 {
		_, line, field := r.locate(e.InstanceLocation)
		r.add(line, field, typeMessage(want, got, nil))
		return
	}
	// Otherwise follow the branch whose errors lie deepest in the value
	// (it matched the most before failing), the first one on a tie.
	best, bestDepth := e.Causes[0], -1
	for _, c := range e.Causes {
		d := 0
		for _, l := range leaves(c) {
			if _, isType := l.ErrorKind.(*kind.Type); isType && len(l.InstanceLocation) == len(e.InstanceLocation) {
				continue
			}
			d = max(d, len(l.InstanceLocation)+1)
		}
		if d > bestDepth {
			best, bestDepth = c, d
		}
	}
	r.walk(best)
}

func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// propertyName reports a mapping key that its schema's propertyNames
// refuses.
func (r *reporter) propertyName(e *jsonschema.ValidationError, key string) {
	parent, _, field := r.locate(r.keyParent(e.InstanceLocation, key))
	line := parent.Line
	if k := keyNode(parent, key); k != nil {
		line = k.Line
	}
	for _, l := range leaves(e) {
		msg := r.message(l, key)
		if msg == "" {
			continue
		}
		if !strings.HasPrefix(msg, `"`) {
			msg = strconv.Quote(key) + " " + msg
		}
		r.add(line, field, "key "+msg)
	}
}

// keyParent returns the location of the mapping holding key. The
// validator records a propertyNames failure with a location slice that
// later siblings may overwrite (only its length can be trusted), so the
// mapping is searched for: one at that depth with the key, the one
// agreeing with most of the recorded tokens.
func (r *reporter) keyParent(loc []string, key string) []string {
	var best []string
	bestScore := -1
	budget := aliasBudget(countNodes(r.root))
	var visit func(n *yaml.Node, path []string)
	visit = func(n *yaml.Node, path []string) {
		n = deref(n)
		if n == nil || budget <= 0 {
			return
		}
		budget--
		if len(path) == len(loc) {
			if _, v := lookup(n, key); v != nil && n.Kind == yaml.MappingNode {
				score := 0
				for i := range path {
					if path[i] == loc[i] {
						score++
					}
				}
				if score > bestScore {
					best, bestScore = slices.Clone(path), score
				}
			}
			return
		}
		switch n.Kind {
		case yaml.SequenceNode:
			for i, c := range n.Content {
				visit(c, append(path, strconv.Itoa(i)))
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k := n.Content[i]; k.ShortTag() == "!!str" {
					visit(n.Content[i+1], append(path, k.Value))
				}
			}
		}
	}
	root := r.root
	for root != nil && root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	visit(root, nil)
	if best == nil {
		return loc
	}
	return best
}

// leaf reports one violation.
func (r *reporter) leaf(e *jsonschema.ValidationError) {
	node, line, field := r.locate(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			r.add(line, field, fmt.Sprintf("missing required field %q", m))
		}
		return
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			l := line
			if kn := keyNode(node, p); kn != nil {
				l = kn.Line
			}
			msg := fmt.Sprintf("unknown field %q", p)
			if near := closest(p, knownFields(e.SchemaURL)); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			r.add(l, field, msg)
		}
		return
	case *kind.Dependency:
		for _, m := range k.Missing {
			r.add(line, field, fmt.Sprintf("missing field %q, required when %q is present", m, k.Prop))
		}
		return
	case *kind.DependentRequired:
		for _, m := range k.Missing {
			r.add(line, field, fmt.Sprintf("missing field %q, required when %q is present", m, k.Prop))
		}
		return
	}
	var value any
	if node != nil {
		value, _ = nodeValue(r.file, node)
	}
	r.add(line, field, r.message(e, value))
}

// message is the human text of one leaf violation of value.
func (r *reporter) message(e *jsonschema.ValidationError, value any) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return typeMessage(k.Want, k.Got, value)
	case *kind.Pattern:
		return fmt.Sprintf("%q must match %s", k.Got, k.Want)
	case *kind.Enum:
		return fmt.Sprintf("%s must be one of %s", show(k.Got), showList(k.Want))
	case *kind.Const:
		return fmt.Sprintf("%s must be %s", show(k.Got), show(k.Want))
	case *kind.Format:
		if k.Err != nil {
			return fmt.Sprintf("%s is not a valid %s: %v", show(k.Got), k.Want, k.Err)
		}
		return fmt.Sprintf("%s is not a valid %s", show(k.Got), k.Want)
	case *kind.MinLength:
		if k.Got == 0 {
			return "must not be empty"
		}
		return fmt.Sprintf("is %s; at least %d required", plural(k.Got, "character"), k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("is %s; at most %d allowed", plural(k.Got, "character"), k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %s", plural(k.Want, "item"))
	case *kind.MaxItems:
		return fmt.Sprintf("has %s; at most %d allowed", plural(k.Got, "item"), k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("must have at least %s", plural(k.Want, "field"))
	case *kind.MaxProperties:
		return fmt.Sprintf("has %s; at most %d allowed", plural(k.Got, "field"), k.Want)
	case *kind.UniqueItems:
		return fmt.Sprintf("must not repeat items; items %d and %d are equal", k.Duplicates[0], k.Duplicates[1])
	case *kind.Minimum:
		return fmt.Sprintf("is %s; must be at least %s", ratString(k.Got), ratString(k.Want))
	case *kind.Maximum:
		return fmt.Sprintf("is %s; must be at most %s", ratString(k.Got), ratString(k.Want))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("is %s; must be greater than %s", ratString(k.Got), ratString(k.Want))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("is %s; must be less than %s", ratString(k.Got), ratString(k.Want))
	case *kind.MultipleOf:
		return fmt.Sprintf("is %s; must be a multiple of %s", ratString(k.Got), ratString(k.Want))
	case *kind.FalseSchema:
		return "is not allowed here"
	case *kind.Not:
		return "must not have this form"
	case *kind.Contains:
		return "must contain at least one matching item"
	case *kind.MinContains:
		return fmt.Sprintf("must contain at least %s matching items", strconv.Itoa(k.Want))
	case *kind.MaxContains:
		return fmt.Sprintf("must contain at most %s matching items", strconv.Itoa(k.Want))
	case *kind.AdditionalItems:
		return fmt.Sprintf("has more than %s", plural(k.Count, "item"))
	}
	return e.ErrorKind.LocalizedString(printer)
}

// typeMessage says which JSON types were wanted; a YAML 1.1 boolean word
// where a boolean was wanted gets a hint, since YAML 1.2 reads it as a
// string.
func typeMessage(want []string, got string, value any) string {
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = map[string]string{
			"object": "an object", "array": "an array", "string": "a string", "number": "a number",
			"integer": "an integer", "boolean": "a boolean", "null": "null",
		}[w]
		if names[i] == "" {
			names[i] = w
		}
	}
	msg := fmt.Sprintf("must be %s, got %s", strings.Join(names, " or "), got)
	if s, ok := value.(string); ok && slices.Contains(want, "boolean") && yamlBoolWordRE.MatchString(s) {
		msg += fmt.Sprintf(" %q (write true or false)", s)
	}
	return msg
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	return r.FloatString(6)
}

// show writes a value as it would appear in JSON, strings quoted.
func show(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

var (
	schemaDocsMu sync.Mutex
	schemaDocs   = map[string]any{}
)

// knownFields returns the property names the embedded schema at url (an
// absolute schema location, "…/pack.schema.json#/$defs/tool") declares;
// nil for any other schema.
func knownFields(url string) []string {
	rest, ok := strings.CutPrefix(url, schemaBase)
	if !ok {
		return nil
	}
	file, ptr, _ := strings.Cut(rest, "#")
	schemaDocsMu.Lock()
	doc, ok := schemaDocs[file]
	if !ok {
		if data, err := schemaFiles.ReadFile("schemas/" + file); err == nil {
			doc, _ = jsonschema.UnmarshalJSON(bytes.NewReader(data))
		}
		schemaDocs[file] = doc
	}
	schemaDocsMu.Unlock()
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		doc = m[tok]
	}
	m, _ := doc.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// closest returns the candidate nearest to name when it is near enough
// to be a likely typo: at most two edits away (one for short names), or
// name with a letter or a plural s missing.
func closest(name string, candidates []string) string {
	best, bestD := "", 3
	if len(name) <= 4 {
		bestD = 2
	}
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, with a swap of
// two neighbouring letters counted as one edit.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// showList writes enum values: strings bare, others as JSON.
func showList(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		if s, ok := v.(string); ok {
			parts[i] = s
		} else {
			parts[i] = show(v)
		}
	}
	return strings.Join(parts, ", ")
}

// locate follows an instance location through the node tree. It returns
// the node found, the line to report (the key's line for a mapping
// value, the node's own otherwise) and the field path.
func (r *reporter) locate(loc []string) (*yaml.Node, int, string) {
	n := r.root
	for n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	field := r.prefix
	line := 0
	if n != nil {
		line = n.Line
	}
	for _, tok := range loc {
		n = deref(n)
		if n == nil {
			break
		}
		switch n.Kind {
		case yaml.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.Content) {
				return n, line, field
			}
			field += "[" + tok + "]"
			n = n.Content[i]
			line = n.Line
		case yaml.MappingNode:
			k, v := lookup(n, tok)
			if v == nil {
				return n, line, field
			}
			if plainKeyRE.MatchString(tok) {
				if field != "" {
					field += "."
				}
				field += tok
			} else {
				field += "[" + strconv.Quote(tok) + "]"
			}
			n, line = v, k.Line
		default:
			return n, line, field
		}
	}
	return deref(n), line, field
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

// lookup finds key in a mapping the way nodeValue reads it: explicit keys
// first, then the mappings merged in with <<, in order.
func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	budget := 10_000
	return lookupIn(m, key, 0, &budget)
}

// lookupIn searches merged mappings too, at most *budget nodes deep in
// all: merges of merges can fan out.
func lookupIn(m *yaml.Node, key string, depth int, budget *int) (k, v *yaml.Node) {
	m = deref(m)
	if *budget--; m == nil || depth > maxDepth || *budget < 0 {
		return nil, nil
	}
	if m.Kind == yaml.SequenceNode {
		for _, e := range m.Content {
			if k, v := lookupIn(e, key, depth+1, budget); v != nil {
				return k, v
			}
		}
		return nil, nil
	}
	if m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if kn := m.Content[i]; kn.Value == key && kn.ShortTag() == "!!str" {
			return kn, m.Content[i+1]
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].ShortTag() == "!!merge" {
			if k, v := lookupIn(m.Content[i+1], key, depth+1, budget); v != nil {
				return k, v
			}
		}
	}
	return nil, nil
}

// keyNode returns the key node of key in mapping m.
func keyNode(m *yaml.Node, key string) *yaml.Node {
	k, _ := lookup(m, key)
	return k
}
