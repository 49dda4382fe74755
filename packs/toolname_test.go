package packs_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/packs"
)

// The rule of OpenAI Chat Completions, written out here rather than taken
// from the package: "Must be a-z, A-Z, 0-9, or contain underscores and
// dashes, with a maximum length of 64" (openai-go v3,
// shared.FunctionDefinitionParam.Name). Anthropic's and Responses' rules
// allow the same characters up to 128.
var chatNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestCheckToolName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"slugify", true},
		{"weather.get", true},
		{"Get Weather", true},
		{"météo", true},
		{strings.Repeat("a", 70), true},
		{strings.Repeat("é", 128), true},
		{"", false},
		{strings.Repeat("a", 129), false},
		{"bad\xffutf8", false},
		{" lead", false},
		{"trail\u00a0", false},
		{"new\nline", false},
		{"tab\tname", false},
		{"bidi\u202eevil", false},
		{"zero\u200bwidth", false},
		{"nul\x00", false},
	} {
		err := packs.CheckToolName(c.name)
		if c.ok != (err == nil) {
			t.Errorf("CheckToolName(%q) = %v, want ok %v", c.name, err, c.ok)
			continue
		}
		var ne *packs.ToolNameError
		if err != nil && (!errors.Is(err, packs.ErrToolName) || !errors.As(err, &ne) || ne.Name != c.name ||
			!strings.Contains(err.Error(), packs.APINameRule)) {
			t.Errorf("CheckToolName(%q) = %v; want a *ToolNameError naming the tool and the rule", c.name, err)
		}
	}
}

func TestAPIToolName(t *testing.T) {
	long := strings.Repeat("x", 64)
	for _, c := range []struct {
		name string
		// prefix is what the rendered name starts with; "" means the name
		// is kept as it is.
		prefix string
	}{
		{"slugify", ""},
		{"A-b_9", ""},
		{long, ""},
		{"weather.get", "weather_get_"},
		{"Get Weather", "Get_Weather_"},
		{"a..b", "a_b_"},
		{".dot", "dot_"},
		{"météo", "m_t_o_"},
		{"日本語", "tool_"},
		{long + "y", strings.Repeat("x", 55) + "_"},
		{strings.Repeat("é", 128), "tool_"},
	} {
		got := packs.APIToolName(c.name)
		if !chatNameRE.MatchString(got) || !packs.IsAPIToolName(got) {
			t.Errorf("APIToolName(%q) = %q breaks the Chat Completions rule", c.name, got)
		}
		if got != packs.APIToolName(c.name) {
			t.Errorf("APIToolName(%q) is not stable", c.name)
		}
		switch {
		case c.prefix == "" && got != c.name:
			t.Errorf("APIToolName(%q) = %q, want the name kept", c.name, got)
		case c.prefix != "" && (!strings.HasPrefix(got, c.prefix) || len(got) != len(c.prefix)+8):
			t.Errorf("APIToolName(%q) = %q, want %q and 8 hex digits", c.name, got, c.prefix)
		}
	}
	// Names that differ only in what is replaced get different names.
	seen := map[string]string{}
	for _, n := range []string{"a.b", "a b", "a/b", "a:b", "a_b.", "a.b.", "a..b", "a. b"} {
		got := packs.APIToolName(n)
		if prev, dup := seen[got]; dup {
			t.Errorf("APIToolName(%q) = APIToolName(%q) = %q", n, prev, got)
		}
		seen[got] = n
	}
}
