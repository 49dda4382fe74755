package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testenv"
)

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "skills", "pdf"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "good", "notes"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "skills", "pdf", "SKILL.md"), []byte("---\nname: PDF\ndescription: Read PDFs.\n---\nbody\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "skills", "login.skill.yaml"), []byte("trigger: log in\nsteps: []\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "good", "notes", "SKILL.md"), []byte("---\nname: notes\ndescription: Take notes.\n---\nWrite them down.\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "skillhost.toml"), []byte("[skills.x]\nmodle = \"haiku\"\n"), 0o644))

	r := cli(t, "", "validate", filepath.Join(dir, "skills"), filepath.Join(dir, "good", "notes"), filepath.Join(dir, "skillhost.toml"))
	if r.code != exitToolError {
		t.Fatalf("exit %d, want 1; stdout %s stderr %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		`pdf/SKILL.md:2: name "PDF" may use only lowercase letters a-z, digits and single hyphens, with no hyphen at the start or end; try "pdf"`,
		`login.skill.yaml:2: steps must have at least 1 item`,
		"ok " + filepath.Join(dir, "good", "notes") + ": skill notes",
		`modle`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := cli(t, "", "validate", filepath.Join(dir, "good")); r.code != 0 {
		t.Errorf("valid folder: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cli(t, "", "validate"); r.code != exitUsage {
		t.Errorf("no path: exit %d", r.code)
	}
}

func TestValidateBundled(t *testing.T) {
	r := cli(t, "", "validate", filepath.Join("..", "..", "packs", "bundled"))
	if r.code != 0 || strings.Contains(r.stdout, "warning") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestListAndShowSkills(t *testing.T) {
	r := cli(t, "", "--no-user-sources", "list", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rows []listRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, row := range rows {
		kinds[row.Kind]++
		if row.Source == "" || (row.Pack == "" && row.Source != "builtin") {
			t.Errorf("row without source or pack: %+v", row)
		}
	}
	if kinds["tool"] < 18 || kinds["skill"] < 6 {
		t.Errorf("kinds = %v, want the bundled tools and skills", kinds)
	}
	r = cli(t, "", "--no-user-sources", "show", "web-research")
	if r.code != 0 || !strings.Contains(r.stdout, "agent skill") || !strings.Contains(r.stdout, "at most 8 iterations") {
		t.Errorf("show web-research: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, "", "--no-user-sources", "show", "nope")
	if r.code != exitUsage || !strings.Contains(r.stderr, "no tool or skill") {
		t.Errorf("show nope: exit %d %s", r.code, r.stderr)
	}
}

// A skill's env values come from the operator config and are never shown;
// a missing one says which key to add where.
func TestShowSkillEnv(t *testing.T) {
	dir := t.TempDir()
	skill := "---\nname: research\ndescription: Research with an API.\nenv: [PPLX_KEY, OTHER_KEY]\n---\nUse the key.\n"
	if err := os.MkdirAll(filepath.Join(dir, "skills", "research"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "skills", "research", "SKILL.md"), []byte(skill), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "skillhost.toml")
	if err := os.WriteFile(cfg, []byte("[sources]\nworkspace = \"skills\"\nuser = \"\"\n[skills.research]\nPPLX_KEY = \"pplx-very-secret\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"show", "research"}, {"show", "research", "--json"}} {
		r := cli(t, "", append([]string{"--config-file", cfg}, args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d %s", args, r.code, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, "pplx-very-secret") {
			t.Errorf("%v shows the secret:\n%s", args, r.stdout)
		}
		if !strings.Contains(r.stdout, "OTHER_KEY") || !strings.Contains(r.stdout, "missing") {
			t.Errorf("%v does not report the missing key:\n%s", args, r.stdout)
		}
	}
}

func TestSearchAndIndex(t *testing.T) {
	r := cli(t, "", "--no-user-sources", "search", "--json", "count", "the", "words")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res struct {
		Tools []struct {
			Name  string  `json:"name"`
			Score float64 `json:"score"`
		} `json:"tools"`
		SearchType string `json:"search_type"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) == 0 || res.Tools[0].Name != "word_count" || res.SearchType != "fts" {
		t.Errorf("search = %+v", res)
	}
	r = cli(t, "", "--no-user-sources", "search", "--skills", "paginate", "an", "api", "cursor")
	if r.code != 0 || !strings.Contains(r.stdout, "pack.core.api.cursor_pagination") {
		t.Errorf("skill search: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cli(t, "", "--no-user-sources", "search", "   "); r.code != exitUsage {
		t.Errorf("blank query: exit %d %s", r.code, r.stderr)
	}
	if r := cli(t, "", "--no-user-sources", "search", "--type", "fuzzy", "x"); r.code != exitUsage {
		t.Errorf("bad type: exit %d %s", r.code, r.stderr)
	}
	r = cli(t, "", "--no-user-sources", "index", "--rebuild")
	// The bundled tools and skillhost's 5 built-ins: tool_search and the
	// load family of skill tools.
	if r.code != 0 || !strings.Contains(r.stdout, "rebuilt: 25 tool(s)") {
		t.Errorf("index --rebuild: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// update rewrites the CLI golden files under testdata/packs/cli:
// go test ./cmd/skillhost -run Golden -update.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/packs/cli")

// TestSkillsCLIGolden runs list and show on the skills of
// testdata/packs/cli and compares the output with its golden files, so
// that a change to what a person or a script reads is seen in review. The
// config holds a secret env value that must appear nowhere.
func TestSkillsCLIGolden(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "packs", "cli"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "skillhost.toml")
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"list.golden.json", []string{"list", "--json"}},
		{"list.golden.txt", []string{"list"}},
		{"show.golden.txt", []string{"show", "standup-notes"}},
		{"show.golden.json", []string{"show", "standup-notes", "--json"}},
		{"show-playbook.golden.txt", []string{"show", "pack.skills.triage"}},
		// A playbook by its file's name and by its title.
		{"show-playbook-alias.golden.txt", []string{"show", "triage"}},
		{"show-playbook-title.golden.txt", []string{"show", "triage a failing BUILD"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			r := cli(t, "", append([]string{"--config-file", cfg}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, "tok-never-printed") {
				t.Fatalf("the secret env value is printed:\n%s%s", r.stdout, r.stderr)
			}
			got := strings.ReplaceAll(r.stdout, dir, "<dir>")
			golden := filepath.Join(dir, tc.golden)
			testenv.Golden(t, golden, []byte(got), *update)
		})
	}
}

// TestValidateConfigSettings checks that validating a skillhost.toml checks
// its [packs.<name>.config] values against the tools its sources declare.
func TestValidateConfigSettings(t *testing.T) {
	dir := t.TempDir()
	pack := filepath.Join(dir, "skills", "weather")
	if err := os.MkdirAll(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `name: weather
modules:
  - name: forecast
    path: forecast.wasm
    tools:
      - name: forecast
        description: Tomorrow's weather for a city.
        config_params:
          - {name: max_days, type: number, min: 1, max: 14, default: 3}
          - {name: units, type: select, options: [metric, imperial]}
`
	for name, data := range map[string]string{"pack.yaml": manifest, "forecast.wasm": "\x00asm\x01\x00\x00\x00"} {
		if err := os.WriteFile(filepath.Join(pack, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write := func(body string) string {
		path := filepath.Join(dir, "skillhost.toml")
		cfg := "[sources]\nbundled = false\nuser = \"\"\nworkspace = \"skills\"\n\n" + body
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}

	r := cli(t, "", "validate", write("[packs.weather.config]\nmax_days = 30\nunits = \"kelvin\"\ncolour = \"red\"\n"))
	if r.code != exitToolError {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"max_days", "14", "kelvin", "metric", "colour"} { // each bad key with what was expected
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = cli(t, "", "validate", write("[packs.weather.config]\nmax_days = 7\nunits = \"metric\"\n"))
	if r.code != 0 || !strings.Contains(r.stdout, "checked against 1 pack(s)") {
		t.Errorf("good settings: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
