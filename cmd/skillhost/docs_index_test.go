package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The command index at the top of docs/cli.md links every command of
// skillhost, and each link leads to a heading of the page that names the
// command.
func TestDocsCommandIndex(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, index, ok := strings.Cut(string(doc), "\n- Commands: ")
	if !ok {
		t.Fatal(`docs/cli.md has no "- Commands:" index`)
	}
	index, _, _ = strings.Cut(index, "\n- ")
	links := map[string]string{} // command → anchor
	for _, m := range regexp.MustCompile(`\[([a-z-]+)\]\(#([a-z0-9-]+)\)`).FindAllStringSubmatch(index, -1) {
		links[m[1]] = m[2]
	}
	headings := map[string]string{} // anchor → heading text
	for _, line := range strings.Split(string(doc), "\n") {
		if text, ok := strings.CutPrefix(line, "### "); ok {
			headings[anchor(text)] = text
		}
	}
	root, _ := newRootWith(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	root.InitDefaultCompletionCmd()
	names := map[string]bool{}
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		names[c.Name()] = true
		a, ok := links[c.Name()]
		if !ok {
			t.Errorf("docs/cli.md's command index has no link to %s", c.Name())
			continue
		}
		h, ok := headings[a]
		if !ok || !regexp.MustCompile(`\b`+regexp.QuoteMeta(c.Name())+`\b`).MatchString(h) {
			t.Errorf("docs/cli.md's index links %s to #%s, which is no heading naming it", c.Name(), a)
		}
	}
	for name := range links {
		if !names[name] {
			t.Errorf("docs/cli.md's command index links %s, which is no command", name)
		}
	}
}

// anchor is the fragment GitHub gives a heading: lowercase, punctuation
// dropped, spaces as hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
