package index

import "testing"

func TestNameTerms(t *testing.T) {
	if got := nameTerms("gitCreateBranch"); got != "git create branch" {
		t.Errorf("nameTerms = %q", got)
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
