package packs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Source names, from the lowest precedence to the highest.
const (
	SourceBundled   = "bundled"
	SourceInstalled = "installed"
	SourceUser      = "user"
	SourceWorkspace = "workspace"
)

// DefaultMaxDepth is how many folders deep a source is searched when its
// SourceSpec says 0: a skill folder at skills/group/name/ (depth 3) is
// found, one a level deeper is not.
const DefaultMaxDepth = 3

// UnlimitedDepth as SourceSpec.MaxDepth searches a source to any depth.
const UnlimitedDepth = -1

// playbookExts are the suffixes of playbook skill files.
var playbookExts = []string{".skill.md", ".skill.yaml", ".skill.yml", ".skill.json", ".skill.jsonl"}

// skippedDirs are folders never searched besides hidden ones.
var skippedDirs = map[string]bool{"node_modules": true, "__pycache__": true}

// SourceSpec says where one source's files are and how it ranks.
type SourceSpec struct {
	// Name is the source's kind, recorded in Skill.Source and Pack.Source:
	// SourceBundled, SourceInstalled, SourceUser or SourceWorkspace.
	Name string
	// Dir is a folder on disk, opened with os.OpenRoot at each load (so
	// nothing read can leave it) when FS is nil.
	Dir string
	// FS holds the source's files when they are not a folder on disk (the
	// bundled skills are embedded).
	FS fs.FS
	// Root names the source in paths and messages; it defaults to Dir.
	Root string
	// MaxDepth bounds how many folders deep the source is searched: 0
	// means DefaultMaxDepth, UnlimitedDepth (-1) no bound.
	MaxDepth int
	// Optional makes a missing Dir an empty source instead of a problem.
	Optional bool
}

func (s SourceSpec) root() string {
	switch {
	case s.Root != "":
		return s.Root
	case s.Dir != "":
		return s.Dir
	}
	return s.Name
}

// DirSource returns the spec of a folder on disk.
func DirSource(name, dir string) SourceSpec {
	return SourceSpec{Name: name, Dir: dir}
}

// SourceError is a problem found in one source. It wraps the problem
// itself (often a *ManifestError, whose file is relative to the source
// root) and prints it with the root in front, so the path can be opened.
type SourceError struct {
	Source string
	Root   string
	Err    error
}

func (e *SourceError) Error() string {
	var me *ManifestError
	if errors.As(e.Err, &me) && me == e.Err {
		c := *me
		c.File = joinRoot(e.Root, me.File)
		return c.Error()
	}
	return e.Root + ": " + e.Err.Error()
}

// Unwrap returns the problem itself.
func (e *SourceError) Unwrap() error { return e.Err }

// DuplicateError says that one source defines two things of the same kind
// and name. The first one found is kept.
type DuplicateError struct {
	Kind   string // "skill", "tool" or "pack"
	Name   string
	Source string
	// First and Second are the paths of the two definitions.
	First, Second string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%s %q is defined twice in the %s source: %s and %s; rename one (the first is used)",
		e.Kind, e.Name, e.Source, e.First, e.Second)
}

// Is makes a *DuplicateError match ErrDuplicateName.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicateName }

// SourceContents is what one source holds: its packs (tool manifests) and
// skills, each the first of its name.
type SourceContents struct {
	Name string
	// Root names the source in paths.
	Root   string
	Packs  []*Pack
	Skills []*SkillSpec
	// Warnings are problems that lose nothing but may surprise, such as a
	// symbolic link that was not followed.
	Warnings []string
}

// Path returns the path of file (relative to the source root) as shown
// to people.
func (sc *SourceContents) Path(file string) string { return joinRoot(sc.Root, file) }

func joinRoot(root, file string) string {
	if file == "" || file == "." {
		return root
	}
	if strings.HasSuffix(root, "/") || strings.HasSuffix(root, string(filepath.Separator)) {
		return root + file
	}
	return root + "/" + file
}

// LoadSource searches one source for packs and skills:
//
//   - a folder with pack.yaml is a pack (see Load); the search goes on
//     inside it, and skills found there belong to that pack;
//   - a folder with SKILL.md is an Agent Skill (see LoadSkillDir); the
//     search does not go inside it;
//   - a file named *.skill.md, *.skill.yaml, *.skill.yml, *.skill.json or
//     *.skill.jsonl holds playbook skills (see ParsePlaybook);
//   - any other *.md file at the source root or directly in a folder named
//     skills whose first line is "---" is a flat Agent Skill (see
//     LoadSkillFile); README.md and files without frontmatter are not.
//
// Skills belong to the pack of the nearest pack.yaml above them, else to a
// pack named after the source folder. Hidden entries (.git), node_modules
// and __pycache__ are skipped, folders deeper than spec.MaxDepth are not
// searched, and symbolic links met by the search are not followed (each
// is a warning). The contents are returned even when there are problems:
// every problem is returned, joined, each a *SourceError or a
// *DuplicateError.
func LoadSource(ctx context.Context, spec SourceSpec) (*SourceContents, error) {
	sc := &SourceContents{Name: spec.Name, Root: spec.root()}
	fsys := spec.FS
	if fsys == nil {
		if spec.Dir == "" {
			return sc, &SourceError{Source: spec.Name, Root: sc.Root, Err: errors.New("source has neither a folder nor a file system")}
		}
		root, err := os.OpenRoot(spec.Dir)
		if err != nil {
			if spec.Optional && errors.Is(err, fs.ErrNotExist) {
				return sc, nil
			}
			return sc, &SourceError{Source: spec.Name, Root: sc.Root, Err: fmt.Errorf("cannot open source folder: %w", err)}
		}
		fsys = root.FS()
	}
	maxDepth := spec.MaxDepth
	if maxDepth == 0 {
		maxDepth = DefaultMaxDepth
	}
	w := &sourceWalker{ctx: ctx, spec: spec, fsys: fsys, sc: sc, maxDepth: maxDepth,
		skillAt: map[string]string{}, toolAt: map[string]string{}, packAt: map[string]string{}}
	w.walk(".", 0, sourcePackName(sc.Root, spec.Dir))
	if err := ctx.Err(); err != nil {
		return sc, err
	}
	return sc, errors.Join(w.errs...)
}

// sourcePackName is the pack name of skills outside any pack: the source
// folder's name as a slug.
func sourcePackName(root, dir string) string {
	base := root
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			base = abs
		}
	}
	base = filepath.Base(filepath.Clean(base))
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(base) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if b.Len() > 0 && !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.TrimSuffix(b.String(), "-")
	if name == "" {
		return "local"
	}
	return name
}

type sourceWalker struct {
	ctx      context.Context
	spec     SourceSpec
	fsys     fs.FS
	sc       *SourceContents
	maxDepth int
	errs     []error
	// skillAt, toolAt and packAt hold the path of the first definition of
	// each name, to report duplicates.
	skillAt, toolAt, packAt map[string]string
}

func (w *sourceWalker) problem(err error) {
	if err == nil {
		return
	}
	// Report each joined problem on its own, so each prints with the root.
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			w.problem(e)
		}
		return
	}
	var se *SourceError
	var de *DuplicateError
	if errors.As(err, &se) || errors.As(err, &de) {
		w.errs = append(w.errs, err)
		return
	}
	w.errs = append(w.errs, &SourceError{Source: w.spec.Name, Root: w.sc.Root, Err: err})
}

func (w *sourceWalker) warn(format string, args ...any) {
	w.sc.Warnings = append(w.sc.Warnings, fmt.Sprintf(format, args...))
}

// walk searches dir, found depth folders below the root; pack is the name
// skills found here belong to.
func (w *sourceWalker) walk(dir string, depth int, pack string) {
	if w.ctx.Err() != nil {
		return
	}
	entries, err := fs.ReadDir(w.fsys, dir)
	if err != nil {
		w.problem(&ManifestError{File: dir, Msg: fmt.Sprintf("cannot read folder: %v", err)})
		return
	}
	has := map[string]fs.DirEntry{}
	for _, e := range entries {
		has[e.Name()] = e
	}
	if e, ok := has[ManifestFile]; ok && e.Type().IsRegular() {
		pack = w.loadPack(dir, pack)
	}
	_, upper := has[SkillFile]
	_, lower := has[skillFileLower]
	if upper || lower {
		if dir == "." {
			found := SkillFile
			if !upper {
				found = skillFileLower
			}
			w.problem(&ManifestError{File: found,
				Msg: fmt.Sprintf("a %s at the source root is not loaded; put each skill in its own folder named after it (skills/<name>/SKILL.md)", found)})
		} else {
			s, err := LoadSkillDir(w.fsys, dir)
			w.problem(err)
			w.addSkills(pack, s)
			return
		}
	}
	for _, e := range entries {
		name := e.Name()
		rel := path.Join(dir, name)
		if strings.HasPrefix(name, ".") {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			w.warn("%s: symbolic link not followed; skills are read only from files and folders inside the source (copy it in, or add its target as an installed source)", w.sc.Path(rel))
			continue
		}
		if e.IsDir() {
			if skippedDirs[name] || (w.maxDepth >= 0 && depth+1 > w.maxDepth) {
				continue
			}
			w.walk(rel, depth+1, pack)
			continue
		}
		if !e.Type().IsRegular() {
			continue
		}
		switch {
		case isPlaybookFile(name):
			w.loadPlaybook(rel, pack)
		case IsSkillFile(name) || name == ManifestFile:
		case strings.HasSuffix(name, ".md") && !strings.EqualFold(name, "README.md") &&
			(dir == "." || path.Base(dir) == "skills") && w.hasFrontmatter(rel):
			s, err := LoadSkillFile(w.fsys, rel)
			w.problem(err)
			w.addSkills(pack, s)
		}
	}
}

func isPlaybookFile(name string) bool {
	for _, ext := range playbookExts {
		if strings.HasSuffix(name, ext) && len(name) > len(ext) {
			return true
		}
	}
	return false
}

// hasFrontmatter tells whether a file's first line is "---".
func (w *sourceWalker) hasFrontmatter(rel string) bool {
	f, err := w.fsys.Open(rel)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 8)
	n, _ := io.ReadFull(f, buf)
	line := strings.TrimPrefix(string(buf[:n]), "\ufeff")
	line, _, _ = strings.Cut(line, "\n")
	return strings.TrimRight(line, " \t\r") == "---"
}

// loadPack loads the pack in dir and returns the name skills below it
// belong to.
func (w *sourceWalker) loadPack(dir, outer string) string {
	sub := w.fsys
	if dir != "." {
		var err error
		if sub, err = fs.Sub(w.fsys, dir); err != nil {
			w.problem(err)
			return outer
		}
	}
	p, err := Load(sub, dir, w.spec.Name)
	if err != nil {
		w.problem(err)
		return w.fallbackPackName(dir)
	}
	p.Dir = w.sc.Path(dir)
	manifest := path.Join(dir, ManifestFile)
	if first, dup := w.packAt[p.Name]; dup {
		w.errs = append(w.errs, &DuplicateError{Kind: "pack", Name: p.Name, Source: w.spec.Name, First: first, Second: w.sc.Path(manifest)})
		return p.Name
	}
	w.packAt[p.Name] = w.sc.Path(manifest)
	for _, m := range p.Modules {
		for _, t := range m.Tools {
			where := w.sc.Path(manifest)
			if first, dup := w.toolAt[t.Name]; dup {
				w.errs = append(w.errs, &DuplicateError{Kind: "tool", Name: t.Name, Source: w.spec.Name, First: first, Second: where})
				continue
			}
			w.toolAt[t.Name] = where
		}
	}
	w.sc.Packs = append(w.sc.Packs, p)
	return p.Name
}

// fallbackPackName names the pack of a folder whose pack.yaml did not
// load: its name field when that much can be read, else the folder name.
func (w *sourceWalker) fallbackPackName(dir string) string {
	data, err := fs.ReadFile(w.fsys, path.Join(dir, ManifestFile))
	if err == nil && len(data) <= maxManifestBytes {
		var head struct {
			Name string `yaml:"name"`
		}
		if yaml.Unmarshal(data, &head) == nil && nameRE.MatchString(head.Name) {
			return head.Name
		}
	}
	return sourcePackName(path.Base(dir), "")
}

func (w *sourceWalker) loadPlaybook(rel, pack string) {
	f, err := w.fsys.Open(rel)
	if err != nil {
		w.problem(&ManifestError{File: rel, Msg: fmt.Sprintf("cannot read: %v", err)})
		return
	}
	// One byte past the cap is enough for ParsePlaybook to refuse the file.
	data, err := io.ReadAll(io.LimitReader(f, maxPlaybookBytes+1))
	f.Close()
	if err != nil {
		w.problem(&ManifestError{File: rel, Msg: fmt.Sprintf("cannot read: %v", err)})
		return
	}
	skills, err := ParsePlaybook(rel, data, pack)
	w.problem(err)
	w.addSkills(pack, skills...)
}

// addSkills records skills found in this source, keeping the first of
// each name.
func (w *sourceWalker) addSkills(pack string, skills ...*SkillSpec) {
	for _, s := range skills {
		if s == nil {
			continue
		}
		if s.Pack == "" {
			s.Pack = pack
		}
		s.Source = w.spec.Name
		where := w.sc.Path(s.File)
		if s.Kind == KindPlaybook && s.Line > 1 {
			where = fmt.Sprintf("%s:%d", where, s.Line)
		}
		if first, dup := w.skillAt[s.Name]; dup {
			w.errs = append(w.errs, &DuplicateError{Kind: "skill", Name: s.Name, Source: w.spec.Name, First: first, Second: where})
			continue
		}
		w.skillAt[s.Name] = where
		w.sc.Skills = append(w.sc.Skills, s)
	}
}
