package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

const (
	flagsBegin = "<!-- flags: begin; generated from the command definitions by go test ./cmd/skillhost -run TestDocsFlagTable -update -->"
	flagsEnd   = "<!-- flags: end -->"
)

// TestDocsFlagTable holds the table of every flag in docs/cli.md to the
// command definitions; -update writes it again.
func TestDocsFlagTable(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "cli.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(flagsBegin)), bytes.Index(doc, []byte(flagsEnd))
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, flagsBegin, flagsEnd)
	}
	root, _ := newRootWith(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	table := flagTable(root)
	got := string(doc[i+len(flagsBegin) : j])
	if got == table {
		return
	}
	if !*update {
		t.Errorf("the flag table of %s is not the commands' (go test ./cmd/skillhost -run TestDocsFlagTable -update writes it); it should read:\n%s", path, table)
		return
	}
	out := append(append(append([]byte(nil), doc[:i+len(flagsBegin)]...), table...), doc[j:]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// flagTable renders every flag of every command as a Markdown table: the
// global flags first, then each command's own, hidden ones left out.
func flagTable(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("\n\n| command | flag | meaning | default |\n|---|---|---|---|\n")
	row := func(cmd string, f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "`--" + f.Name
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		typ, usage := pflag.UnquoteUsage(f)
		if typ != "" && f.Value.Type() != "bool" {
			// A usage's `NAME` names the value; else its type does.
			if m, ok := map[string]string{"string": "TEXT", "stringArray": "VALUE", "int": "N", "int64": "N", "duration": "DURATION"}[typ]; ok {
				typ = m
			}
			name += " " + typ
		}
		name += "`"
		def := f.DefValue
		switch {
		case def == "" || def == "[]" || def == "0" || def == "0s" || def == "false":
			def = ""
		default:
			def = "`" + def + "`"
		}
		usage = strings.ReplaceAll(usage, "|", `\|`)
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cmd, name, usage, def)
	}
	var walk func(c *cobra.Command)
	cmds := []*cobra.Command{}
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		cmds = append(cmds, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	sort.SliceStable(cmds, func(i, j int) bool { return cmds[i].CommandPath() < cmds[j].CommandPath() })
	for _, c := range cmds {
		fs := c.LocalNonPersistentFlags()
		if c == root {
			fs = c.PersistentFlags()
			fs.AddFlagSet(c.LocalNonPersistentFlags())
		}
		label := "`" + strings.TrimPrefix(c.CommandPath(), "skillhost ") + "`"
		if c == root {
			label = "all commands"
		}
		fs.VisitAll(func(f *pflag.Flag) { row(label, f) })
	}
	b.WriteString("\n")
	return b.String()
}

// docCommand is a command line of a document.
type docCommand struct {
	file  string
	line  int
	stdin string
	args  []string
	exit  int // from a trailing "# exit N"
}

// skipped are the commands of the documents that cannot run in a test:
// they need the network or a file of the reader's own. Every one must
// still be in a document, so the list cannot grow stale.
var skipped = map[string]string{
	"call --module plugin.wasm --export count_vowels --input Hello":                                        "the reader's module",
	"call --module fetch.wasm --export fetch --allow-host api.example.com --timeout 5s --memory-max 64MiB": "the reader's module and the network",
	"eval --catalog tools.jsonl --queries queries.jsonl --json":                                            "the reader's catalog",
	"call --module plugin.wasm --export count_vowels --input Hello --json":                                 "the reader's module",
	"describe plugin.wasm":                             "the reader's module",
	"completion bash":                                  "prints a script",
	"init hello --lang go":                             "writes a project; the guide's test (guide_test.go) runs init and the project's make test",
	"init hello-rs --lang rust --dir ./tools/hello-rs": "writes a project; the guide's test runs init and the project's make test",
	"cache clean":                                      "would empty the tests' shared cache",
	"validate ./skills":                                "the reader's skills",
	"--config-file ./skillhost.toml list":              "the reader's config file",
	"eval --catalog testdata/eval/tools-a.jsonl --queries testdata/eval/queries-a.jsonl": "takes half a minute",
}

// TestDocsCommands runs every skillhost command of README.md and
// docs/cli.md from the repository's root, as a reader would on a fresh
// clone (an empty home folder, the bundled pack), and checks its exit
// status: 0, or the N of a trailing "# exit N".
func TestDocsCommands(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []docCommand
	for _, f := range []string{"README.md", filepath.Join("docs", "cli.md")} {
		cs, err := docCommands(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) < 5 {
			t.Fatalf("%s: found only %d commands", f, len(cs))
		}
		cmds = append(cmds, cs...)
	}
	// The state folder's cache is the tests' shared one, so nothing
	// compiles again; the index is the test's own.
	state := t.TempDir()
	if err := os.MkdirAll(filepath.Join(stateDir, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(stateDir, "cache"), filepath.Join(state, "cache")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SKILLHOST_STATE_DIR", state)
	t.Setenv("SKILLHOST_CONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Chdir(repo)
	seen := map[string]bool{}
	for _, c := range cmds {
		key := strings.Join(c.args, " ")
		if _, ok := skipped[key]; ok {
			seen[key] = true
			continue
		}
		t.Run(fmt.Sprintf("%s:%d", filepath.Base(c.file), c.line), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), c.args, strings.NewReader(c.stdin), &out, &errOut)
			if code != c.exit {
				t.Errorf("skillhost %s: exit %d, want %d\n%s%s", key, code, c.exit, out.String(), errOut.String())
			}
		})
	}
	for k := range skipped {
		if !seen[k] {
			t.Errorf("skipped command %q is in no document", k)
		}
	}
}

// docCommands reads the skillhost commands of the sh code blocks of a
// Markdown file: lines starting with skillhost or bin/skillhost, or
// "echo TEXT |" before one, continued by a trailing backslash.
func docCommands(path string) ([]docCommand, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []docCommand
	in := false
	lines := strings.Split(string(data), "\n")
	exitRe := regexp.MustCompile(`#\s*exit (\d)`)
	for n := 0; n < len(lines); n++ {
		l := lines[n]
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
			continue
		case strings.HasPrefix(l, "```"):
			in = false
			continue
		}
		if !in {
			continue
		}
		start := n + 1
		for strings.HasSuffix(l, "\\") && n+1 < len(lines) {
			n++
			l = strings.TrimSuffix(l, "\\") + " " + strings.TrimSpace(lines[n])
		}
		words, comment, err := shellWords(l)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, start, err)
		}
		c := docCommand{file: path, line: start}
		if len(words) > 2 && words[0] == "echo" && words[2] == "|" {
			c.stdin, words = words[1]+"\n", words[3:]
		}
		if len(words) == 0 || (words[0] != "skillhost" && words[0] != "bin/skillhost") {
			continue
		}
		c.args = words[1:]
		if m := exitRe.FindStringSubmatch(comment); m != nil {
			c.exit, _ = strconv.Atoi(m[1])
		}
		out = append(out, c)
	}
	return out, nil
}

// shellWords splits a command line as sh would for the quoting the
// documents use (single and double quotes, a | between commands) and
// returns the comment after an unquoted #.
func shellWords(s string) (words []string, comment string, err error) {
	var cur strings.Builder
	have := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, "", fmt.Errorf("unclosed ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			have = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				cur.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, "", fmt.Errorf("unclosed \" in %q", s)
			}
			i = j
			have = true
		case c == '#' && !have:
			return words, s[i:], nil
		case c == ' ' || c == '\t':
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words, "", nil
}

// TestDocsLinksStayInside: every relative link of the repository's
// Markdown files names a file of the repository, and no file of the
// project names a document outside it.
func TestDocsLinksStayInside(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// Spelled in pieces, so that this file does not name them.
	outside := regexp.MustCompile(`/work/` + `shared|\.\./` + `shared/|shared ` + `TOOLCHAINS\.md|\(` + `TOOLCHAINS\.md\)`)
	err = filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == ".git" || name == "target" || name == "node_modules" || name == "bin" || name == ".skillhost" {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(name)
		if ext != ".md" && ext != ".go" && ext != ".sh" && ext != ".yaml" && ext != ".toml" && name != "Makefile" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, path)
		if m := outside.Find(data); m != nil {
			t.Errorf("%s names a document outside the repository: %q", rel, m)
		}
		if ext != ".md" {
			return nil
		}
		for _, m := range link.FindAllSubmatch(data, -1) {
			target := string(m[1])
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), target)); err != nil {
				t.Errorf("%s links to %s, which is not in the repository", rel, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
