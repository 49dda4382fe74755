package textsearch

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Query expansion for "fts" searches.
//
// A request phrased differently from a tool's description ("ping the team"
// for a tool that posts a message, "wether forcast" for a weather forecast)
// shares no word with it, and bm25 cannot find it. Expansion turns the
// query's words into weighted search terms:
//
//   - each word or recognised phrase of the query, weight 1;
//   - for a word the catalogue does not contain, the catalogue words within
//     a small edit distance (correctTerms), weight weightCorrection;
//   - for each of those, its synonyms from synonyms.go (expandTerms), with
//     the synonym set's weight times the weight of the word expanded.
//
// Every term remembers the query word or phrase it stands for (its group).
// A document's score adds, per group, the best weighted contribution of the
// group's terms (rescore): matching a word and its synonym does not count
// twice, and a document matching two different words of the query still
// ranks above one matching one word many ways.
//
// FTS5 has no per-term weight inside MATCH, so the weights are applied
// outside it: tool searches score each distinct term (Scorer.terms) in
// the snapshot's in-memory text index (Index), with FTS5's bm25
// formula, and add up each document's contributions with Scorer.score
// (rescore for a single document). bm25 is a sum over the query's terms, so
// without expansion (every weight 1, one term per group) this is the bm25
// order of the OR-ed query again. ftsQuery is the OR-ed expression of the
// same terms, for a caller that needs only the matching set.

// Limits of query expansion.
const (
	// weightCorrection is the weight of a spelling correction.
	weightCorrection = 0.7
	// maxExpansions bounds the synonyms one word or phrase expands to.
	maxExpansions = 8
	// maxCorrections bounds the corrections of one misspelt word.
	maxCorrections = 3
	// maxWeightedTerms bounds the terms of an expanded query; the lightest
	// derived terms are dropped first, the query's own words never.
	maxWeightedTerms = 64
	// maxPhraseWords is the longest phrase recognised in a query.
	maxPhraseWords = 4
	// minCorrectLen is the shortest word (in characters) that spelling
	// correction touches: three-letter words have too many real-word
	// neighbours; four-letter ones are corrected only by a single plausible
	// slip (typoCost), which keeps "reed" → read and "fiel" → file.
	minCorrectLen = 4
	// longWordLen is the length from which a word may be two edits away
	// from its correction instead of one.
	longWordLen = 8
)

// Term is one search term of an expanded query.
type Term struct {
	// text is a word, or a phrase of words joined by single spaces.
	text string
	// weight is 1 for the query's own words and phrases and less for terms
	// derived from them.
	weight float64
	// group numbers the query word or phrase the term stands for, from 0 in
	// query order.
	group int
}

// expansion is one entry of the synonym index.
type expansion struct {
	text   string
	weight float64
}

// synonymIndex is synonyms.go compiled for lookup.
type synonymIndex struct {
	// expand maps a word or phrase to its expansions, heaviest first, at
	// most maxExpansions of them.
	expand map[string][]expansion
	// phraseWords is the largest number of words of any phrase key.
	phraseWords int
}

// synonyms returns the compiled synonym index, built on first use.
var synonyms = sync.OnceValue(func() *synonymIndex {
	return buildSynonyms(synonymSets, relatedSets)
})

// splitTerms splits a comma-separated list of synonym entries.
func splitTerms(list string) []string {
	var out []string
	for _, t := range strings.Split(list, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// buildSynonyms compiles synonym and related sets. Each key keeps, for every
// expansion, the heaviest weight any set gives it; expansions are ordered by
// weight, then by where they first appear in the data.
func buildSynonyms(sets []synonymSet, related []relatedSet) *synonymIndex {
	type entry struct {
		weight float64
		order  int
	}
	acc := make(map[string]map[string]entry)
	order := 0
	add := func(from, to string, w float64) {
		if from == to {
			return
		}
		m := acc[from]
		if m == nil {
			m = make(map[string]entry)
			acc[from] = m
		}
		e, ok := m[to]
		if !ok {
			e.order = order
			order++
		}
		e.weight = math.Max(e.weight, w)
		m[to] = e
	}
	for _, s := range sets {
		terms := splitTerms(s.terms)
		for _, a := range terms {
			for _, b := range terms {
				add(a, b, s.weight)
			}
		}
	}
	for _, r := range related {
		broader := splitTerms(r.broader)
		for _, n := range splitTerms(r.narrower) {
			for _, b := range broader {
				add(n, b, r.weight)
			}
		}
	}
	idx := &synonymIndex{expand: make(map[string][]expansion, len(acc)), phraseWords: 1}
	for from, m := range acc {
		list := make([]expansion, 0, len(m))
		for to, e := range m {
			list = append(list, expansion{text: to, weight: e.weight})
		}
		slices.SortFunc(list, func(a, b expansion) int {
			if a.weight != b.weight {
				if a.weight > b.weight {
					return -1
				}
				return 1
			}
			return m[a.text].order - m[b.text].order
		})
		if len(list) > maxExpansions {
			list = list[:maxExpansions]
		}
		idx.expand[from] = list
		idx.phraseWords = max(idx.phraseWords, strings.Count(from, " ")+1)
	}
	idx.phraseWords = min(idx.phraseWords, maxPhraseWords)
	return idx
}

// querySources picks the words and phrases of a query that become term
// groups: phrases of the synonym vocabulary (when phrases is set, longest
// first, left to right), then single words, without stop-words unless
// nothing else is left, each once, at most maxQueryTerms of them.
func querySources(words []string, phrases bool) []string {
	syn := synonyms()
	seen := make(map[string]bool, len(words))
	var kept, stops []string
	for i := 0; i < len(words); {
		if phrases {
			if p, n := longestPhrase(syn, words[i:]); n > 0 {
				if !seen[p] {
					seen[p] = true
					kept = append(kept, p)
				}
				i += n
				continue
			}
		}
		w := strings.ToLower(strings.TrimSpace(words[i]))
		i++
		if w == "" || seen[w] {
			continue
		}
		seen[w] = true
		if IsStopWord(w) {
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

// longestPhrase returns the longest phrase of the synonym vocabulary that
// words start with, and its length in words; 0 when none does.
func longestPhrase(syn *synonymIndex, words []string) (string, int) {
	for n := min(syn.phraseWords, len(words)); n >= 2; n-- {
		p := strings.ToLower(strings.Join(words[:n], " "))
		if _, ok := syn.expand[p]; ok {
			return p, n
		}
	}
	return "", 0
}

// expandTerms expands a query's words with synonyms. words are the query's
// lower-case words in order, stop-words included (SplitWords output), so
// that phrases such as "turn on" or "money back" are recognised before their
// words; stop-words outside phrases are dropped as QueryTerms drops them.
// Each word or phrase comes with weight 1, followed by its synonyms.
func expandTerms(words []string) []Term {
	return expandWith(words, nil, true)
}

// correctTerms adds spelling corrections to a query's words. A word is
// corrected when it has at least minCorrectLen characters and no digit, and
// neither v, the synonym vocabulary nor the stop-words hold it or (by
// knownForm) its inflections. Its corrections are v's words within 1 edit
// (2 for words of longWordLen characters or more) that look like slips of
// the keyboard: same first letter (or the first two swapped), substitutions
// only between neighbouring keys or between vowels (typoCost). The ones at
// the smallest cost follow the word, weight weightCorrection, at most
// maxCorrections of them. The word itself stays, weight 1: when it is a
// form the stemmer reduces to an indexed word it still matches, and when it
// is a typo it matches nothing and costs nothing. Phrases are not
// recognised.
func correctTerms(words []string, v Vocab) []Term {
	return expandWith(words, v, false)
}

// Expand is the whole expansion: phrases, spelling corrections against
// v (nil for none), then synonyms of the words and of their corrections.
func Expand(words []string, v Vocab) []Term {
	return expandWith(words, v, true)
}

func expandWith(words []string, v Vocab, withSynonyms bool) []Term {
	syn := synonyms()
	var out []Term
	for g, src := range querySources(words, withSynonyms) {
		start := len(out)
		add := func(text string, w float64) {
			for i := start; i < len(out); i++ {
				if out[i].text == text {
					out[i].weight = math.Max(out[i].weight, w)
					return
				}
			}
			out = append(out, Term{text: text, weight: w, group: g})
		}
		add(src, 1)
		if split := splitLetterDigit(src); split != "" {
			add(split, weightForm)
		}
		if v != nil {
			for _, c := range corrections(src, v, syn) {
				add(c, weightCorrection)
			}
		}
		if withSynonyms {
			for i, n := start, len(out); i < n; i++ {
				base := out[i]
				for _, e := range syn.expand[base.text] {
					add(e.text, base.weight*e.weight)
				}
			}
		}
	}
	return capTerms(out, maxWeightedTerms)
}

// splitLetterDigit returns a word that mixes letters and digits split
// where one turns into the other ("sha256" → "sha 256", "utf8" → "utf 8"),
// as a phrase: descriptions often write such names with a hyphen
// (SHA-256, UTF-8), which the tokenizer splits. It returns "" for a phrase,
// or a word of letters only or digits only.
func splitLetterDigit(w string) string {
	if strings.ContainsRune(w, ' ') {
		return ""
	}
	var b strings.Builder
	prev, parts := 0, 0 // prev: 1 letter, 2 digit
	for _, r := range w {
		k := 1
		if unicode.IsDigit(r) {
			k = 2
		}
		if k != prev {
			if prev != 0 {
				b.WriteByte(' ')
			}
			parts++
			prev = k
		}
		b.WriteRune(r)
	}
	if parts < 2 {
		return ""
	}
	return b.String()
}

// capTerms keeps the n heaviest terms, in their order; ties keep the earlier
// term. Terms of weight 1 are always kept.
func capTerms(ts []Term, n int) []Term {
	if len(ts) <= n {
		return ts
	}
	idx := make([]int, len(ts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ts[a].weight > ts[b].weight:
			return -1
		case ts[a].weight < ts[b].weight:
			return 1
		}
		return 0
	})
	keep := make([]bool, len(ts))
	for rank, i := range idx {
		if rank < n || ts[i].weight >= 1 {
			keep[i] = true
		}
	}
	out := ts[:0:0]
	for i, t := range ts {
		if keep[i] {
			out = append(out, t)
		}
	}
	return out
}

// corrections returns the spelling corrections of one query word (see
// correctTerms).
func corrections(word string, v Vocab, syn *synonymIndex) []string {
	n := utf8.RuneCountInString(word)
	if n < minCorrectLen || strings.ContainsRune(word, ' ') || hasDigit(word) || v.Has(word) || IsStopWord(word) {
		return nil
	}
	if _, known := syn.expand[word]; known {
		return nil
	}
	if knownForm(word, v) {
		return nil
	}
	maxDist := 1
	if n >= longWordLen {
		maxDist = 2
	}
	q := []rune(word)
	best := maxDist + 1
	var out []string
	// Near lists the closest first, the most frequent first among equals;
	// keep the plausible typos at the smallest typo cost, in that order.
	for _, c := range v.Near(word, maxDist) {
		if IsStopWord(c) {
			continue
		}
		r := []rune(c)
		if !sameStart(q, r) {
			continue
		}
		switch cost := typoCost(q, r, maxDist); {
		case cost > maxDist:
		case cost < best:
			best, out = cost, append(out[:0], c)
		case cost == best && len(out) < maxCorrections:
			out = append(out, c)
		}
	}
	return out
}

// IsStopWord reports a stop-word, or what is left of an English contraction
// once the apostrophe splits it ("hasn" of "hasn't").
func IsStopWord(w string) bool { return stopWords[w] || contractionStems[w] }

// contractionStems are the first halves of negative contractions.
var contractionStems = map[string]bool{
	"aren": true, "couldn": true, "didn": true, "hadn": true, "hasn": true, "haven": true, "mightn": true,
	"mustn": true, "needn": true, "shan": true, "shouldn": true, "wasn": true, "weren": true, "wouldn": true,
}

// sameStart reports whether a correction keeps the word's first letter, or
// swaps its first two: typing rarely gets the first letter wrong, while a
// real word the catalogue lacks is often one first letter away from one it
// has ("much" and "such").
func sameStart(word, cand []rune) bool {
	if len(word) == 0 || len(cand) == 0 {
		return false
	}
	if word[0] == cand[0] {
		return true
	}
	return len(word) > 1 && len(cand) > 1 && word[0] == cand[1] && word[1] == cand[0]
}

// qwertyRows are the letter rows of a QWERTY keyboard.
var qwertyRows = [3]string{"qwertyuiop", "asdfghjkl", "zxcvbnm"}

// keyPos maps a lower-case ASCII letter to its row and column on qwertyRows.
var keyPos = func() map[rune][2]int {
	m := make(map[rune][2]int, 26)
	for r, row := range qwertyRows {
		for c, k := range row {
			m[k] = [2]int{r, c}
		}
	}
	return m
}()

// plausibleSub reports whether typing x for y is a likely slip: the keys
// touch on a QWERTY keyboard, both are vowels (a spelling error such as
// "seperate"), or either is outside a-z, where no layout is assumed.
func plausibleSub(x, y rune) bool {
	const vowels = "aeiou"
	if strings.ContainsRune(vowels, x) && strings.ContainsRune(vowels, y) {
		return true
	}
	px, okx := keyPos[x]
	py, oky := keyPos[y]
	if !okx || !oky {
		return true
	}
	// Each row sits half a key right of the one above: a key touches its
	// row neighbours, columns c and c+1 above it and c-1 and c below it.
	switch dr := py[0] - px[0]; dr {
	case 0:
		return py[1]-px[1] == 1 || px[1]-py[1] == 1
	case -1:
		return py[1] == px[1] || py[1] == px[1]+1
	case 1:
		return py[1] == px[1] || py[1] == px[1]-1
	}
	return false
}

// typoCost is the optimal string alignment distance between a word and a
// candidate correction where substituting an implausible character (see
// plausibleSub) costs 2, as deleting one and inserting another would. It
// returns maxDist+1 once the cost exceeds maxDist. Insertions, deletions
// and swaps of adjacent characters cost 1: they are the commonest slips.
func typoCost(a, b []rune, maxDist int) int {
	n, m := len(a), len(b)
	d := make([][]int, n+1)
	for i := range d {
		d[i] = make([]int, m+1)
		d[i][0] = i
	}
	for j := 0; j <= m; j++ {
		d[0][j] = j
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			sub := 0
			if a[i-1] != b[j-1] {
				sub = 2
				if plausibleSub(a[i-1], b[j-1]) {
					sub = 1
				}
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+sub)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return min(d[n][m], maxDist+1)
}

// inflections are the endings knownForm strips.
var inflections = []string{"s", "es", "ies", "ed", "ied", "d", "ing", "er", "ers", "est", "ly"}

// knownForm reports whether word is an inflected form of a word in v, or v
// holds an inflected form of word ("restarted", "titled", "threats",
// "completely" for a vocabulary with "restart", "title", "threat",
// "complete"). Such a word is not a typo: the stemmer already matches it, and
// correcting it would only add neighbours of its stem ("restored" for
// "restarted").
func knownForm(word string, v Vocab) bool {
	bases := []string{word}
	for _, suf := range inflections {
		b, ok := strings.CutSuffix(word, suf)
		if !ok || utf8.RuneCountInString(b) < 3 {
			continue
		}
		bases = append(bases, b)
		switch {
		case suf == "ies" || suf == "ied":
			bases = append(bases, b+"y")
		case len(b) >= 2 && b[len(b)-1] == b[len(b)-2]:
			bases = append(bases, b[:len(b)-1]) // committed → commit
		}
	}
	for _, b := range bases {
		if b != word && v.Has(b) {
			return true
		}
		for _, suf := range []string{"e", "s", "es", "ed", "d", "ing", "er"} {
			if b+suf != word && v.Has(b+suf) {
				return true
			}
		}
	}
	return false
}

func hasDigit(s string) bool {
	for _, r := range s {
		if unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// cleanFTSTerm cleans one term for MATCH: invalid UTF-8 and NUL characters (which
// end an FTS5 string early) become spaces, and a term with no letter or
// number, which the tokenizer would reduce to nothing, becomes "".
func cleanFTSTerm(s string) string {
	s = strings.ToValidUTF8(s, " ")
	s = strings.ReplaceAll(s, "\x00", " ")
	s = strings.TrimSpace(s)
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return s
		}
	}
	return ""
}

// distinctTerms returns the texts of weighted that can match anything, each
// once, in order, cleaned as ftsQuery cleans them; terms of weight zero or
// less (or NaN) are left out. These are the terms whose per-term bm25 a
// search collects for rescore.
func distinctTerms(weighted []Term) []string {
	seen := make(map[string]bool, len(weighted))
	var out []string
	for _, t := range weighted {
		if !(t.weight > 0) {
			continue
		}
		s := cleanFTSTerm(t.text)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// ftsQuery builds a MATCH expression finding the documents that contain any
// of the terms: each distinct term quoted (QuoteFTS: inner quotes doubled, so
// FTS5 operators, column filters, stars, carets, parentheses and NEAR inside
// it are only text to tokenise; a phrase matches as a phrase), all OR-ed.
// It returns "" when no term can match anything; the caller must then not
// run MATCH at all. The weights are not part of the expression: FTS5 has no
// per-term weight, so they apply when candidates are re-scored (rescore).
func ftsQuery(weighted []Term) string {
	terms := distinctTerms(weighted)
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(QuoteFTS(t))
	}
	return b.String()
}

// rescore is a document's relevance to an expanded query, higher is better.
// contrib holds, for each term text (as distinctTerms returns it) the
// document matches, the term's own contribution: the negated bm25() of a
// MATCH of that term alone, or 1 when only presence is known. The score adds,
// over the term groups, the best weight × contribution among each group's
// terms. Missing, negative and NaN contributions count as no match. A
// search scoring many documents uses a Scorer instead, which does the
// per-query work once.
func rescore(contrib map[string]float64, weighted []Term) float64 {
	if len(contrib) == 0 {
		return 0
	}
	s := NewScorer(weighted)
	c := make([]float64, len(s.terms))
	for i, t := range s.terms {
		c[i] = contrib[t]
	}
	return s.score(c)
}

// Scorer scores documents against one expanded query from their
// per-term contributions, as rescore does, without maps: the search reads
// the contribution of terms[i] into position i of a slice. A Scorer is
// not modified by score and may be shared by goroutines.
type Scorer struct {
	// terms are the distinct texts to search, as distinctTerms returns
	// them.
	terms []string
	// links[i] lists the groups terms[i] belongs to, with its weight in
	// each.
	links  [][]termLink
	groups int
}

// termLink is one group membership of a term.
type termLink struct {
	group  int
	weight float64
}

func NewScorer(weighted []Term) *Scorer {
	s := &Scorer{terms: distinctTerms(weighted)}
	pos := make(map[string]int, len(s.terms))
	for i, t := range s.terms {
		pos[t] = i
	}
	s.links = make([][]termLink, len(s.terms))
	for _, w := range weighted {
		i, ok := pos[cleanFTSTerm(w.text)]
		if !ok || !(w.weight > 0) || w.group < 0 {
			continue
		}
		merged := false
		for k, l := range s.links[i] {
			if l.group == w.group {
				s.links[i][k].weight = math.Max(l.weight, w.weight)
				merged = true
			}
		}
		if !merged {
			s.links[i] = append(s.links[i], termLink{w.group, w.weight})
		}
		s.groups = max(s.groups, w.group+1)
	}
	return s
}

// score returns the relevance of a document whose contribution from
// terms[i] is contrib[i] (0 when the term does not match it; negative and
// NaN count as 0).
func (s *Scorer) score(contrib []float64) float64 {
	var stack [maxQueryTerms]float64
	var best []float64
	if s.groups <= len(stack) {
		best = stack[:s.groups]
	} else {
		best = make([]float64, s.groups)
	}
	for i, c := range contrib {
		if i >= len(s.links) || !(c > 0) {
			continue
		}
		for _, l := range s.links[i] {
			best[l.group] = math.Max(best[l.group], l.weight*c)
		}
	}
	sum := 0.0
	for _, b := range best {
		sum += b
	}
	return sum
}

// Vocab is the set of words a catalogue contains, for spelling
// correction.
type Vocab interface {
	// Has reports whether term is one of the words.
	Has(term string) bool
	// Near returns the words within maxDist edits of term (optimal string
	// alignment distance: insertions, deletions, substitutions and swaps of
	// adjacent characters), closest first.
	Near(term string, maxDist int) []string
}

// Limits of memVocab.
const (
	// vocabMaxDist is the largest distance memVocab answers; Near clamps
	// larger requests to it.
	vocabMaxDist = 2
	// vocabPrefix is how many leading characters of a word its deletion
	// variants are taken from. Variants of a prefix still find every word
	// within the distance of a query (both sides' prefixes stay within as
	// many deletions of a common string) and bound the variants of a long
	// word to 1+10+45; a shorter prefix makes more words share variants,
	// which Near must then check and reject.
	vocabPrefix = 10
)

// memVocab is an in-memory Vocab: a symmetric-deletion index. Every word
// is filed under the hashes of the strings its prefix gives when up to
// vocabMaxDist characters are deleted; a lookup hashes the same deletions of
// the query's prefix, collects the words filed under them and keeps those
// truly within the distance. The work per lookup depends on the query's
// length, not on the vocabulary's size. A memVocab is immutable and safe for
// concurrent use.
type memVocab struct {
	words []string
	freq  []int32
	runes []rune  // every word's characters, concatenated
	off   []int32 // word i is runes[off[i]:off[i+1]]
	ids   map[string]int32

	// keys are the variant hashes, grouped by their top bits; vals[i] is
	// the word filed under keys[i]. Slot b, the keys whose top bits are b,
	// is keys[dir[b]:dir[b+1]].
	keys  []uint32
	vals  []int32
	dir   []int32
	shift uint
}

var _ Vocab = (*memVocab)(nil)

// newVocab builds a vocabulary of the given words. Repeated words count as
// more frequent, which orders Near's answers at equal distance; empty
// strings are ignored.
func newVocab(terms []string) *memVocab {
	v := &memVocab{ids: make(map[string]int32)}
	for _, t := range terms {
		if t == "" {
			continue
		}
		if id, ok := v.ids[t]; ok {
			v.freq[id]++
			continue
		}
		id := int32(len(v.words))
		v.ids[t] = id
		v.words = append(v.words, t)
		v.freq = append(v.freq, 1)
	}
	v.off = make([]int32, 0, len(v.words)+1)
	for _, w := range v.words {
		v.off = append(v.off, int32(len(v.runes)))
		v.runes = append(v.runes, []rune(w)...)
	}
	v.off = append(v.off, int32(len(v.runes)))

	// Two passes over the variants: count them per directory slot, then
	// file each word in its slots. Within a slot keys are not sorted: a
	// slot holds a few keys, scanned in full.
	total := 0
	for id := range v.words {
		total += variantCount(min(len(v.word(int32(id))), vocabPrefix), vocabMaxDist)
	}
	dirBits := min(max(bits.Len(uint(total/4)), 1), 24) // about four keys a slot
	v.shift = uint(32 - dirBits)
	v.dir = make([]int32, 1<<dirBits+1)
	for id := range v.words {
		r := v.word(int32(id))
		deletionHashes(r[:min(len(r), vocabPrefix)], vocabMaxDist, func(h uint32) {
			v.dir[(h>>v.shift)+1]++
		})
	}
	for i := 1; i < len(v.dir); i++ {
		v.dir[i] += v.dir[i-1]
	}
	v.keys = make([]uint32, total)
	v.vals = make([]int32, total)
	next := slices.Clone(v.dir[:len(v.dir)-1])
	for id := range v.words {
		r := v.word(int32(id))
		deletionHashes(r[:min(len(r), vocabPrefix)], vocabMaxDist, func(h uint32) {
			b := h >> v.shift
			v.keys[next[b]] = h
			v.vals[next[b]] = int32(id)
			next[b]++
		})
	}
	return v
}

// variantCount is how many times deletionHashes calls back for a string of
// n characters.
func variantCount(n, maxDist int) int {
	c := 1
	if maxDist >= 1 {
		c += n
	}
	if maxDist >= 2 {
		c += n * (n - 1) / 2
	}
	return c
}

func (v *memVocab) word(id int32) []rune { return v.runes[v.off[id]:v.off[id+1]] }

// Len returns the number of distinct words.
func (v *memVocab) Len() int { return len(v.words) }

// Has reports whether term is one of the words.
func (v *memVocab) Has(term string) bool {
	_, ok := v.ids[term]
	return ok
}

// Near returns the words within maxDist edits of term, closest first, then
// most frequent, then in byte order. term itself is included (distance 0)
// when it is a word. maxDist is clamped to 0..vocabMaxDist.
func (v *memVocab) Near(term string, maxDist int) []string {
	found := v.near(term, maxDist)
	if len(found) == 0 {
		return nil
	}
	out := make([]string, len(found))
	for i, m := range found {
		out[i] = m.word
	}
	return out
}

// vocabMatch is a word Near found, at its distance.
type vocabMatch struct {
	word string
	dist int
}

// near is Near with each word's distance.
func (v *memVocab) near(term string, maxDist int) []vocabMatch {
	if term == "" || len(v.words) == 0 {
		return nil
	}
	maxDist = min(max(maxDist, 0), vocabMaxDist)
	q := []rune(term)
	var cand []int32
	deletionHashes(q[:min(len(q), vocabPrefix)], maxDist, func(h uint32) {
		b := h >> v.shift
		for i := v.dir[b]; i < v.dir[b+1]; i++ {
			if v.keys[i] != h {
				continue
			}
			// Words too long or too short cannot be within the distance.
			id := v.vals[i]
			if d := int(v.off[id+1]-v.off[id]) - len(q); d <= maxDist && -d <= maxDist {
				cand = append(cand, id)
			}
		}
	})
	slices.Sort(cand)
	cand = slices.Compact(cand)
	type match struct {
		id   int32
		dist int
	}
	var found []match
	buf := make([]int, 3*(len(q)+1))
	for _, id := range cand {
		if d := osaDist(q, v.word(id), maxDist, buf); d <= maxDist {
			found = append(found, match{id, d})
		}
	}
	slices.SortFunc(found, func(a, b match) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		if fa, fb := v.freq[a.id], v.freq[b.id]; fa != fb {
			return int(fb - fa)
		}
		return strings.Compare(v.words[a.id], v.words[b.id])
	})
	if len(found) == 0 {
		return nil
	}
	out := make([]vocabMatch, len(found))
	for i, m := range found {
		out[i] = vocabMatch{v.words[m.id], m.dist}
	}
	return out
}

// deletionHashes calls fn with the hash of every string r gives when up to
// maxDist (at most 2) of its characters are deleted, r itself included.
// Repeated letters give repeated hashes.
func deletionHashes(r []rune, maxDist int, fn func(uint32)) {
	fn(hashSkip(r, -1, -1))
	if maxDist < 1 {
		return
	}
	for i := range r {
		fn(hashSkip(r, i, -1))
		if maxDist < 2 {
			continue
		}
		for j := i + 1; j < len(r); j++ {
			fn(hashSkip(r, i, j))
		}
	}
}

// hashSkip is the FNV-1a hash of r without the characters at positions i
// and j (-1 for none). Collisions only add candidates that the distance
// check then drops.
func hashSkip(r []rune, i, j int) uint32 {
	h := uint32(2166136261)
	for k, c := range r {
		if k == i || k == j {
			continue
		}
		for x := uint32(c); ; x >>= 8 {
			h ^= x & 0xff
			h *= 16777619
			if x < 0x100 {
				break
			}
		}
	}
	return h
}

// osaDistance is the optimal string alignment distance between a and b:
// the fewest insertions, deletions, substitutions and swaps of adjacent
// characters turning a into b, editing no substring twice. It stops early
// and returns maxDist+1 once the distance is known to exceed maxDist.
func osaDistance(a, b []rune, maxDist int) int {
	return osaDist(a, b, maxDist, nil)
}

// osaDist is osaDistance with a scratch buffer of at least 3*(len(a)+1)
// ints (nil to allocate one).
func osaDist(a, b []rune, maxDist int, buf []int) int {
	if maxDist < 0 {
		maxDist = 0
	}
	n, m := len(a), len(b)
	if d := n - m; d > maxDist || -d > maxDist {
		return maxDist + 1
	}
	if n == 0 || m == 0 {
		return max(n, m)
	}
	if len(buf) < 3*(n+1) {
		buf = make([]int, 3*(n+1))
	}
	// Rows over a's positions, one per character of b: prev2 (j-2), prev
	// (j-1), cur (j).
	prev2, prev, cur := buf[:n+1], buf[n+1:2*(n+1)], buf[2*(n+1):3*(n+1)]
	for i := range prev {
		prev[i] = i
	}
	for j := 1; j <= m; j++ {
		cur[0] = j
		rowMin := cur[0]
		for i := 1; i <= n; i++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(prev[i]+1, cur[i-1]+1, prev[i-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, prev2[i-2]+1)
			}
			cur[i] = d
			rowMin = min(rowMin, d)
		}
		if rowMin > maxDist {
			return maxDist + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	if prev[n] > maxDist {
		return maxDist + 1
	}
	return prev[n]
}
