package index

import (
	"testing"

	"github.com/skillhost/skillhost/index/internal/redact"
)

// The exported rewriter applies exactly the rules of skill answers.
func TestToolRefRewriter(t *testing.T) {
	known := []string{"web_search", "read_file", "fetch"}
	visible := func(name string) bool { return name == "read_file" }
	r := NewToolRefRewriter(visible, known)
	for in, want := range map[string]string{
		"Call `web_search`, then read_file.": "Call " + redact.ToolGuidance + ", then read_file.",
		"fetch the page with `fetch`":        "fetch the page with " + redact.ToolGuidance,
		"nothing to do":                      "nothing to do",
	} {
		if got := r.Rewrite(in); got != want {
			t.Errorf("Rewrite(%q) = %q, want %q", in, got, want)
		}
	}
	for _, r := range []*ToolRefRewriter{nil, NewToolRefRewriter(nil, known), NewToolRefRewriter(func(string) bool { return true }, known)} {
		if got := r.Rewrite("use web_search"); got != "use web_search" {
			t.Errorf("a rewriter with nothing to hide rewrote: %q", got)
		}
	}
}
