package packs

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Limits of the Agent Skills format that are warnings, not errors.
const (
	// maxBodyLines is the length past which a SKILL.md body draws a warning.
	maxBodyLines = 500
)

// agentFields are the frontmatter fields of the Agent Skills format;
// subagentFields are the subagent settings skillhost reads besides them.
// Any other top-level field is kept in Skill.Extra with a warning.
var (
	agentFields    = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
	subagentFields = []string{"allowed_tools", "model", "max_iterations", "env", "capabilities", "access", "sensitive", "authors", "rationale", "packages"}
)

// ParseSkillMD parses a SKILL.md file (or a flat skills/<name>.md file):
// YAML frontmatter between "---" lines, then Markdown instructions. file
// names the file in errors and warnings; dirName is the name the skill's
// name must equal (its folder name, or a flat file's stem), "" to skip that
// check.
//
// The frontmatter is checked against schemas/skill-md.schema.json and the
// rules a schema cannot say. Agent Skills fields fill the Skill's fields;
// the subagent settings (allowed_tools, model, max_iterations, env,
// capabilities, access, sensitive, authors, rationale, packages) fill
// Skill.Subagent, which is always set for an agent skill, holding the
// defaults when none is given. Other fields are kept in Skill.Extra with a
// warning, so skills written for other hosts load unchanged. The body is
// kept byte for byte as Skill.Instructions.
//
// Every problem found is returned, joined; each is a *ManifestError with
// the line in file.
func ParseSkillMD(file string, data []byte, dirName string) (*SkillSpec, error) {
	if !utf8.Valid(data) {
		off := invalidUTF8Offset(data)
		return nil, &ManifestError{File: file, Line: lineAt(data, off),
			Msg: fmt.Sprintf("invalid UTF-8 at byte offset %d; a SKILL.md must be UTF-8 text (save it as UTF-8)", off)}
	}
	fm, err := splitFrontmatter(file, data)
	if err != nil {
		return nil, err
	}
	// The header still holds its opening "---" line, a YAML document
	// marker, so node lines are file lines.
	doc, err := decodeYAMLLimit(file, fm.YAML, maxFrontmatterBytes+8)
	if err != nil {
		return nil, err
	}
	root := deref(doc)
	if root != nil && root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			root = nil
		} else {
			root = deref(root.Content[0])
		}
	}
	if root == nil || root.Kind != yaml.MappingNode {
		line, got := 2, "empty"
		if root != nil {
			line = root.Line
			switch root.Kind {
			case yaml.SequenceNode:
				got = "a list"
			case yaml.ScalarNode:
				got = "a single value"
				if root.ShortTag() == "!!null" {
					got = "empty"
				}
			}
		}
		return nil, &ManifestError{File: file, Line: line,
			Msg: fmt.Sprintf("frontmatter is %s; it must be a YAML mapping of fields, at least name: and description:", got)}
	}
	p := &skillParser{file: file, root: root}
	p.normalize()
	v, err := nodeValue(file, root)
	if err != nil {
		return nil, err
	}
	p.fields = v.(map[string]any)
	p.errs = append(p.errs, checkSchema("skill-md", file, root)...)
	p.explainName()
	if p.emptyDescription {
		p.errs = slices.DeleteFunc(p.errs, func(err error) bool {
			me, ok := err.(*ManifestError)
			return ok && me.Msg == `missing required field "description"`
		})
	}
	s := &SkillSpec{
		Kind:         KindAgent,
		File:         file,
		Line:         1,
		Instructions: fm.Body,
		Subagent:     &Subagent{MaxIterations: DefaultMaxIterations},
	}
	p.read(s, dirName)
	p.body(s, fm)
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b error) int { return errLine(a) - errLine(b) })
		return nil, errors.Join(p.errs...)
	}
	slices.SortStableFunc(p.warnings, func(a, b lineWarning) int { return a.line - b.line })
	for _, w := range p.warnings {
		s.Warnings = append(s.Warnings, w.text)
	}
	s.ContentHash = agentSkillHash(s)
	return s, nil
}

// skillParser reads the JSON values of a frontmatter mapping into a
// Skill. The schema has already judged types and ranges; values of the
// wrong type are skipped here, so each problem is reported once.
type skillParser struct {
	file     string
	root     *yaml.Node
	fields   map[string]any
	errs     []error
	warnings []lineWarning
	// emptyDescription is set when description is present but empty,
	// already reported, so the schema's "missing" is not repeated.
	emptyDescription bool
}

// lineWarning is a warning with the line it is about, for sorting.
type lineWarning struct {
	line int
	text string
}

// textFields are the string fields whose value, written as a bare number
// or boolean ("license: 2.0", "compatibility: 3.11"), is taken as the text
// written: that is what the author meant, and what YAML 1.1 parsers and
// the format's reference library read.
var textFields = []string{"name", "description", "license", "compatibility", "model", "rationale"}

// optionalFields are the fields whose empty value ("license:" with nothing
// after it, or ~) means the field is absent: templates leave them so.
var optionalFields = []string{"name", "license", "compatibility", "metadata", "allowed-tools",
	"allowed_tools", "model", "env", "capabilities", "access", "authors", "rationale", "packages"}

// normalize adjusts the frontmatter's top-level mapping before it is
// checked: bare numbers and booleans in text fields become their text,
// and empty optional fields are dropped with a warning. It works on the
// node tree so that lines stay exact. The mapping holds no aliases to
// these values that matter: a changed tag affects only the node itself.
func (p *skillParser) normalize() {
	c := p.root.Content
	out := c[:0:0]
	for i := 0; i+1 < len(c); i += 2 {
		k, v := c[i], c[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!str" && v.Kind == yaml.ScalarNode {
			tag := v.ShortTag()
			switch {
			case tag == "!!null" && slices.Contains(optionalFields, k.Value):
				if k.Value != "name" {
					p.warn(k.Line, "%s is empty and is ignored; give it a value or remove the line", k.Value)
				}
				continue
			case tag == "!!null" && k.Value == "description":
				p.errs = append(p.errs, &ManifestError{File: p.file, Line: k.Line, Field: "description",
					Msg: "is empty; say what the skill does and when to use it"})
				p.emptyDescription = true
				continue
			case (tag == "!!int" || tag == "!!float" || tag == "!!bool") && slices.Contains(textFields, k.Value):
				v.Tag = "!!str"
			case (k.Value == "description" || k.Value == "compatibility") && v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
				// A block scalar ends with the newline YAML keeps; the
				// limits apply to the text, which is stored trimmed.
				v.Value = strings.TrimRight(v.Value, "\n")
				if strings.TrimSpace(v.Value) == "" && k.Value == "compatibility" {
					p.warn(k.Line, "compatibility is empty and is ignored; give the environment the skill needs or remove the line")
					continue
				}
			case k.Value == "compatibility" && tag == "!!str" && strings.TrimSpace(v.Value) == "":
				p.warn(k.Line, "compatibility is empty and is ignored; give the environment the skill needs or remove the line")
				continue
			}
		}
		out = append(out, k, v)
	}
	p.root.Content = out
}

// explainName replaces the schema's pattern message for name, which
// shows a regular expression, with the rule in words and a name that
// would pass.
func (p *skillParser) explainName() {
	name, ok := p.fields["name"].(string)
	if !ok {
		return
	}
	for i, err := range p.errs {
		me, ok := err.(*ManifestError)
		if !ok || me.Field != "name" || !strings.Contains(me.Msg, "must match") {
			continue
		}
		msg := fmt.Sprintf("%q may use only lowercase letters a-z, digits and single hyphens, with no hyphen at the start or end", name)
		if try := suggestName(name); try != "" {
			msg += fmt.Sprintf("; try %q", try)
		}
		c := *me
		c.Msg = msg
		p.errs[i] = &c
	}
}

// suggestName turns s into a valid skill name: lowercase, every run of
// other characters a single hyphen, at most 64 characters. It returns ""
// when nothing usable is left.
func suggestName(s string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
			continue
		}
		hyphen = true
	}
	out := b.String()
	if len(out) > 64 {
		out = strings.TrimRight(out[:64], "-")
	}
	return out
}

// line returns the line of key in the frontmatter (the key's own line).
func (p *skillParser) line(key string) int {
	if k, _ := lookup(p.root, key); k != nil {
		return k.Line
	}
	return p.root.Line
}

func (p *skillParser) fail(key, field, format string, args ...any) {
	p.errs = append(p.errs, &ManifestError{File: p.file, Line: p.line(key), Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (p *skillParser) warn(line int, format string, args ...any) {
	p.warnings = append(p.warnings, lineWarning{line, fmt.Sprintf("%s:%d: %s", p.file, line, fmt.Sprintf(format, args...))})
}

func (p *skillParser) str(key string) string {
	s, _ := p.fields[key].(string)
	return s
}

// strings returns the string items of the list at key; other items were
// reported by the schema.
func (p *skillParser) list(key string) []string {
	return stringItems(p.fields[key])
}

func stringItems(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

func (p *skillParser) read(s *SkillSpec, dirName string) {
	// name, checked against the folder.
	rawName, present := p.fields["name"]
	switch name, ok := rawName.(string); {
	case ok:
		s.Name = name
		switch {
		case dirName == "" || name == dirName:
		case isSkillFileName(path.Base(p.file)):
			p.fail("name", "name", "%q differs from the skill's folder name %q; the two must be equal (rename the folder or change name)", name, dirName)
		default:
			p.fail("name", "name", "%q differs from the file name %q; a flat skill's name is its file name without .md", name, dirName+".md")
		}
	case present:
		// A wrong type, reported by the schema.
	case dirName != "":
		s.Name = dirName
		p.warn(p.root.Line, "frontmatter has no name; using the folder name %q (the Agent Skills format requires name)", dirName)
	default:
		p.errs = append(p.errs, &ManifestError{File: p.file, Line: p.root.Line,
			Msg: "missing required field \"name\""})
	}
	if d := p.str("description"); d != "" && strings.TrimSpace(d) == "" {
		p.fail("description", "description", "must not be blank; say what the skill does and when to use it")
	}
	s.Description = strings.TrimSpace(p.str("description"))
	s.License = strings.TrimSpace(p.str("license"))
	s.Compatibility = strings.TrimSpace(p.str("compatibility"))

	if md, ok := p.fields["metadata"].(map[string]any); ok && len(md) > 0 {
		s.Metadata = make(map[string]string, len(md))
		for _, k := range sortedKeys(md) {
			switch x := md[k].(type) {
			case string:
				s.Metadata[k] = x
			case json.Number:
				s.Metadata[k] = string(x)
			case bool:
				s.Metadata[k] = strconv.FormatBool(x)
			case nil:
				s.Metadata[k] = ""
				p.warn(p.metadataLine(k), "metadata.%s is empty; kept as an empty string", k)
			default:
				// A nested mapping or list (OpenClaw's metadata.openclaw,
				// tag lists): kept whole as its JSON text.
				s.Metadata[k] = compactJSON(x)
				p.warn(p.metadataLine(k), "metadata.%s is %s, not a string; kept as its JSON text (the format defines metadata values as strings)",
					k, jsonNoun(x))
			}
		}
	}

	// Tools: the Agent Skills field and the subagent list must agree.
	var dashed []string
	switch x := p.fields["allowed-tools"].(type) {
	case string:
		dashed = splitToolList(x)
	case []any:
		dashed = stringItems(x)
	}
	under := p.list("allowed_tools")
	_, hasDashed := p.fields["allowed-tools"]
	_, hasUnder := p.fields["allowed_tools"]
	switch {
	case hasDashed && hasUnder && !sameSet(dashed, under):
		p.fail("allowed_tools", "allowed_tools", "lists [%s] but allowed-tools (line %d) lists [%s]; give the tools once, in either field",
			strings.Join(under, " "), p.line("allowed-tools"), strings.Join(dashed, " "))
	case hasDashed:
		s.AllowedTools = dedupe(dashed)
	default:
		s.AllowedTools = dedupe(under)
	}

	// Subagent settings.
	sa := s.Subagent
	sa.Model = strings.TrimSpace(p.str("model"))
	if n, ok := p.fields["max_iterations"].(json.Number); ok {
		if i, err := strconv.Atoi(string(n)); err == nil && i >= 1 && i <= 100 {
			sa.MaxIterations, sa.MaxIterationsSet = i, true
		}
	}
	sa.Env = dedupe(p.list("env"))
	for i, c := range p.list("capabilities") {
		if !validCapability(c) {
			p.fail("capabilities", fmt.Sprintf("capabilities[%d]", i),
				"%q: capability ids must be namespaced, e.g. gog.email", c)
			continue
		}
		sa.Capabilities = append(sa.Capabilities, c)
	}
	sa.Capabilities = dedupe(sa.Capabilities)
	if acc, ok := p.fields["access"].(map[string]any); ok {
		sa.ChatTypes = dedupe(stringItems(acc["chat_types"]))
		keys := sortedKeys(acc)
		for _, k := range keys {
			if k != "chat_types" {
				line := p.line("access")
				if an := deref(valueOf(p.root, "access")); an != nil {
					if kn, _ := lookup(an, k); kn != nil {
						line = kn.Line
					}
				}
				p.warn(line, "unknown field access.%s ignored; access knows chat_types", k)
			}
		}
	}
	sa.Sensitive, _ = p.fields["sensitive"].(bool)
	sa.Authors = p.list("authors")
	sa.Rationale = strings.TrimSpace(p.str("rationale"))
	sa.Packages = p.list("packages")

	// Everything else is kept, with a warning, in key order.
	for i := 0; i+1 < len(p.root.Content); i += 2 {
		k := p.root.Content[i]
		if k.ShortTag() != "!!str" || slices.Contains(agentFields, k.Value) || slices.Contains(subagentFields, k.Value) {
			continue
		}
		v, ok := p.fields[k.Value]
		if !ok {
			continue
		}
		if s.Extra == nil {
			s.Extra = map[string]any{}
		}
		s.Extra[k.Value] = v
		p.warn(k.Line, "unknown frontmatter field %q kept in extra; Agent Skills fields are %s",
			k.Value, strings.Join(agentFields, ", "))
	}
}

// metadataLine is the line of the key k inside metadata.
func (p *skillParser) metadataLine(k string) int {
	if mn := deref(valueOf(p.root, "metadata")); mn != nil {
		if kn, _ := lookup(mn, k); kn != nil {
			return kn.Line
		}
	}
	return p.line("metadata")
}

// compactJSON is v as JSON on one line, map keys sorted, with <, > and &
// left as they are.
func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonNoun names the kind of a JSON value with its article.
func jsonNoun(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return "a value"
}

// body checks the instructions.
func (p *skillParser) body(s *SkillSpec, fm *frontmatter) {
	if strings.TrimSpace(fm.Body) == "" {
		p.warn(max(fm.BodyLine-1, 1), "SKILL.md body is empty; write the skill's instructions after the closing ---")
		return
	}
	n := strings.Count(fm.Body, "\n")
	if !strings.HasSuffix(fm.Body, "\n") {
		n++
	}
	if n > maxBodyLines {
		p.warn(fm.BodyLine, "SKILL.md body is %d lines; keep it under %d and move detail into references/", n, maxBodyLines)
	}
}

// errLine is the line of a *ManifestError, 0 for other errors.
func errLine(err error) int {
	var me *ManifestError
	if errors.As(err, &me) {
		return me.Line
	}
	return 0
}

func valueOf(m *yaml.Node, key string) *yaml.Node {
	_, v := lookup(m, key)
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// splitToolList splits the allowed-tools string: names separated by spaces
// or commas, where a space or comma inside parentheses belongs to the name
// ("Bash(git add:*) Read" is two tools).
func splitToolList(s string) []string {
	var out []string
	depth, start := 0, -1
	flush := func(end int) {
		if start >= 0 {
			out = append(out, s[start:end])
			start = -1
		}
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'):
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return out
}

// validCapability reports whether c is a namespaced capability id: two or
// more non-empty dot-separated parts without blanks.
func validCapability(c string) bool {
	if strings.ContainsAny(c, " \t\r\n") {
		return false
	}
	parts := strings.Split(c, ".")
	if len(parts) < 2 {
		return false
	}
	for _, part := range parts {
		if part == "" {
			return false
		}
	}
	return true
}

// dedupe drops repeated strings, keeping the first of each; nil stays nil.
func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(dedupe(a)), slices.Clone(dedupe(b))
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// agentSkillHash is the content hash of an agent skill: the canonical JSON
// of its normalised fields, instructions and resource hashes. Where it was
// read from (file, pack, source) and its warnings are left out, so the same
// skill hashes the same wherever it lives.
func agentSkillHash(s *SkillSpec) string {
	return contentHash(struct {
		Kind          SkillKind         `json:"kind"`
		Name          string            `json:"name"`
		Description   string            `json:"description"`
		License       string            `json:"license"`
		Compatibility string            `json:"compatibility"`
		Metadata      map[string]string `json:"metadata"`
		AllowedTools  []string          `json:"allowed_tools"`
		Subagent      *Subagent         `json:"subagent"`
		Extra         map[string]any    `json:"extra"`
		Instructions  string            `json:"instructions"`
		Resources     []Resource        `json:"resources"`
	}{s.Kind, s.Name, s.Description, s.License, s.Compatibility, s.Metadata, s.AllowedTools,
		s.Subagent, s.Extra, s.Instructions, s.Resources})
}
