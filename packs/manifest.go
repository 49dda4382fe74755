package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/skillhost/skillhost/grant"
	"github.com/skillhost/skillhost/internal/confwalk"
)

// ManifestError is one problem in a manifest, located as precisely as the
// format allows.
type ManifestError struct {
	File  string
	Line  int    // 0 when unknown
	Field string // dotted path, e.g. "modules[0].tools[1].name"
	Msg   string
	// Err is the typed error behind the problem, when there is one (a
	// *ToolSchemaError); errors.Is and errors.As see it through Unwrap.
	Err error
}

// Error writes the problem as "file:line: field: msg". When Msg reads as
// the rest of a sentence about the field (it starts with a quoted value,
// "is ", "has " or "must "), field and message are joined by a space
// instead:
// `skills/pdf/SKILL.md:3: name "PDF" must match ^[a-z0-9]+(-[a-z0-9]+)*$`.
func (e *ManifestError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	if strings.HasPrefix(e.Msg, `"`) || strings.HasPrefix(e.Msg, "is ") || strings.HasPrefix(e.Msg, "has ") || strings.HasPrefix(e.Msg, "must ") {
		return fmt.Sprintf("%s: %s %s", loc, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
}

// Is makes a *ManifestError match ErrInvalidManifest.
func (e *ManifestError) Is(target error) bool { return target == ErrInvalidManifest }

// Unwrap returns the typed error behind the problem, or nil.
func (e *ManifestError) Unwrap() error { return e.Err }

// maxManifestBytes bounds what is read of a manifest.
const maxManifestBytes = 1 << 20

var (
	nameRE   = regexp.MustCompile(`^[a-z0-9]+([_-][a-z0-9]+)*$`)
	exportRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
	hexRE    = regexp.MustCompile(`^[0-9a-f]{64}$`)
	envRE    = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
	// yamlLineRE splits "line N: message" off a yaml.v3 error.
	yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
)

// rawPack and the types below are a manifest as written, decoded from
// the JSON values of a document the pack schema accepted.
type rawPack struct {
	Name           string          `json:"name"`
	Version        json.RawMessage `json:"version"`
	Description    string          `json:"description"`
	DefaultLoading string          `json:"default_loading"`
	Modules        []rawModule     `json:"modules"`
}

type rawModule struct {
	Name    string           `json:"name"`
	Path    string           `json:"path"`
	SHA256  string           `json:"sha256"`
	Request Request          `json:"request"`
	Limits  grant.LimitsText `json:"limits"`
	Tools   []rawTool        `json:"tools"`
}

type rawTool struct {
	Name               string          `json:"name"`
	Export             string          `json:"export"`
	DisplayName        string          `json:"display_name"`
	Description        string          `json:"description"`
	Icon               string          `json:"icon"`
	Version            json.RawMessage `json:"version"`
	InputSchema        json.RawMessage `json:"input_schema"`
	OutputSchema       json.RawMessage `json:"output_schema"`
	Examples           []Example       `json:"examples"`
	Tags               []string        `json:"tags"`
	Category           string          `json:"category"`
	SideEffects        bool            `json:"side_effects"`
	Idempotent         bool            `json:"idempotent"`
	RequiresNetwork    bool            `json:"requires_network"`
	RequiresFilesystem bool            `json:"requires_filesystem"`
	RiskLevel          string          `json:"risk_level"`
	Hidden             bool            `json:"hidden"`
	Loading            string          `json:"loading"`
	ConfigParams       []ConfigParam   `json:"config_params"`
}

// Load reads the pack at the root of fsys. dir names the folder in errors;
// source is recorded in Pack.Source. Every problem found is returned,
// joined (errors.Join), each a *ManifestError.
func Load(fsys fs.FS, dir, source string) (*Pack, error) {
	file := path.Join(dir, ManifestFile)
	f, err := fsys.Open(ManifestFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w in %s", ErrNoManifest, dir)
		}
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(data) > maxManifestBytes {
		return nil, &ManifestError{File: file, Msg: fmt.Sprintf("manifest is larger than %d bytes", maxManifestBytes)}
	}
	p, err := Parse(data, file)
	if err != nil {
		return nil, err
	}
	p.Source, p.Dir, p.FS = source, dir, fsys
	var errs []error
	for i, m := range p.Modules {
		if st, err := fs.Stat(fsys, m.Path); err != nil || st.IsDir() {
			errs = append(errs, &ManifestError{File: file, Field: fmt.Sprintf("modules[%d].path", i),
				Msg: fmt.Sprintf("module file %q does not exist in the pack", m.Path)})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// Parse reads a manifest's bytes (YAML, or JSON); file names it in
// errors. The document is decoded with decodeYAML, checked against the
// embedded pack schema (schemas/pack.schema.json), and then for what a
// schema cannot say: unique module and tool names across the pack, module
// paths inside the pack, limits, tool schemas that compile, examples
// that match them and config params whose defaults fit their type. It
// checks everything but the existence of module files. Every problem is a
// *ManifestError with the line and field; all found are joined.
func Parse(data []byte, file string) (*Pack, error) {
	doc, err := decodeYAML(file, data)
	if err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, &ManifestError{File: file, Msg: "manifest is empty"}
	}
	schemaErrs := checkSchema("pack", file, doc)
	v, err := nodeValue(file, doc)
	if err != nil {
		return nil, err
	}
	// A value of the wrong type is left out (the schema reported it); the
	// rest is still checked, so one run lists every problem.
	var raw rawPack
	_ = remarshal(v, &raw)
	// The keys each tool entry wrote: a module's describe export fills in
	// the rest (see MergeTool).
	var written struct {
		Modules []struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		} `json:"modules"`
	}
	_ = remarshal(v, &written)
	c := manifestCheck{file: file, doc: doc, schemaErrs: schemaErrs}
	p := &Pack{Name: raw.Name, Version: scalarText(raw.Version), Description: raw.Description, DefaultLoading: raw.DefaultLoading}
	if p.DefaultLoading == "" {
		p.DefaultLoading = LoadingDeferred
	}
	moduleNames := map[string]string{}
	toolNames := map[string]string{}
	type paramDecl struct{ typ, at, tool string }
	paramTypes := map[string]paramDecl{}
	for i, rm := range raw.Modules {
		at := loc("modules", i)
		m := &Module{Name: rm.Name, Path: path.Clean(rm.Path), SHA256: strings.ToLower(strings.TrimPrefix(rm.SHA256, "sha256:")), Request: rm.Request}
		if prev, dup := moduleNames[rm.Name]; dup {
			c.bad(loc(at, "name"), "module %q is already declared at %s", rm.Name, prev)
		} else {
			moduleNames[rm.Name] = fieldPath(at)
		}
		if !fs.ValidPath(m.Path) || m.Path == "." {
			c.bad(loc(at, "path"), "%q must be a relative path to a .wasm file inside the pack (no .., no leading /)", rm.Path)
		}
		for j, mr := range rm.Request.Mounts {
			if strings.Contains(mr.Guest, "..") {
				c.bad(loc(at, "request", "mounts", j, "guest"), "%q must be an absolute guest path without ..", mr.Guest)
			}
		}
		var err error
		if m.Limits, err = grant.ParseLimits(rm.Limits); err != nil {
			c.bad(loc(at, "limits"), "%v", err)
		}
		for j, rt := range rm.Tools {
			tat := loc(at, "tools", j)
			t := c.tool(p, rt, tat)
			if i < len(written.Modules) && j < len(written.Modules[i].Tools) {
				for k := range written.Modules[i].Tools[j] {
					t.Written = append(t.Written, k)
				}
				slices.Sort(t.Written)
			}
			if prev, dup := toolNames[t.Name]; dup {
				c.bad(loc(tat, "name"), "tool %q is already declared at %s", t.Name, prev)
			} else {
				toolNames[t.Name] = fieldPath(tat)
			}
			for k, cp := range t.ConfigParams {
				// One name is one setting of the pack: the operator gives it
				// one value, in [packs.<name>.config].
				prev, ok := paramTypes[cp.Name]
				if ok && prev.tool == fieldPath(tat) {
					continue // declared twice in one tool: reported by c.tool
				}
				if ok && prev.typ != cp.Type {
					c.bad(loc(tat, "config_params", k, "type"), "config param %q is a %s param here but a %s param at %s; the operator gives a pack's setting one value, so declare it with one type",
						cp.Name, cp.Type, prev.typ, prev.at)
				} else if !ok {
					paramTypes[cp.Name] = paramDecl{cp.Type, fieldPath(loc(tat, "config_params", k)), fieldPath(tat)}
				}
			}
			m.Tools = append(m.Tools, t)
		}
		p.Modules = append(p.Modules, m)
	}
	if errs := c.all(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// all returns the schema's errors and, sorted in by line, the other
// checks' errors about fields the schema found nothing wrong with, inside
// or around: a value the schema refused reads as empty here and would be
// reported twice.
func (c *manifestCheck) all() []error {
	var out []*ManifestError
	var flagged []string
	for _, e := range c.schemaErrs {
		var me *ManifestError
		if !errors.As(e, &me) {
			return c.schemaErrs
		}
		out = append(out, me)
		flagged = append(flagged, me.Field)
	}
	for _, e := range c.errs {
		me := e.(*ManifestError)
		if !slices.ContainsFunc(flagged, func(f string) bool { return within(me.Field, f) || within(f, me.Field) }) {
			out = append(out, me)
		}
	}
	slices.SortStableFunc(out, func(a, b *ManifestError) int { return a.Line - b.Line })
	errs := make([]error, len(out))
	for i, e := range out {
		errs[i] = e
	}
	return errs
}

// within reports whether field is inner or the same as outer, a
// non-empty field path.
func within(field, outer string) bool {
	return field == outer || outer != "" && (strings.HasPrefix(field, outer+".") || strings.HasPrefix(field, outer+"["))
}

// tool builds and checks one tool entry found at instance location at.
func (c *manifestCheck) tool(p *Pack, rt rawTool, at []string) *ToolSpec {
	t := &ToolSpec{
		Name: rt.Name, Export: rt.Export, DisplayName: rt.DisplayName, Description: rt.Description, Icon: rt.Icon,
		Version: scalarText(rt.Version), InputSchema: rt.InputSchema, OutputSchema: rt.OutputSchema,
		Examples: rt.Examples, Tags: rt.Tags, Category: rt.Category,
		SideEffects: rt.SideEffects, Idempotent: rt.Idempotent, RequiresNetwork: rt.RequiresNetwork,
		RequiresFilesystem: rt.RequiresFilesystem, RiskLevel: strings.ToUpper(rt.RiskLevel), Hidden: rt.Hidden,
		Loading: rt.Loading, ConfigParams: rt.ConfigParams,
	}
	p.CompleteTool(t)
	if !exportRE.MatchString(t.Export) {
		c.bad(loc(at, "export"), "%q is not a valid export name", t.Export)
	}
	if msg := checkIcon(t.Icon); msg != "" {
		c.bad(loc(at, "icon"), "%s", msg)
	}
	var input *jsonschema.Schema
	for _, key := range []string{"input_schema", "output_schema"} {
		raw := t.InputSchema
		if key == "output_schema" {
			raw = t.OutputSchema
		}
		if len(raw) == 0 {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			continue // the pack schema made sure it is an object
		}
		compiled, err := compileSchema(doc)
		if err != nil {
			sat := loc(at, key)
			c.errs = append(c.errs, schemaCompileErrors(err, c.file, c.node(sat), fieldPath(sat),
				fmt.Sprintf("is not a valid JSON Schema for tool %q", t.Name))...)
			continue
		}
		// A valid schema MCP clients may still refuse: the fitted form
		// is equivalent, so the schema compiled above checks the examples.
		c.fitSchema(t, key, at)
		if key == "input_schema" {
			input = compiled
		}
	}
	for k, ex := range t.Examples {
		if input == nil {
			break
		}
		args, err := jsonschema.UnmarshalJSON(bytes.NewReader(ex.Args))
		if err != nil {
			continue // the pack schema made sure args is an object
		}
		argsAt := loc(at, "examples", k, "args")
		for _, e := range validateNode(input, args, c.file, c.node(argsAt), "") {
			me := e.(*ManifestError)
			c.errs = append(c.errs, &ManifestError{File: c.file, Line: me.Line, Field: fieldPath(loc(at, "examples", k)),
				Msg: fmt.Sprintf("args do not match the input_schema of tool %q: %s", t.Name, me.relative())})
		}
	}
	names := map[string]bool{}
	for k, cp := range t.ConfigParams {
		pat := loc(at, "config_params", k)
		if names[cp.Name] {
			c.bad(loc(pat, "name"), "config param %q of tool %q is declared twice", cp.Name, t.Name)
		}
		names[cp.Name] = true
		c.configParam(cp, pat)
	}
	return t
}

// fitSchema brings t's schema of key (InputSchemaField or
// OutputSchemaField) into the form MCP clients accept (FitInputSchema),
// or reports each part it cannot, located in the manifest. The schema
// compiles: what JSON Schema itself refuses is reported as such before.
func (c *manifestCheck) fitSchema(t *ToolSpec, key string, at []string) {
	fit, raw := FitInputSchema, &t.InputSchema
	if key == OutputSchemaField {
		fit, raw = FitOutputSchema, &t.OutputSchema
	}
	fitted, err := fit(*raw)
	if err == nil {
		*raw = fitted
		return
	}
	for _, e := range unjoin(err) {
		var se *ToolSchemaError
		if !errors.As(e, &se) {
			c.bad(loc(at, key), "is not a valid JSON Schema for tool %q: %v", t.Name, e)
			continue
		}
		_, line, field := (&reporter{root: c.doc}).locate(loc(at, key, se.at))
		c.errs = append(c.errs, &ManifestError{File: c.file, Line: line, Field: field, Err: se,
			Msg: fmt.Sprintf("is %s; MCP clients accept %s (tool %q)", se.Got, se.Want, t.Name)})
	}
}

// configParam checks what the schema cannot: that the bounds, options and
// default fit the param's type.
func (c *manifestCheck) configParam(cp ConfigParam, at []string) {
	if cp.Type != ParamNumber {
		for key, set := range map[string]bool{"min": cp.Min != nil, "max": cp.Max != nil, "step": cp.Step != nil} {
			if set {
				c.bad(loc(at, key), "is only allowed for a number param; %q is a %s param", cp.Name, cp.Type)
			}
		}
	}
	if cp.Min != nil && cp.Max != nil && *cp.Min > *cp.Max {
		c.bad(loc(at, "max"), "is %v, below min %v", *cp.Max, *cp.Min)
	}
	if cp.Type == ParamSelect && len(cp.Options) == 0 {
		c.bad(at, "select param %q needs options: the values to choose from", cp.Name)
	}
	if cp.Type != ParamSelect && len(cp.Options) > 0 {
		c.bad(loc(at, "options"), "is only allowed for a select param; %q is a %s param", cp.Name, cp.Type)
	}
	if len(cp.Default) == 0 {
		return
	}
	var def any
	dec := json.NewDecoder(bytes.NewReader(cp.Default))
	dec.UseNumber()
	if dec.Decode(&def) != nil {
		return
	}
	dat := loc(at, "default")
	switch cp.Type {
	case ParamSecret:
		c.bad(dat, "is not allowed for secret param %q; a manifest is public, so the operator supplies secrets", cp.Name)
	case ParamNumber:
		n, ok := def.(json.Number)
		if !ok {
			c.bad(dat, "%s must be a number, like the param %q", show(def), cp.Name)
			return
		}
		f, err := n.Float64()
		switch {
		case err != nil:
			c.bad(dat, "%s is out of range", n)
		case cp.Min != nil && f < *cp.Min:
			c.bad(dat, "is %s; must be at least min %v", n, *cp.Min)
		case cp.Max != nil && f > *cp.Max:
			c.bad(dat, "is %s; must be at most max %v", n, *cp.Max)
		}
	case ParamBoolean:
		if _, ok := def.(bool); !ok {
			c.bad(dat, "%s must be true or false, like the param %q", show(def), cp.Name)
		}
	default:
		s, ok := def.(string)
		if !ok {
			c.bad(dat, "%s must be a string, like the %s param %q", show(def), cp.Type, cp.Name)
			return
		}
		if cp.Type == ParamSelect && len(cp.Options) > 0 && !slices.Contains(cp.Options, s) {
			c.bad(dat, "%q must be one of the options %s", s, strings.Join(cp.Options, ", "))
		}
	}
}

// CompleteTool fills the fields a tool entry may leave out: the export
// (the tool's name), the display name (the name humanised), the category
// (DefaultCategory), the loading mode (the pack's DefaultLoading, else
// LoadingDeferred) and the version (the pack's). Parse applies it to
// every tool; a caller that builds tools from a module's describe export
// applies it to those.
func (p *Pack) CompleteTool(t *ToolSpec) {
	if t.Export == "" {
		t.Export = t.Name
	}
	if t.DisplayName == "" {
		t.DisplayName = DisplayName(t.Name)
	}
	if t.Category == "" {
		t.Category = DefaultCategory
	}
	if t.Loading == "" {
		t.Loading = p.DefaultLoading
		if t.Loading == "" {
			t.Loading = LoadingDeferred
		}
	}
	if t.Version == "" {
		t.Version = p.Version
	}
}

// initialisms are written in capitals by DisplayName.
var initialisms = map[string]string{
	"api": "API", "csv": "CSV", "html": "HTML", "http": "HTTP", "id": "ID", "json": "JSON", "jwt": "JWT",
	"pdf": "PDF", "sql": "SQL", "url": "URL", "uuid": "UUID", "xml": "XML", "yaml": "YAML", "sha": "SHA",
	"ip": "IP", "dns": "DNS", "uri": "URI", "md": "MD",
}

// DisplayName humanises a tool or param name: words split at _ and -,
// the first capitalised, known initialisms in capitals ("word_count" →
// "Word count", "json_query" → "JSON query").
func DisplayName(name string) string {
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' })
	for i, w := range words {
		switch {
		case initialisms[w] != "":
			words[i] = initialisms[w]
		case i == 0:
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// manifestCheck collects the problems a schema cannot find.
type manifestCheck struct {
	file       string
	doc        *yaml.Node
	schemaErrs []error
	errs       []error
}

// bad records a problem with the value at instance location at; the
// line and field path come from the document.
func (c *manifestCheck) bad(at []string, format string, args ...any) {
	_, line, field := (&reporter{root: c.doc}).locate(at)
	c.errs = append(c.errs, &ManifestError{File: c.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// node returns the document node at instance location at.
func (c *manifestCheck) node(at []string) *yaml.Node {
	n, _, _ := (&reporter{root: c.doc}).locate(at)
	return n
}

// loc builds an instance location from strings, ints and other
// locations; it always returns a new slice.
func loc(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			out = append(out, p)
		case int:
			out = append(out, strconv.Itoa(p))
		case []string:
			out = append(out, p...)
		}
	}
	return out
}

// fieldPath writes an instance location as a field path:
// modules[0].tools[1].
func fieldPath(at []string) string {
	var b strings.Builder
	for _, t := range at {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}

// remarshal copies plain JSON values into a Go value through JSON.
func remarshal(v any, dst any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

// scalarText returns a JSON string's text, or a number's digits as
// written; "" for null or absent.
func scalarText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// ValidPackName reports whether name can name a pack: lowercase letters
// and digits separated by single - or _.
func ValidPackName(name string) bool { return nameRE.MatchString(name) }

// ParseSize reads a byte size: a number with an optional unit B, KB, MB,
// GB (powers of 1000) or KiB, MiB, GiB (powers of 1024), case-insensitive.
func ParseSize(s string) (uint64, error) { return confwalk.ParseSize(s) }
