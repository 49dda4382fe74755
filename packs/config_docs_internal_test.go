package packs

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/config.md names every top-level key of skillhost.toml, and only
// those, in the paragraph that begins "The top level holds".
func TestConfigDocsListEveryTopLevelKey(t *testing.T) {
	doc, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	_, para, ok := strings.Cut(string(doc), "\nThe top level holds ")
	if !ok {
		t.Fatal(`docs/config.md has no paragraph beginning "The top level holds"`)
	}
	para, _, _ = strings.Cut(para, "\n\n")
	var documented []string
	for _, m := range regexp.MustCompile("`\\[?([a-z_]+)[^`]*`").FindAllStringSubmatch(para, -1) {
		documented = append(documented, m[1])
	}
	keys := strings.Split(topLevelKeys, ", ")
	slices.Sort(documented)
	slices.Sort(keys)
	if !slices.Equal(documented, keys) {
		t.Errorf("docs/config.md lists the top-level keys %v; the reader accepts %v", documented, keys)
	}
}
