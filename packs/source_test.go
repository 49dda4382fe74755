package packs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// srcSkillMD is a minimal valid SKILL.md for a skill named name.
func srcSkillMD(name, desc string, extra ...string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: " + desc + "\n" +
		strings.Join(extra, "\n") + "---\n\nDo the " + name + " thing.\n")}
}

// srcPlaybook is a minimal valid *.skill.yaml.
func srcPlaybook(trigger string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("trigger: " + trigger + "\nsteps:\n  - do it\n")}
}

// srcPackYAML is a pack manifest with one module m.wasm exporting tools.
func srcPackYAML(name string, tools ...string) *fstest.MapFile {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nversion: 1.0.0\nmodules:\n  - name: m\n    path: m.wasm\n    tools:\n", name)
	for _, t := range tools {
		desc := t
		t, d, ok := strings.Cut(t, "=")
		if ok {
			desc = d
		}
		fmt.Fprintf(&b, "      - name: %s\n        description: %s tool\n", t, desc)
	}
	return &fstest.MapFile{Data: []byte(b.String())}
}

var srcWasm = &fstest.MapFile{Data: []byte("\x00asm\x01\x00\x00\x00")}

// srcSummary is a readable record of what a source or catalog holds.
type srcSummary struct {
	Skills   []string `json:"skills,omitempty"`
	Packs    []string `json:"packs,omitempty"`
	Tools    []string `json:"tools,omitempty"`
	Problems []string `json:"problems,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

func summarizeSource(sc *SourceContents, err error) srcSummary {
	var s srcSummary
	for _, sk := range sc.Skills {
		s.Skills = append(s.Skills, fmt.Sprintf("%s %s pack=%s source=%s file=%s", sk.Name, sk.Kind, sk.Pack, sk.Source, sk.File))
	}
	for _, p := range sc.Packs {
		s.Packs = append(s.Packs, fmt.Sprintf("%s source=%s dir=%s", p.Name, p.Source, p.Dir))
	}
	s.Problems = srcErrLines(err)
	s.Warnings = sc.Warnings
	return s
}

func srcErrLines(err error) []string {
	if err == nil {
		return nil
	}
	lines := strings.Split(err.Error(), "\n")
	sort.Strings(lines)
	return lines
}

func TestLoadSourceKinds(t *testing.T) {
	fsys := fstest.MapFS{
		"skills/pdf/SKILL.md":                    srcSkillMD("pdf", "Read PDFs."),
		"skills/pdf/scripts/extract.skill.yaml":  srcPlaybook("inside a skill folder: a resource, not a skill"),
		"skills/pdf/references/guide.md":         {Data: []byte("---\nname: guide\n---\n")},
		"skills/notes.md":                        srcSkillMD("notes", "Take notes."),
		"skills/README.md":                       srcSkillMD("readme", "Not a skill."),
		"skills/plain.md":                        {Data: []byte("# Just Markdown\n")},
		"other/flat.md":                          srcSkillMD("flat", "Not in a skills folder."),
		"top.md":                                 srcSkillMD("top", "At the root."),
		"playbooks/login.skill.yaml":             srcPlaybook("the user must log in"),
		"tools/pack.yaml":                        srcPackYAML("webtools", "fetch", "parse"),
		"tools/m.wasm":                           srcWasm,
		"tools/skills/fetch-page/SKILL.md":       srcSkillMD("fetch-page", "Fetch a page."),
		"tools/recipes/api.skill.json":           {Data: []byte(`{"trigger": "an API pages", "steps": ["loop"]}`)},
		".git/hooks/x.skill.yaml":                srcPlaybook("hidden"),
		".hidden/SKILL.md":                       srcSkillMD("hidden", "Hidden."),
		"node_modules/dep/y.skill.yaml":          srcPlaybook("vendored"),
		"__pycache__/z.skill.yaml":               srcPlaybook("cache"),
		"docs/guide.skill.md.bak":                srcPlaybook("not a skill file"),
		"playbooks/.skill.yaml":                  srcPlaybook("no stem"),
		"playbooks/notes.txt":                    {Data: []byte("text")},
		"tools/skills/fetch-page/scripts/run.sh": {Data: []byte("echo")},
	}
	sc, err := LoadSource(context.Background(), SourceSpec{Name: SourceWorkspace, FS: fsys, Root: "/proj/skills"})
	want := srcSummary{
		Skills: []string{
			"pack.skills.login playbook pack=skills source=workspace file=playbooks/login.skill.yaml",
			"notes agent pack=skills source=workspace file=skills/notes.md",
			"pdf agent pack=skills source=workspace file=skills/pdf/SKILL.md",
			"pack.webtools.api playbook pack=webtools source=workspace file=tools/recipes/api.skill.json",
			"fetch-page agent pack=webtools source=workspace file=tools/skills/fetch-page/SKILL.md",
			"top agent pack=skills source=workspace file=top.md",
		},
		Packs: []string{"webtools source=workspace dir=/proj/skills/tools"},
	}
	if diff := cmp.Diff(want, summarizeSource(sc, err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoadSourceMaxDepth(t *testing.T) {
	fsys := fstest.MapFS{
		"d1/SKILL.md":                       srcSkillMD("d1", "Depth 1."),
		"a/b/d3/SKILL.md":                   srcSkillMD("d3", "Depth 3."),
		"a/b/c/d4/SKILL.md":                 srcSkillMD("d4", "Depth 4."),
		"a/b/c/d/e/f/g/d8/SKILL.md":         srcSkillMD("d8", "Depth 8."),
		"a/b/c/deep.skill.yaml":             srcPlaybook("in a folder at depth 3"),
		"a/b/c/d/deeper.skill.yaml":         srcPlaybook("in a folder at depth 4"),
		"a/b/c/d/e/f/g/h/deepest.skill.yml": srcPlaybook("in a folder at depth 8"),
	}
	names := func(depth int) []string {
		sc, err := LoadSource(context.Background(), SourceSpec{Name: SourceUser, FS: fsys, MaxDepth: depth})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range sc.Skills {
			out = append(out, s.Name)
		}
		sort.Strings(out)
		return out
	}
	tests := []struct {
		depth int
		want  []string
	}{
		{0, []string{"d1", "d3", "pack.user.deep"}}, // 0 is DefaultMaxDepth, 3
		{DefaultMaxDepth, []string{"d1", "d3", "pack.user.deep"}},
		{1, []string{"d1"}},
		{4, []string{"d1", "d3", "d4", "pack.user.deep", "pack.user.deeper"}},
		{UnlimitedDepth, []string{"d1", "d3", "d4", "d8", "pack.user.deep", "pack.user.deeper", "pack.user.deepest"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, names(tt.depth)); diff != "" {
			t.Errorf("max depth %d (-want +got):\n%s", tt.depth, diff)
		}
	}
}

func TestLoadSourceDuplicates(t *testing.T) {
	fsys := fstest.MapFS{
		"a/pdf/SKILL.md":      srcSkillMD("pdf", "First."),
		"b/pdf/SKILL.md":      srcSkillMD("pdf", "Second."),
		"skills/pdf.md":       srcSkillMD("pdf", "Third, flat."),
		"p1/pack.yaml":        srcPackYAML("one", "fetch", "only-one"),
		"p1/m.wasm":           srcWasm,
		"p2/pack.yaml":        srcPackYAML("two", "fetch"),
		"p2/m.wasm":           srcWasm,
		"p3/pack.yaml":        srcPackYAML("one", "other"),
		"p3/m.wasm":           srcWasm,
		"x/login.skill.yaml":  {Data: []byte("name: login\ntrigger: t\nsteps: [a]\n")},
		"y/login.skill.jsonl": {Data: []byte(`{"name": "login", "trigger": "t", "steps": ["a"]}` + "\n")},
	}
	sc, err := LoadSource(context.Background(), SourceSpec{Name: SourceInstalled, FS: fsys, Root: "/opt/skills"})
	want := []string{
		`pack "one" is defined twice in the installed source: /opt/skills/p1/pack.yaml and /opt/skills/p3/pack.yaml; rename one (the first is used)`,
		`skill "login" is defined twice in the installed source: /opt/skills/x/login.skill.yaml and /opt/skills/y/login.skill.jsonl; rename one (the first is used)`,
		`skill "pdf" is defined twice in the installed source: /opt/skills/a/pdf/SKILL.md and /opt/skills/b/pdf/SKILL.md; rename one (the first is used)`,
		`skill "pdf" is defined twice in the installed source: /opt/skills/a/pdf/SKILL.md and /opt/skills/skills/pdf.md; rename one (the first is used)`,
		`tool "fetch" is defined twice in the installed source: /opt/skills/p1/pack.yaml and /opt/skills/p2/pack.yaml; rename one (the first is used)`,
	}
	if diff := cmp.Diff(want, srcErrLines(err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !errors.Is(err, ErrDuplicateName) {
		t.Errorf("%v does not match ErrDuplicateName", err)
	}
	var de *DuplicateError
	if !errors.As(err, &de) {
		t.Fatalf("no *DuplicateError in %v", err)
	}
	// The first of each name is kept.
	for _, s := range sc.Skills {
		if s.Name == "pdf" && s.Description != "First." {
			t.Errorf("kept %q", s.Description)
		}
	}
	// In a catalog, the duplicate does not override the first either.
	cat, _ := LoadCatalog(context.Background(), []SourceSpec{{Name: SourceInstalled, FS: fsys, Root: "/opt/skills"}}, nil)
	if e, ok := cat.Tool("fetch"); !ok || e.Pack.Name != "one" {
		t.Errorf("tool fetch from %v", e)
	}
	if len(cat.Overrides) != 0 {
		t.Errorf("duplicates reported as overrides: %v", cat.Overrides)
	}
}

// Problems in one place do not hide the good skills elsewhere; every
// problem is listed with the source root in front of its file.
func TestLoadSourceProblems(t *testing.T) {
	fsys := fstest.MapFS{
		"good/SKILL.md":         srcSkillMD("good", "Fine."),
		"bad-name/SKILL.md":     srcSkillMD("other-name", "Name differs from folder."),
		"broken/pack.yaml":      {Data: []byte("name: broken\nmodules: []\n")},
		"broken/ok.skill.yaml":  srcPlaybook("still loads, in pack broken"),
		"bad.skill.yaml":        {Data: []byte("steps: [a]\n")},
		"lines.skill.jsonl":     {Data: []byte(`{"title": "Good", "trigger": "t", "steps": ["a"]}` + "\n" + `{"title": "Bad"}` + "\n")},
		"SKILL.md":              srcSkillMD("root", "At the root."),
		"skills/no-front.md":    {Data: []byte("plain\n")},
		"skills/bad-front.md":   {Data: []byte("---\nname: [unclosed\n---\n")},
		"skills/good-flat.md":   srcSkillMD("good-flat", "Fine."),
		"skills/README.md":      {Data: []byte("---\nbroken: [\n---\n")},
		"deep/er/er/x/SKILL.md": {Data: []byte("too deep to matter: not read")},
	}
	sc, err := LoadSource(context.Background(), SourceSpec{Name: SourceUser, FS: fsys, Root: "/home/u/.skillhost/skills"})
	var names []string
	for _, s := range sc.Skills {
		names = append(names, s.Name+"@"+s.Pack)
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"good-flat@skills", "good@skills", "pack.broken.ok@broken", "pack.skills.lines.good@skills"}, names); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	lines := srcErrLines(err)
	for _, want := range []string{
		"/home/u/.skillhost/skills/SKILL.md: a SKILL.md at the source root is not loaded",
		"/home/u/.skillhost/skills/bad-name/SKILL.md:",
		"/home/u/.skillhost/skills/broken/pack.yaml:",
		"/home/u/.skillhost/skills/bad.skill.yaml:",
		"/home/u/.skillhost/skills/lines.skill.jsonl:2:",
		"/home/u/.skillhost/skills/skills/bad-front.md:",
	} {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, want)
		}
		if !found {
			t.Errorf("no problem starting %q in:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	if len(lines) != 7 { // lines.skill.jsonl:2 has two
		t.Errorf("%d problems, want 7:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if !errors.Is(err, ErrInvalidManifest) {
		t.Errorf("problems do not match ErrInvalidManifest")
	}
	var se *SourceError
	if !errors.As(err, &se) || se.Source != SourceUser || se.Root != "/home/u/.skillhost/skills" {
		t.Errorf("not a *SourceError: %#v", se)
	}
	var me *ManifestError
	if !errors.As(err, &me) || strings.HasPrefix(me.File, "/") {
		t.Errorf("the *ManifestError inside should keep its file relative to the source: %+v", me)
	}
}

func TestLoadSourceDisk(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	srcWrite(t, outside, "secret/SKILL.md", srcSkillMD("secret", "Outside the source.").Data)
	srcWrite(t, outside, "leak.skill.yaml", srcPlaybook("outside").Data)
	srcWrite(t, root, "ok/SKILL.md", srcSkillMD("ok", "Inside.").Data)
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "secret")); err != nil {
		t.Skip("no symlinks:", err)
	}
	if err := os.Symlink(filepath.Join(outside, "leak.skill.yaml"), filepath.Join(root, "leak.skill.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ok", filepath.Join(root, "inside-link")); err != nil {
		t.Fatal(err)
	}
	sc, err := LoadSource(context.Background(), DirSource(SourceWorkspace, root))
	want := srcSummary{
		Skills: []string{"ok agent pack=" + sourcePackName(root, root) + " source=workspace file=ok/SKILL.md"},
		Warnings: []string{
			root + "/inside-link: symbolic link not followed; skills are read only from files and folders inside the source (copy it in, or add its target as an installed source)",
			root + "/leak.skill.yaml: symbolic link not followed; skills are read only from files and folders inside the source (copy it in, or add its target as an installed source)",
			root + "/secret: symbolic link not followed; skills are read only from files and folders inside the source (copy it in, or add its target as an installed source)",
		},
	}
	if diff := cmp.Diff(want, summarizeSource(sc, err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// A missing folder is an empty source when optional, a problem if not.
	missing := filepath.Join(root, "missing")
	if sc, err := LoadSource(context.Background(), SourceSpec{Name: SourceUser, Dir: missing, Optional: true}); err != nil || len(sc.Skills) != 0 {
		t.Errorf("optional missing folder: %v", err)
	}
	_, err = LoadSource(context.Background(), SourceSpec{Name: SourceInstalled, Dir: missing})
	if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), missing+": cannot open source folder") {
		t.Errorf("required missing folder: %v", err)
	}
}

func srcWrite(t *testing.T, root, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSourcePackName(t *testing.T) {
	for _, tt := range []struct{ root, dir, want string }{
		{"/home/u/.skillhost/skills", "", "skills"},
		{"/x/My Skills!", "", "my-skills"},
		{"embedded:bundled", "", "embedded-bundled"},
		{"/", "", "local"},
		{"ignored", "/srv/Team_Packs", "team-packs"},
	} {
		if got := sourcePackName(tt.root, tt.dir); got != tt.want {
			t.Errorf("sourcePackName(%q, %q) = %q, want %q", tt.root, tt.dir, got, tt.want)
		}
	}
}

// The bundled source holds the core pack's tools and the bundled skills,
// which belong to the core pack, and loads without a problem.
func TestBundledSource(t *testing.T) {
	sc, err := LoadSource(context.Background(), BundledSource())
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Packs) != 1 || sc.Packs[0].Name != "core" || sc.Packs[0].Source != SourceBundled {
		t.Fatalf("packs %v", sc.Packs)
	}
	kinds := map[SkillKind]int{}
	for _, s := range sc.Skills {
		kinds[s.Kind]++
		if s.Pack != "core" || s.Source != SourceBundled || s.ContentHash == "" {
			t.Errorf("bundled skill %s: pack %q source %q hash %q", s.Name, s.Pack, s.Source, s.ContentHash)
		}
	}
	if kinds[KindAgent] == 0 || kinds[KindPlaybook] == 0 {
		t.Errorf("bundled skills by kind: %v", kinds)
	}
	if _, ok := srcFind(sc.Skills, "web-research"); !ok {
		t.Errorf("web-research not bundled")
	}
}

func srcFind(skills []*SkillSpec, name string) (*SkillSpec, bool) {
	for _, s := range skills {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

func TestSourceErrorFormat(t *testing.T) {
	for _, tt := range []struct {
		err  *SourceError
		want string
	}{
		{&SourceError{Source: "user", Root: "/r", Err: &ManifestError{File: "a/SKILL.md", Line: 3, Field: "name", Msg: "bad"}}, "/r/a/SKILL.md:3: name: bad"},
		{&SourceError{Source: "user", Root: "/r/", Err: &ManifestError{File: "x.md", Msg: "bad"}}, "/r/x.md: bad"},
		{&SourceError{Source: "user", Root: "/r", Err: errors.New("cannot open")}, "/r: cannot open"},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// The golden case: a tree on disk with every kind of entry, as the
// catalog sees it.
func TestSourcesGolden(t *testing.T) {
	entries, err := os.ReadDir("../testdata/packs/sources")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join("../testdata/packs/sources", e.Name())
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			var specs []SourceSpec
			for _, src := range []string{SourceBundled, SourceInstalled, SourceUser, SourceWorkspace} {
				d := filepath.Join(dir, src)
				if _, err := os.Stat(d); err == nil {
					specs = append(specs, SourceSpec{Name: src, Dir: d, Root: src})
				}
			}
			var opts *CatalogOptions
			if data, err := os.ReadFile(filepath.Join(dir, ConfigFile)); err == nil {
				cfg, err := ParseConfig(ConfigFile, data)
				if err != nil {
					t.Fatal(err)
				}
				opts = &CatalogOptions{Config: cfg}
			}
			cat, err := LoadCatalog(context.Background(), specs, opts)
			got := summarizeCatalog(cat, err)
			out, _ := json.MarshalIndent(got, "", "  ")
			out = append(out, '\n')
			golden := dir + ".golden.json"
			compareGolden(t, golden, string(out))
		})
	}
}

type catalogSummary struct {
	Skills    []string   `json:"skills"`
	Tools     []string   `json:"tools"`
	Overrides []string   `json:"overrides,omitempty"`
	Disabled  []Disabled `json:"disabled,omitempty"`
	Problems  []string   `json:"problems,omitempty"`
	Warnings  []string   `json:"warnings,omitempty"`
}

func summarizeCatalog(c *Catalog, err error) catalogSummary {
	var s catalogSummary
	for _, e := range c.Skills() {
		s.Skills = append(s.Skills, fmt.Sprintf("%s %s pack=%s from %s %s", e.Skill.Name, e.Skill.Kind, e.Skill.Pack, e.Source, e.Path))
	}
	for _, e := range c.Tools() {
		s.Tools = append(s.Tools, fmt.Sprintf("%s pack=%s from %s %s: %s", e.Tool.Name, e.Pack.Name, e.Source, e.Path, e.Tool.Description))
	}
	for _, o := range c.Overrides {
		s.Overrides = append(s.Overrides, o.String())
	}
	s.Disabled = c.Disabled
	s.Problems = srcErrLines(err)
	s.Warnings = c.Warnings
	return s
}

// TestLoadSourceLowerCaseSkillFile checks that a skill folder whose
// instructions file is skill.md is found as that folder's skill, and that
// a skill.md at the source root is reported, not read as a flat skill
// named "skill".
func TestLoadSourceLowerCaseSkillFile(t *testing.T) {
	fsys := fstest.MapFS{
		"greeter/skill.md": {Data: []byte("---\nname: greeter\ndescription: Greets.\n---\nSay hello.\n")},
		"skill.md":         {Data: []byte("---\ndescription: not a flat skill\n---\nbody\n")},
	}
	sc, err := LoadSource(context.Background(), SourceSpec{Name: SourceWorkspace, FS: fsys, Root: "ws"})
	want := "ws/skill.md: a skill.md at the source root is not loaded; put each skill in its own folder named after it (skills/<name>/SKILL.md)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if len(sc.Skills) != 1 || sc.Skills[0].Name != "greeter" || sc.Skills[0].File != "greeter/skill.md" {
		t.Errorf("skills %+v, want greeter from greeter/skill.md", sc.Skills)
	}
}
