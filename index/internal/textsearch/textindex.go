package textsearch

import (
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// bm25 parameters, FTS5's.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// posting is one document of a word's inverted list: its number in the
// index and the word's column-weighted frequency in it (FTS5 sums each
// column's hits times the column's weight).
type posting struct {
	doc int32
	wf  float32
}

// colBreak separates the columns of a document in Index.toks: a phrase
// never spans it.
const colBreak = ^uint32(0)

// Index is an inverted index of documents, each a list of columns of
// text weighted for bm25 (in package index, a snapshot's entries). It is
// immutable once
// built and safe for concurrent use; Update derives a new one that shares
// what did not change.
type Index struct {
	weights []float64
	n       int     // live documents
	total   int     // tokens of the live documents
	avgLen  float64 // total / n
	docLen  []int32 // tokens of each document, all columns
	ids     map[string]uint32
	post    [][]posting // by stem id, documents ascending (dead ones included)
	df      []int32     // by stem id: live documents containing it
	// dead marks documents removed by update (nil when none): they stay in
	// the posting lists and are skipped by every search.
	dead  []bool
	ndead int
	// toks holds every document's surface word ids, columns separated by
	// colBreak; document d is toks[tokOff[d]:tokOff[d+1]]. Phrases are
	// matched on it.
	toks   []uint32
	tokOff []int32
	// words numbers the documents' surface words, for spelling correction;
	// surfStem is each one's stem id and counts its occurrences in the live
	// documents (0: no longer in any).
	words    map[string]int32
	surfStem []uint32
	counts   []int32
	vocab    *lazyVocab
	// views remembers views of the index by key (CachedView).
	views viewCache
}

// lazyVocab is the spelling vocabulary of a text index, built on first use.
type lazyVocab struct {
	once  sync.Once
	built atomic.Bool
	words map[string]int32
	count []int32
	v     *memVocab
}

func (l *lazyVocab) get() *memVocab {
	l.once.Do(func() {
		list := make([]string, 0, len(l.words))
		for w, si := range l.words {
			for range min(l.count[si], vocabFreqCap) {
				list = append(list, w)
			}
		}
		slices.Sort(list)
		l.v = newVocab(list)
		l.built.Store(true)
	})
	return l.v
}

// ftsWord is one token as FTS5's unicode61 tokenizer sees it, folded.
// foldWord lower-cases and removes diacritics.
func foldWord(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(w)
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(w) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// isTokenRune reports a character unicode61 keeps in words: letters,
// numbers and private-use characters.
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// ftsWords calls fn with each folded word of s, as unicode61 splits it.
func ftsWords(s string, fn func(w string)) {
	start := -1
	for i, r := range s {
		if isTokenRune(r) && r != utf8.RuneError {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(foldWord(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		fn(foldWord(s[start:]))
	}
}

// analyse returns the stems of a query term in order, as FTS5 would match
// it: one stem for a word, several for a phrase.
func analyse(term string) []string {
	var out []string
	ftsWords(term, func(w string) { out = append(out, porterStem(w)) })
	return out
}

// Stems returns the stems of text's words, in order, as the index files
// them and FTS5's "porter unicode61" tokenizer does: words split and
// folded as unicode61 splits them, then porter-stemmed.
func Stems(text string) []string { return analyse(text) }

// Build indexes the documents' columns with the given weights.
func Build(docs [][]string, weights []float64) *Index {
	ix := &Index{
		weights: weights,
		ids:     make(map[string]uint32),
		words:   make(map[string]int32),
		tokOff:  []int32{0},
	}
	ix.addDocs(docs, nil)
	ix.finish(nil)
	return ix
}

// addDocs appends documents. Posting lists not yet in owned (nil: all are
// owned) are shared with another index and copied before they grow; the
// maps and other slices must already be the index's own.
func (ix *Index) addDocs(docs [][]string, owned map[uint32]bool) {
	var (
		wf        = make([]float32, len(ix.post)) // by stem id: weighted frequency in the document
		order     []uint32                        // stem ids of the document, first seen first
		colWeight float32
		docTokens int32
	)
	add := func(word string) {
		si, ok := ix.words[word]
		if !ok {
			stem := porterStem(word)
			id, known := ix.ids[stem]
			if !known {
				id = uint32(len(ix.post))
				ix.ids[stem] = id
				ix.post = append(ix.post, nil)
				ix.df = append(ix.df, 0)
				wf = append(wf, 0)
				if owned != nil {
					owned[id] = true
				}
			}
			si = int32(len(ix.surfStem))
			ix.words[word] = si
			ix.surfStem = append(ix.surfStem, id)
			ix.counts = append(ix.counts, 0)
		}
		ix.counts[si]++
		id := ix.surfStem[si]
		ix.toks = append(ix.toks, uint32(si))
		if wf[id] == 0 {
			order = append(order, id)
		}
		wf[id] += colWeight
		docTokens++
	}
	for _, cols := range docs {
		d := int32(len(ix.docLen))
		order, docTokens = order[:0], 0
		for c, text := range cols {
			if c > 0 {
				ix.toks = append(ix.toks, colBreak)
			}
			colWeight = 1
			if c < len(ix.weights) {
				colWeight = float32(ix.weights[c])
			}
			ftsWords(text, add)
		}
		ix.docLen = append(ix.docLen, docTokens)
		ix.tokOff = append(ix.tokOff, int32(len(ix.toks)))
		if ix.dead != nil {
			ix.dead = append(ix.dead, false)
		}
		ix.n++
		ix.total += int(docTokens)
		for _, id := range order {
			if owned != nil && !owned[id] {
				ix.post[id] = slices.Clip(ix.post[id])
				owned[id] = true
			}
			ix.post[id] = append(ix.post[id], posting{doc: d, wf: wf[id]})
			ix.df[id]++
			wf[id] = 0
		}
	}
}

// finish computes the average length and the spelling vocabulary; prev is
// the index this one was derived from (nil for none), whose vocabulary is
// kept when the words and their counts, as the vocabulary weighs them, did
// not change.
func (ix *Index) finish(prev *Index) {
	ix.avgLen = 0
	if ix.n > 0 {
		ix.avgLen = float64(ix.total) / float64(ix.n)
	}
	if prev != nil && len(prev.counts) == len(ix.counts) {
		same := true
		for i, c := range ix.counts {
			if min(c, vocabFreqCap) != min(prev.counts[i], vocabFreqCap) {
				same = false
				break
			}
		}
		if same {
			ix.vocab = prev.vocab
			return
		}
	}
	live := ix.words
	if ix.ndead > 0 || (prev != nil && len(prev.words) != len(ix.words)) {
		live = make(map[string]int32, len(ix.words))
		for w, si := range ix.words {
			if ix.counts[si] > 0 {
				live[w] = si
			}
		}
	}
	ix.vocab = &lazyVocab{words: live, count: ix.counts}
	if prev != nil && prev.vocab.built.Load() {
		ix.vocab.get() // the old one was in use: have the new one ready
	}
}

// Update returns a new index without the documents drop and with add
// appended (numbered from the current number of documents on). ix is not
// changed; the new index shares its unchanged posting lists.
func (ix *Index) Update(drop []int32, add [][]string) *Index {
	nx := &Index{
		weights:  ix.weights,
		n:        ix.n,
		total:    ix.total,
		docLen:   slices.Clip(ix.docLen),
		ids:      ix.ids,
		post:     slices.Clone(ix.post),
		df:       slices.Clone(ix.df),
		dead:     slices.Clone(ix.dead),
		ndead:    ix.ndead,
		toks:     slices.Clip(ix.toks),
		tokOff:   slices.Clip(ix.tokOff),
		words:    ix.words,
		surfStem: slices.Clip(ix.surfStem),
		counts:   slices.Clone(ix.counts),
	}
	if nx.dead == nil {
		nx.dead = make([]bool, len(ix.docLen))
	}
	seen := make(map[uint32]bool)
	for _, d := range drop {
		if nx.dead[d] {
			continue
		}
		nx.dead[d] = true
		nx.ndead++
		nx.n--
		nx.total -= int(nx.docLen[d])
		clear(seen)
		for _, si := range nx.toks[nx.tokOff[d]:nx.tokOff[d+1]] {
			if si == colBreak {
				continue
			}
			nx.counts[si]--
			if id := nx.surfStem[si]; !seen[id] {
				seen[id] = true
				nx.df[id]--
			}
		}
	}
	if len(add) > 0 {
		// New words and stems go into copies of the maps.
		nx.ids = maps.Clone(ix.ids)
		nx.words = maps.Clone(ix.words)
		nx.addDocs(add, make(map[uint32]bool))
	}
	nx.finish(ix)
	return nx
}

// Len returns the number of live documents.
func (ix *Index) Len() int { return ix.n }

// Tokens returns the number of tokens of the live documents.
func (ix *Index) Tokens() int { return ix.total }

// Derived reports whether Update made the index (Build made it
// otherwise).
func (ix *Index) Derived() bool { return ix.dead != nil }

// isDead reports whether document d was removed.
func (ix *Index) isDead(d int32) bool { return ix.dead != nil && ix.dead[d] }

// Has reports whether a surface word occurs in the documents.
func (ix *Index) Has(w string) bool {
	si, ok := ix.words[w]
	return ok && ix.counts[si] > 0
}

// Near returns the documents' words within maxDist edits of w; the
// deletion index behind it is built on first use.
func (ix *Index) Near(w string, maxDist int) []string { return ix.vocab.get().Near(w, maxDist) }

// postings returns the documents matching the analysed term, with the
// term's weighted frequency in each, and the number of live documents
// among them. Removed documents may be among the postings.
func (ix *Index) postings(stems []string) ([]posting, int) {
	switch len(stems) {
	case 0:
		return nil, 0
	case 1:
		id, ok := ix.ids[stems[0]]
		if !ok {
			return nil, 0
		}
		return ix.post[id], int(ix.df[id])
	}
	ids := make([]uint32, len(stems))
	rarest := -1
	for i, s := range stems {
		id, ok := ix.ids[s]
		if !ok {
			return nil, 0
		}
		ids[i] = id
		if rarest < 0 || len(ix.post[id]) < len(ix.post[ids[rarest]]) {
			rarest = i
		}
	}
	var out []posting
	for _, p := range ix.post[ids[rarest]] {
		if ix.isDead(p.doc) {
			continue
		}
		if f := ix.phraseFreq(p.doc, ids); f > 0 {
			out = append(out, posting{doc: p.doc, wf: f})
		}
	}
	return out, len(out)
}

// phraseFreq is the column-weighted number of times the stem sequence ids
// occurs in document d.
func (ix *Index) phraseFreq(d int32, ids []uint32) float32 {
	toks := ix.toks[ix.tokOff[d]:ix.tokOff[d+1]]
	col := 0
	var f float32
	for i := 0; i+len(ids) <= len(toks); i++ {
		if toks[i] == colBreak {
			col++
			continue
		}
		if !ix.phraseAt(toks[i:], ids) {
			continue
		}
		w := float32(1)
		if col < len(ix.weights) {
			w = float32(ix.weights[col])
		}
		f += w
	}
	return f
}

// phraseAt reports whether the surface words toks start with words of the
// stems ids.
func (ix *Index) phraseAt(toks []uint32, ids []uint32) bool {
	for j, id := range ids {
		if toks[j] == colBreak || ix.surfStem[toks[j]] != id {
			return false
		}
	}
	return true
}

// idf is FTS5's inverse document frequency of a term in df of n
// documents.
func idf(n, df int) float64 {
	v := math.Log((float64(n) - float64(df) + 0.5) / (float64(df) + 0.5))
	if v <= 0 {
		v = 1e-6
	}
	return v
}

// Match is a document's relevance to a query, higher is better.
type Match struct {
	Doc   int32
	Score float64
}

// scoreScratch is the per-search working memory of Index.Search.
type scoreScratch struct {
	slot    []int32 // per document: index into touched, -1 unseen, -2 refused
	touched []int32
	refused []int32
	acc     []float64 // touched × groups
}

var scratchPool sync.Pool

// Search ranks the documents matching any term of the scorer by the
// weighted bm25 of Scorer.score: for each term, FTS5's bm25 share
// idf·f·(k1+1)/(f+k1·(1−b+b·len/avglen)); per term group the best
// weighted share; the groups added. accept filters documents before they
// are scored (nil accepts all). Matches come unordered.
func (ix *Index) Search(sc *Scorer, accept func(doc int32) bool) []Match {
	return ix.search(nil, sc, accept)
}

// search is Search over the documents of v (nil: every live document),
// with v's statistics.
func (ix *Index) search(v *View, sc *Scorer, accept func(doc int32) bool) []Match {
	n, avgLen := ix.n, ix.avgLen
	if v != nil {
		n, avgLen = v.n, v.avgLen
	}
	if n == 0 || sc.groups == 0 {
		return nil
	}
	s, _ := scratchPool.Get().(*scoreScratch)
	if s == nil || len(s.slot) < len(ix.docLen) {
		s = &scoreScratch{slot: make([]int32, len(ix.docLen))}
		for i := range s.slot {
			s.slot[i] = -1
		}
	}
	defer func() {
		for _, d := range s.touched {
			s.slot[d] = -1
		}
		for _, d := range s.refused {
			s.slot[d] = -1
		}
		s.touched, s.refused, s.acc = s.touched[:0], s.refused[:0], s.acc[:0]
		scratchPool.Put(s)
	}()
	g := sc.groups
	for i, term := range sc.terms {
		links := sc.links[i]
		if len(links) == 0 {
			continue
		}
		stems := analyse(term)
		ps, df := ix.postings(stems)
		if v != nil {
			df = v.docFreqOf(stems, ps)
		}
		if df == 0 {
			continue
		}
		termIDF := idf(n, df)
		for _, p := range ps {
			slot := s.slot[p.doc]
			if slot == -2 {
				continue
			}
			if slot < 0 {
				if ix.isDead(p.doc) || (v != nil && !v.Contains(p.doc)) || (accept != nil && !accept(p.doc)) {
					s.slot[p.doc] = -2
					s.refused = append(s.refused, p.doc)
					continue
				}
				slot = int32(len(s.touched))
				s.slot[p.doc] = slot
				s.touched = append(s.touched, p.doc)
				s.acc = append(s.acc, make([]float64, g)...)
			}
			f := float64(p.wf)
			norm := bm25K1 * (1 - bm25B + bm25B*float64(ix.docLen[p.doc])/avgLen)
			c := termIDF * f * (bm25K1 + 1) / (f + norm)
			acc := s.acc[int(slot)*g : int(slot)*g+g]
			for _, l := range links {
				acc[l.group] = math.Max(acc[l.group], l.weight*c)
			}
		}
	}
	out := make([]Match, len(s.touched))
	for i, d := range s.touched {
		sum := 0.0
		for _, v := range s.acc[i*g : i*g+g] {
			sum += v
		}
		out[i] = Match{Doc: d, Score: sum}
	}
	return out
}

// Plain returns a query's words (QueryTerms) as unexpanded terms, each
// its own group of weight 1: scored by Index.Search they give FTS5's bm25()
// of the MATCH expression the SQL path builds from the same words.
func Plain(query string) []Term {
	words := QueryTerms(query)
	out := make([]Term, len(words))
	for i, w := range words {
		out[i] = Term{text: w, weight: 1, group: i}
	}
	return out
}

// WithoutUbiquitous drops the terms in more than ubiquitous(n) of the
// index's documents, as the index's SQL path (textExprs) does: such a word says
// next to nothing about which record is meant (its bm25 idf is below
// log 3), and in a large catalogue reading its posting list would cost
// more than the rest of the search. Groups are renumbered.
func (ix *Index) WithoutUbiquitous(ts []Term, ubiquitous func(docs int) int) []Term {
	limit := ubiquitous(ix.n)
	out := ts[:0]
	for _, t := range ts {
		if _, df := ix.postings(analyse(t.text)); df <= limit {
			t.group = len(out)
			out = append(out, t)
		}
	}
	return out
}

// Top returns the limit best matches in order. It may reorder ms,
// and never changes its contents.
func Top(ms []Match, limit int, cmp func(a, b Match) int) []Match {
	if len(ms) > 4*limit {
		// Keep the matches scoring at least the limit-th best score, found
		// by a bounded min-heap of scores, before sorting.
		h := make([]float64, 0, limit)
		for _, m := range ms {
			if len(h) < limit {
				h = append(h, m.Score)
				for i := len(h) - 1; i > 0 && h[(i-1)/2] > h[i]; i = (i - 1) / 2 {
					h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
				}
				continue
			}
			if m.Score <= h[0] {
				continue
			}
			h[0] = m.Score
			for i := 0; ; {
				l, r, low := 2*i+1, 2*i+2, i
				if l < len(h) && h[l] < h[low] {
					low = l
				}
				if r < len(h) && h[r] < h[low] {
					low = r
				}
				if low == i {
					break
				}
				h[i], h[low] = h[low], h[i]
				i = low
			}
		}
		cut := h[0]
		kept := make([]Match, 0, 2*limit)
		for _, m := range ms {
			if m.Score >= cut {
				kept = append(kept, m)
			}
		}
		ms = kept
	}
	slices.SortFunc(ms, cmp)
	if len(ms) > limit {
		ms = ms[:limit]
	}
	return ms
}
