package textsearch

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// updateWords is the small vocabulary FuzzTextIndexUpdate builds documents
// from: shared stems (chart, charts, charting), a phrase and near spellings,
// so that removals change document frequencies, phrase matches and the
// spelling vocabulary.
var updateWords = []string{"chart", "charts", "charting", "sign", "in", "invoice", "invoices",
	"weather", "wether", "forecast", "erase", "records", "file", "files", "the", "a"}

// FuzzTextIndexUpdate: an index derived by a sequence of updates (documents
// removed, documents added) scores every query exactly as an index built
// from scratch over the documents that remain.
func FuzzTextIndexUpdate(f *testing.F) {
	f.Add([]byte("seed-one"), []byte("chart sign in"))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 200, 100, 50, 25}, []byte("wether invoices"))
	f.Add([]byte{255, 254, 253, 0, 0, 0, 17, 33, 65}, []byte("the records erase"))
	f.Fuzz(func(t *testing.T, ops, query []byte) {
		if len(ops) > 256 {
			ops = ops[:256]
		}
		weights := []float64{4, 2}
		next := 0
		doc := func(b byte) []string {
			next++
			var w []string
			for i := range 1 + int(b%5) {
				w = append(w, updateWords[(int(b)+i*7)%len(updateWords)])
			}
			return []string{fmt.Sprintf("d%d", next), strings.Join(w, " ")}
		}
		// live maps a document of the updated index to its columns.
		live := map[int32][]string{}
		var initial [][]string
		for i := 0; i < len(ops) && i < 8; i++ {
			d := doc(ops[i])
			live[int32(i)] = d
			initial = append(initial, d)
		}
		ix := Build(initial, weights)
		total := len(initial)
		for i := 8; i+1 < len(ops); i += 2 {
			var drop []int32
			for d := range live {
				if int(ops[i])%(total+1) == int(d) || (ops[i]&0x80 != 0 && int(d)%3 == int(ops[i+1])%3) {
					drop = append(drop, d)
				}
			}
			var add [][]string
			for k := range int(ops[i+1] % 4) {
				d := doc(ops[i+1] + byte(k))
				add = append(add, d)
				live[int32(total+k)] = d
			}
			for _, d := range drop {
				delete(live, d)
			}
			ix = ix.Update(drop, add)
			total += len(add)
		}

		// The same documents built from scratch, labelled by their first column.
		var docs [][]string
		for _, d := range live {
			docs = append(docs, d)
		}
		fresh := Build(docs, weights)
		if ix.n != fresh.n || ix.total != fresh.total {
			t.Fatalf("updated index: %d documents, %d tokens; built: %d, %d", ix.n, ix.total, fresh.n, fresh.total)
		}
		words := SplitWords(string(query))
		if len(words) == 0 {
			words = []string{"chart"}
		}
		scores := func(x *Index, label func(int32) string) map[string]float64 {
			out := map[string]float64{}
			for _, m := range x.Search(NewScorer(Expand(words, x)), nil) {
				out[label(m.Doc)] = m.Score
			}
			return out
		}
		got := scores(ix, func(d int32) string {
			c, ok := live[d]
			if !ok {
				t.Fatalf("the updated index returns removed document %d", d)
			}
			return c[0]
		})
		want := scores(fresh, func(d int32) string { return docs[d][0] })
		if len(got) != len(want) {
			t.Fatalf("query %q: updated index matches %v, built %v", words, got, want)
		}
		for k, w := range want {
			if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
				t.Fatalf("query %q, %s: updated %v, built %v", words, k, got[k], w)
			}
		}
	})
}
