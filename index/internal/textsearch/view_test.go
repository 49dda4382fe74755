package textsearch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// viewQueries are the view tests' requests: words of updateWords, a
// phrase, typos one and two edits away, and words no document has.
var viewQueries = []string{"chart", "charts invoice", "sign in", "wether forcast", "invoces", "chrt",
	"erase the records", "weathr", "fiel", "forecasting files", "records erase invoice chart", "zebra", "signing"}

// TestViewRanksAsIndexOfItsDocuments: a view of part of an index — built,
// or updated in place — ranks every query, expanded or plain, exactly as
// an index built of those documents alone: the same documents with the
// same scores, to the bit. Its vocabulary answers Has and Near as that
// index's does, so spelling corrections depend only on the view's words,
// and its ubiquitous words are its own.
func TestViewRanksAsIndexOfItsDocuments(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	weights := []float64{4, 2}
	next := 0
	doc := func() []string {
		next++
		w := make([]string, 1+r.IntN(6))
		for i := range w {
			w[i] = updateWords[r.IntN(len(updateWords))]
		}
		return []string{fmt.Sprintf("d%d", next), strings.Join(w, " ")}
	}
	views, wholes := 0, 0
	for trial := range 60 {
		var docs [][]string
		for range 1 + r.IntN(40) {
			docs = append(docs, doc())
		}
		ix := Build(docs, weights)
		live := make(map[int32][]string)
		for i, d := range docs {
			live[int32(i)] = d
		}
		if trial%2 == 1 { // an index updated in place: some removed, some added
			var drop []int32
			for d := range live {
				if r.IntN(3) == 0 {
					drop = append(drop, d)
				}
			}
			var add [][]string
			for range r.IntN(8) {
				add = append(add, doc())
			}
			first := int32(len(ix.docLen))
			ix = ix.Update(drop, add)
			for _, d := range drop {
				delete(live, d)
			}
			for i, d := range add {
				live[first+int32(i)] = d
			}
		}
		keep := r.IntN(4) // 0: every document
		admit := func(d int32) bool { return keep == 0 || (int(d)*7+trial)%4 < keep }
		v := ix.NewView(admit)

		// The reference: an index of the view's documents alone, in
		// document order.
		var sub [][]string
		var subDoc []int32
		for d := range int32(len(ix.docLen)) {
			if c, ok := live[d]; ok && admit(d) {
				sub = append(sub, c)
				subDoc = append(subDoc, d)
			}
		}
		ref := Build(sub, weights)
		if v.Len() != len(sub) || v.Whole() != (len(sub) == len(live)) {
			t.Fatalf("trial %d: view of %d documents (whole %v), want %d of %d", trial, v.Len(), v.Whole(), len(sub), len(live))
		}
		if v.Whole() {
			wholes++
		} else {
			views++
		}
		for _, q := range viewQueries {
			words := SplitWords(q)
			if diff := cmp.Diff(Expand(words, ref), Expand(words, v), cmp.AllowUnexported(Term{})); diff != "" {
				t.Fatalf("trial %d, %q: expansion differs from the reference index's (-ref +view):\n%s", trial, q, diff)
			}
			for _, terms := range [][]Term{Expand(words, ref), Plain(q)} {
				got := v.Search(NewScorer(terms), nil)
				want := ref.Search(NewScorer(terms), nil)
				if d := sameMatches(got, want, subDoc); d != "" {
					t.Fatalf("trial %d, %q: %s", trial, q, d)
				}
			}
			few := func(n int) int { return n / 3 }
			if got, want := v.WithoutUbiquitous(Plain(q), few), ref.WithoutUbiquitous(Plain(q), few); !slices.EqualFunc(got, want, func(a, b Term) bool { return a == b }) {
				t.Fatalf("trial %d, %q: without ubiquitous words %v, want %v", trial, q, got, want)
			}
		}
		for _, w := range append(slices.Clone(updateWords), "wether", "chrt", "invoces", "weathr", "fiel", "zebra") {
			if v.Has(w) != ref.Has(w) {
				t.Fatalf("trial %d: view Has(%q) = %v, reference %v", trial, w, v.Has(w), ref.Has(w))
			}
			for d := range 3 {
				if diff := cmp.Diff(ref.Near(w, d), v.Near(w, d)); diff != "" {
					t.Fatalf("trial %d: Near(%q, %d) (-ref +view):\n%s", trial, w, d, diff)
				}
			}
		}
	}
	if views == 0 || wholes == 0 {
		t.Fatalf("%d partial views and %d whole ones: want both", views, wholes)
	}
}

// sameMatches compares a view's matches with its reference index's,
// whose document i is the view's subDoc[i]: the same documents, the same
// scores exactly.
func sameMatches(got, want []Match, subDoc []int32) string {
	w := make(map[int32]float64, len(want))
	for _, m := range want {
		w[subDoc[m.Doc]] = m.Score
	}
	if len(got) != len(w) {
		return fmt.Sprintf("%d matches, want %d", len(got), len(w))
	}
	for _, m := range got {
		s, ok := w[m.Doc]
		if !ok || s != m.Score {
			return fmt.Sprintf("document %d scores %v, want %v (found %v)", m.Doc, m.Score, s, ok)
		}
	}
	return ""
}

// TestCachedViewIsShared: CachedView makes a key's view once per index,
// and an updated index makes its own.
func TestCachedViewIsShared(t *testing.T) {
	ix := Build([][]string{{"a", "chart"}, {"b", "invoice"}, {"c", "chart invoice"}}, []float64{1, 1})
	calls := 0
	admit := func(d int32) bool { calls++; return d != 1 }
	a := ix.CachedView("tenant", admit)
	if b := ix.CachedView("tenant", admit); a != b || calls != 3 {
		t.Fatalf("second CachedView: same view %v, %d admit calls; want the same view and 3 calls", a == b, calls)
	}
	if ix.CachedView("other", admit) == a {
		t.Fatal("another key shares the view")
	}
	nx := ix.Update([]int32{0}, nil)
	if v := nx.CachedView("tenant", admit); v == a || v.Len() != 1 {
		t.Fatalf("the updated index's view: shared %v, %d documents; want its own of 1", v == a, v.Len())
	}
}

// TestViewHammer: goroutines sharing one cached view, each expanding and
// scoring queries (which fill the view's remembered counts as they go),
// get the answers a lone caller gets.
func TestViewHammer(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	var docs [][]string
	for i := range 300 {
		w := make([]string, 1+r.IntN(8))
		for j := range w {
			w[j] = updateWords[r.IntN(len(updateWords))]
		}
		docs = append(docs, []string{fmt.Sprintf("d%d", i), strings.Join(w, " ")})
	}
	ix := Build(docs, []float64{4, 2})
	admit := func(d int32) bool { return d%3 != 0 }
	answer := func(v *View, q string) string {
		terms := v.WithoutUbiquitous(Expand(SplitWords(q), v), func(n int) int { return n / 2 })
		ms := v.Search(NewScorer(terms), nil)
		slices.SortFunc(ms, func(a, b Match) int { return int(a.Doc - b.Doc) })
		return fmt.Sprint(ms)
	}
	want := make(map[string]string)
	for _, q := range viewQueries {
		want[q] = answer(ix.NewView(admit), q)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				q := viewQueries[(g+i)%len(viewQueries)]
				if got := answer(ix.CachedView("tenant", admit), q); got != want[q] {
					errs <- fmt.Sprintf("%q: %s, want %s", q, got, want[q])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// BenchmarkNewView makes a view of half of an index's documents, as the
// first search of a caller after each write does.
func BenchmarkNewView(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			docs := make([][]string, n)
			for i := range docs {
				w := make([]string, 8+r.IntN(24))
				for j := range w {
					w[j] = fmt.Sprintf("w%d", r.IntN(3000))
				}
				docs[i] = []string{fmt.Sprintf("d%d", i), strings.Join(w, " ")}
			}
			ix := Build(docs, []float64{4, 2})
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				ix.NewView(func(d int32) bool { return d%2 == 0 })
			}
		})
	}
}
