package index

import (
	"context"
	"strings"
	"testing"
)

// The blocks a prompt carries name the tool the caller's run reads skills
// with: skill_get by default, or the ReadTool given, and never the other.
func TestBlocksNameTheReadTool(t *testing.T) {
	ctx := context.Background()
	s, _ := relevantStore(t, nil)
	for _, c := range []struct{ readTool, want, not string }{
		{"", "skill_get", "load_skill"},
		{"skill_get", "skill_get", "load_skill"},
		{"load_skill", "load_skill", "skill_get"},
	} {
		res, err := s.Relevant(ctx, RelevantRequest{Task: "Log in to the vendor portal with the username and password", ReadTool: c.readTool})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.FormattedContext, "fetch other skills with "+c.want+".") || strings.Contains(res.FormattedContext, c.not) {
			t.Errorf("ReadTool %q: pre-flight context:\n%s", c.readTool, res.FormattedContext)
		}
		d, err := s.Directory(ctx, DirectoryConfig{}, Scope{})
		if err != nil {
			t.Fatal(err)
		}
		d.ReadTool = c.readTool
		if got := d.Render(); !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("ReadTool %q: directory:\n%s", c.readTool, got)
		}
	}
}
