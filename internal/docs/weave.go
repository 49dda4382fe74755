// Command docs weaves the Go snippets of skillhost's Markdown documents
// from Example functions, so that every snippet a reader copies compiles:
// the examples are built by go vet and go test like any test code.
//
// A snippet is a fenced Go block right after a marker that names the
// Example, its file relative to the module root first:
//
//	<!-- woven from example_open_test.go ExampleOpen -->
//
// The block becomes the function's body, one tab less indented, without
// its "// Output:" comment, after an import block of the packages the body
// uses. "as main" after the name puts the body in a func main.
//
// Run from anywhere in the module,
//
//	go run ./internal/docs
//
// rewrites README.md and docs/*.md; its test fails when a document and
// its examples differ.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	root, err := moduleRoot()
	if err != nil {
		fail(err)
	}
	docs, err := documents(root)
	if err != nil {
		fail(err)
	}
	for _, doc := range docs {
		old, err := os.ReadFile(doc)
		if err != nil {
			fail(err)
		}
		woven, err := weave(root, old)
		if err != nil {
			fail(fmt.Errorf("%s: %w", doc, err))
		}
		if bytes.Equal(old, woven) {
			continue
		}
		if err := os.WriteFile(doc, woven, 0o644); err != nil {
			fail(err)
		}
		fmt.Println("wove", doc)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "docs:", err)
	os.Exit(1)
}

// moduleRoot is the folder of the go.mod above the working folder.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working folder")
		}
		dir = up
	}
}

// documents are the Markdown files woven: README.md and docs/*.md.
func documents(root string) ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...), nil
}

// markerRE matches a snippet's marker line.
var markerRE = regexp.MustCompile(`^<!-- woven from (\S+\.go) (Example\w*)( as main)? -->$`)

// weave returns doc with the Go block after each marker replaced by its
// Example's body, the Go files read relative to root.
func weave(root string, doc []byte) ([]byte, error) {
	lines := strings.SplitAfter(string(doc), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		m := markerRE.FindStringSubmatch(strings.TrimRight(lines[i], "\n"))
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || strings.TrimRight(lines[i+1], "\n") != "```go" {
			return nil, fmt.Errorf("line %d: the marker of %s is not followed by a ```go block", i+1, m[2])
		}
		end := i + 2
		for end < len(lines) && strings.TrimRight(lines[end], "\n") != "```" {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("line %d: the ```go block after the marker of %s does not end", i+2, m[2])
		}
		snippet, err := exampleSnippet(filepath.Join(root, filepath.FromSlash(m[1])), m[2], m[3] != "")
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out.WriteString("```go\n" + snippet + "```\n")
		i = end
	}
	return []byte(out.String()), nil
}

// exampleSnippet returns the body of the function name of the Go file at
// path, as a snippet: the imports it uses, then the body (in a func main
// when asMain).
func exampleSnippet(path, name string, asMain bool) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	var fn *ast.FuncDecl
	for _, d := range f.Decls {
		if d, ok := d.(*ast.FuncDecl); ok && d.Recv == nil && d.Name.Name == name {
			fn = d
		}
	}
	if fn == nil || fn.Body == nil {
		return "", fmt.Errorf("%s has no function %s", path, name)
	}
	body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "// Output:") || strings.HasPrefix(t, "// Unordered output:") {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return "", fmt.Errorf("%s: %s has an empty body", path, name)
	}
	imports, err := usedImports(f, fn.Body)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", path, name, err)
	}
	var b strings.Builder
	b.WriteString(imports)
	if asMain {
		b.WriteString("func main() {\n")
		for _, l := range lines {
			if l != "" {
				l = "\t" + l
			}
			b.WriteString(l + "\n")
		}
		b.WriteString("}\n")
	} else {
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	return b.String(), nil
}

// usedImports returns the import declaration of the packages of f that
// body names, the standard library first, then the others, or "" for
// none.
func usedImports(f *ast.File, body *ast.BlockStmt) (string, error) {
	byName := map[string]string{} // the name a file uses → import path
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return "", err
		}
		name := importName(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		byName[name] = p
	}
	used := map[string]bool{}
	var unknown []string
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				switch {
				case byName[id.Name] != "":
					used[byName[id.Name]] = true
				case id.Obj == nil && !slices.Contains(unknown, id.Name):
					// Neither declared in the file nor the name of an
					// import as importName guesses it.
					unknown = append(unknown, id.Name)
				}
			}
		}
		return true
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("cannot tell which import %s names: import it under that name", strings.Join(unknown, ", "))
	}
	var std, other []string
	for p := range used {
		if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
			other = append(other, p)
		} else {
			std = append(std, p)
		}
	}
	slices.Sort(std)
	slices.Sort(other)
	switch n := len(std) + len(other); {
	case n == 0:
		return "", nil
	case n == 1:
		return "import " + strconv.Quote(append(std, other...)[0]) + "\n\n", nil
	}
	var b strings.Builder
	b.WriteString("import (\n")
	for _, p := range std {
		b.WriteString("\t" + strconv.Quote(p) + "\n")
	}
	if len(std) > 0 && len(other) > 0 {
		b.WriteString("\n")
	}
	for _, p := range other {
		b.WriteString("\t" + strconv.Quote(p) + "\n")
	}
	b.WriteString(")\n\n")
	return b.String(), nil
}

// importName is the name a package is used by without an alias: the last
// element of its path, or the one before a major version suffix.
func importName(path string) string {
	elems := strings.Split(path, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && regexp.MustCompile(`^v[0-9]+$`).MatchString(last) {
		last = elems[len(elems)-2]
	}
	return strings.TrimPrefix(last, "go-")
}
