package textsearch

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
		if d := cmp.Diff(want, SplitWords(in)); d != "" {
			t.Errorf("SplitWords(%q) (-want +got):\n%s", in, d)
		}
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
		if d := cmp.Diff(want, QueryTerms(in)); d != "" {
			t.Errorf("QueryTerms(%q) (-want +got):\n%s", in, d)
		}
	}
	var long string
	for i := range 40 {
		long += fmt.Sprintf("word%d ", i)
	}
	if got := len(QueryTerms(long)); got != maxQueryTerms {
		t.Errorf("a 40-word query kept %d terms, want %d", got, maxQueryTerms)
	}
}
