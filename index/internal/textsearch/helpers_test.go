package textsearch

import (
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the FTS5 tables the expansion is measured against

	"github.com/skillhost/skillhost/internal/evalset"
)

// evalDir holds the project's retrieval evaluation set; tuneSets are the
// parts the ranking is tuned on (see the index package's eval_test.go).
const evalDir = "../../../testdata/eval"

var tuneSets = []string{"a", "b"}

// loadEvalSet reads the parts sets of the evaluation set.
func loadEvalSet(t testing.TB, sets ...string) ([]evalset.Tool, []evalset.Query) {
	t.Helper()
	tools, queries, err := evalset.LoadSets(evalDir, sets...)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) == 0 || len(queries) == 0 {
		t.Skipf("no evaluation set in %s", evalDir)
	}
	return tools, queries
}

// nameTerms is a name's words as the index stores them.
func nameTerms(name string) string { return strings.Join(SplitWords(name), " ") }

// fuzzSeeds are query texts that are FTS5 syntax, odd bytes or long.
var fuzzSeeds = []string{
	"web search", "web_search", `"`, `name:foo`, `NEAR(a b)`, `a AND b OR NOT c`, `*`, `^x`, `x*`, `(`, `)`, `{a b}:c`,
	"read_file", ".*", "(a|b)+", `\p{L}`, "[", "\x00", "\xff", "é€𝄞", "   ", "", "a\nb", "-x", "+x", "''", `\`,
	"getWeatherForecast", "pack.core.login_basic", "OR OR OR", "a b c d e f g h i j k l m n o p q r s t u v w x y z",
}
