package skillhost_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/registry"
)

// The prompt blocks an engine makes (pre-flight retrieval, the skill
// directory) name the tool its runs read a skill with: load_skill, or
// skill_get with the search family.
func TestPromptBlocksNameTheFamilysReadTool(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ tools, want, not string }{
		{"", "load_skill", "skill_get"},
		{registry.SkillToolsSearch, "skill_get", "load_skill"},
	} {
		cfg := skillhost.Config{}
		cfg.Skills.Tools = c.tools
		e := open(t, cfg)
		rel, err := e.Relevant(ctx, index.RelevantRequest{Task: "collect every page of a cursor-paginated API"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rel.FormattedContext, c.want) || strings.Contains(rel.FormattedContext, c.not) {
			t.Errorf("tools %q: pre-flight context names the wrong tool:\n%s", c.tools, rel.FormattedContext)
		}
		dir, err := e.Directory(ctx, index.DirectoryConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if got := dir.Render(); !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("tools %q: directory names the wrong tool:\n%s", c.tools, got)
		}
	}
}
