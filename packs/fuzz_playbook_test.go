package packs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// addPlaybookSeeds adds the testdata and bundled files with the given
// suffix, and extra snippets, to f's corpus.
func addPlaybookSeeds(f *testing.F, suffix string, extra ...string) {
	for _, dir := range []string{playbookTestdata, "bundled/skills/*"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"+suffix))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// checkPlaybookResult checks what every ParsePlaybook result must satisfy,
// whatever the input.
func checkPlaybookResult(t *testing.T, file string, data []byte, single bool) {
	skills, err := ParsePlaybook(file, data, "fuzz")
	for _, e := range flattenErrors(err) {
		var me *ManifestError
		if !errors.As(e, &me) || !errors.Is(e, ErrInvalidManifest) {
			t.Fatalf("error %v is %T, want a *ManifestError", e, e)
		}
		if me.File != file {
			t.Fatalf("error %v names file %q, want %q", e, me.File, file)
		}
	}
	if single && (len(skills) == 1) == (err != nil) || single && len(skills) > 1 {
		t.Fatalf("single-skill file gave %d skills and error %v", len(skills), err)
	}
	names := map[string]bool{}
	for _, s := range skills {
		if s == nil {
			t.Fatal("nil skill")
		}
		if strings.TrimSpace(s.Trigger) == "" || s.Trigger != strings.TrimSpace(s.Trigger) {
			t.Fatalf("trigger %q", s.Trigger)
		}
		if len(s.Steps) == 0 {
			t.Fatal("no steps")
		}
		for _, step := range s.Steps {
			if step == "" || step != strings.TrimSpace(step) {
				t.Fatalf("step %q", step)
			}
		}
		if !hexRE.MatchString(s.ContentHash) {
			t.Fatalf("content hash %q", s.ContentHash)
		}
		if !playbookNameRE.MatchString(s.Name) || len(s.Name) > maxPlaybookNameLen {
			t.Fatalf("name %q", s.Name)
		}
		if names[s.Name] {
			t.Fatalf("name %q returned twice", s.Name)
		}
		names[s.Name] = true
		switch s.TaskType {
		case TaskBrowser, TaskAPI, TaskCode, TaskDomain, TaskUnknown:
		default:
			t.Fatalf("task type %q", s.TaskType)
		}
		if s.Kind != KindPlaybook || s.File != file || s.Line < 1 {
			t.Fatalf("kind %q, file %q, line %d", s.Kind, s.File, s.Line)
		}
		if s.ContentHash != mustPlaybookHash(t, s) {
			t.Fatal("content hash does not match the skill's fields")
		}
	}
	// Parsing is deterministic.
	again, err2 := ParsePlaybook(file, data, "fuzz")
	if diff := cmp.Diff(skills, again); diff != "" {
		t.Fatalf("second parse differs (-first +second):\n%s", diff)
	}
	if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
		t.Fatalf("second parse: %v, first: %v", err2, err)
	}
}

func mustPlaybookHash(t *testing.T, s *SkillSpec) string {
	h, err := playbookHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func FuzzParsePlaybookYAML(f *testing.F) {
	addPlaybookSeeds(f, ".skill.yaml",
		"trigger: t\nsteps: [s]\n",
		"trigger: t\nsteps: &s [a, b]\nfailure_modes: *s\n",
		"base: &b {trigger: t, steps: [s]}\n<<: *b\n",
		"- trigger: t\n  steps: [s]\n",
		"trigger: \" \"\nsteps: [\"\", 1, null, {}]\ntask_type: x\nname: learned.x\n",
		"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\ntrigger: t\nsteps: [s]\n",
		"trigger: t\nsteps: [s]\ntrigger: u\n",
		"title: !!binary aGk=\ntrigger: t\nsteps: [s]\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPlaybookResult(t, "f/fuzz.skill.yaml", data, true)
	})
}

func FuzzParsePlaybookJSON(f *testing.F) {
	addPlaybookSeeds(f, ".skill.json",
		`{"trigger":"t","steps":["s"]}`,
		`[{"trigger":"t","steps":["s"]}]`,
		`{"trigger":"t","steps":["s"],"x":1e400,"y":"\ud83d\ude00","z":"\ud800"}`,
		`{"trigger":"t","steps":["s"],"trigger":"u"}`,
		`{"trigger":"t","steps":["s"],"<<":{"a":1}}`,
		"\ufeff{\"trigger\":\"t\",\"steps\":[\"s\"]}",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPlaybookResult(t, "f/fuzz.skill.json", data, true)
	})
}

func FuzzParsePlaybookJSONL(f *testing.F) {
	addPlaybookSeeds(f, ".skill.jsonl",
		"{\"title\":\"A\",\"trigger\":\"t\",\"steps\":[\"s\"]}\n{\"title\":\"a\",\"trigger\":\"t\",\"steps\":[\"s\"]}\n",
		"\n\n{\"trigger\":\"t\",\"steps\":[\"s\"]}\r\n{\"trigger\":\"t\",\"steps\":[\"s\"]}\n",
		"{\"name\":\"pack.fuzz.fuzz.line_2\",\"trigger\":\"t\",\"steps\":[\"s\"]}\n{\"trigger\":\"t\",\"steps\":[\"s\"]}\n",
		"nope\n{\"trigger\":\"\xff\",\"steps\":[\"s\"]}\n[1]\nnull\n{}\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPlaybookResult(t, "f/fuzz.skill.jsonl", data, false)
	})
}

func FuzzParsePlaybookMD(f *testing.F) {
	addPlaybookSeeds(f, ".skill.md",
		"---\ntrigger: t\nsteps: [s]\n---\nbody\n",
		"---\r\ntrigger: t\r\nsteps: [s]\r\n---\r\n",
		"---\n---\n",
		"---\ntrigger: t\n",
		"# no frontmatter\n",
		"\ufeff---\ntrigger: t\nsteps: [s]\n---   \n\n\n   indented body\n\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPlaybookResult(t, "f/fuzz.skill.md", data, true)
	})
}
