package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const playbookTestdata = "../testdata/packs/playbook"

// playbookResult is what a golden file holds: the skills parsed and the
// errors, one message each.
type playbookResult struct {
	Skills []*SkillSpec `json:"skills"`
	Errors []string     `json:"errors"`
}

func parseResult(file string, data []byte, pack string) playbookResult {
	skills, err := ParsePlaybook(file, data, pack)
	r := playbookResult{Skills: skills, Errors: []string{}}
	if r.Skills == nil {
		r.Skills = []*SkillSpec{}
	}
	for _, e := range flattenErrors(err) {
		r.Errors = append(r.Errors, e.Error())
	}
	return r
}

// flattenErrors lists the errors joined in err.
func flattenErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flattenErrors(e)...)
		}
		return out
	}
	return []error{err}
}

// TestPlaybookGolden parses every testdata/packs/playbook/<case>.skill.*
// file and compares the skills and errors with <case>.golden.json.
func TestPlaybookGolden(t *testing.T) {
	entries, err := os.ReadDir(playbookTestdata)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		stem, _, ok := strings.Cut(name, ".skill.")
		if !ok || e.IsDir() {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(playbookTestdata, name))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(parseResult("skills/"+name, data, "demo")); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			golden := filepath.Join(playbookTestdata, stem+".golden.json")
			compareGolden(t, golden, string(got))
		})
	}
	if n < 5 {
		t.Fatalf("found %d golden cases, want at least 5", n)
	}
}

// TestPlaybookFields checks the golden inputs field by field, so a wrong
// golden file cannot hide a regression.
func TestPlaybookFields(t *testing.T) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(playbookTestdata, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	t.Run("markdown", func(t *testing.T) {
		skills, err := ParsePlaybook("skills/frontmatter.skill.md", read("frontmatter.skill.md"), "demo")
		if err != nil {
			t.Fatal(err)
		}
		s := skills[0]
		want := &SkillSpec{
			Name:          "pack.demo.browser.sign_in_with_password",
			Kind:          KindPlaybook,
			Title:         "Sign in with a password",
			Description:   "Form-based sign-in for sites without single sign-on.",
			Instructions:  "# Notes\n\nNever echo the password back to the user.",
			Trigger:       "The user asks to sign in to a website with a username and password.",
			TaskType:      TaskBrowser,
			Tags:          []string{"auth", "browser", "login"},
			Preconditions: []string{"The credentials come from the operator's secret store, never from the chat."},
			Steps: []string{"Open the site's sign-in page.", "Type the username or e-mail address into its field.",
				"Type the password into its field.", "Press the sign-in button.",
				"Confirm success by finding an account menu or a sign-out link."},
			FailureModes: []string{"The form sits inside an iframe; switch into it first.", "A CAPTCHA appears; stop and ask the user."},
			Extra: map[string]any{
				"cluster": "Browser sign-in",
				"tools":   []any{map[string]any{"tool": "tool_search", "note": "Find the browser tools when none are visible."}},
			},
			Pack: "demo",
			File: "skills/frontmatter.skill.md",
			Line: 1,
		}
		if !hexRE.MatchString(s.ContentHash) {
			t.Errorf("content hash %q is not 64 hex digits", s.ContentHash)
		}
		s.ContentHash = ""
		if diff := cmp.Diff(want, s); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("yaml without name", func(t *testing.T) {
		skills, err := ParsePlaybook("skills/block-style.skill.yaml", read("block-style.skill.yaml"), "demo")
		if err != nil {
			t.Fatal(err)
		}
		s := skills[0]
		if s.Name != "pack.demo.block_style" || s.Title != "Page through a cursor API" ||
			s.Trigger != "Fetch every item from an API that pages its results with a cursor or continuation token." ||
			s.Steps[2] != "Read the next cursor from the response; it may be nested\n(meta.next_cursor) or in a Link header." {
			t.Errorf("got %+v", s)
		}
	})
	t.Run("json extra values", func(t *testing.T) {
		skills, err := ParsePlaybook("skills/object.skill.json", read("object.skill.json"), "demo")
		if err != nil {
			t.Fatal(err)
		}
		s := skills[0]
		want := map[string]any{
			"tools":    []any{map[string]any{"tool": "read_file"}, map[string]any{"tool": "text_diff"}},
			"priority": json.Number("2"), "ratio": json.Number("0.25"), "draft": false,
		}
		if diff := cmp.Diff(want, s.Extra); diff != "" {
			t.Errorf("extra (-want +got):\n%s", diff)
		}
		if s.TaskType != TaskCode || s.Name != "pack.demo.object" {
			t.Errorf("task type %q, name %q", s.TaskType, s.Name)
		}
	})
	t.Run("jsonl", func(t *testing.T) {
		skills, err := ParsePlaybook("skills/records.skill.jsonl", read("records.skill.jsonl"), "demo")
		var got []string
		for _, s := range skills {
			got = append(got, fmt.Sprintf("%d %s %s", s.Line, s.Name, strings.Join(s.Tags, ",")))
		}
		want := []string{
			"1 pack.demo.records.reset_a_password ",
			"3 pack.demo.faq.opening_hours faq",
			"5 pack.demo.records.line_5 ",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("skills (-want +got):\n%s", diff)
		}
		checkErrors(t, err, []wantErr{
			{Line: 6, Field: "trigger", Msg: "must not be empty"},
			{Line: 7, Field: "steps", Msg: "must be an array"},
		})
	})
}

// wantErr is an expected *ManifestError: file (when set), line and field
// exactly, and a fragment of the message.
type wantErr struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func checkErrors(t *testing.T, err error, want []wantErr) {
	t.Helper()
	errs := flattenErrors(err)
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(want), err)
	}
	for i, e := range errs {
		if !errors.Is(e, ErrInvalidManifest) {
			t.Errorf("error %d (%v) does not match ErrInvalidManifest", i, e)
		}
		var me *ManifestError
		if !errors.As(e, &me) {
			t.Errorf("error %d (%v) is %T, want *ManifestError", i, e, e)
			continue
		}
		w := want[i]
		if w.File != "" && me.File != w.File || me.Line != w.Line || me.Field != w.Field || !strings.Contains(me.Msg, w.Msg) {
			t.Errorf("error %d = {File:%q Line:%d Field:%q Msg:%q}, want line %d, field %q, message containing %q",
				i, me.File, me.Line, me.Field, me.Msg, w.Line, w.Field, w.Msg)
		}
	}
}

func TestParsePlaybookHostile(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, prev := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		p := string(rune('a' + i))
		bomb += fmt.Sprintf("%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", prev, prev, p, p, p, p, p, p, p, p, p, p)
	}
	bomb += "trigger: t\nsteps: [*i]\n"
	tenMB := strings.Repeat("# padding padding padding padding padding padding padding padding\n", 10<<20/66+1)
	tests := []struct {
		name string
		file string
		data string
		want []wantErr
	}{
		{"missing trigger", "a.skill.yaml", "steps: [one]\n", []wantErr{{Line: 1, Msg: `missing required field "trigger"`}}},
		{"blank trigger", "a.skill.yaml", "trigger: '   '\nsteps: [one]\n", []wantErr{{Line: 1, Field: "trigger", Msg: "only whitespace"}}},
		{"missing steps", "a.skill.json", `{"trigger": "t"}`, []wantErr{{Line: 1, Msg: `missing required field "steps"`}}},
		{"empty steps", "a.skill.yaml", "trigger: t\nsteps: []\n", []wantErr{{Line: 2, Field: "steps", Msg: "at least 1 item"}}},
		{"steps not a list", "a.skill.yaml", "trigger: t\nsteps: do it\n", []wantErr{{Line: 2, Field: "steps", Msg: "must be an array"}}},
		{"steps not strings", "a.skill.yaml", "trigger: t\nsteps:\n  - ok\n  - 42\n  - {a: b}\n  - ''\n  - ' '\n",
			[]wantErr{{Line: 4, Field: "steps[1]", Msg: "must be a string"}, {Line: 5, Field: "steps[2]", Msg: "must be a string"},
				{Line: 6, Field: "steps[3]", Msg: "must not be empty"}, {Line: 7, Field: "steps[4]", Msg: "only whitespace"}}},
		{"task_type invalid", "a.skill.yaml", "trigger: t\nsteps: [s]\ntask_type: website\n",
			[]wantErr{{Line: 3, Field: "task_type", Msg: "must be one of browser, api, code, domain, unknown"}}},
		{"bad name", "a.skill.yaml", "name: Pack.Core.X\ntrigger: t\nsteps: [s]\n", []wantErr{{Line: 1, Field: "name", Msg: "must match"}}},
		{"name too long", "a.skill.yaml", "name: " + strings.Repeat("a", 129) + "\ntrigger: t\nsteps: [s]\n",
			[]wantErr{{Line: 1, Field: "name", Msg: "at most 128"}}},
		{"reserved learned name", "a.skill.yaml", "name: learned.api.x\ntrigger: t\nsteps: [s]\n",
			[]wantErr{{Line: 1, Field: "name", Msg: "reserved for learned skills"}}},
		{"tags not strings", "a.skill.yaml", "trigger: t\nsteps: [s]\ntags: [a, [b]]\n", []wantErr{{Line: 3, Field: "tags[1]", Msg: "must be a string"}}},
		{"yaml list of skills", "a.skill.yaml", "- trigger: t\n  steps: [s]\n", []wantErr{{Line: 1, Msg: "put several skills in a .skill.jsonl file"}}},
		{"json array", "a.skill.json", `[{"trigger": "t", "steps": ["s"]}]`, []wantErr{{Line: 1, Msg: "holds a list"}}},
		{"scalar document", "a.skill.yaml", "just text\n", []wantErr{{Line: 1, Msg: "must hold a mapping"}}},
		{"empty yaml", "a.skill.yaml", "# nothing\n", []wantErr{{Line: 1, Msg: "is empty"}}},
		{"yaml syntax in .json", "a.skill.json", "trigger: t\nsteps: [s]\n", []wantErr{{Line: 1, Msg: "not valid JSON"}}},
		{"json syntax error line", "a.skill.json", "{\"trigger\": \"t\",\n \"steps\": [\"s\"],}\n", []wantErr{{Line: 2, Msg: "not valid JSON at column 17"}}},
		{"invalid utf-8 yaml", "a.skill.yaml", "trigger: t\nsteps: [\"\xff\"]\n", []wantErr{{Line: 2, Msg: "invalid UTF-8"}}},
		{"invalid utf-8 json", "a.skill.json", "{\"trigger\": \"t\",\n\"steps\": [\"\xc3\"]}", []wantErr{{Line: 2, Msg: "invalid UTF-8"}}},
		{"invalid utf-8 md", "a.skill.md", "---\ntrigger: \xfe\nsteps: [s]\n---\n", []wantErr{{Line: 2, Msg: "invalid UTF-8"}}},
		{"duplicate keys yaml", "a.skill.yaml", "trigger: t\nsteps: [s]\ntrigger: u\n", []wantErr{{Line: 3, Msg: `"trigger" is repeated`}}},
		{"duplicate keys json", "a.skill.json", "{\"trigger\": \"t\",\n\"steps\": [\"s\"],\n\"steps\": [\"u\"]}", []wantErr{{Line: 3, Msg: `"steps" is repeated`}}},
		{"yaml bomb", "a.skill.yaml", bomb, []wantErr{{Line: 5, Msg: "alias bomb"}}},
		{"10 MB yaml", "a.skill.yaml", "trigger: t\nsteps: [s]\n" + tenMB, []wantErr{{Msg: "at most 4194304 allowed"}}},
		{"2 MB yaml", "a.skill.yaml", "trigger: t\nsteps: [s]\n" + tenMB[:2<<20], []wantErr{{Msg: "at most 1048576 allowed"}}},
		{"10 MB frontmatter", "a.skill.md", "---\ntrigger: t\n" + tenMB[:3<<20] + "---\n", []wantErr{{Line: 1, Msg: "frontmatter is longer than"}}},
		{"md without frontmatter", "a.skill.md", "# Just Markdown\n", []wantErr{{Line: 1, Msg: "needs YAML frontmatter"}}},
		{"md unterminated", "a.skill.md", "---\ntrigger: t\nsteps: [s]\n", []wantErr{{Line: 1, Msg: "no closing ---"}}},
		{"md frontmatter list", "a.skill.md", "---\n- a\n---\n", []wantErr{{Line: 2, Msg: "must hold a mapping"}}},
		{"two yaml documents", "a.skill.yaml", "trigger: t\nsteps: [s]\n---\ntrigger: u\nsteps: [s]\n", []wantErr{{Line: 3, Msg: "second YAML document"}}},
		{"infinity", "a.skill.yaml", "trigger: t\nsteps: [s]\nweight: .inf\n", []wantErr{{Line: 3, Msg: "not a finite number"}}},
		{"unknown extension", "a.skill.toml", "trigger = 't'\n", []wantErr{{Msg: "not a playbook skill file"}}},
		{"no name to derive", "-.skill.yaml", "trigger: t\nsteps: [s]\n", []wantErr{{Line: 1, Field: "name", Msg: "no letters or digits"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			skills, err := ParsePlaybook("skills/"+tt.file, []byte(tt.data), "demo")
			if len(skills) != 0 {
				t.Errorf("got %d skills from a broken single-skill file", len(skills))
			}
			for i := range tt.want {
				tt.want[i].File = "skills/" + tt.file
			}
			checkErrors(t, err, tt.want)
		})
	}
}

// A JSONL file with three good lines and two bad ones gives three skills
// and two errors, each with its line.
func TestParsePlaybookJSONLPartial(t *testing.T) {
	data := strings.Join([]string{
		`{"title":"One","trigger":"t1","steps":["a"]}`,
		`{"title":"Two","trigger":"t2","steps":[]}`,
		``,
		`{"title":"Three","trigger":"t3","steps":["a"]}`,
		`{"title":"Four",trigger:"t4"}`,
		"{\"title\":\"Five\",\"trigger\":\"t5\",\"steps\":[\"a\"]}\r",
	}, "\n")
	skills, err := ParsePlaybook("p/faq.skill.jsonl", []byte(data), "demo")
	var names []string
	for _, s := range skills {
		names = append(names, fmt.Sprintf("%d:%s", s.Line, s.Name))
	}
	want := []string{"1:pack.demo.faq.one", "4:pack.demo.faq.three", "6:pack.demo.faq.five"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	checkErrors(t, err, []wantErr{
		{Line: 2, Field: "steps", Msg: "at least 1 item"},
		{Line: 5, Msg: "not valid JSON at column 17"},
	})
}

func TestParsePlaybookJSONLLines(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []wantErr
	}{
		{"duplicate names", `{"name":"pack.demo.x","trigger":"t","steps":["a"]}` + "\n\n" + `{"name":"pack.demo.x","trigger":"u","steps":["b"]}`,
			[]wantErr{{Line: 3, Field: "name", Msg: `"pack.demo.x" is also the name of the skill on line 1`}}},
		{"duplicate derived names", `{"title":"Same","trigger":"t","steps":["a"]}` + "\n" + `{"title":"SAME!","trigger":"u","steps":["b"]}`,
			[]wantErr{{Line: 2, Field: "name", Msg: "on line 1"}}},
		{"duplicate keys", `{"trigger":"t","steps":["a"],"x":{"k":1,"k":2}}`, []wantErr{{Line: 1, Msg: `key "k" is repeated`}}},
		{"same key in sibling objects is fine", `{"trigger":"t","steps":["a"],"x":[{"k":1},{"k":2}],"k":3}`, nil},
		{"invalid utf-8 on one line", `{"trigger":"t","steps":["a"]}` + "\n" + "{\"trigger\":\"\xff\",\"steps\":[\"a\"]}",
			[]wantErr{{Line: 2, Msg: "invalid UTF-8 at column 13"}}},
		{"array line", `{"trigger":"t","steps":["a"]}` + "\n" + `[1,2]`, []wantErr{{Line: 2, Msg: "holds a list"}}},
		{"null line", `null`, []wantErr{{Line: 1, Msg: "is empty"}}},
		{"two objects on one line", `{"trigger":"t","steps":["a"]} {"trigger":"u","steps":["b"]}`, []wantErr{{Line: 1, Msg: "not valid JSON"}}},
		{"schema errors keep the record line", "\n\n\n" + `{"trigger":"t","steps":["a", 1],"task_type":"x"}`,
			[]wantErr{{Line: 4, Field: "steps[1]", Msg: "must be a string"}, {Line: 4, Field: "task_type", Msg: "must be one of"}}},
		{"long line", `{"trigger":"t","steps":["` + strings.Repeat("a", 1<<20) + `"]}`, []wantErr{{Line: 1, Msg: "at most 1048576"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePlaybook("p/f.skill.jsonl", []byte(tt.data), "demo")
			checkErrors(t, err, tt.want)
		})
	}
}

// A file with more bad lines than are listed ends with a count.
func TestParsePlaybookJSONLManyBadLines(t *testing.T) {
	data := strings.Repeat("nope\n", maxJSONLBadLines+7) + `{"trigger":"t","steps":["a"]}` + "\n"
	skills, err := ParsePlaybook("p/f.skill.jsonl", []byte(data), "demo")
	if len(skills) != 1 {
		t.Errorf("got %d skills, want the one good line", len(skills))
	}
	errs := flattenErrors(err)
	if len(errs) != maxJSONLBadLines+1 || !strings.Contains(errs[len(errs)-1].Error(), "7 more lines have problems") {
		t.Errorf("got %d errors, last %v", len(errs), errs[len(errs)-1])
	}
}

func TestParsePlaybookNames(t *testing.T) {
	t.Run("derived from the file name", func(t *testing.T) {
		for file, want := range map[string]string{
			"a/Cursor Pagination.skill.yaml":   "pack.my_pack.cursor_pagination",
			"a/retry--with__backoff.skill.yml": "pack.my_pack.retry_with_backoff",
			"a/-x-.skill.json":                 "pack.my_pack.x",
			"deep/dir/Über-Größe.skill.md":     "pack.my_pack.ber_gr_e",
		} {
			data := "trigger: t\nsteps: [s]\n"
			if strings.HasSuffix(file, ".json") {
				data = `{"trigger":"t","steps":["s"]}`
			}
			if strings.HasSuffix(file, ".md") {
				data = "---\n" + data + "---\n"
			}
			skills, err := ParsePlaybook(file, []byte(data), "My Pack")
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if skills[0].Name != want {
				t.Errorf("%s: name %q, want %q", file, skills[0].Name, want)
			}
		}
	})
	t.Run("explicit name outside the pack prefix warns", func(t *testing.T) {
		skills, err := ParsePlaybook("a/x.skill.yaml", []byte("name: other.x\ntrigger: t\nsteps: [s]\n"), "demo")
		if err != nil {
			t.Fatal(err)
		}
		if len(skills[0].Warnings) != 1 || !strings.Contains(skills[0].Warnings[0], "pack.demo.") {
			t.Errorf("warnings %q", skills[0].Warnings)
		}
	})
	t.Run("no pack", func(t *testing.T) {
		_, err := ParsePlaybook("a/x.skill.yaml", []byte("trigger: t\nsteps: [s]\n"), "")
		checkErrors(t, err, []wantErr{{Line: 1, Field: "name", Msg: "no pack name"}})
	})
	t.Run("jsonl names are stable across loads and reorderings", func(t *testing.T) {
		lines := []string{
			`{"title":"Alpha","trigger":"t","steps":["a"]}`,
			`{"title":"Beta","trigger":"t","steps":["a"]}`,
			`{"name":"pack.demo.gamma","trigger":"t","steps":["a"]}`,
			`{"trigger":"untitled","steps":["a"]}`,
		}
		names := func(lines []string) map[string]string {
			skills, err := ParsePlaybook("p/set.skill.jsonl", []byte(strings.Join(lines, "\n")), "demo")
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, s := range skills {
				out[s.Trigger+"/"+s.Title] = s.Name + " " + s.ContentHash
			}
			return out
		}
		first := names(lines)
		if diff := cmp.Diff(first, names(lines)); diff != "" {
			t.Errorf("second load differs (-first +second):\n%s", diff)
		}
		want := map[string]string{"t/Alpha": "pack.demo.set.alpha", "t/Beta": "pack.demo.set.beta",
			"t/": "pack.demo.gamma", "untitled/": "pack.demo.set.line_4"}
		for k, w := range want {
			if got, _, _ := strings.Cut(first[k], " "); got != w {
				t.Errorf("%s: name %q, want %q", k, got, w)
			}
		}
		// Reversed: the titled and named records keep names and hashes;
		// the untitled one is named by its new line.
		rev := slices.Clone(lines)
		slices.Reverse(rev)
		second := names(rev)
		for _, k := range []string{"t/Alpha", "t/Beta", "t/"} {
			if first[k] != second[k] {
				t.Errorf("%s: %q after reordering, was %q", k, second[k], first[k])
			}
		}
		if got, _, _ := strings.Cut(second["untitled/"], " "); got != "pack.demo.set.line_1" {
			t.Errorf("untitled record after reordering: %q", got)
		}
	})
}

func TestPlaybookNormalisation(t *testing.T) {
	data := "trigger: \"  spaced   inside  \"\ntags: [' Go ', go, GO, web]\nsteps: [' one ', one]\npreconditions: [' p ', ' p ']\n"
	skills, err := ParsePlaybook("a/n.skill.yaml", []byte(data), "demo")
	if err != nil {
		t.Fatal(err)
	}
	s := skills[0]
	got := []any{s.Trigger, s.Tags, s.Steps, s.Preconditions, s.TaskType}
	want := []any{"spaced   inside", []string{"go", "web"}, []string{"one", "one"}, []string{"p", "p"}, TaskUnknown}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPlaybookContentHash(t *testing.T) {
	hash := func(t *testing.T, file, data string) string {
		t.Helper()
		skills, err := ParsePlaybook(file, []byte(data), "demo")
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(skills) != 1 {
			t.Fatalf("%s: %d skills", file, len(skills))
		}
		return skills[0].ContentHash
	}
	block, err := os.ReadFile(filepath.Join(playbookTestdata, "block-style.skill.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	flow, err := os.ReadFile(filepath.Join(playbookTestdata, "flow-style.skill.yml"))
	if err != nil {
		t.Fatal(err)
	}
	base := hash(t, "a/cursor.skill.yaml", string(block))
	same := map[string]string{
		"flow style, quoting and comments": string(flow),
		"reindented":                       strings.Replace(string(block), "\n  - pagination\n  - cursor\n", "\n    -   pagination\n    -     cursor   \n\n", 1),
		"keys reordered": "trigger: Fetch every item from an API that pages its results with a cursor or continuation token.\n" +
			"failure_modes: [The API rate-limits; wait between pages.]\n" +
			"steps:\n- Request the first page without a cursor.\n- Add the page's items to the results.\n" +
			"- \"Read the next cursor from the response; it may be nested\\n(meta.next_cursor) or in a Link header.\"\n" +
			"- Repeat with that cursor until it is empty or missing.\n" +
			"tags: [pagination, cursor]\ntask_type: api\ntitle: Page through a cursor API\n",
		"CRLF line ends": strings.ReplaceAll(string(block), "\n", "\r\n"),
		"tag case":       strings.Replace(string(block), "- cursor", "- Cursor", 1),
	}
	for name, data := range same {
		t.Run(name, func(t *testing.T) {
			if h := hash(t, "a/cursor.skill.yaml", data); h != base {
				t.Errorf("hash changed: %s, want %s", h, base)
			}
		})
	}
	t.Run("as JSON", func(t *testing.T) {
		skills, _ := ParsePlaybook("a/cursor.skill.yaml", block, "demo")
		s := skills[0]
		doc, _ := json.Marshal(map[string]any{"title": s.Title, "task_type": s.TaskType, "tags": s.Tags,
			"trigger": s.Trigger, "steps": s.Steps, "failure_modes": s.FailureModes})
		if h := hash(t, "a/cursor.skill.json", string(doc)); h != base {
			t.Errorf("JSON form hashes %s, want %s", h, base)
		}
		if h := hash(t, "elsewhere/cursor.skill.json", string(doc)); h != base {
			t.Errorf("another folder hashes %s, want %s", h, base)
		}
	})
	different := map[string]string{
		"changed step":       strings.Replace(string(block), "Add the page's items", "Add the page's entries", 1),
		"step order":         strings.Replace(strings.Replace(string(block), "- Request the first page without a cursor.", "- X", 1), "- Add the page's items to the results.", "- Request the first page without a cursor.", 1),
		"extra field":        string(block) + "cluster: API\n",
		"task type":          strings.Replace(string(block), "task_type: api", "task_type: code", 1),
		"inner whitespace":   strings.Replace(string(block), "Repeat with that", "Repeat  with that", 1),
		"explicit name":      "name: pack.demo.other\n" + string(block),
		"failure mode added": string(block) + "  - The cursor expires.\n",
	}
	for name, data := range different {
		t.Run(name, func(t *testing.T) {
			if h := hash(t, "a/cursor.skill.yaml", data); h == base {
				t.Errorf("hash did not change")
			}
		})
	}
	t.Run("markdown body counts", func(t *testing.T) {
		md := "---\ntrigger: t\nsteps: [s]\n---\n"
		h0 := hash(t, "a/x.skill.md", md)
		if h := hash(t, "a/x.skill.yaml", "trigger: t\nsteps: [s]\n"); h != h0 {
			t.Errorf("md without body %s, yaml %s: want equal", h0, h)
		}
		h1 := hash(t, "a/x.skill.md", md+"\n\nBody.\n")
		if h1 == h0 {
			t.Error("adding a body did not change the hash")
		}
		if h := hash(t, "a/x.skill.md", md+"Body.\n\n\n"); h != h1 {
			t.Error("blank lines around the body changed the hash")
		}
	})
}

func TestTrimBody(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"\n\n  \n":               "",
		"\n\n    code\nmore\n\n": "    code\nmore",
		"text  \r\n":             "text",
		"\n# T\n\nbody\n":        "# T\n\nbody",
		"  lead stays\n \n tail": "  lead stays\n \n tail",
	} {
		if got := trimBody(in); got != want {
			t.Errorf("trimBody(%q) = %q, want %q", in, got, want)
		}
	}
}

// The bundled playbook skills are parsed from disk: every file must load
// without problems, names must be unique, and every tool a skill names
// must be a tool of the bundled pack.
func TestBundledPlaybookSkills(t *testing.T) {
	const dir = "bundled/skills"
	pack, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]bool{}
	for _, m := range pack.Modules {
		for _, tool := range m.Tools {
			tools[tool.Name] = true
		}
	}
	fsys := os.DirFS(dir)
	seen := map[string]string{}
	n := 0
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(path.Base(p), ".skill.") {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		skills, err := ParsePlaybook(p, data, pack.Name)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		for _, s := range skills {
			n++
			if first, dup := seen[s.Name]; dup {
				t.Errorf("%s: name %q already used by %s", p, s.Name, first)
			}
			seen[s.Name] = p
			if len(s.Warnings) > 0 {
				t.Errorf("%s: warnings %q", p, s.Warnings)
			}
			if s.Title == "" || s.Description == "" || s.TaskType == TaskUnknown || len(s.Tags) == 0 || len(s.FailureModes) == 0 {
				t.Errorf("%s: a bundled skill should have a title, description, task type, tags and failure modes", p)
			}
			for _, name := range skillToolNames(s) {
				if !tools[name] {
					t.Errorf("%s: names tool %q, which the bundled pack does not have", p, name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Errorf("found %d bundled playbook skills, want at least 4", n)
	}
}

// skillToolNames lists the tools named in a skill's extra "tools" field
// (a list of {tool: name, note: …}).
func skillToolNames(s *SkillSpec) []string {
	var out []string
	list, _ := s.Extra["tools"].([]any)
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			if name, ok := m["tool"].(string); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

func BenchmarkParsePlaybook(b *testing.B) {
	md, err := os.ReadFile(filepath.Join(playbookTestdata, "frontmatter.skill.md"))
	if err != nil {
		b.Fatal(err)
	}
	var jsonl bytes.Buffer
	for i := range 100 {
		fmt.Fprintf(&jsonl, `{"title":"Skill %d","trigger":"When the user asks for thing %d.","steps":["First.","Second.","Third."],"tags":["a","b"]}`+"\n", i, i)
	}
	b.Run("md", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ParsePlaybook("a/x.skill.md", md, "demo"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonl-100", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ParsePlaybook("a/x.skill.jsonl", jsonl.Bytes(), "demo"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func ExampleParsePlaybook() {
	data := []byte(`{"title":"Reset a password","trigger":"A user asks for a new password.","steps":["Confirm the e-mail.","Send the link."]}
{"trigger":"Someone asks for the office address.","steps":["Give the address."],"cluster":"FAQ"}
{"title":"Broken","steps":["x"]}
`)
	skills, err := ParsePlaybook("skills/faq.skill.jsonl", data, "core")
	for _, s := range skills {
		fmt.Printf("line %d: %s %v %v\n", s.Line, s.Name, s.Steps, s.Extra)
	}
	// The good records load even though one line is broken.
	fmt.Println(err)
	// Output:
	// line 1: pack.core.faq.reset_a_password [Confirm the e-mail. Send the link.] map[]
	// line 2: pack.core.faq.line_2 [Give the address.] map[cluster:FAQ]
	// skills/faq.skill.jsonl:3: missing required field "trigger"
}
