package skillhost_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/grant"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/internal/confwalk"
	"github.com/skillhost/skillhost/registry"
)

// docs/config.md lists every key each owner of a section accepts, in
// that section's table (or, for a sub-table, under a heading of its own):
// a key added to an owner's type without a line in the documentation
// fails here.
func TestConfigDocsListEveryKey(t *testing.T) {
	data, err := os.ReadFile("docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, s := range []struct {
		section string // the section's path
		heading string // the heading the section's table follows
		typ     reflect.Type
	}{
		{"limits", "## `[limits]`", reflect.TypeFor[grant.Limits]()},
		{"sandbox", "## `[sandbox]`", reflect.TypeFor[grant.Sandbox]()},
		{"tool_search", "## `[tool_search]`", reflect.TypeFor[registry.ToolSearchConfig]()},
		{"tool_examples", "## `[tool_examples]`", reflect.TypeFor[registry.ExamplesConfig]()},
		{"skill_discovery", "## `[skill_discovery]`", reflect.TypeFor[registry.SkillsConfig]()},
		{"skill_discovery.directory", "### `[skill_discovery.directory]`", reflect.TypeFor[index.DirectorySection]()},
	} {
		_, rest, ok := strings.Cut(doc, "\n"+s.heading)
		if !ok {
			t.Errorf("docs/config.md has no heading %s", s.heading)
			continue
		}
		if i := strings.Index(rest, "\n#"); i >= 0 {
			rest = rest[:i]
		}
		for _, key := range confwalk.Keys(s.typ) {
			// A key is a row of the section's table, or a table of its own
			// with a heading.
			if !strings.Contains(rest, "\n| `"+key+"` |") && !strings.Contains(doc, "# `["+s.section+"."+key+"]`") {
				t.Errorf("docs/config.md: %s has no row for `%s` (%s)", s.heading, key, s.typ)
			}
		}
	}
}
