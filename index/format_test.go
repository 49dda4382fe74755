package index

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillhost/skillhost/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// checkGolden compares got with testdata/golden/<name>, rewriting the
// file under -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	testenv.Golden(t, filepath.Join("testdata", "golden", name), []byte(got), *update)
}

func sampleDocs() []SkillContent {
	return []SkillContent{
		{
			Name:          "pack.core.browser_auth.login_basic",
			Title:         "Login with username/password",
			Description:   "Signs in to a site that shows a plain login form.",
			Trigger:       "The site asks for a username and password",
			TaskType:      "browser",
			Preconditions: []string{"Credentials are available from the vault", "The login page is open"},
			Steps: []string{
				"Fill the username field",
				"Fill the password field",
				"Press Sign in and wait for the dashboard",
			},
			FailureModes: []string{"Captcha shown: stop and ask the user", "Account locked: report it"},
		},
		{
			Name:         "pack.docs.release_notes",
			Title:        "Write release notes",
			Trigger:      "Asked to summarise changes for a release",
			Instructions: "# Release notes\n\nGroup changes by area.\n\n- Lead with breaking changes\n- Link each entry to its pull request",
		},
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {strings.Repeat("x", 400), 100},
		{"ééééé", 2}, // characters, not bytes
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.in); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestRenderSkillsGolden(t *testing.T) {
	checkGolden(t, "skill_context.txt", renderSkills(sampleDocs(), contextHeader("")))
	checkGolden(t, "skill_raw.txt", renderSkills(sampleDocs(), ""))
}

// TestFitSkillsCompressedGolden shows the block at budgets that force
// structured compression and, at the smallest, truncation.
func TestFitSkillsCompressedGolden(t *testing.T) {
	docs := sampleDocs()
	for _, budget := range []int{170, 120, 60} {
		got := fitSkills(docs, budget, contextHeader(""))
		if EstimateTokens(got.Text) > budget || !got.Compressed {
			t.Errorf("budget %d: %+v", budget, got)
		}
		checkGolden(t, fmt.Sprintf("skill_context_%d_tokens.txt", budget), got.Text)
	}
}

func TestFitSkillsUnderBudgetKeepsText(t *testing.T) {
	docs := sampleDocs()
	got := fitSkills(docs, 6000, contextHeader(""))
	if got.Compressed || got.Truncated {
		t.Errorf("small skills were compressed: %+v", got)
	}
	if want := renderSkills(docs, contextHeader("")); got.Text != want {
		t.Errorf("text changed under budget")
	}
	if got.RawTokens != got.FinalTokens || got.FinalTokens != EstimateTokens(got.Text) {
		t.Errorf("token figures %d/%d, text estimate %d", got.RawTokens, got.FinalTokens, EstimateTokens(got.Text))
	}
}

// TestFitSkillsCompressionOrder checks that the least important fields go
// first: with a budget just under the full rendering, the failure modes
// beyond three and the description are dropped before any step is touched.
func TestFitSkillsCompressionOrder(t *testing.T) {
	doc := SkillContent{
		Name: "pack.x.y", Title: "T", Trigger: "when", Description: strings.Repeat("d", 200),
		Steps:        []string{"step one", "step two", "step three"},
		FailureModes: []string{"f1", "f2", "f3", "f4", "f5"},
	}
	full := EstimateTokens(renderSkills([]SkillContent{doc}, contextHeader("")))
	got := fitSkills([]SkillContent{doc}, full-10, contextHeader(""))
	if !got.Compressed || got.Truncated {
		t.Fatalf("want compression without truncation, got %+v", got)
	}
	for _, s := range doc.Steps {
		if !strings.Contains(got.Text, s) {
			t.Errorf("step %q dropped before less important fields:\n%s", s, got.Text)
		}
	}
	if strings.Contains(got.Text, "ddd") {
		t.Errorf("description kept:\n%s", got.Text)
	}
	if !strings.Contains(got.Text, "- f1") || strings.Contains(got.Text, "- f4") {
		t.Errorf("failure modes not capped at three first:\n%s", got.Text)
	}
}

// TestFitSkillsBudgetProperty renders many random, long skills into random
// budgets: the estimate of the result never exceeds the budget, an
// injection block always keeps its tags, and the first skill's name
// survives whenever the budget leaves room for its heading.
func TestFitSkillsBudgetProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyzé漢 "
		r := []rune(letters)
		n := 1 + rng.IntN(12)
		var b strings.Builder
		for range n {
			b.WriteRune(r[rng.IntN(len(r))])
		}
		return b.String()
	}
	text := func(words int) string {
		parts := make([]string, words)
		for i := range parts {
			parts[i] = word()
		}
		return strings.Join(parts, " ")
	}
	list := func(n, words int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = text(words)
		}
		return out
	}
	for i := range 120 {
		docs := make([]SkillContent, 1+rng.IntN(10))
		for j := range docs {
			docs[j] = SkillContent{
				Name:          "pack.p.skill_" + strings.Repeat("x", j+1),
				Title:         text(1 + rng.IntN(20)),
				Description:   text(rng.IntN(300)),
				Trigger:       text(1 + rng.IntN(60)),
				TaskType:      "api",
				Steps:         list(rng.IntN(30), 1+rng.IntN(60)),
				Preconditions: list(rng.IntN(10), 1+rng.IntN(30)),
				FailureModes:  list(rng.IntN(15), 1+rng.IntN(30)),
			}
			if rng.IntN(3) == 0 {
				docs[j].Instructions = text(rng.IntN(4000))
			}
		}
		budget := 200 + rng.IntN(5801)
		inject := i%2 == 0
		got := fitSkills(docs, budget, injectHeader(inject))
		if got.FinalTokens > budget || EstimateTokens(got.Text) > budget {
			t.Fatalf("case %d: %d tokens over budget %d", i, EstimateTokens(got.Text), budget)
		}
		if got.FinalTokens != EstimateTokens(got.Text) {
			t.Fatalf("case %d: FinalTokens %d, estimate %d", i, got.FinalTokens, EstimateTokens(got.Text))
		}
		if !utf8.ValidString(got.Text) {
			t.Fatalf("case %d: invalid UTF-8", i)
		}
		if inject && (!strings.HasPrefix(got.Text, skillContextOpen) || !strings.HasSuffix(got.Text, skillContextClose)) {
			t.Fatalf("case %d: tags lost:\n%s", i, got.Text)
		}
		if !strings.Contains(got.Text, docs[0].Name) {
			t.Fatalf("case %d: first skill's name cut at budget %d", i, budget)
		}
		if got.RawTokens > budget != got.Compressed {
			t.Fatalf("case %d: raw %d, budget %d, compressed %v", i, got.RawTokens, budget, got.Compressed)
		}
	}
}

func TestFitSkillsTinyBudget(t *testing.T) {
	docs := sampleDocs()
	for _, budget := range []int{0, 1, 5, 10, 20} {
		got := fitSkills(docs, budget, contextHeader(""))
		if EstimateTokens(got.Text) > budget {
			t.Errorf("budget %d: %d tokens", budget, EstimateTokens(got.Text))
		}
	}
}

func TestCutText(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"hello wonderful world", 12, "hello wonde…"},
		{"hello wonderful world", 18, "hello wonderful…"},
		{"abcdefghij", 5, "abcd…"},
		{"漢字漢字漢字", 3, "漢字…"},
		{"abc", 1, ""},
	}
	for _, tt := range tests {
		if got := cutText(tt.in, tt.n); got != tt.want {
			t.Errorf("cutText(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func BenchmarkFitSkills(b *testing.B) {
	docs := make([]SkillContent, 5)
	for i := range docs {
		docs[i] = sampleDocs()[0]
		docs[i].Steps = make([]string, 30)
		for j := range docs[i].Steps {
			docs[i].Steps[j] = strings.Repeat("do the thing carefully ", 8)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		fitSkills(docs, 1500, contextHeader(""))
	}
}

// injectHeader is the header of an injection block (inject) or of raw
// output.
func injectHeader(inject bool) string {
	if inject {
		return contextHeader("")
	}
	return ""
}
