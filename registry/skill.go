package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/skillhost/skillhost/packs"
)

// ErrInvalidSkill is returned by NewSkillSet for a programmatic skill that
// breaks a rule of the Agent Skills format or of its resources and
// scripts; the message names the skill and the field.
var ErrInvalidSkill = errors.New("registry: invalid skill")

// Skill is a skill written in Go: a programmatic skill. It is held to
// the rules of a SKILL.md skill (name: lowercase letters, digits and
// single hyphens, at most 64 characters; description: 1 to 1024
// characters; compatibility: at most 500) and served by the same
// built-in tools: list_skills, load_skill, read_skill_resource and
// run_skill_script.
type Skill struct {
	Name        string
	Description string
	// Instructions is the Markdown load_skill returns, as a SKILL.md body.
	Instructions  string
	License       string
	Compatibility string
	Metadata      map[string]string
	// Resources are the skill's files, read with read_skill_resource.
	Resources []SkillResource
	// Scripts are the Go functions run with run_skill_script.
	Scripts []SkillScript
}

// SkillResource is one file of a programmatic skill: fixed Content, or
// content made by Load each time it is read (set one of the two; neither
// is an empty file).
type SkillResource struct {
	// Name is the resource's path in the skill, with forward slashes
	// ("schema.md", "references/api.md"): no "..", no leading "/".
	Name        string
	Description string
	Content     []byte
	Load        func(ctx context.Context) ([]byte, error)
}

// SkillScript is a script of a programmatic skill: a Go function run with
// the arguments the model gives.
type SkillScript struct {
	// Name is how the model names the script: letters, digits, '_', '-'
	// and '.', at most 64 characters.
	Name        string
	Description string
	// InputSchema, when set, is the JSON Schema the arguments are checked
	// against before Run is called; a violation is an invalid_input tool
	// error naming its JSON path.
	InputSchema json.RawMessage
	// Run runs the script. ctx carries the run (RunFrom), so a script may
	// call the run's tools. A string result is returned as it is; any other
	// value is encoded as JSON. A returned *ToolError keeps its code; any
	// other error is reported as "script failed" (guest_error).
	Run func(ctx context.Context, args map[string]any) (any, error)

	input *jsonschema.Schema
}

var scriptNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// validate checks s as a SKILL.md skill would be checked, by parsing the
// frontmatter its fields make with packs.ParseSkillMD, then checks its
// resources and scripts.
func (s *Skill) validate() error {
	fm := yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, v any) {
		var n yaml.Node
		if err := n.Encode(v); err != nil {
			return // strings and string maps always encode
		}
		fm.Content = append(fm.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &n)
	}
	if s.Name != "" {
		add("name", s.Name)
	}
	add("description", s.Description)
	if s.License != "" {
		add("license", s.License)
	}
	if s.Compatibility != "" {
		add("compatibility", s.Compatibility)
	}
	if len(s.Metadata) > 0 {
		add("metadata", s.Metadata)
	}
	header, err := yaml.Marshal(&fm)
	if err != nil {
		return fmt.Errorf("%w: skill %q: %v", ErrInvalidSkill, s.Name, err)
	}
	var errs []error
	// Without a name the parser would take the folder's; there is none.
	dirName := s.Name
	if dirName == "" {
		errs = append(errs, fmt.Errorf("%w: skill %q: name: must not be empty", ErrInvalidSkill, s.Name))
		dirName = "unnamed"
	}
	// The instructions are checked here, and the rest parsed without
	// them when they fail, so every problem is reported at once.
	body := s.Instructions
	switch n := len(header) + len(body) + 8; {
	case !utf8.ValidString(body):
		errs = append(errs, fmt.Errorf("%w: skill %q: instructions: must be UTF-8 text", ErrInvalidSkill, s.Name))
		body = ""
	case n > packs.MaxSkillMDBytes:
		errs = append(errs, fmt.Errorf("%w: skill %q: instructions: with the frontmatter the skill holds %d bytes; a SKILL.md may hold at most %d (1 MiB)",
			ErrInvalidSkill, s.Name, n, packs.MaxSkillMDBytes))
		body = ""
	}
	doc := "---\n" + string(header) + "---\n" + body
	if _, err := packs.ParseSkillMD(fmt.Sprintf("skill %q", s.Name), []byte(doc), dirName); err != nil {
		for _, e := range unjoin(err) {
			var me *packs.ManifestError
			if errors.As(e, &me) {
				field := me.Field
				if field == "" {
					field = "skill"
				}
				errs = append(errs, fmt.Errorf("%w: skill %q: %s: %s", ErrInvalidSkill, s.Name, field, me.Msg))
				continue
			}
			errs = append(errs, fmt.Errorf("%w: skill %q: %v", ErrInvalidSkill, s.Name, e))
		}
	}
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: skill %q: %s: %s", ErrInvalidSkill, s.Name, field, fmt.Sprintf(format, args...)))
	}
	seen := map[string]bool{}
	for i, r := range s.Resources {
		field := fmt.Sprintf("resources[%d]", i)
		switch {
		case !validResourceName(r.Name):
			bad(field+".name", "%q must be a relative path inside the skill, with forward slashes, without \"..\" or a leading \"/\"", r.Name)
		case seen[r.Name]:
			bad(field+".name", "%q is used twice", r.Name)
		case r.Content != nil && r.Load != nil:
			bad(field, "%s: set Content or Load, not both", r.Name)
		}
		seen[r.Name] = true
	}
	seen = map[string]bool{}
	for i := range s.Scripts {
		sc := &s.Scripts[i]
		field := fmt.Sprintf("scripts[%d]", i)
		switch {
		case !scriptNameRe.MatchString(sc.Name):
			bad(field+".name", "%q must be 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit", sc.Name)
		case seen[sc.Name]:
			bad(field+".name", "%q is used twice", sc.Name)
		case sc.Run == nil:
			bad(field+".run", "%s: Run is nil", sc.Name)
		}
		seen[sc.Name] = true
		if len(sc.InputSchema) > 0 {
			in, err := packs.CompileSchema(sc.InputSchema)
			if err != nil {
				bad(field+".input_schema", "%s: %v", sc.Name, err)
				continue
			}
			sc.input = in
		}
	}
	return errors.Join(errs...)
}

// validResourceName reports whether name is a path inside a skill.
func validResourceName(name string) bool {
	_, err := cleanResourcePath(name)
	return err == nil && path.Clean(name) == name
}

// errResourcePath is the reason a resource path is refused.
var errResourcePath = errors.New(`a resource path is relative to the skill folder, with forward slashes, and may not hold "..", a leading "/", a drive letter, a backslash, control characters or invalid UTF-8`)

// cleanResourcePath returns the path a model gave for a resource in the
// form resources are listed in ("./references/a.md" → "references/a.md"),
// or errResourcePath for anything that could name a file outside the skill. The
// result is then only looked up among the skill's listed files: it never
// reaches a file system unless it is one of them.
func cleanResourcePath(name string) (string, error) {
	if name == "" || len(name) > 1024 || !utf8.ValidString(name) || strings.ContainsRune(name, '\\') ||
		strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", errResourcePath
	}
	if strings.HasPrefix(name, "/") || (len(name) >= 2 && name[1] == ':') {
		return "", errResourcePath
	}
	for _, elem := range strings.Split(name, "/") {
		if elem == ".." {
			return "", errResourcePath
		}
	}
	clean := path.Clean(name)
	if clean == "." || !fs.ValidPath(clean) {
		return "", errResourcePath
	}
	return clean, nil
}

// SkillSetOptions configure a SkillSet.
type SkillSetOptions struct {
	// Files returns the file skills to serve (SKILL.md and playbook
	// skills), usually the current catalog's Skills. It is called on every
	// request, so a reloaded catalog is served at once. Nil serves none.
	Files func() []*packs.SkillEntry
	// OpenDir opens the folder of a file skill to read its files. The
	// returned close, when not nil, is called once the files are read. Nil
	// means OpenSkillDir.
	OpenDir func(e *packs.SkillEntry) (fsys fs.FS, close func(), err error)
	// Visible reports whether a run may use a skill; nil allows every
	// skill. A skill it refuses does not exist for the run: it is not
	// listed, and naming it gets "skill not found". An embedder that
	// stores pack skills at a scope passes the same rule here.
	Visible func(rc RunContext, skill string) bool
	// MaxResourceBytes caps a file read_skill_resource returns (default
	// DefaultMaxResourceBytes).
	MaxResourceBytes int64
	// DisableRedaction turns off the redaction of e-mail addresses, phone
	// numbers and credentials in skill descriptions and instructions (see
	// index.Redact), as index.Options.DisableRedaction does for the index.
	DisableRedaction bool
}

// DefaultMaxResourceBytes is the default cap of one resource returned by
// read_skill_resource.
const DefaultMaxResourceBytes = 256 << 10

// SkillSet is the skills the skill tools serve: file skills, read from the
// catalog on each request, and programmatic skills, checked once in
// NewSkillSet. A programmatic skill replaces a file skill of the same name.
// It is immutable and safe for concurrent use.
type SkillSet struct {
	opts SkillSetOptions
	code map[string]*Skill
	// skillMD caches the SKILL.md texts rawSkillMD read and checked, by
	// *packs.SkillEntry (entries are immutable, one set per generation).
	skillMD sync.Map
}

// NewSkillSet checks the programmatic skills and returns the set. Every
// problem of every skill is returned, joined, each matching
// ErrInvalidSkill and naming the skill and the field; two skills of one
// name are an error too.
func NewSkillSet(opts SkillSetOptions, skills ...Skill) (*SkillSet, error) {
	if opts.MaxResourceBytes <= 0 {
		opts.MaxResourceBytes = DefaultMaxResourceBytes
	}
	if opts.OpenDir == nil {
		opts.OpenDir = OpenSkillDir
	}
	set := &SkillSet{opts: opts, code: map[string]*Skill{}}
	var errs []error
	for i := range skills {
		s := skills[i]
		s.Resources = slices.Clone(s.Resources)
		s.Scripts = slices.Clone(s.Scripts)
		s.Metadata = maps.Clone(s.Metadata)
		if err := s.validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := set.code[s.Name]; dup {
			errs = append(errs, fmt.Errorf("%w: skill %q: name: registered twice", ErrInvalidSkill, s.Name))
			continue
		}
		set.code[s.Name] = &s
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}

// OpenSkillDir opens the folder of a file skill of the catalog: an
// embedded folder for the bundled source, else the folder on disk through
// an os.Root, so no symbolic link or ".." read through it can leave the
// folder.
func OpenSkillDir(e *packs.SkillEntry) (fs.FS, func(), error) {
	if e == nil || e.Skill == nil {
		return nil, nil, errors.New("no skill")
	}
	if e.Source == packs.SourceBundled {
		if spec := packs.BundledSource(); spec.FS != nil && strings.HasPrefix(e.Path, spec.Root+"/") {
			sub, err := fs.Sub(spec.FS, path.Dir(e.Skill.File))
			return sub, nil, err
		}
	}
	root, err := os.OpenRoot(filepath.Dir(filepath.FromSlash(e.Path)))
	if err != nil {
		return nil, nil, err
	}
	return root.FS(), func() { root.Close() }, nil
}

// skillRef is one skill as the skill tools see it: a file skill or a
// programmatic one.
type skillRef struct {
	name string
	file *packs.SkillEntry
	code *Skill
}

// description is what a listing shows: the description, else a playbook
// skill's trigger or title.
func (s skillRef) description() string {
	if s.code != nil {
		return s.code.Description
	}
	sk := s.file.Skill
	for _, d := range []string{sk.Description, sk.Trigger, sk.Title} {
		if strings.TrimSpace(d) != "" {
			return d
		}
	}
	return ""
}

// forRun returns the skills rc may use, sorted by name.
func (set *SkillSet) forRun(rc RunContext) []skillRef {
	byName := map[string]skillRef{}
	if set.opts.Files != nil {
		for _, e := range set.opts.Files() {
			if e != nil && e.Skill != nil && e.Skill.Name != "" {
				byName[e.Skill.Name] = skillRef{name: e.Skill.Name, file: e}
			}
		}
	}
	for name, s := range set.code {
		byName[name] = skillRef{name: name, code: s}
	}
	out := make([]skillRef, 0, len(byName))
	for name, s := range byName {
		if set.opts.Visible == nil || set.opts.Visible(rc, name) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b skillRef) int { return strings.Compare(a.name, b.name) })
	return out
}

// lookup returns the skill called name if rc may use it.
func (set *SkillSet) lookup(rc RunContext, name string) (skillRef, bool) {
	if set.opts.Visible != nil && !set.opts.Visible(rc, name) {
		return skillRef{}, false
	}
	if s, ok := set.code[name]; ok {
		return skillRef{name: name, code: s}, true
	}
	if set.opts.Files != nil {
		files := set.opts.Files()
		for _, e := range files {
			if e != nil && e.Skill != nil && e.Skill.Name == name {
				return skillRef{name: name, file: e}, true
			}
		}
		// A playbook's file name or title stands for it when it names
		// one skill the run may use (packs.SkillAliases).
		if names := packs.ResolveSkillAlias(name, set.visibleFiles(rc, files)); len(names) == 1 {
			return set.lookup(rc, names[0])
		}
	}
	return skillRef{}, false
}

// visibleFiles returns the file skills of files that rc may use. Aliases
// are resolved among them only: another tenant's playbook of the same
// title or file name neither makes an alias ambiguous nor answers it.
func (set *SkillSet) visibleFiles(rc RunContext, files []*packs.SkillEntry) []*packs.SkillEntry {
	if set.opts.Visible == nil {
		return files
	}
	out := make([]*packs.SkillEntry, 0, len(files))
	for _, e := range files {
		if e != nil && e.Skill != nil && set.opts.Visible(rc, e.Skill.Name) {
			out = append(out, e)
		}
	}
	return out
}

// canonical returns the canonical name of the file skill that name is an
// alias of among the skills rc may use (a playbook's file name or title,
// packs.SkillAliases), else name.
func (set *SkillSet) canonical(rc RunContext, name string) string {
	if set == nil || set.opts.Files == nil {
		return name
	}
	if _, ok := set.code[name]; ok {
		return name
	}
	if names := packs.ResolveSkillAlias(name, set.visibleFiles(rc, set.opts.Files())); len(names) == 1 {
		return names[0]
	}
	return name
}

// Summaries returns the name and description of every skill run may use,
// sorted by name, with references to tools the run may not find rewritten
// and, unless disabled, personal data redacted: the list that list_skills
// returns and SkillsBlock renders.
func (set *SkillSet) Summaries(run *Run) []SkillSummary {
	tx := set.texts(run)
	refs := set.forRun(run.Context())
	out := make([]SkillSummary, 0, len(refs))
	for _, s := range refs {
		out = append(out, SkillSummary{Name: s.name, Description: tx.clean(s.description())})
	}
	return out
}

// Instructions renders the skills run may use through an instruction
// template holding SkillsListPlaceholder ("" means DefaultSkillsTemplate),
// for a system prompt; see SkillsBlock. It returns "" when there is no
// skill, and an error matching ErrTemplateNoSkillsList for a template
// without the placeholder.
func (set *SkillSet) Instructions(run *Run, template string) (string, error) {
	return SkillsBlock(template, set.Summaries(run))
}
