package main

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/skillhost/skillhost"

// root is the module's root, seen from this package.
const root = "../.."

// Every woven snippet of README.md and docs/*.md is its Example's body
// today: a document and the examples cannot disagree.
func TestDocumentsAreWoven(t *testing.T) {
	docs, err := documents(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		old, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		woven, err := weave(root, old)
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		if diff := cmp.Diff(strings.Split(string(old), "\n"), strings.Split(string(woven), "\n")); diff != "" {
			t.Errorf("%s differs from its examples (go run ./internal/docs rewrites it) (-document +examples):\n%s", doc, diff)
		}
	}
}

// Every Go block of the README is woven from an example, so none can be
// added that does not compile.
func TestReadmeGoIsWoven(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(readme), "\n")
	n := 0
	for i, l := range lines {
		if l != "```go" {
			continue
		}
		n++
		if i == 0 || !markerRE.MatchString(lines[i-1]) {
			t.Errorf("README.md:%d: a Go block with no <!-- woven from FILE ExampleName --> line before it", i+1)
		}
	}
	if n == 0 {
		t.Error("README.md has no Go block")
	}
}

// weave copies a body without its output comment, one tab less
// indented, after the imports it uses; "as main" wraps it in main.
func TestWeave(t *testing.T) {
	doc := "Intro.\n\n<!-- woven from testdata/example.go ExampleHello -->\n```go\nstale\n```\n\n" +
		"<!-- woven from testdata/example.go ExampleMain as main -->\n```go\n```\nEnd.\n"
	got, err := weave(".", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := "Intro.\n\n<!-- woven from testdata/example.go ExampleHello -->\n```go\n" +
		"import (\n\t\"fmt\"\n\t\"strings\"\n\n\t\"github.com/skillhost/skillhost/abi\"\n)\n\n" +
		"s := strings.ToUpper(\"hi\") // shout\nif s != \"\" {\n\tfmt.Println(s, abi.Version)\n}\n```\n\n" +
		"<!-- woven from testdata/example.go ExampleMain as main -->\n```go\n" +
		"import \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"main\")\n\n\t// ...\n}\n```\nEnd.\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"<!-- woven from testdata/example.go ExampleUnknown -->\n```go\n```\n", // openai-go is imported as openai
		"<!-- woven from testdata/example.go ExampleNone -->\n```go\n```\n",    // no such function
		"<!-- woven from testdata/none.go ExampleHello -->\n```go\n```\n",      // no such file
		"<!-- woven from testdata/example.go ExampleHello -->\nText.\n",        // no block
		"<!-- woven from testdata/example.go ExampleHello -->\n```go\nx = 1\n", // no end
	} {
		if _, err := weave(".", []byte(bad)); err == nil {
			t.Errorf("weave(%q): no error", bad)
		}
	}
}

// listPackages returns the folder of every package of the module,
// relative to its root ("." for the root) and the package's doc comment
// and name.
func listPackages(t *testing.T) map[string][2]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}\t{{.Name}}\t{{.Doc}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][2]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		dir := "."
		if f[0] != module {
			dir = strings.TrimPrefix(f[0], module+"/")
		}
		pkgs[dir] = [2]string{f[1], f[2]}
	}
	return pkgs
}

// The README's layout table has a row for every package, and each row
// names a folder that exists.
func TestReadmeLayoutCoversEveryPackage(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	var folders []string
	for _, line := range strings.Split(layout, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		parts := strings.Split(first, "`")
		for i := 1; i < len(parts); i += 2 {
			f := strings.TrimSuffix(parts[i], "/")
			if f == "" || f == "." {
				f = "."
			}
			folders = append(folders, f)
			if strings.Contains(f, "*") {
				continue
			}
			if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(f))); err != nil || !st.IsDir() {
				t.Errorf("README.md's layout table has a row for %s, which is no folder", parts[i])
			}
		}
	}
	for dir := range listPackages(t) {
		covered := false
		for _, f := range folders {
			if m, _ := path.Match(f, dir); m {
				covered = true
			}
		}
		if !covered {
			t.Errorf("README.md's layout table has no row for package %s", dir)
		}
	}
}

// Every package has a doc comment that begins as go doc expects: "Package
// name" for a library, "Command name" for a program.
func TestEveryPackageHasADocComment(t *testing.T) {
	for dir, p := range listPackages(t) {
		name, doc := p[0], p[1]
		want := "Package " + name + " "
		if name == "main" {
			want = "Command " + path.Base(dir) + " "
		}
		if !strings.HasPrefix(doc, want) {
			t.Errorf("package %s: doc comment %q, want one beginning %q", dir, doc, want)
		}
	}
}

// staleClaims are sentences that were once in the documents and are
// false: each with what is true instead.
var staleClaims = []struct {
	re   *regexp.Regexp
	true string
}{
	{regexp.MustCompile(`(?i)fresh instance (per|for every|for each) call|Module\.Call[^.]*(runs|in) a (fresh|new) instance`),
		"Module.Call gives every call fresh state from a pooled instance restored from a snapshot (host/module.go)"},
	{regexp.MustCompile(`server \(future\)`), "the server layer exists (server/)"},
	{regexp.MustCompile(`(?i)packs\W+(imports|import) nothing`), "packs imports abi and internal helpers"},
}

// No document, doc comment or comment of the module repeats a claim known
// to be false.
func TestNoStaleClaims(t *testing.T) {
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", "target", ".skillhost", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".md" && ext != ".go" || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, c := range staleClaims {
				if c.re.MatchString(line) {
					t.Errorf("%s:%d: %q is no longer true: %s", p, i+1, strings.TrimSpace(line), c.true)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
