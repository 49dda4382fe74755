package textsearch

import (
	"strings"
	"unicode"
)

// maxQueryTerms bounds how many distinct words of a query reach the
// full-text index; the rest are ignored.
const maxQueryTerms = 24

// SplitWords splits s into lower-case words: runs of letters and digits,
// broken also at camelCase boundaries ("getHTTPResponse" → get, http,
// response). Every other character (_ . - / space, quotes, operators)
// separates words.
func SplitWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			// aB → a|B; ABc → A|Bc (the end of an acronym).
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// stopWords are dropped from natural-language queries when other words are
// left; they carry no signal about which tool is meant.
var stopWords = map[string]bool{
	"a": true, "about": true, "an": true, "and": true, "any": true, "are": true, "as": true, "at": true,
	"be": true, "by": true, "can": true, "could": true, "do": true, "does": true, "for": true,
	"from": true, "have": true, "how": true, "i": true, "if": true, "in": true, "into": true, "is": true,
	"it": true, "its": true, "me": true, "my": true, "need": true, "of": true, "on": true, "or": true,
	"our": true, "please": true, "should": true, "so": true, "some": true, "that": true, "the": true,
	"their": true, "them": true, "then": true, "there": true, "these": true, "this": true, "to": true,
	"tool": true, "tools": true, "us": true, "want": true, "was": true, "we": true, "what": true,
	"when": true, "where": true, "which": true, "who": true, "will": true, "with": true,
	"would": true, "you": true, "your": true,
	// Conversational filler.
	"also": true, "bit": true, "just": true, "know": true, "let": true, "like": true, "now": true,
	"one": true, "really": true, "right": true, "sec": true, "something": true, "sure": true,
	"thanks": true, "thing": true,
	// What is left of contractions once the apostrophe splits them.
	"d": true, "doesn": true, "don": true, "isn": true, "ll": true, "m": true, "re": true, "s": true,
	"t": true, "ve": true, "won": true,
}

// QueryTerms turns free text into at most maxQueryTerms distinct lower-case
// words, without stop-words unless nothing else is left.
func QueryTerms(q string) []string {
	words := SplitWords(q)
	seen := make(map[string]bool, len(words))
	var kept, stops []string
	for _, w := range words {
		if seen[w] {
			continue
		}
		seen[w] = true
		if stopWords[w] {
			stops = append(stops, w)
			continue
		}
		kept = append(kept, w)
	}
	if len(kept) == 0 {
		kept = stops
	}
	if len(kept) > maxQueryTerms {
		kept = kept[:maxQueryTerms]
	}
	return kept
}

// QuoteFTS makes one word an FTS5 string literal: whatever it contains
// (operators, column filters, quotes, stars) is then only text to tokenise.
func QuoteFTS(term string) string {
	return `"` + strings.ReplaceAll(term, `"`, `""`) + `"`
}
