package main

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skillhost/skillhost/guests/go/skill"
)

// ---- slugify ----

type SlugifyIn struct {
	Text      string `json:"text" desc:"Text to turn into a slug, e.g. a title" jsonschema:"minLength=1"`
	Separator string `json:"separator,omitempty" desc:"Character between words" jsonschema:"enum=-|_|.,default=-"`
	MaxLength int    `json:"max_length,omitempty" desc:"Cut the slug at a word boundary to at most this many characters (0: no limit)" jsonschema:"minimum=0,maximum=500"`
	KeepCase  bool   `json:"keep_case,omitempty" desc:"Keep upper-case letters instead of lower-casing"`
	Unicode   bool   `json:"unicode,omitempty" desc:"Keep letters outside ASCII (Cyrillic, CJK ...) instead of dropping them; accented Latin letters are always folded to ASCII"`
}

type SlugifyOut struct {
	Slug string `json:"slug"`
}

var slugifyTool = skill.Tool("slugify", slugify,
	skill.Category("text"), skill.Idempotent(),
	skill.Describe("Turn text into a URL- and filename-safe slug: accents folded to ASCII (é→e, ß→ss), punctuation dropped, words joined by '-' (or '_' / '.'), lower-cased. Example: \"Hello, Wörld!\" → \"hello-world\"."),
	skill.Tags("text", "slug", "url"))

// slugify builds the slug in one byte buffer: a word's characters are
// appended as they are read, the separator before every word but the
// first. ASCII is handled without the fold table, which holds no ASCII
// letters (a test checks it).
func slugify(in SlugifyIn) (SlugifyOut, error) {
	sep := in.Separator
	if sep == "" {
		sep = "-"
	}
	text := in.Text
	lower := !in.KeepCase
	b := make([]byte, 0, len(text))
	// ends holds where each word ends in b, needed only to cut at a word
	// boundary.
	var ends []int
	inWord := false
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				if !inWord {
					b, ends = startWord(b, ends, sep, in.MaxLength > 0)
					inWord = true
				}
				b = append(b, c)
			case 'A' <= c && c <= 'Z':
				if !inWord {
					b, ends = startWord(b, ends, sep, in.MaxLength > 0)
					inWord = true
				}
				if lower {
					c += 'a' - 'A'
				}
				b = append(b, c)
			case c == '\'':
				// an apostrophe joins: "don't" → "dont"
			default:
				inWord = false
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if f, ok := fold[r]; ok {
			if !inWord {
				b, ends = startWord(b, ends, sep, in.MaxLength > 0)
				inWord = true
			}
			for j := 0; j < len(f); j++ {
				c := f[j]
				if lower && 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				b = append(b, c)
			}
			continue
		}
		switch {
		case in.Unicode && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)):
			if lower {
				r = unicode.ToLower(r)
			}
			if !inWord {
				b, ends = startWord(b, ends, sep, in.MaxLength > 0)
				inWord = true
			}
			b = utf8.AppendRune(b, r)
		case r == '’' || unicode.Is(unicode.Mn, r):
			// apostrophes and combining marks join
		default:
			inWord = false
		}
	}
	if in.MaxLength > 0 && utf8.RuneCount(b) > in.MaxLength {
		ends = append(ends, len(b))
		b = cutAtWord(b, ends, sep, in.MaxLength)
	}
	return SlugifyOut{Slug: string(b)}, nil
}

// startWord appends sep to b before a word that is not the first, noting
// in ends where the previous word ended when cut is set.
func startWord(b []byte, ends []int, sep string, cut bool) ([]byte, []int) {
	if len(b) > 0 {
		if cut {
			ends = append(ends, len(b))
		}
		b = append(b, sep...)
	}
	return b, ends
}

// cutAtWord keeps as many whole words of slug as fit in max characters;
// ends holds where each word ends, and sep sits between words. A single
// first word longer than max is cut.
func cutAtWord(slug []byte, ends []int, sep string, max int) []byte {
	sepLen := utf8.RuneCountInString(sep)
	n, keep, start := 0, 0, 0
	for i, end := range ends {
		add := utf8.RuneCount(slug[start:end])
		if i > 0 {
			add += sepLen
		}
		if n+add > max {
			if i == 0 {
				return firstRunes(slug[:end], max)
			}
			break
		}
		n += add
		keep = end
		start = end + len(sep)
	}
	return slug[:keep]
}

// firstRunes returns the first n characters of the valid UTF-8 text b.
func firstRunes(b []byte, n int) []byte {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return b[:i]
}

// fold maps Latin letters with diacritics (and a few ligatures) to ASCII.
var fold = func() map[rune]string {
	m := map[rune]string{
		'ß': "ss", 'ẞ': "SS", 'Æ': "AE", 'æ': "ae", 'Œ': "OE", 'œ': "oe", 'Ø': "O", 'ø': "o",
		'Đ': "D", 'đ': "d", 'Ð': "D", 'ð': "d", 'Ł': "L", 'ł': "l", 'Þ': "TH", 'þ': "th",
		'Ħ': "H", 'ħ': "h", 'ı': "i", 'Ŀ': "L", 'ŀ': "l", 'ŉ': "n", 'Ŋ': "N", 'ŋ': "n",
		'Ŧ': "T", 'ŧ': "t", 'ĸ': "k", 'ſ': "s",
	}
	groups := map[string]string{
		"A": "ÀÁÂÃÄÅĀĂĄǍǺ", "a": "àáâãäåāăąǎǻ", "C": "ÇĆĈĊČ", "c": "çćĉċč",
		"D": "Ď", "d": "ď", "E": "ÈÉÊËĒĔĖĘĚ", "e": "èéêëēĕėęě", "G": "ĜĞĠĢ", "g": "ĝğġģ",
		"H": "Ĥ", "h": "ĥ", "I": "ÌÍÎÏĨĪĬĮİǏ", "i": "ìíîïĩīĭįǐ", "J": "Ĵ", "j": "ĵ",
		"K": "Ķ", "k": "ķ", "L": "ĹĻĽ", "l": "ĺļľ", "N": "ÑŃŅŇ", "n": "ñńņň",
		"O": "ÒÓÔÕÖŌŎŐǑ", "o": "òóôõöōŏőǒ", "R": "ŔŖŘ", "r": "ŕŗř", "S": "ŚŜŞŠȘ", "s": "śŝşšș",
		"T": "ŢŤȚ", "t": "ţťț", "U": "ÙÚÛÜŨŪŬŮŰŲǓǕǗǙǛ", "u": "ùúûüũūŭůűųǔǖǘǚǜ", "W": "Ŵ", "w": "ŵ",
		"Y": "ÝŶŸ", "y": "ýÿŷ", "Z": "ŹŻŽ", "z": "źżž",
	}
	for ascii, letters := range groups {
		for _, r := range letters {
			m[r] = ascii
		}
	}
	return m
}()

// ---- word_count ----

type WordCountIn struct {
	Text             string `json:"text" desc:"The text to measure"`
	Top              *int   `json:"top,omitempty" desc:"How many of the most frequent words to list" jsonschema:"minimum=0,maximum=100,default=10"`
	MinWordLength    int    `json:"min_word_length,omitempty" desc:"Ignore words shorter than this in top_words" jsonschema:"minimum=0,maximum=50"`
	ExcludeStopwords bool   `json:"exclude_stopwords,omitempty" desc:"Leave common English words (the, and, of ...) out of top_words"`
}

type WordCountOut struct {
	Words              int        `json:"words"`
	UniqueWords        int        `json:"unique_words" desc:"Distinct words, case-insensitive"`
	Lines              int        `json:"lines"`
	Sentences          int        `json:"sentences"`
	Paragraphs         int        `json:"paragraphs"`
	Characters         int        `json:"characters" desc:"Unicode characters"`
	CharactersNoSpaces int        `json:"characters_no_spaces"`
	Bytes              int        `json:"bytes"`
	ReadingTimeSeconds int        `json:"reading_time_seconds" desc:"At 230 words per minute"`
	TopWords           []WordFreq `json:"top_words"`
}

type WordFreq struct {
	Word  string `json:"word"`
	Count int    `json:"count"`
}

var wordCountTool = skill.Tool("word_count", wordCount,
	skill.Category("text"), skill.Idempotent(),
	skill.Describe("Count words, unique words, lines, sentences, paragraphs, characters and bytes of a text, estimate reading time, and list the most frequent words (lower-cased)."),
	skill.Tags("text", "statistics"))

func wordCount(in WordCountIn) (WordCountOut, error) {
	top := 10
	if in.Top != nil {
		top = *in.Top
	}
	t := in.Text
	out := WordCountOut{Bytes: len(t), Characters: utf8.RuneCountInString(t), TopWords: []WordFreq{}}
	if t != "" {
		out.Lines = strings.Count(t, "\n")
		if !strings.HasSuffix(t, "\n") {
			out.Lines++
		}
	}
	for _, r := range t {
		if !unicode.IsSpace(r) {
			out.CharactersNoSpaces++
		}
	}
	for _, p := range blankLines.Split(strings.TrimSpace(t), -1) {
		if strings.TrimSpace(p) != "" {
			out.Paragraphs++
		}
	}
	counts := map[string]int{}
	for _, w := range words(t) {
		out.Words++
		counts[strings.ToLower(w)]++
	}
	// A sentence ends at . ! ? (runs count once) followed by space or end,
	// when some word came before it.
	sawWord := false
	rs := []rune(t)
	for i, r := range rs {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			sawWord = true
			continue
		}
		if (r == '.' || r == '!' || r == '?' || r == '。') && sawWord {
			if i+1 == len(rs) || unicode.IsSpace(rs[i+1]) {
				out.Sentences++
				sawWord = false
			}
		}
	}
	if sawWord {
		out.Sentences++
	}
	out.UniqueWords = len(counts)
	out.ReadingTimeSeconds = (out.Words*60 + 229) / 230
	freqs := make([]WordFreq, 0, len(counts))
	for w, c := range counts {
		if utf8.RuneCountInString(w) < in.MinWordLength || (in.ExcludeStopwords && stopwords[w]) {
			continue
		}
		freqs = append(freqs, WordFreq{w, c})
	}
	sort.Slice(freqs, func(i, j int) bool {
		if freqs[i].Count != freqs[j].Count {
			return freqs[i].Count > freqs[j].Count
		}
		return freqs[i].Word < freqs[j].Word
	})
	if len(freqs) > top {
		freqs = freqs[:top]
	}
	out.TopWords = append(out.TopWords, freqs...)
	return out, nil
}

var blankLines = regexp.MustCompile(`\n\s*\n`)

// words splits t into words: runs of letters and digits, joined across a
// single apostrophe or hyphen ("don't", "well-known").
func words(t string) []string {
	var out []string
	rs := []rune(t)
	start := -1
	for i := 0; i <= len(rs); i++ {
		isWord := i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]) || unicode.Is(unicode.Mn, rs[i]))
		joiner := i < len(rs) && (rs[i] == '\'' || rs[i] == '’' || rs[i] == '-') && start >= 0 &&
			i+1 < len(rs) && (unicode.IsLetter(rs[i+1]) || unicode.IsDigit(rs[i+1]))
		switch {
		case isWord || joiner:
			if start < 0 {
				start = i
			}
		case start >= 0:
			out = append(out, string(rs[start:i]))
			start = -1
		}
	}
	return out
}

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further had
		has have having he her here hers herself him himself his how i if in into is it its itself just me more most
		my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some
		such than that the their theirs them themselves then there these they this those through to too under until
		up very was we were what when where which while who whom why will with would you your yours yourself
		yourselves it's don't i'm you're we're they're isn't aren't wasn't weren't can't won't`) {
		m[w] = true
	}
	return m
}()

// ---- case_convert ----

type CaseConvertIn struct {
	Text string `json:"text" desc:"Text or identifier to convert, e.g. \"HTTPServer error\", \"user_id\", \"fooBar\""`
	To   string `json:"to" desc:"Target case: snake (user_id), kebab (user-id), camel (userId), pascal (UserId), constant (USER_ID), title (User Id), sentence (User id), upper, lower" jsonschema:"enum=snake|kebab|camel|pascal|constant|title|sentence|upper|lower"`
}

type CaseConvertOut struct {
	Result string   `json:"result"`
	Words  []string `json:"words" desc:"The words the text was split into"`
}

var caseConvertTool = skill.Tool("case_convert", caseConvert,
	skill.Category("text"), skill.Idempotent(),
	skill.Describe("Convert text or an identifier between cases: snake_case, kebab-case, camelCase, PascalCase, CONSTANT_CASE, Title Case, Sentence case, UPPER, lower. Words are split at spaces, punctuation and case changes (\"parseHTTPResponse\" → parse, http, response)."),
	skill.Tags("text", "identifier", "case"))

func caseConvert(in CaseConvertIn) (CaseConvertOut, error) {
	ws := splitIdentifier(in.Text)
	lower := make([]string, len(ws))
	for i, w := range ws {
		lower[i] = strings.ToLower(w)
	}
	var r string
	switch in.To {
	case "snake":
		r = strings.Join(lower, "_")
	case "kebab":
		r = strings.Join(lower, "-")
	case "constant":
		r = strings.ToUpper(strings.Join(lower, "_"))
	case "camel", "pascal":
		var b strings.Builder
		for i, w := range lower {
			if i == 0 && in.To == "camel" {
				b.WriteString(w)
			} else {
				b.WriteString(capitalize(w))
			}
		}
		r = b.String()
	case "title":
		t := make([]string, len(lower))
		for i, w := range lower {
			t[i] = capitalize(w)
		}
		r = strings.Join(t, " ")
	case "sentence":
		r = strings.Join(lower, " ")
		r = capitalize(r)
	case "upper":
		r = strings.ToUpper(in.Text)
	case "lower":
		r = strings.ToLower(in.Text)
	default:
		return CaseConvertOut{}, skill.InvalidInput("unknown case " + in.To)
	}
	if ws == nil {
		ws = []string{}
	}
	return CaseConvertOut{Result: r, Words: ws}, nil
}

func capitalize(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	if n == 0 {
		return w
	}
	return string(unicode.ToTitle(r)) + w[n:]
}

// splitIdentifier splits at non-alphanumerics, at lower→upper changes and
// before the last upper of an acronym followed by lower ("HTTPServer" →
// HTTP, Server), and between letters and digits only where case changes.
func splitIdentifier(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	for i := 0; i <= len(rs); i++ {
		if i == len(rs) || !(unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) {
			if start >= 0 {
				out = append(out, string(rs[start:i]))
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev, cur := rs[i-1], rs[i]
		boundary := (unicode.IsLower(prev) || unicode.IsDigit(prev)) && unicode.IsUpper(cur) ||
			unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
		if boundary {
			out = append(out, string(rs[start:i]))
			start = i
		}
	}
	return out
}

// ---- regex_extract / regex_replace ----

const maxMatchesCap = 1000

type RegexExtractIn struct {
	Pattern         string `json:"pattern" desc:"Go (RE2) regular expression; no lookaround or backreferences. Named groups: (?P<name>...)" jsonschema:"minLength=1"`
	Text            string `json:"text" desc:"Text to search"`
	MaxMatches      int    `json:"max_matches,omitempty" desc:"Stop after this many matches" jsonschema:"minimum=1,maximum=1000,default=100"`
	CaseInsensitive bool   `json:"case_insensitive,omitempty"`
	Multiline       bool   `json:"multiline,omitempty" desc:"^ and $ match at line breaks"`
}

type RegexExtractOut struct {
	Count     int     `json:"count" desc:"Matches returned"`
	Truncated bool    `json:"truncated" desc:"More matches exist beyond max_matches"`
	Matches   []Match `json:"matches"`
}

type Match struct {
	Text   string            `json:"text"`
	Start  int               `json:"start" desc:"Byte offset of the match"`
	End    int               `json:"end"`
	Line   int               `json:"line" desc:"1-based line of the match start"`
	Groups []string          `json:"groups,omitempty" desc:"Capture groups by number (group 1 first); unmatched groups are empty"`
	Named  map[string]string `json:"named,omitempty" desc:"Named capture groups"`
}

var regexExtractTool = skill.Tool("regex_extract", regexExtract,
	skill.Category("text"), skill.Idempotent(),
	skill.Describe("Find all matches of a regular expression (Go RE2 syntax) in a text and return each match with its capture groups, byte offsets and line number. Use it to pull emails, URLs, IDs or fields out of text."),
	skill.Tags("text", "regex", "extract"))

func compile(pattern string, ci, ml bool) (*regexp.Regexp, error) {
	flags := ""
	if ci {
		flags += "i"
	}
	if ml {
		flags += "m"
	}
	if flags != "" {
		pattern = "(?" + flags + ")" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, skill.InvalidInput("bad pattern: " + strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

func regexExtract(in RegexExtractIn) (RegexExtractOut, error) {
	re, err := compile(in.Pattern, in.CaseInsensitive, in.Multiline)
	if err != nil {
		return RegexExtractOut{}, err
	}
	limit := in.MaxMatches
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, maxMatchesCap)
	locs := re.FindAllStringSubmatchIndex(in.Text, limit+1)
	out := RegexExtractOut{Matches: []Match{}}
	if len(locs) > limit {
		locs = locs[:limit]
		out.Truncated = true
	}
	names := re.SubexpNames()
	line, lineAt := 1, 0
	for _, loc := range locs {
		line += strings.Count(in.Text[lineAt:loc[0]], "\n")
		lineAt = loc[0]
		m := Match{Text: in.Text[loc[0]:loc[1]], Start: loc[0], End: loc[1], Line: line}
		for g := 1; g < len(names); g++ {
			var v string
			if loc[2*g] >= 0 {
				v = in.Text[loc[2*g]:loc[2*g+1]]
			}
			m.Groups = append(m.Groups, v)
			if names[g] != "" {
				if m.Named == nil {
					m.Named = map[string]string{}
				}
				m.Named[names[g]] = v
			}
		}
		out.Matches = append(out.Matches, m)
	}
	out.Count = len(out.Matches)
	return out, nil
}

type RegexReplaceIn struct {
	Pattern         string `json:"pattern" desc:"Go (RE2) regular expression" jsonschema:"minLength=1"`
	Text            string `json:"text" desc:"Text to change"`
	Replacement     string `json:"replacement" desc:"Replacement; $1 or ${name} insert groups unless literal is true ($$ for a literal $)"`
	Literal         bool   `json:"literal,omitempty" desc:"Insert the replacement as is, without expanding $"`
	CaseInsensitive bool   `json:"case_insensitive,omitempty"`
	Multiline       bool   `json:"multiline,omitempty" desc:"^ and $ match at line breaks"`
}

type RegexReplaceOut struct {
	Result       string `json:"result"`
	Replacements int    `json:"replacements"`
}

var regexReplaceTool = skill.Tool("regex_replace", regexReplace,
	skill.Category("text"), skill.Idempotent(),
	skill.Describe("Replace every match of a regular expression (Go RE2 syntax) in a text; the replacement may refer to groups as $1 or ${name}. Returns the new text and the number of replacements."),
	skill.Tags("text", "regex", "replace"))

func regexReplace(in RegexReplaceIn) (RegexReplaceOut, error) {
	re, err := compile(in.Pattern, in.CaseInsensitive, in.Multiline)
	if err != nil {
		return RegexReplaceOut{}, err
	}
	n := len(re.FindAllStringIndex(in.Text, -1))
	var r string
	if in.Literal {
		r = re.ReplaceAllLiteralString(in.Text, in.Replacement)
	} else {
		r = re.ReplaceAllString(in.Text, in.Replacement)
	}
	return RegexReplaceOut{Result: r, Replacements: n}, nil
}
