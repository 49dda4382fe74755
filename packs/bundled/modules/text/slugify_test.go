package main

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// slugifyReference is the straightforward slugify that the buffer-based
// one must match byte for byte: words collected in a slice, each rune
// looked up in the fold table, joined at the end.
func slugifyReference(in SlugifyIn) string {
	sep := in.Separator
	if sep == "" {
		sep = "-"
	}
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for _, r := range in.Text {
		if f, ok := fold[r]; ok {
			if !in.KeepCase {
				f = strings.ToLower(f)
			}
			cur.WriteString(f)
			continue
		}
		switch {
		case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if !in.KeepCase {
				r = unicode.ToLower(r)
			}
			cur.WriteRune(r)
		case in.Unicode && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)):
			if !in.KeepCase {
				r = unicode.ToLower(r)
			}
			cur.WriteRune(r)
		case r == '\'' || r == '’' || unicode.Is(unicode.Mn, r):
		default:
			flush()
		}
	}
	flush()
	slug := strings.Join(words, sep)
	if in.MaxLength > 0 && utf8.RuneCountInString(slug) > in.MaxLength {
		var b strings.Builder
		n := 0
		for i, w := range words {
			add := utf8.RuneCountInString(w)
			if i > 0 {
				add += utf8.RuneCountInString(sep)
			}
			if n+add > in.MaxLength {
				if i == 0 {
					return string([]rune(w)[:in.MaxLength])
				}
				break
			}
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(w)
			n += add
		}
		slug = b.String()
	}
	return slug
}

// The ASCII path of slugify skips the fold table, so the table must hold
// no ASCII key; its replacements must be ASCII, which slugify lower-cases
// byte by byte.
func TestFoldTable(t *testing.T) {
	for r, f := range fold {
		if r < utf8.RuneSelf {
			t.Errorf("fold has the ASCII key %q", r)
		}
		if f == "" {
			t.Errorf("fold[%q] is empty", r)
		}
		for i := 0; i < len(f); i++ {
			if f[i] >= utf8.RuneSelf {
				t.Errorf("fold[%q] = %q is not ASCII", r, f)
			}
		}
	}
}

var slugifyCases = []SlugifyIn{
	{Text: ""},
	{Text: "Hello, Wörld! Fresh state in microseconds"},
	{Text: "  Crème brûlée: Straße & Æsir  "},
	{Text: "ẞIG ŒUVRE Þorn ŉ ĸ ſ ı"},
	{Text: "ẞIG ŒUVRE Þorn", KeepCase: true},
	{Text: "Don't stop_me now", Separator: "_"},
	{Text: "rock ’n’ roll", Separator: "."},
	{Text: "'''"},
	{Text: "Keep The Case", KeepCase: true},
	{Text: "Привет мир hello"},
	{Text: "Привет мир hello", Unicode: true},
	{Text: "ПРИВЕТ Мир", Unicode: true, KeepCase: true},
	{Text: "日本語のテキスト 123", Unicode: true},
	{Text: "e\u0301te\u0301 cafe\u0301"},
	{Text: "e\u0301te\u0301 cafe\u0301", Unicode: true},
	{Text: "\u0301\u0301 \u0301"},
	{Text: "İstanbul Ⱥ ǅ", Unicode: true},
	{Text: "one two three four", MaxLength: 9},
	{Text: "one two three four", MaxLength: 7},
	{Text: "one two three four", MaxLength: 3},
	{Text: "one two three four", MaxLength: 2},
	{Text: "one two three four", MaxLength: 100},
	{Text: "supercalifragilistic", MaxLength: 5},
	{Text: "straße straße", MaxLength: 3},
	{Text: "привет мир", Unicode: true, MaxLength: 4},
	{Text: "привет мир", Unicode: true, MaxLength: 8},
	{Text: "a b c d", Separator: "---", MaxLength: 5},
	{Text: "a b c d", Separator: "ü", MaxLength: 3},
	{Text: "a b", MaxLength: -1},
	{Text: "!!!"},
	{Text: "- _ . / \\ \t\n"},
	{Text: "----", Separator: "-"},
	{Text: "a--b__c..d", Separator: "_"},
	{Text: "\xff\xfe bad \xc3 utf8 \xe2\x80"},
	{Text: "\xff\xfe bad \xc3 utf8", Unicode: true},
	{Text: "\x00\x7f mixed\u00a0spaces\u2003here"},
	{Text: "Ⅻ ½ ² ٣", Unicode: true},
	{Text: "ÀÁÂÃÄÅĀĂĄǍǺ àáâãäåāăąǎǻ ǕǗǙǛ", KeepCase: true},
}

func TestSlugifyMatchesReference(t *testing.T) {
	for _, in := range slugifyCases {
		got, err := slugify(in)
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		if want := slugifyReference(in); got.Slug != want {
			t.Errorf("slugify(%+v) = %q, want %q", in, got.Slug, want)
		}
	}
}

// FuzzSlugify compares slugify with slugifyReference on any text and
// options.
func FuzzSlugify(f *testing.F) {
	for _, in := range slugifyCases {
		f.Add(in.Text, in.Separator, in.MaxLength, in.KeepCase, in.Unicode)
	}
	f.Fuzz(func(t *testing.T, text, sep string, maxLength int, keepCase, uni bool) {
		in := SlugifyIn{Text: text, Separator: sep, MaxLength: maxLength, KeepCase: keepCase, Unicode: uni}
		got, err := slugify(in)
		if err != nil {
			t.Fatal(err)
		}
		if want := slugifyReference(in); got.Slug != want {
			t.Errorf("slugify(%+v) = %q, want %q", in, got.Slug, want)
		}
	})
}
