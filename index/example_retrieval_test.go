package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillhost/skillhost/index"
)

func ExampleRedact() {
	fmt.Println(index.Redact("Mail ops@example.com or call +44 20 7946 0958; Authorization: Bearer abc123def456"))
	fmt.Println(index.Redact("Open https://app.example.com/inbox?session_id=9f8e&page=2 and use v1.2.3 on port 8080"))
	// Output:
	// Mail [REDACTED_EMAIL] or call [REDACTED_PHONE]; Authorization: Bearer [REDACTED_TOKEN]
	// Open https://app.example.com/inbox and use v1.2.3 on port 8080
}

func ExampleStore_Directory() {
	dir, _ := os.MkdirTemp("", "skillhost-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := index.Open(ctx, filepath.Join(dir, "index.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	s.PutSkill(ctx, index.SkillRecord{Name: "pack.core.browser_auth.login_basic", Title: "Login with username/password",
		Trigger: "The site asks for a username and password", Origin: index.OriginPack, Pinned: true})
	s.PutSkill(ctx, index.SkillRecord{Name: "pack.core.browser_forms.date_picker_safe", Title: "Fill date picker safely",
		Trigger: "A form has a date picker", Origin: index.OriginPack})

	d, err := s.Directory(ctx, index.DirectoryConfig{IncludeFields: []string{"name", "title"}}, index.Scope{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Render())
	// Output:
	// <skill_directory>
	// Known skills (use skill_get by name; use skill_search for discovery):
	// - pack.core.browser_auth.login_basic — Login with username/password
	// - pack.core.browser_forms.date_picker_safe — Fill date picker safely
	// </skill_directory>
}

func ExampleStore_GetSkills() {
	dir, _ := os.MkdirTemp("", "skillhost-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := index.Open(ctx, filepath.Join(dir, "index.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	s.SyncTools(ctx, []index.ToolRecord{{Name: "admin.reset_password", LoadingMode: "deferred", SideEffects: "write"}})
	s.PutSkill(ctx, index.SkillRecord{Name: "pack.it.unlock_account", Title: "Unlock an account",
		Trigger: "A user is locked out", Steps: []string{"Call `admin.reset_password` for the user", "Tell them at help@example.com"}})

	res, err := s.GetSkills(ctx, index.SkillGetRequest{
		Names:       []string{"pack.it.unlock_account", "pack.it.other"},
		Format:      index.FormatRaw,
		VisibleTool: func(name string) bool { return name != "admin.reset_password" },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.FormattedContext)
	fmt.Println("missing:", res.Missing)
	// Output:
	// ## pack.it.unlock_account — Unlock an account
	// Use when: A user is locked out
	// Steps:
	// 1. Call a suitable tool (find one with tool_search) for the user
	// 2. Tell them at [REDACTED_EMAIL]
	// missing: [pack.it.other]
}
