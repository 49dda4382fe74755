package registry

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A SKILL.md's frontmatter becomes JSON values with every scalar that is
// not a number, boolean or null kept as written, so a host comparing the
// served file with its entry finds the same fields.
func TestFrontmatterJSON(t *testing.T) {
	for _, tc := range []struct {
		name, md string
		want     map[string]any
		err      string
	}{
		{name: "fields", md: "---\nname: x\ndescription: d\nversion: 3\nratio: 0.5\nbeta: true\nnone: null\ndate: 2026-01-02\nwhen: 12:30\nhuge: .inf\ntags: [a, 7]\nmetadata:\n  k: v\n---\nbody\n",
			want: map[string]any{"name": "x", "description": "d", "version": int64(3), "ratio": 0.5, "beta": true, "none": nil,
				"date": "2026-01-02", "when": "12:30", "huge": ".inf", "tags": []any{"a", int64(7)}, "metadata": map[string]any{"k": "v"}}},
		{name: "crlf and dots", md: "---\r\nname: x\r\ndescription: d\r\n...\r\nbody", want: map[string]any{"name": "x", "description": "d"}},
		{name: "anchors", md: "---\nbase: &b {k: 1}\nname: x\nmore:\n  <<: *b\n  j: 2\n---\n",
			want: map[string]any{"base": map[string]any{"k": int64(1)}, "name": "x", "more": map[string]any{"k": int64(1), "j": int64(2)}}},
		{name: "no frontmatter", md: "# Title\n", err: "does not start"},
		{name: "unclosed", md: "---\nname: x\n", err: "no closing line"},
		{name: "not a mapping", md: "---\n- a\n---\n", err: "not a mapping"},
		{name: "empty", md: "---\n---\n", err: "empty"},
		{name: "deep", md: "---\na: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n---\n", err: "nests too deeply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := frontmatterJSON([]byte(tc.md))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A made SKILL.md quotes what YAML would misread, and its frontmatter
// reads back as the fields it was made from.
func TestRenderSkillMD(t *testing.T) {
	md := renderSkillMD("pack.ops.x", "key: value # not a comment", "", "", map[string]string{"a": "yes"}, "\n\nDo it.")
	if !strings.HasSuffix(md, "---\n\nDo it.\n") {
		t.Errorf("body: %q", md)
	}
	fm, err := frontmatterJSON([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "pack.ops.x", "description": "key: value # not a comment", "metadata": map[string]any{"a": "yes"}}
	if diff := cmp.Diff(want, fm); diff != "" {
		t.Errorf("(-want +got):\n%s\n%s", diff, md)
	}
}

func FuzzFrontmatterJSON(f *testing.F) {
	f.Add([]byte("---\nname: x\ndescription: d\n---\nbody\n"))
	f.Add([]byte("---\na: &a [*a]\n---\n"))
	f.Add([]byte("---\n{a: [1, {b: .nan}]}\n---\n"))
	f.Fuzz(func(t *testing.T, md []byte) {
		frontmatterJSON(md) // must not panic or loop
	})
}
