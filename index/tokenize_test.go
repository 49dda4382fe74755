package index

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitWords(t *testing.T) {
	cases := map[string][]string{
		"web_search":           {"web", "search"},
		"fs.readFile":          {"fs", "read", "file"},
		"getHTTPResponse":      {"get", "http", "response"},
		"HTTPServer":           {"http", "server"},
		"k8s.describe_pod":     {"k8s", "describe", "pod"},
		"helm-list-releases":   {"helm", "list", "releases"},
		"pack/core/login":      {"pack", "core", "login"},
		"sha256Sum":            {"sha256", "sum"},
		"already lower":        {"already", "lower"},
		"  __--..  ":           nil,
		"Crème brûlée":         {"crème", "brûlée"},
		`name:foo "bar" NEAR*`: {"name", "foo", "bar", "near"},
	}
	for in, want := range cases {
		if d := cmp.Diff(want, splitWords(in)); d != "" {
			t.Errorf("splitWords(%q) (-want +got):\n%s", in, d)
		}
	}
	if got := nameTerms("gitCreateBranch"); got != "git create branch" {
		t.Errorf("nameTerms = %q", got)
	}
}

func TestQueryTerms(t *testing.T) {
	cases := map[string][]string{
		"I need to read a file":     {"read", "file"},
		"the the the":               {"the"},
		"what's in the logs folder": {"logs", "folder"},
		"Read READ read":            {"read"},
		"web_search OR NOT news":    {"web", "search", "not", "news"}, // operators are words
		"to be or":                  {"to", "be", "or"},               // only stop-words: kept
		"":                          nil,
		"getUser by ID":             {"get", "user", "id"},
	}
	for in, want := range cases {
		if d := cmp.Diff(want, queryTerms(in)); d != "" {
			t.Errorf("queryTerms(%q) (-want +got):\n%s", in, d)
		}
	}
	var long string
	for i := range 40 {
		long += fmt.Sprintf("word%d ", i)
	}
	if got := len(queryTerms(long)); got != maxQueryTerms {
		t.Errorf("a 40-word query kept %d terms, want %d", got, maxQueryTerms)
	}
}

func TestFTSExprQuotesEveryTerm(t *testing.T) {
	cases := []struct {
		terms  []string
		prefix bool
		want   string
	}{
		{[]string{"web", "search"}, false, `"web" OR "search"`},
		{[]string{`a"b`}, false, `"a""b"`},
		{[]string{"near", "and"}, true, `"near" OR "and"*`},
		{[]string{"name:foo"}, false, `"name:foo"`},
	}
	for _, c := range cases {
		if got := ftsExpr(c.terms, c.prefix); got != c.want {
			t.Errorf("ftsExpr(%q) = %s, want %s", c.terms, got, c.want)
		}
	}
}

func TestPrefixUpperBoundsRange(t *testing.T) {
	for _, p := range []string{"web", "a", "é", "x_"} {
		hi := prefixUpper(p)
		for _, s := range []string{p, p + "a", p + "\U0010FFFF", p + "zzzz"} {
			if !(s >= p && s < hi) {
				t.Errorf("%q outside [%q, %q)", s, p, hi)
			}
		}
		for _, s := range []string{p[:len(p)-1], p[:len(p)-1] + string(rune(p[len(p)-1]+1))} {
			if s >= p && s < hi {
				t.Errorf("%q inside the range of %q", s, p)
			}
		}
	}
}
