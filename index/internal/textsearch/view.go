package textsearch

import (
	"slices"
	"strings"
	"sync"
)

// A View is a subset of an index's live documents that ranks as an index
// of those documents alone would: its searches count documents, lengths
// and document frequencies over the view only, and its spelling
// vocabulary holds only words its documents contain. A caller who may see
// part of a catalogue (a tenant) searches its view, so that documents it
// cannot see change neither its scores nor its spelling corrections, and
// its scores tell it nothing about them.
//
// A View is immutable once made, but for the counts it remembers as they
// are asked for (word occurrences, document frequencies), and safe for
// concurrent use. It belongs to the
// index it was made from; Update makes a new index, whose views are made
// again.
type View struct {
	ix *Index
	// whole says the view holds every live document: then it ranks
	// exactly as its index does, and searches take the index's own
	// statistics.
	whole  bool
	in     []uint64 // bit d set: document d is in the view
	n      int      // documents
	total  int      // their tokens
	avgLen float64

	mu    sync.Mutex
	freqs map[int32]int32 // by surface word id: occurrences in the view, at most vocabFreqCap
	dfs   map[string]int  // by analysed term: documents of the view holding it
}

// maxCachedDFs bounds the document frequencies a view remembers; past it
// they are counted each time.
const maxCachedDFs = 1 << 14

// vocabFreqCap is the most occurrences of a word the spelling vocabulary
// tells apart: a word in more documents than that is simply common.
const vocabFreqCap = 16

// maxCachedViews bounds the views one index remembers (CachedView); past
// it the cache starts again.
const maxCachedViews = 1024

// viewCache holds an index's views by key.
type viewCache struct {
	mu sync.Mutex
	m  map[any]*View
}

// NewView returns the view of the live documents admit accepts. It calls
// admit once for each live document.
func (ix *Index) NewView(admit func(doc int32) bool) *View {
	v := &View{ix: ix, in: make([]uint64, (len(ix.docLen)+63)/64)}
	for d := range int32(len(ix.docLen)) {
		if ix.isDead(d) || !admit(d) {
			continue
		}
		v.in[d>>6] |= 1 << (d & 63)
		v.n++
		v.total += int(ix.docLen[d])
	}
	v.whole = v.n == ix.n
	if v.n > 0 {
		v.avgLen = float64(v.total) / float64(v.n)
	}
	return v
}

// CachedView returns the view remembered under key (a comparable value),
// making it with NewView(admit) the first time: callers that see the same
// documents share one key, and pay for the view once per index.
func (ix *Index) CachedView(key any, admit func(doc int32) bool) *View {
	c := &ix.views
	c.mu.Lock()
	v, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return v
	}
	// Made outside the lock: two callers may both make it, and one wins.
	v = ix.NewView(admit)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedViews {
		c.m = make(map[any]*View)
	}
	if prev, ok := c.m[key]; ok {
		v = prev
	} else {
		c.m[key] = v
	}
	c.mu.Unlock()
	return v
}

// Len returns the number of documents in the view.
func (v *View) Len() int { return v.n }

// Whole reports whether the view holds every live document of its index.
func (v *View) Whole() bool { return v.whole }

// Contains reports whether document d is in the view.
func (v *View) Contains(d int32) bool {
	return int(d>>6) < len(v.in) && v.in[d>>6]&(1<<(d&63)) != 0
}

// Search is Index.Search over the view: only its documents match, and
// bm25 takes its number of documents, average length and document
// frequencies from the view alone.
func (v *View) Search(sc *Scorer, accept func(doc int32) bool) []Match {
	if v.whole {
		return v.ix.Search(sc, accept)
	}
	return v.ix.search(v, sc, accept)
}

// WithoutUbiquitous is Index.WithoutUbiquitous with the view's document
// count and frequencies.
func (v *View) WithoutUbiquitous(ts []Term, ubiquitous func(docs int) int) []Term {
	if v.whole {
		return v.ix.WithoutUbiquitous(ts, ubiquitous)
	}
	limit := ubiquitous(v.n)
	out := ts[:0]
	for _, t := range ts {
		if v.docFreq(analyse(t.text)) <= limit {
			t.group = len(out)
			out = append(out, t)
		}
	}
	return out
}

// docFreq returns how many documents of the view match the analysed term,
// counted once and remembered: a skill search asks it when it leaves out
// ubiquitous words and again when it scores, and a tenant's searches
// repeat words.
func (v *View) docFreq(stems []string) int { return v.docFreqOf(stems, nil) }

// docFreqOf is docFreq for a term whose postings the caller has read
// already (nil: read them when needed).
func (v *View) docFreqOf(stems []string, ps []posting) int {
	key := strings.Join(stems, " ")
	v.mu.Lock()
	df, ok := v.dfs[key]
	v.mu.Unlock()
	if ok {
		return df
	}
	if ps == nil {
		ps, _ = v.ix.postings(stems)
	}
	df = v.count(ps)
	v.mu.Lock()
	if v.dfs == nil {
		v.dfs = make(map[string]int)
	}
	if len(v.dfs) < maxCachedDFs {
		v.dfs[key] = df
	}
	v.mu.Unlock()
	return df
}

// count returns how many of the postings' documents are in the view (the
// view holds no removed document).
func (v *View) count(ps []posting) int {
	n := 0
	for _, p := range ps {
		if v.in[p.doc>>6]&(1<<(p.doc&63)) != 0 {
			n++
		}
	}
	return n
}

// The view is a spelling vocabulary of its own documents' words.
var _ Vocab = (*View)(nil)

// Has reports whether a document of the view contains the surface word w.
func (v *View) Has(w string) bool {
	if v.whole {
		return v.ix.Has(w)
	}
	si, ok := v.ix.words[w]
	return ok && v.ix.counts[si] > 0 && v.freq(si) > 0
}

// Near returns the words of the view's documents within maxDist edits of
// w, closest first, then the most frequent in the view (up to
// vocabFreqCap), then in byte order: the index's Near, had it been built
// of the view's documents.
func (v *View) Near(w string, maxDist int) []string {
	if v.whole {
		return v.ix.Near(w, maxDist)
	}
	type near struct {
		word       string
		dist, freq int
	}
	var found []near
	for _, m := range v.ix.vocab.get().near(w, maxDist) {
		if f := v.freq(v.ix.words[m.word]); f > 0 {
			found = append(found, near{m.word, m.dist, f})
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b near) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		if a.freq != b.freq {
			return b.freq - a.freq
		}
		return strings.Compare(a.word, b.word)
	})
	out := make([]string, len(found))
	for i, m := range found {
		out[i] = m.word
	}
	return out
}

// freq returns the occurrences of the surface word si in the view's
// documents, counted up to vocabFreqCap, by reading the documents of its
// stem's posting list that are in the view. Counts are remembered.
func (v *View) freq(si int32) int {
	v.mu.Lock()
	f, ok := v.freqs[si]
	v.mu.Unlock()
	if ok {
		return int(f)
	}
	ix := v.ix
	n := 0
	for _, p := range ix.post[ix.surfStem[si]] {
		if !v.Contains(p.doc) {
			continue
		}
		for _, t := range ix.toks[ix.tokOff[p.doc]:ix.tokOff[p.doc+1]] {
			if t == uint32(si) {
				n++
			}
		}
		if n >= vocabFreqCap {
			n = vocabFreqCap
			break
		}
	}
	v.mu.Lock()
	if v.freqs == nil {
		v.freqs = make(map[int32]int32)
	}
	v.freqs[si] = int32(n)
	v.mu.Unlock()
	return n
}
