package server

import (
	"strings"
	"testing"
)

// skillURI and parseSkillURI are inverses for every name and path that
// names a file: whatever bytes they hold, a URI made by the server comes
// back to the same name and path, so no escaping trick makes one file's
// URI name another.
func FuzzSkillURI(f *testing.F) {
	for _, s := range [][2]string{
		{"alpha-guide", "SKILL.md"}, {"pack.ops.x", "references/a b.md"}, {"a/b", "../c"},
		{"%2e%2e", "%2F"}, {"x", "?#"}, {"ü", "dir//f"}, {"x", "."},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, p string) {
		uri := skillURI(name, p)
		gotName, gotPath, err := parseSkillURI(uri)
		switch {
		case name == "" || p == "" || len(uri) > maxURIBytes || !validUTF8(name+p):
			// Refused or not; it must not panic.
		case err != nil:
			t.Fatalf("parseSkillURI(%q) of (%q, %q): %v", uri, name, p, err)
		case gotName != name || gotPath != p:
			t.Fatalf("parseSkillURI(skillURI(%q, %q)) = %q, %q", name, p, gotName, gotPath)
		}
		// Any string parses or is refused without panicking.
		parseSkillURI(name + p)
		parseSkillURI(skillScheme + name)
	})
}

func validUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
