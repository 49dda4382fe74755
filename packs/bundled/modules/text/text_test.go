package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/guests/go/skill"
	"github.com/skillhost/skillhost/guests/go/skill/skilltest"
)

// call runs a tool through the SDK, as its export would.
func call[Out any](t *testing.T, tool string, in any) (Out, *skill.Error) {
	t.Helper()
	b, _ := json.Marshal(in)
	var out Out
	raw, err := skill.Invoke(tool, b)
	if err != nil {
		var e *skill.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: error %v is not a *skill.Error", tool, err)
		}
		return out, e
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: output %s: %v", tool, raw, err)
	}
	return out, nil
}

func TestSlugify(t *testing.T) {
	tests := []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"text": "Hello, Wörld!"}, "hello-world"},
		{map[string]any{"text": "  Crème brûlée: Straße & Æsir  "}, "creme-brulee-strasse-aesir"},
		{map[string]any{"text": "Don't stop_me now", "separator": "_"}, "dont_stop_me_now"},
		{map[string]any{"text": "Keep The Case", "keep_case": true}, "Keep-The-Case"},
		{map[string]any{"text": "Привет мир hello"}, "hello"},
		{map[string]any{"text": "Привет мир hello", "unicode": true}, "привет-мир-hello"},
		{map[string]any{"text": "one two three four", "max_length": 9}, "one-two"},
		{map[string]any{"text": "supercalifragilistic", "max_length": 5}, "super"},
		{map[string]any{"text": "!!!"}, ""},
	}
	for _, tt := range tests {
		got, err := call[SlugifyOut](t, "slugify", tt.in)
		if err != nil {
			t.Fatalf("%v: %v", tt.in, err)
		}
		if got.Slug != tt.want {
			t.Errorf("slugify(%v) = %q, want %q", tt.in, got.Slug, tt.want)
		}
	}
	if _, err := call[SlugifyOut](t, "slugify", map[string]any{"text": "x", "separator": "/"}); err == nil || err.Code != abi.CodeInvalidInput {
		t.Errorf("bad separator: error = %v, want invalid_input", err)
	}
}

func TestWordCount(t *testing.T) {
	text := "The cat sat. The cat ran!\n\nA well-known dog didn't care?\n"
	got, err := call[WordCountOut](t, "word_count", map[string]any{"text": text, "top": 3})
	if err != nil {
		t.Fatal(err)
	}
	want := WordCountOut{
		Words: 11, UniqueWords: 9, Lines: 3, Sentences: 3, Paragraphs: 2,
		Characters: len(text), CharactersNoSpaces: 45, Bytes: len(text), ReadingTimeSeconds: 3,
		TopWords: []WordFreq{{"cat", 2}, {"the", 2}, {"a", 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got, _ = call[WordCountOut](t, "word_count", map[string]any{"text": text, "exclude_stopwords": true, "min_word_length": 4})
	if diff := cmp.Diff([]WordFreq{{"care", 1}, {"didn't", 1}, {"well-known", 1}}, got.TopWords); diff != "" {
		t.Errorf("filtered top words (-want +got):\n%s", diff)
	}
	got, _ = call[WordCountOut](t, "word_count", map[string]any{"text": ""})
	if got.Words != 0 || got.Lines != 0 || got.TopWords == nil {
		t.Errorf("empty text: %+v", got)
	}
}

func TestCaseConvert(t *testing.T) {
	tests := []struct{ text, to, want string }{
		{"parseHTTPResponse code2", "snake", "parse_http_response_code2"},
		{"user_id", "camel", "userId"},
		{"user-id", "pascal", "UserId"},
		{"HTTPServer error", "kebab", "http-server-error"},
		{"fooBar baz", "constant", "FOO_BAR_BAZ"},
		{"the QUICK_brown fox", "title", "The Quick Brown Fox"},
		{"TheQuickBrown", "sentence", "The quick brown"},
		{"MiXed case", "upper", "MIXED CASE"},
		{"MiXed case", "lower", "mixed case"},
		{"", "snake", ""},
	}
	for _, tt := range tests {
		got, err := call[CaseConvertOut](t, "case_convert", map[string]string{"text": tt.text, "to": tt.to})
		if err != nil {
			t.Fatal(err)
		}
		if got.Result != tt.want {
			t.Errorf("case_convert(%q, %s) = %q, want %q", tt.text, tt.to, got.Result, tt.want)
		}
	}
	if _, err := call[CaseConvertOut](t, "case_convert", map[string]string{"text": "x", "to": "weird"}); err == nil || err.Code != abi.CodeInvalidInput {
		t.Errorf("bad case: %v", err)
	}
}

func TestRegex(t *testing.T) {
	got, err := call[RegexExtractOut](t, "regex_extract", map[string]any{
		"pattern": `(?P<user>\w+)@(\w+)\.com`, "text": "a bob@x.com\nc amy@y.com", "max_matches": 1})
	if err != nil {
		t.Fatal(err)
	}
	want := RegexExtractOut{Count: 1, Truncated: true, Matches: []Match{{
		Text: "bob@x.com", Start: 2, End: 11, Line: 1,
		Groups: []string{"bob", "x"}, Named: map[string]string{"user": "bob"},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got, _ = call[RegexExtractOut](t, "regex_extract", map[string]any{"pattern": `^c.*$`, "text": "a\nB\nc1", "multiline": true, "case_insensitive": true})
	if got.Count != 1 || got.Matches[0].Line != 3 || got.Matches[0].Text != "c1" {
		t.Errorf("multiline: %+v", got)
	}
	if _, err := call[RegexExtractOut](t, "regex_extract", map[string]any{"pattern": `(a`, "text": "a"}); err == nil || err.Code != abi.CodeInvalidInput {
		t.Errorf("bad pattern: %v", err)
	}
	rep, err := call[RegexReplaceOut](t, "regex_replace", map[string]any{"pattern": `(\w+)@`, "text": "bob@x amy@y", "replacement": "<$1>@"})
	if err != nil || rep.Result != "<bob>@x <amy>@y" || rep.Replacements != 2 {
		t.Errorf("replace = %+v, %v", rep, err)
	}
	rep, _ = call[RegexReplaceOut](t, "regex_replace", map[string]any{"pattern": `x`, "text": "axb", "replacement": "$1", "literal": true})
	if rep.Result != "a$1b" {
		t.Errorf("literal replace = %q", rep.Result)
	}
}

func TestTextDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	new := "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n"
	got, err := call[TextDiffOut](t, "text_diff", map[string]any{"old": old, "new": new, "context": 2, "old_name": "x.txt", "new_name": "y.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := TextDiffOut{Added: 2, Removed: 1, Hunks: 2, Diff: `--- x.txt
+++ y.txt
@@ -1,4 +1,4 @@
 a
-b
+B
 c
 d
@@ -9,2 +9,3 @@
 i
 j
+k
`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	got, _ = call[TextDiffOut](t, "text_diff", map[string]any{"old": "x", "new": "x\n"})
	wantDiff := "--- a\n+++ b\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n"
	if diff := cmp.Diff(wantDiff, got.Diff); diff != "" {
		t.Errorf("final newline (-want +got):\n%s", diff)
	}
	got, _ = call[TextDiffOut](t, "text_diff", map[string]any{"old": "", "new": "one\n"})
	if diff := cmp.Diff("--- a\n+++ b\n@@ -0,0 +1 @@\n+one\n", got.Diff); diff != "" {
		t.Errorf("from empty (-want +got):\n%s", diff)
	}
	got, _ = call[TextDiffOut](t, "text_diff", map[string]any{"old": "a  b\n", "new": "a b\n", "ignore_whitespace": true})
	if !got.Identical || got.Diff != "" {
		t.Errorf("ignore whitespace: %+v", got)
	}
}

// TestTextDiffApplies checks on random texts that applying the produced
// unified diff to old gives new.
func TestTextDiffApplies(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	gen := func() string {
		var b strings.Builder
		for range rng.Intn(30) {
			b.WriteString(strconv.Itoa(rng.Intn(6)))
			b.WriteByte('\n')
		}
		s := b.String()
		if s != "" && rng.Intn(4) == 0 {
			s = strings.TrimSuffix(s, "\n")
		}
		return s
	}
	for i := range 500 {
		old, new := gen(), gen()
		ctx := rng.Intn(4)
		got, err := call[TextDiffOut](t, "text_diff", map[string]any{"old": old, "new": new, "context": ctx})
		if err != nil {
			t.Fatal(err)
		}
		patched, perr := applyUnified(old, got.Diff)
		if perr != nil || patched != new {
			t.Fatalf("case %d (context %d): patch gives %q (%v), want %q\nold %q\ndiff:\n%s", i, ctx, patched, perr, new, old, got.Diff)
		}
	}
}

// applyUnified applies a unified diff produced by text_diff to old.
func applyUnified(old, diff string) (string, error) {
	if diff == "" {
		return old, nil
	}
	oldLines, _ := splitLinesKeep(old)
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")[2:]
	var out []string
	pos := 0 // next old line to copy
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "@@ ") {
			return "", fmt.Errorf("expected hunk header, got %q", l)
		}
		var aStart, aLen int
		hdr := strings.Fields(l)[1][1:]
		if s, n, ok := strings.Cut(hdr, ","); ok {
			aStart, _ = strconv.Atoi(s)
			aLen, _ = strconv.Atoi(n)
		} else {
			aStart, _ = strconv.Atoi(hdr)
			aLen = 1
		}
		first := aStart - 1
		if aLen == 0 {
			first = aStart
		}
		out = append(out, oldLines[pos:first]...)
		pos = first
		for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "@@ ") {
			i++
			l := lines[i]
			switch l[0] {
			case ' ', '-':
				if oldLines[pos] != l[1:]+"\n" && oldLines[pos] != l[1:] {
					return "", fmt.Errorf("context mismatch at old line %d: %q vs %q", pos+1, oldLines[pos], l)
				}
				if l[0] == ' ' {
					out = append(out, oldLines[pos])
				}
				pos++
			case '+':
				out = append(out, l[1:]+"\n")
			case '\\':
				// the previous line has no newline
				prev := lines[i-1]
				if prev[0] == '+' || prev[0] == ' ' {
					out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
				}
			}
		}
	}
	out = append(out, oldLines[pos:]...)
	return strings.Join(out, ""), nil
}

func splitLinesKeep(s string) ([]string, bool) {
	if s == "" {
		return nil, true
	}
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts, strings.HasSuffix(s, "\n")
}

// TestDescribe checks that describe lists exactly the tools exports.go
// exports, each with a description and schemas.
func TestDescribe(t *testing.T) {
	skilltest.CheckDescription(t, caseConvertTool, regexExtractTool, regexReplaceTool, slugifyTool, textDiffTool, wordCountTool)
}
