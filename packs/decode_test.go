package packs

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// billionLaughs builds the classic alias bomb: levels of ten aliases each
// to the level below, 10^levels strings once expanded.
func billionLaughs(levels int) string {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= levels; i++ {
		prev := "*a" + strconv.Itoa(i-1)
		b.WriteString("a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [" + strings.Repeat(prev+", ", 9) + prev + "]\n")
	}
	return b.String()
}

// decodeErrors returns the ManifestErrors of a decodeYAML failure as
// "line: msg" strings.
func decodeErrors(t *testing.T, err error) []string {
	t.Helper()
	if !errors.Is(err, ErrInvalidManifest) {
		t.Fatalf("err = %v, want a ManifestError", err)
	}
	var out []string
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var me *ManifestError
		if !errors.As(err, &me) {
			t.Fatalf("%v is not a *ManifestError", err)
		}
		if me.File != "f.yaml" {
			t.Errorf("file %q, want f.yaml", me.File)
		}
		out = append(out, strconv.Itoa(me.Line)+": "+me.Msg)
	}
	walk(err)
	return out
}

func TestDecodeYAMLHostile(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"ten megabytes", "a: " + strings.Repeat("x", 10<<20), []string{"0: is 10485763 bytes; at most 1048576 allowed"}},
		{"billion laughs", billionLaughs(9), []string{"5: alias *a3 expands the document past 100122 nodes; refusing what looks like an alias bomb (write the values out instead of nesting aliases)"}},
		{"deep flow nesting", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), []string{"1: nesting is deeper than 128 levels"}},
		{"nesting past the parser's own limit", strings.Repeat("[", 20000) + strings.Repeat("]", 20000), []string{"0: nesting is deeper than 128 levels"}},
		{"deep block nesting", strings.Repeat("- ", 200) + "x\n", []string{"1: nesting is deeper than 128 levels"}},
		{"deep through an alias", "a: &d " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\nb: " + strings.Repeat("[", 50) + "*d" + strings.Repeat("]", 50) + "\n",
			[]string{"2: alias *d nests the document deeper than 128 levels"}},
		{"invalid UTF-8", "a: ok\nb: caf\xe9\n", []string{"2: invalid UTF-8 at byte offset 12; the file must be UTF-8 text"}},
		{"duplicate keys", "a: 1\nb:\n  c: 1\n  c: 2\na: 3\n", []string{
			`4: key "c" is repeated; it was first defined at line 3`,
			`5: key "a" is repeated; it was first defined at line 1`,
		}},
		{"non-string keys", "1: a\ntrue: b\n~: c\n[x]: d\n1.5: e\n'2': quoted keys are strings\n", []string{
			`1: key 1 is an integer; keys must be strings (quote it: "1")`,
			`2: key true is a boolean; keys must be strings (quote it: "true")`,
			`3: key ~ is null; keys must be strings (quote it: "~")`,
			`4: a mapping key is a sequence; keys must be strings`,
			`5: key 1.5 is a number; keys must be strings (quote it: "1.5")`,
		}},
		{"tab indentation", "a:\n  b: 1\n\tc: 2\n", []string{"2: a tab is used for indentation; YAML indentation must use spaces"}},
		{"self-referring alias", "a: &x [1, *x]\n", []string{"1: alias *x refers to a node that contains it, which would repeat without end; write the value out"}},
		{"two documents", "a: 1\n---\nb: 2\n", []string{"2: a second YAML document starts at line 2; expected exactly one document"}},
		{"control character", "a: 1\nb: x\x01y\n", []string{"2: control character U+0001 at byte offset 9; only printable text, tabs and newlines are allowed"}},
		{"syntax", "a: [unclosed\n", []string{"1: the [ list opened on this line is not closed with ], or a comma is missing between its items"}},
		{"unquoted colon", "a: 1\nb: use this: when\n", []string{`2: the value holds ": ", which YAML reads as the start of a mapping; put the whole value in quotes (description: "...")`}},
		{"misindented key", "a:\n  b: 1\n c: 2\n", []string{"3: this line does not continue the mapping or list above it; check its indentation, and quote values that hold quote marks, \": \" or \" #\" (inside '...' write an apostrophe as '')"}},
		{"unknown alias", "a: 1\nb: *nope\n", []string{"2: alias *nope refers to no anchor; define &nope before it, or write the value out"}},
		{"lone surrogate in JSON", "{\n\"a\": \"\\ud83d!\"}", []string{`2: escape \ud83d is half of a UTF-16 surrogate pair; write the character itself or a complete pair`}},
		{"reversed surrogates in JSON", `{"a": "\ude00\ud83d"}`, []string{`1: escape \ude00 is half of a UTF-16 surrogate pair; write the character itself or a complete pair`}},
		{"lone surrogate in YAML", "a: 1\nb: \"\\ud83d\"\n", []string{`2: escape \ud83d is half of a UTF-16 surrogate pair; write the character itself or a complete pair`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeYAML("f.yaml", []byte(tt.in))
			if d := cmp.Diff(tt.want, decodeErrors(t, err)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// A document built without decodeYAML's checks still cannot make the
// converter expand an alias bomb or recurse without end.
func TestNodeValueBudget(t *testing.T) {
	for name, in := range map[string]string{
		"bomb":  billionLaughs(9),
		"cycle": "a: &x [1, *x]\n",
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(in), &n); err != nil {
			t.Fatal(err)
		}
		if _, err := nodeValue("f.yaml", &n); !errors.Is(err, ErrInvalidManifest) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestDecodeYAMLBigLimit(t *testing.T) {
	in := "a: " + strings.Repeat("x", 2<<20) + "\n"
	if _, err := decodeYAML("f.yaml", []byte(in)); err == nil {
		t.Fatal("2 MiB accepted under the default cap")
	}
	if _, err := decodeYAMLLimit("f.yaml", []byte(in), 4<<20); err != nil {
		t.Fatal(err)
	}
}

// Aliases used the ordinary way, a few times each, stay well inside the
// budget.
func TestDecodeYAMLAliasesAllowed(t *testing.T) {
	in := "defaults: &d {timeout: 5s, tags: [a, b]}\nx: *d\ny: *d\nz:\n  <<: *d\n  timeout: 9s\n"
	v := mustValue(t, in)
	want := map[string]any{
		"defaults": map[string]any{"timeout": "5s", "tags": []any{"a", "b"}},
		"x":        map[string]any{"timeout": "5s", "tags": []any{"a", "b"}},
		"y":        map[string]any{"timeout": "5s", "tags": []any{"a", "b"}},
		"z":        map[string]any{"timeout": "9s", "tags": []any{"a", "b"}},
	}
	if d := cmp.Diff(want, v); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

func mustValue(t *testing.T, in string) any {
	t.Helper()
	n, err := decodeYAML("f.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	v, err := nodeValue("f.yaml", n)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNodeValueScalars(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"42", json.Number("42")},
		{"-7", json.Number("-7")},
		{"+12", json.Number("12")},
		{"0x1F", json.Number("31")},
		{"0o17", json.Number("15")},
		{"1_000", json.Number("1000")},
		{"12345678901234567890123", json.Number("12345678901234567890123")},
		{"1e3", json.Number("1e3")},
		{"0.1000000000000000000001", json.Number("0.1000000000000000000001")},
		{"1.5e+300", json.Number("1.5e+300")},
		{".5", json.Number("0.5")},
		{"true", true},
		{"False", false},
		{"yes", "yes"},
		{"on", "on"},
		{"No", "No"},
		{"!!bool yes", true},
		{"~", nil},
		{"null", nil},
		{"", nil},
		{"2001-12-14", "2001-12-14"},
		{"2001-12-14T21:59:43.10-05:00", "2001-12-14T21:59:43.10-05:00"},
		{"!!str 12", "12"},
		{"'12'", "12"},
		{"!!int '12'", json.Number("12")},
		{"!!float 3", json.Number("3")},
		{"!!binary aGVsbG8=", "aGVsbG8="},
		{`"caf\u00e9 \U0001F600"`, "café 😀"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := mustValue(t, "v: "+tt.in+"\n").(map[string]any)["v"]
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestNodeValueErrors(t *testing.T) {
	for in, want := range map[string]string{
		"v: .inf\n":         "1: .inf is not a finite number; JSON has no infinity or NaN",
		"v: -.Inf\n":        "1: -.Inf is not a finite number; JSON has no infinity or NaN",
		"v: .nan\n":         "1: .nan is not a finite number; JSON has no infinity or NaN",
		"\nv: !foo x\n":     "2: tag !foo is not supported; use plain YAML values",
		"v: !!int abc\n":    `1: "abc" is tagged !!int but is not a number`,
		"v: !!bool maybe\n": `1: "maybe" is tagged !!bool but is not true or false`,
		"v: {<<: 3}\n":      "1: the value of << must be a mapping or a list of mappings",
	} {
		n, err := decodeYAML("f.yaml", []byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		_, err = nodeValue("f.yaml", n)
		if d := cmp.Diff([]string{want}, decodeErrors(t, err)); d != "" {
			t.Errorf("%q: (-want +got)\n%s", in, d)
		}
	}
}

// JSON is read through the same path: numbers keep their digits,
// escapes (surrogate pairs included) their characters, and lines are
// still known.
func TestDecodeJSON(t *testing.T) {
	in := `{
  "big": 123456789012345678901234567890,
  "precise": 3.14159265358979323846264338327950288,
  "neg": -0.0,
  "exp": 6.02e23,
  "emoji": "\ud83d\ude00 and \uD83D\uDE01",
  "escaped": "\\ud83d stays text, \"quotes\" too",
  "accents": "caf\u00e9",
  "nested": {"list": [1, "two", null, true, {"deep": []}]}
}`
	v := mustValue(t, in)
	want := map[string]any{
		"big":     json.Number("123456789012345678901234567890"),
		"precise": json.Number("3.14159265358979323846264338327950288"),
		"neg":     json.Number("-0.0"),
		"exp":     json.Number("6.02e23"),
		"emoji":   "😀 and 😁",
		"escaped": `\ud83d stays text, "quotes" too`,
		"accents": "café",
		"nested":  map[string]any{"list": []any{json.Number("1"), "two", nil, true, map[string]any{"deep": []any{}}}},
	}
	if d := cmp.Diff(want, v); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	// Re-encoding gives the same numbers back.
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"big":123456789012345678901234567890`) {
		t.Errorf("big number lost: %s", b)
	}
	// Duplicate keys in JSON are refused like in YAML.
	_, err = decodeYAML("f.yaml", []byte("{\"a\": 1,\n \"a\": 2}"))
	if d := cmp.Diff([]string{`2: key "a" is repeated; it was first defined at line 1`}, decodeErrors(t, err)); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

func TestDecodeYAMLEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n", "# only a comment\n", "---\n"} {
		n, err := decodeYAML("f.yaml", []byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if v, err := nodeValue("f.yaml", n); err != nil || v != nil {
			t.Errorf("%q: value %v, %v; want nil", in, v, err)
		}
	}
	// A trailing document marker does not make a second document.
	if _, err := decodeYAML("f.yaml", []byte("a: 1\n---\n")); err != nil {
		t.Error(err)
	}
}

func TestLineOffset(t *testing.T) {
	a := &ManifestError{File: "f", Line: 2, Msg: "x"}
	b := &ManifestError{File: "f", Msg: "no line"}
	c := &ManifestError{File: "f", Line: 5, Msg: "joined"}
	lineOffset([]error{a, b, errors.Join(c)}, 3)
	if a.Line != 5 || b.Line != 0 || c.Line != 8 {
		t.Errorf("lines %d %d %d, want 5 0 8", a.Line, b.Line, c.Line)
	}
}

func BenchmarkDecodeYAML(b *testing.B) {
	data := []byte(goodManifest)
	b.ReportAllocs()
	for b.Loop() {
		n, err := decodeYAML("pack.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := nodeValue("pack.yaml", n); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeYAMLAliasBomb(b *testing.B) {
	data := []byte(billionLaughs(9))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeYAML("f.yaml", data); err == nil {
			b.Fatal("bomb accepted")
		}
	}
}
