package registry_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/registry"
)

// The built-ins are tool_search over the index and one family of skill
// tools: here the load family, over a skill written in Go. (The
// registry's snippet in docs/discovery.md is this function's body.)
func ExampleBuiltins() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "skillhost-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	idx, err := index.Open(ctx, filepath.Join(dir, "index.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer idx.Close()

	csvSkill := registry.Skill{Name: "csv-helper", Description: "Summarise CSV files: rows, columns, types.",
		Instructions: "Run the `stats` script with the CSV text."}
	// SkillSetOptions.Files serves the file skills of a catalog too.
	set, err := registry.NewSkillSet(registry.SkillSetOptions{}, csvSkill)
	if err != nil {
		fmt.Println(err)
		return
	}
	reg, err := registry.New(ctx, nil, registry.Options{Builtins: registry.Builtins(registry.BuiltinOptions{
		Index: idx, // tool_search, and the search family's backing
		Scope: func(rc registry.RunContext) index.Scope {
			return index.Scope{TenantID: rc.Tenant, ProjectID: rc.Project}
		},
		Skills:     set,                     // the load family's backing
		SkillTools: registry.SkillToolsLoad, // or registry.SkillToolsSearch
	})})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range reg.Tools() {
		fmt.Println(t.Name)
	}
	// Output:
	// list_skills
	// load_skill
	// read_skill_resource
	// run_skill_script
	// tool_search
}
