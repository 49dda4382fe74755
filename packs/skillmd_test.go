package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

const skillmdTestdata = "../testdata/packs/skillmd"

// loadCase loads every skill of one golden case folder: each folder in it
// is a skill folder, each .md file a flat skill.
func loadCase(t *testing.T, dir string) []any {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(dir)
	var out []any
	for _, e := range entries {
		var s *SkillSpec
		var err error
		switch {
		case e.IsDir():
			s, err = LoadSkillDir(fsys, e.Name())
		case strings.HasSuffix(e.Name(), ".md"):
			s, err = LoadSkillFile(fsys, e.Name())
		default:
			continue
		}
		if err != nil {
			out = append(out, map[string]any{"errors": skillErrLines(err)})
			continue
		}
		out = append(out, s)
	}
	return out
}

// errorLines splits a joined error into its messages.
func skillErrLines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

// TestSkillMDGolden loads each case under testdata/packs/skillmd and
// compares the parsed skills with <case>.golden.json.
func TestSkillMDGolden(t *testing.T) {
	entries, err := os.ReadDir(skillmdTestdata)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(loadCase(t, filepath.Join(skillmdTestdata, e.Name()))); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			golden := filepath.Join(skillmdTestdata, e.Name()+".golden.json")
			compareGolden(t, golden, string(got))
		})
	}
	if n == 0 {
		t.Fatal("no golden cases found")
	}
}

// TestParseSkillMDFields checks the parsed fields of the golden cases
// directly, so a wrong golden file cannot hide a regression.
func TestParseSkillMDFields(t *testing.T) {
	load := func(dir, name string) *SkillSpec {
		t.Helper()
		s, err := LoadSkillDir(os.DirFS(filepath.Join(skillmdTestdata, dir)), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return s
	}

	t.Run("directory skill with resources", func(t *testing.T) {
		s := load("dir-full", "release-notes")
		if s.Name != "release-notes" || s.Kind != KindAgent || s.License != "MIT" {
			t.Errorf("name/kind/license = %q %q %q", s.Name, s.Kind, s.License)
		}
		wantMeta := map[string]string{"owner": "docs-team", "version": "2.10", "reviewed": "true"}
		if diff := cmp.Diff(wantMeta, s.Metadata); diff != "" {
			t.Errorf("metadata (-want +got):\n%s", diff)
		}
		wantTools := []string{"Bash(git log:*)", "Bash(git tag:*)", "Read", "Grep"}
		if diff := cmp.Diff(wantTools, s.AllowedTools); diff != "" {
			t.Errorf("allowed tools (-want +got):\n%s", diff)
		}
		var paths []string
		for _, r := range s.Resources {
			paths = append(paths, r.Path)
			if len(r.SHA256) != 64 || r.Size <= 0 {
				t.Errorf("resource %s: size %d sha256 %q", r.Path, r.Size, r.SHA256)
			}
		}
		wantPaths := []string{"LICENSE.txt", "assets/templates/notes.md", "references/sections.md", "scripts/collect.sh"}
		if diff := cmp.Diff(wantPaths, paths); diff != "" {
			t.Errorf("resources (-want +got):\n%s", diff)
		}
		if !strings.Contains(s.Instructions, "```markdown\n---\nversion: 1.4.0") {
			t.Errorf("instructions lost the fenced --- block:\n%s", s.Instructions)
		}
		if s.Subagent == nil || s.Subagent.MaxIterations != DefaultMaxIterations {
			t.Errorf("subagent = %+v, want defaults", s.Subagent)
		}
		if len(s.Warnings) != 0 {
			t.Errorf("warnings: %q", s.Warnings)
		}
	})

	t.Run("subagent settings", func(t *testing.T) {
		s := load("subagent", "inbox-helper")
		want := &Subagent{
			Model: "small", MaxIterations: 6, MaxIterationsSet: true, Env: []string{"MAIL_SIGNATURE"},
			Capabilities: []string{"gog.email", "gog.calendar"}, ChatTypes: []string{"private"},
			Sensitive: true, Authors: []string{"ana", "bruno"},
			Rationale: "Keeps mailbox access out of the main conversation.", Packages: []string{"jq"},
		}
		if diff := cmp.Diff(want, s.Subagent); diff != "" {
			t.Errorf("subagent (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"bash", "web_fetch"}, s.AllowedTools); diff != "" {
			t.Errorf("allowed tools (-want +got):\n%s", diff)
		}
		if s.Name != "inbox-helper" || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "no name") {
			t.Errorf("name %q warnings %q: want the folder name and one warning", s.Name, s.Warnings)
		}
	})

	t.Run("unknown fields kept with warnings", func(t *testing.T) {
		s := load("claude-style", "commit-helper")
		wantExtra := map[string]any{"version": "1.3.0", "argument-hint": "[scope]", "disable-model-invocation": false}
		if diff := cmp.Diff(wantExtra, s.Extra); diff != "" {
			t.Errorf("extra (-want +got):\n%s", diff)
		}
		if len(s.Warnings) != 3 {
			t.Errorf("warnings = %q, want one per unknown field", s.Warnings)
		}
		if s.License != "Complete terms in LICENSE.txt" {
			t.Errorf("license = %q", s.License)
		}
	})

	t.Run("CRLF and BOM", func(t *testing.T) {
		crlf := load("crlf", "csv-cleaner")
		if crlf.Description != "Normalises CSV files (delimiters, quoting, header case) before import." ||
			crlf.Metadata["format"] != "rfc4180" || !strings.HasPrefix(crlf.Instructions, "# CSV cleaner\r\n") {
			t.Errorf("CRLF skill read wrong: %+v", crlf)
		}
		bom := load("bom", "unicode-notes")
		if bom.Name != "unicode-notes" || !strings.Contains(bom.Instructions, "e\u0301") {
			t.Errorf("BOM skill read wrong: %+v", bom)
		}
	})

	t.Run("body warnings", func(t *testing.T) {
		long := load("long-body", "style-guide")
		if len(long.Warnings) != 1 || !strings.Contains(long.Warnings[0], "SKILL.md body is 620 lines; keep it under 500 and move detail into references/") {
			t.Errorf("long body warnings = %q", long.Warnings)
		}
		empty := load("empty-body", "placeholder")
		if len(empty.Warnings) != 1 || !strings.Contains(empty.Warnings[0], "body is empty") {
			t.Errorf("empty body warnings = %q", empty.Warnings)
		}
	})

	t.Run("flat skill file", func(t *testing.T) {
		s, err := LoadSkillFile(os.DirFS(filepath.Join(skillmdTestdata, "flat")), "changelog-lint.md")
		if err != nil {
			t.Fatal(err)
		}
		if s.Name != "changelog-lint" || s.File != "changelog-lint.md" || len(s.Resources) != 0 ||
			!cmp.Equal(s.AllowedTools, []string{"Read", "Grep"}) {
			t.Errorf("flat skill = %+v", s)
		}
	})
}

func TestParseSkillMDInstructionsExact(t *testing.T) {
	for _, body := range []string{"", "\n", "x", "# T\n\n```\n---\n```\n", "a\r\nb\r\n", "\n\n  trailing  \n\n"} {
		data := "---\nname: exact\ndescription: d\n---\n" + body
		s, err := ParseSkillMD("exact/SKILL.md", []byte(data), "exact")
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if s.Instructions != body {
			t.Errorf("instructions = %q, want %q", s.Instructions, body)
		}
	}
}

func TestFrontmatterDelimiters(t *testing.T) {
	for _, src := range []string{
		"---  \t\nname: d\ndescription: x\n---\t \nbody",
		"---\r\nname: d\r\ndescription: x\r\n---\r\nbody",
		"\ufeff---\nname: d\ndescription: x\n---\nbody",
		"---" + strings.Repeat(" ", 100<<10) + "\nname: d\ndescription: x\n---\nbody",
	} {
		s, err := ParseSkillMD("d/SKILL.md", []byte(src), "d")
		if err != nil {
			t.Errorf("%.40q: %v", src, err)
			continue
		}
		if s.Instructions != "body" || s.Description != "x" {
			t.Errorf("%.40q: instructions %q description %q", src, s.Instructions, s.Description)
		}
	}
	// A line that merely starts with --- does not close the header.
	s, err := ParseSkillMD("d/SKILL.md", []byte("---\nname: d\ndescription: |\n  a\n  ---x\n---\n---- rule\n"), "d")
	if err != nil || s.Description != "a\n---x" || s.Instructions != "---- rule\n" {
		t.Errorf("got %+v, %v", s, err)
	}
}

func TestSplitToolList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Read Grep", []string{"Read", "Grep"}},
		{"Read, Grep,Glob", []string{"Read", "Grep", "Glob"}},
		{"Bash(git add:*) Bash(git commit:*) Read", []string{"Bash(git add:*)", "Bash(git commit:*)", "Read"}},
		{"  Bash(jq:*)\tRead  ", []string{"Bash(jq:*)", "Read"}},
		{"Bash(a (b) c) d", []string{"Bash(a (b) c)", "d"}},
		{"x) y", []string{"x)", "y"}},
		{"", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, splitToolList(tt.in)); diff != "" {
			t.Errorf("splitToolList(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestContentHash(t *testing.T) {
	base := "---\nname: h\ndescription: d\nmetadata: {a: \"1\", b: \"2\"}\n---\nbody\n"
	parse := func(src, file string) string {
		t.Helper()
		s, err := ParseSkillMD(file, []byte(src), "h")
		if err != nil {
			t.Fatal(err)
		}
		return s.ContentHash
	}
	h := parse(base, "h/SKILL.md")
	if len(h) != 64 {
		t.Fatalf("hash %q", h)
	}
	if parse(base, "elsewhere/h/SKILL.md") != h {
		t.Error("hash depends on the file's location")
	}
	if parse("---\nmetadata: {b: \"2\", a: \"1\"}\ndescription: d\nname: h\n---\nbody\n", "h/SKILL.md") != h {
		t.Error("hash depends on frontmatter key order")
	}
	if parse(strings.Replace(base, "body", "Body", 1), "h/SKILL.md") == h {
		t.Error("hash ignores the instructions")
	}
	if parse(strings.Replace(base, "d\n", "e\n", 1), "h/SKILL.md") == h {
		t.Error("hash ignores the description")
	}

	// Resources: changing a file's bytes changes the hash.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "h", "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "h", "SKILL.md"), []byte(base), 0o644)
	os.WriteFile(filepath.Join(dir, "h", "scripts", "a.sh"), []byte("echo 1\n"), 0o644)
	s1, err := LoadSkillDir(os.DirFS(dir), "h")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "h", "scripts", "a.sh"), []byte("echo 2\n"), 0o644)
	s2, err := LoadSkillDir(os.DirFS(dir), "h")
	if err != nil {
		t.Fatal(err)
	}
	if s1.ContentHash == s2.ContentHash || s1.ContentHash == h {
		t.Error("hash ignores resource contents")
	}
}

func TestLoadSkillDirMissing(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	_, err := LoadSkillDir(os.DirFS(dir), "empty")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("folder without SKILL.md: %v, want fs.ErrNotExist", err)
	}
	_, err = LoadSkillDir(os.DirFS(dir), "absent")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing folder: %v, want fs.ErrNotExist", err)
	}
	if _, err := LoadSkillDir(os.DirFS(dir), "."); err == nil {
		t.Error(`dir "." accepted`)
	}
	if _, err := LoadSkillFile(os.DirFS(dir), "x.txt"); err == nil {
		t.Error("non-.md flat file accepted")
	}
}

// TestWarningsDoNotFail checks that a skill with every kind of warning
// still loads.
func TestWarningsDoNotFail(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("---\ndescription: d\nversion: 3\naccess: {chat_types: [group], rooms: [x]}\n---\n")
	for range 501 {
		b.WriteString("line\n")
	}
	s, err := ParseSkillMD("w/SKILL.md", b.Bytes(), "w")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`w/SKILL.md:2: frontmatter has no name; using the folder name "w" (the Agent Skills format requires name)`,
		`w/SKILL.md:3: unknown frontmatter field "version" kept in extra; Agent Skills fields are name, description, license, compatibility, metadata, allowed-tools`,
		`w/SKILL.md:4: unknown field access.rooms ignored; access knows chat_types`,
		`w/SKILL.md:6: SKILL.md body is 501 lines; keep it under 500 and move detail into references/`,
	}
	if diff := cmp.Diff(want, s.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func ExampleParseSkillMD() {
	src := `---
name: release-notes
description: Drafts release notes from git history. Use when preparing a release.
allowed-tools: Bash(git log:*) Read
metadata:
  version: "1.2"
max_iterations: 4
---
List the commits since the last tag, then group them.
`
	s, err := ParseSkillMD("skills/release-notes/SKILL.md", []byte(src), "release-notes")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name, s.AllowedTools, s.Metadata["version"], s.Subagent.MaxIterations)
	fmt.Print(s.Instructions)

	_, err = ParseSkillMD("skills/notes/SKILL.md", []byte(strings.Replace(src, "max_iterations: 4", "max_iterations: 0", 1)), "notes")
	fmt.Println(err)
	// Output:
	// release-notes [Bash(git log:*) Read] 1.2 4
	// List the commits since the last tag, then group them.
	// skills/notes/SKILL.md:2: name "release-notes" differs from the skill's folder name "notes"; the two must be equal (rename the folder or change name)
	// skills/notes/SKILL.md:7: max_iterations is 0; must be at least 1
}

func BenchmarkParseSkillMD(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(skillmdTestdata, "dir-full", "release-notes", "SKILL.md"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseSkillMD("release-notes/SKILL.md", data, "release-notes"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadSkillDir(b *testing.B) {
	fsys := os.DirFS(filepath.Join(skillmdTestdata, "dir-full"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadSkillDir(fsys, "release-notes"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBundledAgentSkills loads the Agent Skills shipped in the bundled
// pack: each must load without errors or warnings.
func TestBundledAgentSkills(t *testing.T) {
	fsys := os.DirFS("bundled/skills")
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		t.Skip(err)
	}
	n := 0
	for _, e := range entries {
		if _, err := fs.Stat(fsys, e.Name()+"/"+SkillFile); err != nil {
			continue
		}
		n++
		s, err := LoadSkillDir(fsys, e.Name())
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if len(s.Warnings) > 0 {
			t.Errorf("%s: warnings %q", e.Name(), s.Warnings)
		}
	}
	if n == 0 {
		t.Error("no Agent Skills found in the bundled pack")
	}
}

// TestPublishedShapes checks the fields of the shapes published skills
// use (testdata/packs/skillmd/published-shapes) directly, so that a
// wrong golden file cannot hide a regression.
func TestPublishedShapes(t *testing.T) {
	fsys := os.DirFS(filepath.Join(skillmdTestdata, "published-shapes"))
	load := func(name string) *SkillSpec {
		t.Helper()
		s, err := LoadSkillDir(fsys, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return s
	}
	if s := load("folded-notes"); !strings.HasPrefix(s.Description, "Turns a meeting transcript into short notes: decisions first, then open") ||
		s.Compatibility != "Needs nothing but the transcript.\nWorks offline." {
		t.Errorf("folded-notes: description %q, compatibility %q", s.Description, s.Compatibility)
	}
	if s := load("colon-quotes"); s.License != "Apache-2.0" ||
		!slices.Equal(s.AllowedTools, []string{"Read", "Grep", "Bash(git diff:*)", "Bash(git log --oneline:*)"}) {
		t.Errorf("colon-quotes: license %q, tools %q", s.License, s.AllowedTools)
	}
	if s := load("claw-meta"); s.Metadata["claw"] != `{"emoji":"🔧","os":["darwin","linux"],"requires":{"bins":["jq","curl"],"env":["TOOLBOX_TOKEN"]}}` ||
		s.Extra["user-invocable"] != true {
		t.Errorf("claw-meta: metadata %q, extra %v", s.Metadata, s.Extra)
	}
	if s := load("multi-line-meta"); s.Metadata["tags"] != `["status","weekly"]` || s.Metadata["owner"] != "platform-team" || len(s.Warnings) != 2 {
		t.Errorf("multi-line-meta: metadata %q, warnings %q", s.Metadata, s.Warnings)
	}
	if s := load("trailing-delims"); s.License != "2.0" || s.Compatibility != "3.12" || s.Metadata["version"] != "1.10" || len(s.Warnings) != 0 {
		t.Errorf("trailing-delims: license %q, compatibility %q, metadata %q, warnings %q", s.License, s.Compatibility, s.Metadata, s.Warnings)
	}
	if s := load("lower-file"); s.Name != "lower-file" || s.File != "lower-file/skill.md" || len(s.Warnings) != 2 {
		t.Errorf("lower-file: name %q, file %q, warnings %q", s.Name, s.File, s.Warnings)
	}
	if s := load("empty-fields"); s.License != "" || s.Metadata != nil || s.AllowedTools != nil || len(s.Warnings) != 4 {
		t.Errorf("empty-fields: %+v", s)
	}
	if s := load("crlf-bom-folded"); s.Description != "Written on Windows: CRLF line endings, a byte order mark, and a folded description." ||
		s.Metadata["editor"] != "notepad" {
		t.Errorf("crlf-bom-folded: description %q, metadata %q", s.Description, s.Metadata)
	}
	s := load("deep-refs")
	var paths []string
	for _, r := range s.Resources {
		paths = append(paths, r.Path)
	}
	if want := []string{"LICENSE.txt", "references/api/v2/endpoints.md", "references/guides/setup.md", "scripts/lib/util.sh"}; !slices.Equal(paths, want) {
		t.Errorf("deep-refs resources %q, want %q", paths, want)
	}
}

// TestSkillFilePrecedence checks that SKILL.md wins over skill.md when a
// folder holds both (possible on case-sensitive file systems), and that
// skill.md is then an ordinary resource.
func TestSkillFilePrecedence(t *testing.T) {
	fsys := fstest.MapFS{
		"both/SKILL.md": {Data: []byte("---\nname: both\ndescription: d\n---\nupper\n")},
		"both/skill.md": {Data: []byte("---\nname: other\ndescription: d\n---\nlower\n")},
	}
	s, err := LoadSkillDir(fsys, "both")
	if err != nil {
		t.Fatal(err)
	}
	if s.Instructions != "upper\n" || len(s.Resources) != 1 || s.Resources[0].Path != "skill.md" || len(s.Warnings) != 0 {
		t.Errorf("instructions %q, resources %+v, warnings %q", s.Instructions, s.Resources, s.Warnings)
	}
}

// TestBlockScalarLimits checks that the newline a YAML block scalar ends
// with does not count towards the description's 1024 characters.
func TestBlockScalarLimits(t *testing.T) {
	for _, style := range []string{">", "|", ">-"} {
		src := "---\nname: x\ndescription: " + style + "\n  " + strings.Repeat("é", 1024) + "\n---\nbody\n"
		s, err := ParseSkillMD("x/SKILL.md", []byte(src), "x")
		if err != nil {
			t.Errorf("%s: %v", style, err)
			continue
		}
		if n := len([]rune(s.Description)); n != 1024 {
			t.Errorf("%s: description has %d characters", style, n)
		}
	}
	src := "---\nname: x\ndescription: >\n  " + strings.Repeat("é", 1025) + "\n---\nbody\n"
	if _, err := ParseSkillMD("x/SKILL.md", []byte(src), "x"); err == nil || !strings.Contains(err.Error(), "description is 1025 characters; at most 1024 allowed") {
		t.Errorf("1025 characters: %v", err)
	}
}
