package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/skillhost/skillhost/packs"
)

// Errors of the skill documents (SkillSet.Doc, SkillSet.ReadDocFile).
var (
	// ErrNoSkillDoc: the run has no skill of that name — it does not
	// exist, or it is not the run's to use.
	ErrNoSkillDoc = errors.New("registry: no such skill")
	// ErrNoSkillFile: the skill has no file at that path.
	ErrNoSkillFile = errors.New("registry: no such skill file")
	// ErrSkillUnreadable: a file of the skill cannot be read now (it
	// changed or went since the skill was loaded, or its content could not
	// be made).
	ErrSkillUnreadable = errors.New("registry: skill file unreadable")
)

// SkillMDFile is the path of a skill document's instructions file.
const SkillMDFile = packs.SkillFile

// SkillFiles is one skill a run may use, as files: its SKILL.md and the
// files beside it, each with its size and sha256 where they are known
// before it is read. It is what the MCP server serves as resources and
// through the skills extension.
type SkillFiles struct {
	Name        string
	Description string
	// SkillMD is the skill's SKILL.md as the run is given it: the file as
	// written for a SKILL.md skill; for a playbook skill or a Go skill, a
	// SKILL.md made from it (frontmatter with name and description, then
	// the instructions load_skill gives). Either way references to tools
	// the run may not find are rewritten and personal data redacted (unless
	// the set turns that off), as load_skill does.
	SkillMD []byte
	// Frontmatter is SkillMD's YAML frontmatter as JSON values: mappings
	// as map[string]any, sequences as []any, scalars as string, bool,
	// int64, float64 or nil (a timestamp stays the string written).
	Frontmatter map[string]any
	// Files are the skill's other files, sorted by path.
	Files []SkillFile
}

// SkillFile is one file of a skill besides SKILL.md.
type SkillFile struct {
	// Path is the file's path in the skill, with forward slashes.
	Path        string
	Description string
	// Size and SHA256 (hex) describe the content; Size is -1 and SHA256
	// "" for a Go skill's resource whose content is made when it is read.
	Size   int64
	SHA256 string
}

// Dynamic reports whether some file's content is made when it is read,
// so no digest of it can be given beforehand.
func (d *SkillFiles) Dynamic() bool {
	return slices.ContainsFunc(d.Files, func(f SkillFile) bool { return f.Size < 0 })
}

// File returns the file of the skill at p (SkillMDFile included, with its
// size and sha256).
func (d *SkillFiles) File(p string) (SkillFile, bool) {
	if p == SkillMDFile {
		return SkillFile{Path: SkillMDFile, Size: int64(len(d.SkillMD)), SHA256: skillSHA256(d.SkillMD)}, true
	}
	i, ok := slices.BinarySearchFunc(d.Files, p, func(f SkillFile, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return SkillFile{}, false
	}
	return d.Files[i], true
}

// Skills returns the skill set the run's skill tools serve (list_skills,
// load_skill, read_skill_resource), or nil when its registry has none.
func (r *Run) Skills() *SkillSet {
	for _, n := range r.reg.opts.Builtins {
		if b, ok := n.(*builtin); ok && b.set != nil {
			return b.set
		}
	}
	return nil
}

// Names returns the names of the skills run may use, sorted: the skills
// list_skills lists.
func (set *SkillSet) Names(run *Run) []string {
	refs := set.forRun(run.Context())
	out := make([]string, len(refs))
	for i, s := range refs {
		out[i] = s.name
	}
	return out
}

// exact returns the skill called exactly name (no alias) if rc may use
// it.
func (set *SkillSet) exact(rc RunContext, name string) (skillRef, bool) {
	if set.opts.Visible != nil && !set.opts.Visible(rc, name) {
		return skillRef{}, false
	}
	if s, ok := set.code[name]; ok {
		return skillRef{name: name, code: s}, true
	}
	if set.opts.Files != nil {
		for _, e := range set.opts.Files() {
			if e != nil && e.Skill != nil && e.Skill.Name == name {
				return skillRef{name: name, file: e}, true
			}
		}
	}
	return skillRef{}, false
}

// Doc returns the skill called name (its canonical name, not an alias) as
// run may use it. A skill the run may not use is ErrNoSkillDoc, exactly as
// one that does not exist; a SKILL.md that changed since the skill was
// loaded is ErrSkillUnreadable.
func (set *SkillSet) Doc(run *Run, name string) (*SkillFiles, error) {
	s, ok := set.exact(run.Context(), name)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoSkillDoc, name)
	}
	tx := set.texts(run)
	d := &SkillFiles{Name: s.name, Description: tx.clean(s.description())}
	var md string
	if c := s.code; c != nil {
		md = renderSkillMD(c.Name, c.Description, c.License, c.Compatibility, c.Metadata, c.Instructions)
		for _, r := range c.Resources {
			f := SkillFile{Path: r.Name, Description: tx.clean(r.Description), Size: -1}
			if r.Load == nil {
				f.Size, f.SHA256 = int64(len(r.Content)), skillSHA256(r.Content)
			}
			d.Files = append(d.Files, f)
		}
		slices.SortFunc(d.Files, func(a, b SkillFile) int { return strings.Compare(a.Path, b.Path) })
	} else {
		sk := s.file.Skill
		if sk.Kind == packs.KindPlaybook {
			md = renderSkillMD(sk.Name, s.description(), "", "", nil, skillInstructions(sk))
		} else {
			raw, err := set.rawSkillMD(s)
			if err != nil {
				return nil, err
			}
			md = raw
		}
		for _, r := range sk.Resources { // sorted by path when loaded
			d.Files = append(d.Files, SkillFile{Path: r.Path, Size: r.Size, SHA256: r.SHA256})
		}
	}
	d.SkillMD = []byte(tx.clean(md))
	fm, err := frontmatterJSON(d.SkillMD)
	if err != nil {
		return nil, fmt.Errorf("%w: SKILL.md of skill %q: %v", ErrSkillUnreadable, s.name, err)
	}
	d.Frontmatter = fm
	return d, nil
}

// ReadDocFile returns the content of the file at p of the skill d
// describes (not SKILL.md, which d holds): a file skill's file, read
// through the skill's folder only when it is one of its listed files and
// still has the size and sha256 listed; a Go skill's resource, made when
// its content is. At most limit bytes are returned (packs.MaxSkillBytes
// when limit <= 0); a larger file is ErrSkillUnreadable.
func (set *SkillSet) ReadDocFile(ctx context.Context, run *Run, d *SkillFiles, p string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = packs.MaxSkillBytes
	}
	s, ok := set.exact(run.Context(), d.Name)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoSkillDoc, d.Name)
	}
	unreadable := func(format string, args ...any) error {
		return fmt.Errorf("%w: %q of skill %q: %s", ErrSkillUnreadable, p, s.name, fmt.Sprintf(format, args...))
	}
	if c := s.code; c != nil {
		for _, r := range c.Resources {
			if r.Name != p {
				continue
			}
			data := r.Content
			if r.Load != nil {
				var err error
				if data, err = r.Load(ctx); err != nil {
					return nil, unreadable("%v", err)
				}
			}
			if int64(len(data)) > limit {
				return nil, unreadable("it holds %d bytes, more than the %d a read returns", len(data), limit)
			}
			return data, nil
		}
		return nil, fmt.Errorf("%w: skill %q has no file %q", ErrNoSkillFile, s.name, p)
	}
	for i := range s.file.Skill.Resources {
		res := &s.file.Skill.Resources[i]
		if res.Path != p {
			continue
		}
		if res.Size > limit {
			return nil, unreadable("it holds %d bytes, more than the %d a read returns", res.Size, limit)
		}
		data, err := set.readListed(s, res)
		if err != nil {
			return nil, unreadable("it changed or went since the skill was loaded, or cannot be read; reload the skills")
		}
		return data, nil
	}
	return nil, fmt.Errorf("%w: skill %q has no file %q", ErrNoSkillFile, s.name, p)
}

// rawSkillMD reads a SKILL.md skill's file through its folder, and checks
// that it still says what the loaded skill says. A text that passed is
// kept: it is the loaded skill's whatever the file becomes.
func (set *SkillSet) rawSkillMD(s skillRef) (string, error) {
	if md, ok := set.skillMD.Load(s.file); ok {
		return md.(string), nil
	}
	md, err := set.readSkillMD(s)
	if err == nil {
		set.skillMD.Store(s.file, md)
	}
	return md, err
}

// readSkillMD is rawSkillMD without the cache.
func (set *SkillSet) readSkillMD(s skillRef) (string, error) {
	unreadable := func(why string) error {
		return fmt.Errorf("%w: SKILL.md of skill %q: %s", ErrSkillUnreadable, s.name, why)
	}
	fsys, closeDir, err := set.opts.OpenDir(s.file)
	if err != nil {
		return "", unreadable("the skill folder cannot be opened")
	}
	if closeDir != nil {
		defer closeDir()
	}
	name := path.Base(strings.ReplaceAll(s.file.Path, "\\", "/"))
	f, err := fsys.Open(name)
	if err != nil {
		return "", unreadable("the file is gone since the skill was loaded")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, packs.MaxSkillMDBytes+1))
	if err != nil || len(data) > packs.MaxSkillMDBytes {
		return "", unreadable("the file cannot be read whole")
	}
	sk := s.file.Skill
	now, err := packs.ParseSkillMD(name, data, sk.Name)
	if err != nil || now.Name != sk.Name || now.Description != sk.Description || now.Instructions != sk.Instructions ||
		now.License != sk.License || now.Compatibility != sk.Compatibility || !maps.Equal(now.Metadata, sk.Metadata) ||
		!slices.Equal(now.AllowedTools, sk.AllowedTools) {
		return "", unreadable("the file changed since the skill was loaded; reload the skills")
	}
	return string(data), nil
}

// renderSkillMD makes the SKILL.md of a skill that has none: YAML
// frontmatter with its fields, then the instructions.
func renderSkillMD(name, description, license, compatibility string, metadata map[string]string, instructions string) string {
	type front struct {
		Name          string            `yaml:"name"`
		Description   string            `yaml:"description"`
		License       string            `yaml:"license,omitempty"`
		Compatibility string            `yaml:"compatibility,omitempty"`
		Metadata      map[string]string `yaml:"metadata,omitempty"`
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	// Only strings and a map of strings: encoding cannot fail.
	_ = enc.Encode(front{name, description, license, compatibility, metadata})
	enc.Close()
	b.WriteString("---\n\n")
	b.WriteString(strings.TrimLeft(instructions, "\n"))
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

// frontmatterJSON returns the YAML frontmatter of a SKILL.md (between a
// first line "---" and the next line "---" or "...") as JSON values.
func frontmatterJSON(md []byte) (map[string]any, error) {
	text := string(md)
	text = strings.TrimPrefix(text, "\ufeff")
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || strings.TrimRight(first, "\r") != "---" {
		return nil, errors.New("it does not start with a frontmatter line ---")
	}
	var yamlText strings.Builder
	closed := false
	for line := range strings.Lines(rest) {
		l := strings.TrimRight(line, "\r\n")
		if l == "---" || l == "..." {
			closed = true
			break
		}
		yamlText.WriteString(line)
	}
	if !closed {
		return nil, errors.New("its frontmatter has no closing line ---")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(yamlText.String()), &doc); err != nil {
		return nil, fmt.Errorf("its frontmatter is not YAML: %v", err)
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("its frontmatter is empty")
	}
	v, err := yamlValue(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("its frontmatter is not a mapping")
	}
	return m, nil
}

// yamlValue converts a YAML node to a JSON value, keeping every scalar
// that is not a number, boolean or null as the string written.
func yamlValue(n *yaml.Node, depth int) (any, error) {
	if depth > 64 {
		return nil, errors.New("its frontmatter nests too deeply")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return yamlValue(n.Alias, depth+1)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlValue(n.Content[0], depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := yamlValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			if n.Content[i].Tag == "!!merge" {
				if mm, ok := v.(map[string]any); ok {
					for k, x := range mm {
						if _, set := m[k]; !set {
							m[k] = x
						}
					}
				}
				continue
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b, nil
		}
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return i, nil
		}
		var i int64
		if n.Decode(&i) == nil {
			return i, nil
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, nil
		}
	}
	return n.Value, nil
}
