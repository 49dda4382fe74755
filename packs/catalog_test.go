package packs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The same skill and tool in bundled, user and workspace: the workspace
// wins and both replacements are reported.
func TestCatalogPrecedence(t *testing.T) {
	bundled := fstest.MapFS{
		"pack.yaml":           srcPackYAML("core", "fetch=bundled", "echo"),
		"m.wasm":              srcWasm,
		"skills/pdf/SKILL.md": srcSkillMD("pdf", "Bundled."),
	}
	user := fstest.MapFS{
		"pdf/SKILL.md": srcSkillMD("pdf", "User."),
	}
	workspace := fstest.MapFS{
		"skills/pdf/SKILL.md": srcSkillMD("pdf", "Workspace."),
		"tools/pack.yaml":     srcPackYAML("local", "fetch=workspace"),
		"tools/m.wasm":        srcWasm,
	}
	cat, err := LoadCatalog(context.Background(), []SourceSpec{
		{Name: SourceBundled, FS: bundled, Root: "embedded:bundled"},
		{Name: SourceUser, FS: user, Root: "/home/u/.skillhost/skills"},
		{Name: SourceWorkspace, FS: workspace, Root: "/proj/skills"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pdf, ok := cat.Skill("pdf")
	if !ok || pdf.Skill.Description != "Workspace." || pdf.Origin != (Origin{SourceWorkspace, "/proj/skills/skills/pdf/SKILL.md"}) {
		t.Errorf("pdf = %+v", pdf)
	}
	fetch, ok := cat.Tool("fetch")
	if !ok || fetch.Tool.Description != "workspace tool" || fetch.Pack.Name != "local" {
		t.Errorf("fetch = %+v", fetch)
	}
	if echo, ok := cat.Tool("echo"); !ok || echo.Source != SourceBundled {
		t.Errorf("echo = %+v", echo)
	}
	want := []Override{
		{Kind: EntrySkill, Name: "pdf",
			Winner: Origin{SourceUser, "/home/u/.skillhost/skills/pdf/SKILL.md"},
			Loser:  Origin{SourceBundled, "embedded:bundled/skills/pdf/SKILL.md"}},
		{Kind: EntryTool, Name: "fetch",
			Winner: Origin{SourceWorkspace, "/proj/skills/tools/pack.yaml"},
			Loser:  Origin{SourceBundled, "embedded:bundled/pack.yaml"}},
		{Kind: EntrySkill, Name: "pdf",
			Winner: Origin{SourceWorkspace, "/proj/skills/skills/pdf/SKILL.md"},
			Loser:  Origin{SourceUser, "/home/u/.skillhost/skills/pdf/SKILL.md"}},
	}
	if diff := cmp.Diff(want, cat.Overrides); diff != "" {
		t.Errorf("overrides (-want +got):\n%s", diff)
	}
	if got := len(cat.Packs()); got != 2 {
		t.Errorf("%d packs", got)
	}

	// Two installed folders rank in the order given; the later one wins.
	cat, err = LoadCatalog(context.Background(), []SourceSpec{
		{Name: SourceInstalled, FS: user, Root: "/opt/a"},
		{Name: SourceInstalled, FS: workspace, Root: "/opt/b"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := cat.Skill("pdf"); e.Path != "/opt/b/skills/pdf/SKILL.md" || len(cat.Overrides) != 1 {
		t.Errorf("pdf from %s, overrides %v", e.Path, cat.Overrides)
	}
}

// One broken source does not stop the others; all problems come back with
// the catalog.
func TestCatalogCollectsProblems(t *testing.T) {
	a := fstest.MapFS{"good/SKILL.md": srcSkillMD("good", "Fine."), "bad/SKILL.md": {Data: []byte("---\nname: bad\n---\n")}}
	b := fstest.MapFS{"p/pack.yaml": {Data: []byte("name: Bad Name\n")}, "ok.skill.yaml": srcPlaybook("fine")}
	cat, err := LoadCatalog(context.Background(), []SourceSpec{
		{Name: SourceUser, FS: a, Root: "/a"},
		{Name: SourceWorkspace, FS: b, Root: "/b"},
		{Name: SourceInstalled, Dir: filepath.Join(t.TempDir(), "missing")},
	}, nil)
	if cat == nil {
		t.Fatal("no catalog")
	}
	if _, ok := cat.Skill("good"); !ok {
		t.Error("good skill lost")
	}
	if _, ok := cat.Skill("pack.b.ok"); !ok {
		t.Errorf("playbook lost: %v", cat.Skills())
	}
	lines := srcErrLines(err)
	if len(lines) < 3 || !errors.Is(err, ErrInvalidManifest) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("problems:\n%v", err)
	}
}

func TestCatalogConfig(t *testing.T) {
	cfg, err := ParseConfig(ConfigFile, []byte(`
[skills.defaults]
enabled = false
[skills.keep]
enabled = true
[packs.tools]
enabled = false
`))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"keep/SKILL.md":            srcSkillMD("keep", "Kept."),
		"drop/SKILL.md":            srcSkillMD("drop", "Off by default."),
		"tools/pack.yaml":          srcPackYAML("tools", "t1"),
		"tools/m.wasm":             srcWasm,
		"tools/skills/in/SKILL.md": srcSkillMD("in", "In the disabled pack."),
	}
	cat, err := LoadCatalog(context.Background(), []SourceSpec{{Name: SourceWorkspace, FS: fsys, Root: "ws"}}, &CatalogOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range cat.Skills() {
		names = append(names, e.Skill.Name)
	}
	if diff := cmp.Diff([]string{"keep"}, names); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	if len(cat.Tools()) != 0 || len(cat.Packs()) != 0 {
		t.Errorf("disabled pack still there: %v", cat.Tools())
	}
	want := []Disabled{
		{Kind: EntryPack, Name: "tools", Origin: Origin{SourceWorkspace, "ws/tools/pack.yaml"}, Reason: "[packs.tools] enabled = false"},
		{Kind: EntrySkill, Name: "drop", Origin: Origin{SourceWorkspace, "ws/drop/SKILL.md"}, Reason: "[skills.defaults] enabled = false"},
		{Kind: EntrySkill, Name: "in", Origin: Origin{SourceWorkspace, "ws/tools/skills/in/SKILL.md"}, Reason: "[packs.tools] enabled = false"},
	}
	if diff := cmp.Diff(want, cat.Disabled); diff != "" {
		t.Errorf("disabled (-want +got):\n%s", diff)
	}
}

func TestCatalogCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cat, err := LoadCatalog(ctx, []SourceSpec{BundledSource()}, nil)
	if cat != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("LoadCatalog on a done context = %v, %v", cat, err)
	}
}

// Reload reports what was added, changed and removed on disk.
func TestCatalogReloadDiff(t *testing.T) {
	root := t.TempDir()
	srcWrite(t, root, "same/SKILL.md", srcSkillMD("same", "Unchanged.").Data)
	srcWrite(t, root, "edit/SKILL.md", srcSkillMD("edit", "Before.").Data)
	srcWrite(t, root, "gone/SKILL.md", srcSkillMD("gone", "Removed later.").Data)
	srcWrite(t, root, "flows/login.skill.yaml", srcPlaybook("before").Data)
	srcWrite(t, root, "tools/pack.yaml", srcPackYAML("kit", "keep", "edit-tool=before", "drop-tool").Data)
	srcWrite(t, root, "tools/m.wasm", srcWasm.Data)
	specs := []SourceSpec{DirSource(SourceWorkspace, root)}
	old, err := LoadCatalog(context.Background(), specs, nil)
	if err != nil {
		t.Fatal(err)
	}

	// Nothing changed: an empty diff.
	same, d, err := old.Reload(context.Background())
	if err != nil || !d.Empty() || same == old {
		t.Fatalf("reload without changes: %+v, %v", d, err)
	}

	srcWrite(t, root, "edit/SKILL.md", srcSkillMD("edit", "After.").Data)
	if err := os.RemoveAll(filepath.Join(root, "gone")); err != nil {
		t.Fatal(err)
	}
	srcWrite(t, root, "new/SKILL.md", srcSkillMD("new", "Added.").Data)
	srcWrite(t, root, "flows/login.skill.yaml", srcPlaybook("after").Data)
	srcWrite(t, root, "tools/pack.yaml", srcPackYAML("kit", "keep", "edit-tool=after", "new-tool").Data)
	next, d, err := old.Reload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := CatalogDiff{
		Added:   []CatalogChange{{EntrySkill, "new"}, {EntryTool, "new-tool"}},
		Changed: []CatalogChange{{EntrySkill, "edit"}, {EntrySkill, "pack." + sourcePackName(root, root) + ".login"}, {EntryTool, "edit-tool"}},
		Removed: []CatalogChange{{EntrySkill, "gone"}, {EntryTool, "drop-tool"}},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}
	if e, _ := old.Skill("edit"); e.Skill.Description != "Before." {
		t.Error("Reload changed the old catalog")
	}
	if e, _ := next.Skill("edit"); e.Skill.Description != "After." {
		t.Error("new catalog has the old skill")
	}

	// A rebuilt module (new size or time) changes its tools; moving a skill
	// to another file changes it too.
	srcWrite(t, root, "tools/m.wasm", append(srcWasm.Data, 0))
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "tools/m.wasm"), future, future); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "group"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "same"), filepath.Join(root, "group", "same")); err != nil {
		t.Fatal(err)
	}
	_, d, _ = next.Reload(context.Background())
	want = CatalogDiff{
		Changed: []CatalogChange{{EntrySkill, "same"}, {EntryTool, "edit-tool"}, {EntryTool, "keep"}, {EntryTool, "new-tool"}},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("diff after rebuild (-want +got):\n%s", diff)
	}
}

func TestDiffCatalogsNil(t *testing.T) {
	cat, err := LoadCatalog(context.Background(), []SourceSpec{{Name: SourceUser, FS: fstest.MapFS{"a/SKILL.md": srcSkillMD("a", "A.")}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := DiffCatalogs(nil, cat); len(d.Added) != 1 || len(d.Removed) != 0 {
		t.Errorf("from nil: %+v", d)
	}
	if d := DiffCatalogs(cat, nil); len(d.Removed) != 1 {
		t.Errorf("to nil: %+v", d)
	}
}

// The whole default stack loads: the bundled source alone, then as part
// of the config's sources with empty user and workspace folders.
func TestCatalogFromConfig(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	cfg, err := ParseConfig(filepath.Join(dir, ConfigFile), []byte("[sources]\nmax_depth = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	specs := cfg.SourceSpecs()
	if len(specs) != 3 || specs[0].Name != SourceBundled || specs[1].Name != SourceUser || specs[2].Name != SourceWorkspace {
		t.Fatalf("specs %+v", specs)
	}
	cat, err := LoadCatalog(context.Background(), specs, &CatalogOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cat.Skill("web-research"); !ok {
		t.Error("bundled skill missing")
	}
	if e, ok := cat.Tool("case_convert"); !ok || e.Pack.Name != "core" || e.Hash == "" {
		t.Errorf("bundled tool: %+v", e)
	}
}

func BenchmarkLoadCatalogBundled(b *testing.B) {
	b.ReportAllocs()
	specs := []SourceSpec{BundledSource()}
	for b.Loop() {
		if _, err := LoadCatalog(context.Background(), specs, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseConfig(b *testing.B) {
	data, err := os.ReadFile("../testdata/packs/config/full.toml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseConfig(ConfigFile, data); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleLoadCatalog() {
	user := fstest.MapFS{
		"pdf/SKILL.md": {Data: []byte("---\nname: pdf\ndescription: Read PDF files.\n---\nUse the user's way.\n")},
	}
	workspace := fstest.MapFS{
		"skills/pdf/SKILL.md":         {Data: []byte("---\nname: pdf\ndescription: Read PDF files, project style.\n---\nUse the project's way.\n")},
		"flows/deploy.skill.yaml":     {Data: []byte("trigger: the user asks to deploy\nsteps: [build, test, ship]\n")},
		"skills/broken/SKILL.md":      {Data: []byte("no frontmatter\n")},
		"skills/notes-on-style.md":    {Data: []byte("# not a skill: no frontmatter\n")},
		"node_modules/x/y.skill.yaml": {Data: []byte("skipped")},
	}
	cat, err := LoadCatalog(context.Background(), []SourceSpec{
		{Name: SourceUser, FS: user, Root: "~/.skillhost/skills"},
		{Name: SourceWorkspace, FS: workspace, Root: "skills"},
	}, nil)
	for _, e := range cat.Skills() {
		fmt.Printf("%s (%s) from %s\n", e.Skill.Name, e.Skill.Kind, e.Path)
	}
	for _, o := range cat.Overrides {
		fmt.Println(o)
	}
	fmt.Println(errors.Is(err, ErrInvalidManifest))
	// Output:
	// pack.skills.deploy (playbook) from skills/flows/deploy.skill.yaml
	// pdf (agent) from skills/skills/pdf/SKILL.md
	// skill "pdf" from workspace (skills/skills/pdf/SKILL.md) overrides user (~/.skillhost/skills/pdf/SKILL.md)
	// true
}
