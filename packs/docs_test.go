package packs_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/internal/evalset"
	"github.com/skillhost/skillhost/packs"
	// The examples are read as skillhost reads them: [server] and
	// [tenants] by their owner.
	_ "github.com/skillhost/skillhost/server/serveconf"
)

// The user documentation in docs/*.md shows example files. Each one is a
// fenced block right after an HTML comment naming it:
//
//	<!-- file: skills/pdf-tools/SKILL.md -->
//
// with the optional flags "invalid" (the example is broken on purpose and
// must fail to parse) and "warnings" (it parses, with warnings). A block
// after <!-- validate-output --> is pasted `skillhost validate` output: its
// first line is the command, and the problems it lists must be exactly the
// problems the examples it names have today.

// docsDir is the documentation folder, seen from the packs package.
const docsDir = "../docs"

// docExample is one example file of the docs.
type docExample struct {
	doc      string // the Markdown file it is in
	line     int    // the line of its <!-- file: --> comment
	path     string // slash-separated, relative to the examples root
	invalid  bool
	warnings bool
	body     []byte
}

func (e *docExample) String() string { return fmt.Sprintf("%s:%d: example %s", e.doc, e.line, e.path) }

// docOutput is one pasted `skillhost validate` run.
type docOutput struct {
	doc   string
	line  int
	args  []string // the PATH arguments of the command
	lines []string // what it printed, after the command line
}

var (
	fileMarkerRE = regexp.MustCompile(`^<!--\s*file:\s*(\S+)((?:\s+[a-z]+)*)\s*-->\s*$`)
	outputMarker = "<!-- validate-output -->"
	problemsRE   = regexp.MustCompile(`^skillhost: (\d+) problem\(s\) found$`)
)

// fenceOpen returns the fence a line opens (``` or ~~~, three or more), or "".
func fenceOpen(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// fenceCloses reports whether line closes a block opened with fence.
func fenceCloses(line, fence string) bool {
	t := strings.TrimRight(line, " \t")
	return strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == ""
}

// parseDoc finds the examples and pasted outputs of one Markdown file.
func parseDoc(doc string, data []byte) ([]*docExample, []*docOutput, error) {
	lines := strings.Split(string(data), "\n")
	var examples []*docExample
	var outputs []*docOutput
	// block returns the lines of the fenced block opening at lines[i] and
	// the index of its closing line.
	block := func(i int) ([]string, int, error) {
		if i >= len(lines) {
			return nil, 0, fmt.Errorf("%s:%d: marker at the end of the file; expected a fenced block after it", doc, i)
		}
		fence := fenceOpen(lines[i])
		if fence == "" {
			return nil, 0, fmt.Errorf("%s:%d: expected a fenced block (``` or ~~~) right after the marker, got %q", doc, i+1, lines[i])
		}
		for j := i + 1; j < len(lines); j++ {
			if fenceCloses(lines[j], fence) {
				return lines[i+1 : j], j, nil
			}
		}
		return nil, 0, fmt.Errorf("%s:%d: fenced block is never closed", doc, i+1)
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := fileMarkerRE.FindStringSubmatch(line); m != nil {
			ex := &docExample{doc: doc, line: i + 1, path: m[1]}
			for _, flag := range strings.Fields(m[2]) {
				switch flag {
				case "invalid":
					ex.invalid = true
				case "warnings":
					ex.warnings = true
				default:
					return nil, nil, fmt.Errorf("%s:%d: unknown example flag %q; expected invalid or warnings", doc, i+1, flag)
				}
			}
			if ex.invalid && ex.warnings {
				return nil, nil, fmt.Errorf("%s:%d: an example is either invalid or loads with warnings, not both", doc, i+1)
			}
			if !fs.ValidPath(ex.path) || ex.path == "." {
				return nil, nil, fmt.Errorf("%s:%d: example path %q must be relative, clean and slash-separated", doc, i+1, ex.path)
			}
			body, end, err := block(i + 1)
			if err != nil {
				return nil, nil, err
			}
			ex.body = []byte(strings.Join(body, "\n") + "\n")
			examples = append(examples, ex)
			i = end
			continue
		}
		if strings.TrimSpace(line) == outputMarker {
			body, end, err := block(i + 1)
			if err != nil {
				return nil, nil, err
			}
			if len(body) == 0 || !strings.HasPrefix(body[0], "$ skillhost validate ") {
				return nil, nil, fmt.Errorf("%s:%d: a validate-output block starts with the command, \"$ skillhost validate PATH...\"", doc, i+2)
			}
			outputs = append(outputs, &docOutput{doc: doc, line: i + 2,
				args: strings.Fields(strings.TrimPrefix(body[0], "$ skillhost validate ")), lines: body[1:]})
			i = end
			continue
		}
		if fence := fenceOpen(line); fence != "" {
			// Skip other code blocks: a marker inside one is an example of
			// the docs' own syntax, not an example file.
			for i++; i < len(lines) && !fenceCloses(lines[i], fence); i++ {
			}
		}
	}
	return examples, outputs, nil
}

// leaves lists the leaves of an errors.Join tree as strings.
func leaves(err error) []string {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []string{err.Error()}
}

// checked is what parsing one example gave.
type checked struct {
	errs, warnings []string
	catalog        []evalset.Tool
	queries        []evalset.Query
}

// packOf names the pack a playbook example belongs to, as a source would:
// the name of the nearest pack.yaml example above it, else the top folder
// of its path (the source folder).
func packOf(p string, manifests map[string]string) string {
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if name, ok := manifests[dir]; ok {
			return name
		}
	}
	top, _, _ := strings.Cut(p, "/")
	return top
}

var playbookSuffixes = []string{".skill.md", ".skill.yaml", ".skill.yml", ".skill.json", ".skill.jsonl"}

// checkExample parses ex, written under root, with the packs function its
// name calls for.
func checkExample(root string, ex *docExample, manifests map[string]string) (checked, error) {
	var c checked
	base := path.Base(ex.path)
	fsys := os.DirFS(root)
	collect := func(skills []*packs.SkillSpec, err error) {
		c.errs = leaves(err)
		for _, s := range skills {
			if s != nil {
				c.warnings = append(c.warnings, s.Warnings...)
			}
		}
	}
	switch {
	case base == packs.ManifestFile:
		_, err := packs.Parse(ex.body, ex.path)
		c.errs = leaves(err)
	case base == packs.SkillFile:
		s, err := packs.LoadSkillDir(fsys, path.Dir(ex.path))
		collect([]*packs.SkillSpec{s}, err)
	case slices.ContainsFunc(playbookSuffixes, func(s string) bool { return strings.HasSuffix(base, s) }):
		skills, err := packs.ParsePlaybook(ex.path, ex.body, packOf(ex.path, manifests))
		collect(skills, err)
	case strings.HasSuffix(base, ".md"):
		s, err := packs.LoadSkillFile(fsys, ex.path)
		collect([]*packs.SkillSpec{s}, err)
	case strings.HasSuffix(base, ".toml"):
		_, err := packs.ParseConfig(ex.path, ex.body)
		c.errs = leaves(err)
	case strings.HasSuffix(base, ".jsonl") && (strings.HasPrefix(base, "tools") || strings.HasPrefix(base, "catalog")):
		var err error
		c.catalog, err = evalset.LoadCatalog(bytes.NewReader(ex.body))
		c.errs = leaves(err)
	case strings.HasSuffix(base, ".jsonl") && strings.HasPrefix(base, "queries"):
		var err error
		c.queries, err = evalset.LoadQueries(bytes.NewReader(ex.body))
		c.errs = leaves(err)
	default:
		return c, errors.New("no parser for this file name; name it pack.yaml, SKILL.md, *.md, *.skill.{md,yaml,yml,json,jsonl}, *.toml, tools*.jsonl or queries*.jsonl")
	}
	return c, nil
}

// covers reports whether the validate argument arg names example path p.
func covers(arg, p string) bool {
	arg = strings.TrimSuffix(path.Clean(arg), "/")
	return arg == "." || p == arg || strings.HasPrefix(p, arg+"/")
}

// TestDocsExamples writes every example file of docs/*.md into one temp
// folder, parses each with the packs function its name calls for, and
// checks that it loads (without warnings unless flagged "warnings") or,
// when flagged "invalid", that it fails. Pasted validate output must list
// exactly the problems of the examples it names.
func TestDocsExamples(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(docsDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatalf("no Markdown files in %s", docsDir)
	}
	root := t.TempDir()
	// Configs expand ~; keep that inside the test.
	t.Setenv("HOME", root)

	var examples []*docExample
	var outputs []*docOutput
	seen := map[string]*docExample{}
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		exs, outs, err := parseDoc(filepath.Base(doc), data)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range exs {
			if prev, dup := seen[ex.path]; dup {
				t.Fatalf("%s: the same path is already an example at %s:%d; give each example its own path", ex, prev.doc, prev.line)
			}
			seen[ex.path] = ex
		}
		examples = append(examples, exs...)
		outputs = append(outputs, outs...)
	}
	if len(examples) < 10 {
		t.Fatalf("found only %d examples in %s; is the <!-- file: PATH --> marker still recognised?", len(examples), docsDir)
	}
	t.Logf("%d examples and %d validate outputs in %d files", len(examples), len(outputs), len(docs))
	for _, ex := range examples {
		full := filepath.Join(root, filepath.FromSlash(ex.path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, ex.body, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Pack names, for the playbook skills below each pack.yaml.
	manifests := map[string]string{}
	for _, ex := range examples {
		if path.Base(ex.path) == packs.ManifestFile && !ex.invalid {
			if p, err := packs.Parse(ex.body, ex.path); err == nil {
				manifests[path.Dir(ex.path)] = p.Name
			}
		}
	}

	results := map[*docExample]checked{}
	var catalog []evalset.Tool
	var queries []evalset.Query
	for _, ex := range examples {
		c, err := checkExample(root, ex, manifests)
		if err != nil {
			t.Errorf("%s: %v", ex, err)
			continue
		}
		results[ex] = c
		catalog, queries = append(catalog, c.catalog...), append(queries, c.queries...)
		switch {
		case ex.invalid && len(c.errs) == 0:
			t.Errorf("%s is marked invalid but parses without error; fix the example or drop the flag", ex)
		case !ex.invalid && len(c.errs) > 0:
			t.Errorf("%s does not parse:\n  %s", ex, strings.Join(c.errs, "\n  "))
		case !ex.invalid && ex.warnings && len(c.warnings) == 0:
			t.Errorf("%s is marked warnings but loads without any", ex)
		case !ex.invalid && !ex.warnings && len(c.warnings) > 0:
			t.Errorf("%s loads with warnings (mark it warnings if they are meant):\n  %s", ex, strings.Join(c.warnings, "\n  "))
		}
	}
	if len(catalog) > 0 || len(queries) > 0 {
		if err := evalset.Validate(catalog, queries); err != nil {
			t.Errorf("the eval examples do not fit together: %v", err)
		}
	}

	for _, out := range outputs {
		checkOutput(t, out, examples, results)
	}
}

// checkOutput compares one pasted validate run with the examples it names.
func checkOutput(t *testing.T, out *docOutput, examples []*docExample, results map[*docExample]checked) {
	t.Helper()
	where := fmt.Sprintf("%s:%d", out.doc, out.line)
	var want, got, warnings []string
	for _, arg := range out.args {
		if !slices.ContainsFunc(examples, func(ex *docExample) bool { return covers(arg, ex.path) }) {
			t.Errorf("%s: the command names %s, which holds no example of the docs", where, arg)
		}
	}
	for _, ex := range examples {
		if !slices.ContainsFunc(out.args, func(a string) bool { return covers(a, ex.path) }) {
			continue
		}
		if ex.invalid {
			want = append(want, results[ex].errs...)
		}
		warnings = append(warnings, results[ex].warnings...)
	}
	problems := -1
	var shown []string
	for _, line := range out.lines {
		switch {
		case line == "" || strings.HasPrefix(line, "exit status:"):
		case strings.HasPrefix(line, "ok "):
			p, _, _ := strings.Cut(strings.TrimPrefix(line, "ok "), ":")
			for _, ex := range examples {
				if ex.invalid && covers(p, ex.path) {
					t.Errorf("%s: %q says ok, but it holds the invalid example %s", where, line, ex.path)
				}
			}
		case strings.HasPrefix(line, "warning: "):
			w := strings.TrimPrefix(line, "warning: ")
			shown = append(shown, w)
			// Warnings name files from the folder validate was given or
			// from the skill folder's parent; the examples from the root.
			if !slices.ContainsFunc(warnings, func(have string) bool { return have == w || strings.HasSuffix(have, "/"+w) }) {
				t.Errorf("%s: the docs show %q, which the examples no longer give; their warnings are:\n  %s", where, line, strings.Join(warnings, "\n  "))
			}
		case problemsRE.MatchString(line):
			problems, _ = strconv.Atoi(problemsRE.FindStringSubmatch(line)[1])
		default:
			got = append(got, line)
		}
	}
	for _, have := range warnings {
		if !slices.ContainsFunc(shown, func(w string) bool { return have == w || strings.HasSuffix(have, "/"+w) }) {
			t.Errorf("%s: the examples it names warn %q, which the pasted output does not show", where, have)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: pasted validate output differs from what the examples give today (-today +docs):\n%s", where, diff)
	}
	if problems >= 0 && problems != len(got) {
		t.Errorf("%s: the output says %d problem(s) but lists %d", where, problems, len(got))
	}
	if len(want) > 0 && problems < 0 {
		t.Errorf("%s: the output lists problems but not the closing \"skillhost: N problem(s) found\" line", where)
	}
}
