package index

import (
	"strings"
	"unicode/utf8"

	"github.com/skillhost/skillhost/index/internal/textsearch"
)

// nameTerms is the searchable form of a tool or skill name: its words joined
// by single spaces ("fs.readFile" → "fs read file").
func nameTerms(name string) string { return strings.Join(textsearch.SplitWords(name), " ") }

// ftsExpr builds the MATCH expression for query words: each word quoted, all
// OR-ed, so documents matching some of the words are found and bm25 ranks
// the ones matching more (and rarer) words first. With prefixLast the last
// word also matches as a prefix, for a word still being typed.
func ftsExpr(terms []string, prefixLast bool) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(textsearch.QuoteFTS(t))
		if prefixLast && i == len(terms)-1 {
			b.WriteString("*")
		}
	}
	return b.String()
}

// nameLen is the name length used for ordering ties, in characters as
// SQLite's length() counts them.
func nameLen(s string) int { return utf8.RuneCountInString(s) }

// prefixUpper returns the smallest string greater than every string that
// starts with p, for an indexable range scan (col >= p AND col < upper).
// UTF-8 never contains the byte 0xFF, so appending it bounds the range.
func prefixUpper(p string) string { return p + "\xff" }
