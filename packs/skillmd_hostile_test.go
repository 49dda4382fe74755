package packs

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testenv"
)

// fm builds a SKILL.md from frontmatter lines and a body.
func fm(lines ...string) []byte {
	return []byte("---\n" + strings.Join(lines, "\n") + "\n---\nDo the thing.\n")
}

// hostileSkillMDCases are SKILL.md files that must be refused, each with a
// clear error; dir is the folder name the skill's name is checked against.
func hostileSkillMDCases() []struct {
	name, dir string
	data      []byte
} {
	bomb := []string{"name: bomb", "description: d", `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`}
	for i, c := range "bcdefghi" {
		prev := string("abcdefghi"[i])
		bomb = append(bomb, fmt.Sprintf("%c: &%c [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]", c, c, prev, prev, prev, prev, prev, prev, prev, prev, prev))
	}
	huge := "---\nname: huge\ndescription: " + strings.Repeat("x", 10<<20) + "\n---\nbody\n"
	return []struct {
		name, dir string
		data      []byte
	}{
		{"name-mismatch", "pdf", fm("name: pdf-tools", "description: d")},
		{"name-uppercase", "PDF", fm("name: PDF", "description: d")},
		{"name-double-hyphen", "pdf--tools", fm("name: pdf--tools", "description: d")},
		{"name-leading-hyphen", "-pdf", fm("name: -pdf", "description: d")},
		{"name-trailing-hyphen", "pdf-", fm("name: pdf-", "description: d")},
		{"name-65-chars", strings.Repeat("a", 65), fm("name: "+strings.Repeat("a", 65), "description: d")},
		{"name-underscore", "pdf_tools", fm("name: pdf_tools", "description: d")},
		{"name-not-string", "x", fm("name: [x]", "description: d")},
		{"name-missing-no-dir", "", fm("description: d")},
		{"description-1025-chars", "x", fm("name: x", "description: "+strings.Repeat("d", 1025))},
		{"description-blank", "x", fm("name: x", `description: "   "`)},
		{"description-missing", "x", fm("name: x")},
		{"compatibility-501-chars", "x", fm("name: x", "description: d", "compatibility: "+strings.Repeat("c", 501))},
		{"license-not-string", "x", fm("name: x", "description: d", "license: [MIT]")},
		{"metadata-not-mapping", "x", fm("name: x", "description: d", "metadata: author")},
		{"allowed-tools-number", "x", fm("name: x", "description: d", "allowed-tools: [Read, 7]")},
		{"allowed-tools-conflict", "x", fm("name: x", "description: d", "allowed-tools: Read Grep", "allowed_tools: [Read, Bash]")},
		{"allowed_tools-string", "x", fm("name: x", "description: d", "allowed_tools: Read")},
		{"max-iterations-zero", "x", fm("name: x", "description: d", "max_iterations: 0")},
		{"max-iterations-101", "x", fm("name: x", "description: d", "max_iterations: 101")},
		{"max-iterations-text", "x", fm("name: x", "description: d", "max_iterations: ten")},
		{"max-iterations-fraction", "x", fm("name: x", "description: d", "max_iterations: 2.5")},
		{"env-lowercase", "x", fm("name: x", "description: d", "env: [API_KEY, api_token, 9LIVES]")},
		{"capability-not-namespaced", "x", fm("name: x", "description: d", "capabilities: [gog.email, email, gog., .x, a b.c]")},
		{"access-wrong-types", "x", fm("name: x", "description: d", "access:", "  chat_types: private", "sensitive: yes")},
		{"frontmatter-not-mapping", "x", fm("- name: x", "- description: d")},
		{"frontmatter-empty", "x", []byte("---\n---\nbody\n")},
		{"no-frontmatter", "x", []byte("# Title\n\nname: x\n")},
		{"frontmatter-not-first-line", "x", []byte("\n---\nname: x\ndescription: d\n---\n")},
		{"unterminated-frontmatter", "x", []byte("---\nname: x\ndescription: d\n\n# Body without a closing line\n")},
		{"only-opening-line", "x", []byte("---")},
		{"frontmatter-10MB", "huge", []byte(huge)},
		{"frontmatter-10MB-unterminated", "huge", []byte(huge[:len(huge)-10])},
		{"invalid-utf8-frontmatter", "x", []byte("---\nname: x\ndescription: caf\xe9\n---\nbody\n")},
		{"invalid-utf8-body", "x", []byte("---\nname: x\ndescription: d\n---\nline\nbad \xff byte\n")},
		{"duplicate-keys", "x", fm("name: x", "description: one", "license: MIT", "description: two")},
		{"anchors-bomb", "bomb", fm(bomb...)},
		{"self-alias", "x", fm("name: x", "description: d", "a: &a [*a]")},
		{"tab-indentation", "x", fm("name: x", "description: d", "metadata:", "\tauthor: a")},
		{"yaml-syntax", "x", fm("name: x", "description: [unclosed")},
		{"unquoted-colon", "x", fm("name: x", "description: Use this: when a release is cut")},
		{"value-starts-with-backtick", "x", fm("name: x", "description: `git log` summariser")},
		{"apostrophe-in-single-quotes", "x", fm("name: x", "description: 'it's broken'", "license: MIT")},
		{"unclosed-quote", "x", fm("name: x", `description: "never closed`, "license: MIT")},
		{"bad-indentation", "x", fm("name: x", "description: d", "metadata:", "  author: a", " version: b")},
		{"field-indented-too-far", "x", fm("name: x", "  description: d")},
		{"unknown-alias", "x", fm("name: x", "description: *missing")},
		{"description-null", "x", fm("name: x", "description:")},
		{"second-document", "x", fm("name: x", "description: d", "...", "name: y")},
		{"non-string-key", "x", fm("name: x", "description: d", "1: one")},
		{"many-problems", "right", fm("name: Wrong", "description: "+strings.Repeat("d", 1025), "max_iterations: 0", "capabilities: [mail]", "env: [lower]")},
	}
}

// TestParseSkillMDHostile checks that every hostile SKILL.md is refused
// with the exact messages in testdata/packs/skillmd/hostile-parse.golden.txt
// and that each problem matches ErrInvalidManifest.
func TestParseSkillMDHostile(t *testing.T) {
	var got strings.Builder
	for _, tc := range hostileSkillMDCases() {
		file := "skills/" + tc.dir + "/SKILL.md"
		if tc.dir == "" {
			file = "SKILL.md"
		}
		s, err := ParseSkillMD(file, tc.data, tc.dir)
		if err == nil {
			t.Errorf("%s: accepted: %+v", tc.name, s)
			continue
		}
		if s != nil {
			t.Errorf("%s: a skill returned with the error", tc.name)
		}
		if !errors.Is(err, ErrInvalidManifest) {
			t.Errorf("%s: %v does not match ErrInvalidManifest", tc.name, err)
		}
		fmt.Fprintf(&got, "== %s\n%s\n", tc.name, err)
	}
	compareGolden(t, filepath.Join(skillmdTestdata, "hostile-parse.golden.txt"), got.String())
}

// compareGolden compares got with the golden file, or rewrites it under
// -update.
func compareGolden(t *testing.T, golden, got string) {
	t.Helper()
	testenv.Golden(t, golden, []byte(got), *update)
}
