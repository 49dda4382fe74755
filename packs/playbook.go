package packs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Bounds of the playbook formats.
const (
	// maxPlaybookBytes bounds one playbook file of any format. A YAML or
	// JSON document (a whole .skill.yaml or .skill.json file, one JSONL
	// line) is further bounded by decodeYAML's per-document cap, and
	// Markdown frontmatter by maxFrontmatterBytes.
	maxPlaybookBytes = 4 << 20
	// maxPlaybookNameLen bounds a playbook skill's name.
	maxPlaybookNameLen = 128
	// maxSlugLen bounds each slug a derived name is built from.
	maxSlugLen = 48
	// maxJSONLBadLines is how many bad JSONL lines are reported one by one;
	// the rest are counted in one last error.
	maxJSONLBadLines = 100
)

var (
	// playbookNameRE is the shape of a playbook skill name: dot-separated
	// segments of lowercase letters, digits, _ and -, each starting with a
	// letter or digit. The schema holds the same pattern.
	playbookNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$`)
	// slugBreakRE matches what a slug turns into one underscore.
	slugBreakRE = regexp.MustCompile(`[^a-z0-9]+`)
)

// playbookFields are the fields a playbook skill reads; every other
// top-level field is kept in Skill.Extra.
var playbookFields = []string{"name", "title", "description", "trigger", "task_type", "tags", "steps", "preconditions", "failure_modes"}

// learnedPrefix starts the names of skills learned at run time; packs may
// not use it, so a pack can never replace a learned skill.
const learnedPrefix = "learned."

// ParsePlaybook parses a playbook skill file. The format follows the file
// name's suffix:
//
//   - *.skill.md: YAML frontmatter between "---" lines holding the skill's
//     fields, then Markdown. The Markdown body, without its leading blank
//     lines and trailing whitespace, becomes Skill.Instructions (it is
//     part of the content hash); it does not stand in for a missing
//     description.
//   - *.skill.yaml, *.skill.yml: one YAML document holding one skill (a
//     mapping). A top-level list is refused: several skills go in a
//     .skill.jsonl file or in one file each, so that every name derived
//     from a file name stays unambiguous.
//   - *.skill.json: one JSON object, strictly JSON (no YAML syntax); a
//     top-level array is refused for the same reason.
//   - *.skill.jsonl: one JSON object per line; blank lines are skipped.
//     Lines are independent: a bad line is reported with its line number
//     and the good lines still load, so callers get both the skills and
//     the joined errors, and must use the skills even when err != nil.
//
// Each skill is checked against schemas/playbook.schema.json: trigger
// (non-blank) and steps (a non-empty list of non-blank strings) are
// required; name, title, description, task_type (browser, api, code,
// domain or unknown, default unknown), tags, preconditions and
// failure_modes are optional. Other fields (cluster, tools, …) are kept in
// Skill.Extra, never an error.
//
// Strings are trimmed of surrounding whitespace and nothing else; tags are
// also lowercased and de-duplicated, keeping the first of each. A skill
// without a name is named pack.<pack>.<slug>, the slug being the file's
// base name without its .skill.* suffix, lowercased, with each run of
// other characters than a-z and 0-9 turned into one underscore and
// underscores trimmed from the ends (pack is slugged the same way). In a
// JSONL file each nameless record also gets its title's slug
// (pack.core.faq.reset_a_password) or, without a title, line_<n>, which
// moves when lines are inserted or reordered: give such records a title or
// a name. Two records that end up with the same name are an error naming
// both lines. Names beginning with "learned." are reserved for learned
// skills; an explicit name outside pack.<pack>. draws a warning.
//
// Every problem is a *ManifestError (matching ErrInvalidManifest) with file
// and, where known, the line; all found are joined. Single-skill formats
// return no skill when there is an error.
func ParsePlaybook(file string, data []byte, pack string) ([]*SkillSpec, error) {
	if len(data) > maxPlaybookBytes {
		return nil, &ManifestError{File: file,
			Msg: fmt.Sprintf("is %d bytes; at most %d allowed (split it into several skill files)", len(data), maxPlaybookBytes)}
	}
	base := path.Base(file)
	p := &playbookParser{file: file, pack: pack}
	var ext string
	for _, e := range []string{".skill.md", ".skill.yaml", ".skill.yml", ".skill.jsonl", ".skill.json"} {
		if strings.HasSuffix(base, e) {
			ext = e
			p.stem = strings.TrimSuffix(base, e)
			break
		}
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	switch ext {
	case ".skill.md":
		return p.one(p.markdown(data))
	case ".skill.yaml", ".skill.yml":
		return p.one(p.yamlFile(data, ext))
	case ".skill.json":
		return p.one(p.jsonFile(data))
	case ".skill.jsonl":
		p.jsonl = true
		return p.jsonlFile(data)
	}
	return nil, &ManifestError{File: file,
		Msg: "is not a playbook skill file; expected a name ending in .skill.md, .skill.yaml, .skill.yml, .skill.json or .skill.jsonl"}
}

type playbookParser struct {
	file string
	pack string
	stem string // the file's base name without its .skill.* suffix
	// jsonl is set for a .skill.jsonl file, whose records get derived
	// names of their own.
	jsonl bool
}

// one returns the result of a single-skill format.
func (p *playbookParser) one(s *SkillSpec, errs []error) ([]*SkillSpec, error) {
	if len(errs) > 0 {
		return nil, errors.Join(byLine(errs)...)
	}
	return []*SkillSpec{s}, nil
}

func (p *playbookParser) errorf(line int, field, format string, args ...any) error {
	return &ManifestError{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (p *playbookParser) markdown(data []byte) (*SkillSpec, []error) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if !isDelimiter(first) {
		return nil, []error{p.errorf(1, "",
			"a .skill.md file needs YAML frontmatter between --- lines, starting on the first line, with at least trigger and steps")}
	}
	fm, err := splitFrontmatter(p.file, data)
	if err != nil {
		return nil, []error{err}
	}
	// The header keeps its opening "---" line, a YAML document marker, so
	// node lines are file lines.
	doc, err := decodeYAMLLimit(p.file, fm.YAML, maxFrontmatterBytes+8)
	if err != nil {
		return nil, []error{err}
	}
	s, errs := p.skill(doc, "frontmatter", 1, 0)
	if s != nil {
		s.Instructions = trimBody(fm.Body)
		s.ContentHash, err = playbookHash(s)
		if err != nil {
			return nil, []error{p.errorf(1, "", "cannot compute the content hash: %v", err)}
		}
	}
	return s, errs
}

// trimBody drops a Markdown body's leading blank lines and trailing
// whitespace, keeping the indentation of its first line.
func trimBody(body string) string {
	body = strings.TrimRight(body, " \t\r\n")
	for {
		line, rest, ok := strings.Cut(body, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			if strings.TrimSpace(line) == "" {
				return ""
			}
			return body
		}
		body = rest
	}
}

func (p *playbookParser) yamlFile(data []byte, ext string) (*SkillSpec, []error) {
	doc, err := decodeYAML(p.file, data)
	if err != nil {
		return nil, []error{err}
	}
	return p.finish(p.skill(doc, "a "+ext+" file", 1, 0))
}

func (p *playbookParser) jsonFile(data []byte) (*SkillSpec, []error) {
	if err := p.strictJSON(data, 0); err != nil {
		return nil, []error{err}
	}
	doc, err := decodeYAML(p.file, data)
	if err != nil {
		return nil, []error{err}
	}
	return p.finish(p.skill(doc, "a .skill.json file", 1, 0))
}

// finish computes the content hash of a parsed skill.
func (p *playbookParser) finish(s *SkillSpec, errs []error) (*SkillSpec, []error) {
	if s == nil {
		return nil, errs
	}
	h, err := playbookHash(s)
	if err != nil {
		return nil, append(errs, p.errorf(s.Line, "", "cannot compute the content hash: %v", err))
	}
	s.ContentHash = h
	return s, errs
}

// strictJSON refuses text that is not JSON (YAML would read much more).
// line is the file line data starts on, 0 for a whole file.
func (p *playbookParser) strictJSON(data []byte, line int) error {
	if !utf8.Valid(data) {
		off := invalidUTF8Offset(data)
		if line > 0 {
			return p.errorf(line, "", "invalid UTF-8 at column %d; the file must be UTF-8 text", off+1)
		}
		return p.errorf(lineAt(data, off), "", "invalid UTF-8 at byte offset %d; the file must be UTF-8 text", off)
	}
	if json.Valid(data) {
		return nil
	}
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if line > 0 {
			return p.errorf(line, "", "not valid JSON: %v", err)
		}
		return p.errorf(0, "", "not valid JSON: %v", err)
	}
	off := int(min(max(se.Offset-1, 0), int64(len(data))))
	if line > 0 {
		return p.errorf(line, "", "not valid JSON at column %d: %v; each line must be one JSON object", off+1, se)
	}
	l := lineAt(data, off)
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return p.errorf(l, "", "not valid JSON at column %d: %v", col, se)
}

func (p *playbookParser) jsonlFile(data []byte) ([]*SkillSpec, error) {
	var (
		skills   []*SkillSpec
		errs     []error
		bad      int
		nameLine = map[string]int{}
	)
	lineNo := 0
	for rest := data; len(rest) > 0; {
		var raw []byte
		raw, rest, _ = bytes.Cut(rest, []byte("\n"))
		lineNo++
		raw = bytes.TrimSuffix(raw, []byte("\r"))
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		s, lineErrs := p.jsonlRecord(raw, lineNo)
		if s != nil {
			if first, dup := nameLine[s.Name]; dup {
				lineErrs = append(lineErrs, p.errorf(lineNo, "name",
					"%q is also the name of the skill on line %d; names must be unique within a file", s.Name, first))
				s = nil
			}
		}
		if len(lineErrs) > 0 {
			bad++
			if bad <= maxJSONLBadLines {
				errs = append(errs, byLine(lineErrs)...)
			}
			continue
		}
		nameLine[s.Name] = lineNo
		skills = append(skills, s)
	}
	if bad > maxJSONLBadLines {
		errs = append(errs, p.errorf(0, "", "%d more lines have problems (only the first %d bad lines are listed)",
			bad-maxJSONLBadLines, maxJSONLBadLines))
	}
	return skills, errors.Join(errs...)
}

// jsonlRecord parses the JSONL line raw, which is line lineNo of the file.
// Every error it returns carries lineNo.
func (p *playbookParser) jsonlRecord(raw []byte, lineNo int) (*SkillSpec, []error) {
	if err := p.strictJSON(raw, lineNo); err != nil {
		return nil, []error{err}
	}
	// decodeYAML refuses repeated keys too, but names the line of the first
	// one, which within a record is always line 1.
	if key, ok := repeatedJSONKey(raw); ok {
		return nil, []error{p.errorf(lineNo, "", "key %q is repeated in one object; each key may appear once", key)}
	}
	doc, err := decodeYAML(p.file, raw)
	if err != nil {
		return nil, atLine(err, lineNo)
	}
	s, errs := p.finish(p.skill(doc, "a .skill.jsonl line", lineNo, lineNo-1))
	if len(errs) > 0 {
		return nil, atLine(errors.Join(errs...), lineNo)
	}
	return s, nil
}

// repeatedJSONKey finds a key that appears twice in one object of the
// valid JSON text data.
func repeatedJSONKey(data []byte) (string, bool) {
	type frame struct {
		object  bool
		wantKey bool
		keys    map[string]bool
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			top := stack[n-1]
			if key, ok := tok.(string); ok {
				if top.keys[key] {
					return key, true
				}
				top.keys[key] = true
				top.wantKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, wantKey: true, keys: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// byLine sorts errors by line, stably; errors without a line come first.
func byLine(errs []error) []error {
	line := func(err error) int {
		var me *ManifestError
		if errors.As(err, &me) {
			return me.Line
		}
		return 0
	}
	slices.SortStableFunc(errs, func(a, b error) int { return line(a) - line(b) })
	return errs
}

// atLine sets the line of every *ManifestError in err to line: one JSONL
// record is one line, whatever the YAML decoder counted.
func atLine(err error, line int) []error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		switch x := e.(type) {
		case *ManifestError:
			x.Line = line
			out = append(out, x)
		case interface{ Unwrap() []error }:
			for _, inner := range x.Unwrap() {
				walk(inner)
			}
		default:
			if e != nil {
				out = append(out, e)
			}
		}
	}
	walk(err)
	return out
}

// skill reads one skill from doc. what names the container in messages
// ("frontmatter", "a .skill.yaml file"); line is the skill's line in the
// file; delta is added to node lines to make them file lines. The content
// hash is left to the caller (Markdown adds its body first).
func (p *playbookParser) skill(doc *yaml.Node, what string, line, delta int) (*SkillSpec, []error) {
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, []error{p.errorf(line, "", "%s is empty; expected a skill with at least trigger and steps", what)}
		}
		root = root.Content[0]
	}
	root = deref(root)
	switch {
	case root == nil:
		return nil, []error{p.errorf(line, "", "%s is empty; expected a skill with at least trigger and steps", what)}
	case root.Kind == yaml.SequenceNode && what != "frontmatter":
		return nil, []error{p.errorf(root.Line+delta, "",
			"%s holds a list; it must hold one skill (a mapping with trigger and steps); put several skills in a .skill.jsonl file, one per line, or in one file each", what)}
	case root.Kind != yaml.MappingNode:
		if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
			return nil, []error{p.errorf(line, "", "%s is empty; expected a skill with at least trigger and steps", what)}
		}
		return nil, []error{p.errorf(root.Line+delta, "", "%s must hold a mapping with trigger and steps, got %s", what, nodeNoun(root))}
	}
	// A value JSON cannot hold (infinity, an unknown tag) stops here;
	// checkSchema would report the same.
	v, err := nodeValue(p.file, doc)
	if err != nil {
		lineOffset([]error{err}, delta)
		return nil, []error{err}
	}
	errs := checkSchema("playbook", p.file, doc)
	lineOffset(errs, delta)
	m, _ := v.(map[string]any)
	s := &SkillSpec{Kind: KindPlaybook, Pack: p.pack, File: p.file, Line: line, TaskType: TaskUnknown}
	s.Title = strings.TrimSpace(asString(m["title"]))
	s.Description = strings.TrimSpace(asString(m["description"]))
	s.Trigger = strings.TrimSpace(asString(m["trigger"]))
	if t := asString(m["task_type"]); t != "" {
		s.TaskType = t
	}
	if raw, ok := m["trigger"].(string); ok && raw != "" && s.Trigger == "" {
		errs = append(errs, p.errorf(keyLine(root, "trigger", line-delta)+delta, "trigger", "is only whitespace; say when the skill applies"))
	}
	lists := map[string]*[]string{"steps": &s.Steps, "tags": &s.Tags, "preconditions": &s.Preconditions, "failure_modes": &s.FailureModes}
	for _, field := range []string{"tags", "steps", "preconditions", "failure_modes"} {
		items, lerrs := p.list(root, m, field, delta)
		errs = append(errs, lerrs...)
		*lists[field] = items
	}
	s.Tags = normaliseTags(s.Tags)
	for k, val := range m {
		if !slices.Contains(playbookFields, k) {
			if s.Extra == nil {
				s.Extra = map[string]any{}
			}
			s.Extra[k] = val
		}
	}
	if name, ok := m["name"].(string); ok {
		s.Name = name
		if strings.HasPrefix(name, learnedPrefix) {
			errs = append(errs, p.errorf(keyLine(root, "name", line-delta)+delta, "name",
				"%q: names beginning with %q are reserved for learned skills; use pack.<pack>.<slug>", name, learnedPrefix))
		} else if ps := nameSlug(p.pack); ps != "" && !strings.HasPrefix(name, "pack."+ps+".") {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s:%d: name %q does not start with pack.%s.; pack skill names conventionally do, which keeps packs from colliding",
				p.file, line, name, ps))
		}
	} else if _, present := m["name"]; !present {
		name, err := p.deriveName(s.Title, line)
		if err != nil {
			errs = append(errs, err)
		}
		s.Name = name
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// keyLine is the line of key in the mapping root, or def when it is not
// found there.
func keyLine(root *yaml.Node, key string, def int) int {
	if k, _ := lookup(root, key); k != nil {
		return k.Line
	}
	return def
}

// list reads the list field of m, trimming its items; a whitespace-only
// item is an error. Type errors are left to the schema.
func (p *playbookParser) list(root *yaml.Node, m map[string]any, field string, delta int) ([]string, []error) {
	raw, ok := m[field].([]any)
	if !ok || len(raw) == 0 {
		return nil, nil
	}
	_, node := lookup(root, field)
	node = deref(node)
	var out []string
	var errs []error
	for i, item := range raw {
		s, ok := item.(string)
		if !ok {
			continue
		}
		t := strings.TrimSpace(s)
		if t == "" && s != "" {
			line := 0
			if node != nil && node.Kind == yaml.SequenceNode && i < len(node.Content) {
				line = node.Content[i].Line + delta
			}
			errs = append(errs, p.errorf(line, fmt.Sprintf("%s[%d]", field, i), "is only whitespace; expected text"))
			continue
		}
		out = append(out, t)
	}
	return out, errs
}

// deriveName builds pack.<pack>.<file slug>, with the title slug or the
// line number appended for a JSONL record.
func (p *playbookParser) deriveName(title string, line int) (string, error) {
	ps, fs := nameSlug(p.pack), nameSlug(p.stem)
	if ps == "" {
		return "", p.errorf(line, "name", "is missing and no pack name is known to derive one from; add a name such as pack.<pack>.%s", cmp.Or(fs, "<slug>"))
	}
	if fs == "" {
		return "", p.errorf(line, "name", "is missing and the file name %q has no letters or digits to derive one from; add a name", path.Base(p.file))
	}
	name := "pack." + ps + "." + fs
	if p.jsonl {
		if ts := nameSlug(title); ts != "" {
			name += "." + ts
		} else {
			name += ".line_" + strconv.Itoa(line)
		}
	}
	if len(name) > maxPlaybookNameLen {
		return "", p.errorf(line, "name", "is missing and the derived name %q is longer than %d characters; add a shorter name", name, maxPlaybookNameLen)
	}
	return name, nil
}

// nameSlug lowercases s, turns each run of characters other than a-z and 0-9
// into one underscore, trims underscores from the ends and cuts the result
// to maxSlugLen characters.
func nameSlug(s string) string {
	s = slugBreakRE.ReplaceAllString(strings.ToLower(s), "_")
	s = strings.Trim(s, "_")
	if len(s) > maxSlugLen {
		s = strings.TrimRight(s[:maxSlugLen], "_")
	}
	return s
}

// normaliseTags lowercases tags and drops repeats, keeping the first.
func normaliseTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		t = strings.ToLower(t)
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// asString returns v if it is a string, "" otherwise (the schema reports the
// wrong type).
func asString(v any) string {
	s, _ := v.(string)
	return s
}

// nodeNoun names the kind of a YAML node for messages.
func nodeNoun(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" {
			return fmt.Sprintf("the string %q", n.Value)
		}
		return tagNoun(n.ShortTag()) + " " + n.Value
	}
	return "something else"
}

// playbookHash is the content hash of a playbook skill: the canonical JSON
// of its normalised fields, extra fields and Markdown body. Where it was
// read from (file, line, pack) and its warnings are left out, so moving or
// reformatting a skill keeps its hash.
func playbookHash(s *SkillSpec) (string, error) {
	extra := s.Extra
	if extra == nil {
		extra = map[string]any{}
	}
	b, err := canonicalJSON(map[string]any{
		"kind":          string(s.Kind),
		"name":          s.Name,
		"title":         s.Title,
		"description":   s.Description,
		"trigger":       s.Trigger,
		"task_type":     s.TaskType,
		"tags":          s.Tags,
		"steps":         s.Steps,
		"preconditions": s.Preconditions,
		"failure_modes": s.FailureModes,
		"extra":         extra,
		"instructions":  s.Instructions,
	})
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}
