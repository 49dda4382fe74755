package textsearch

import (
	"slices"
	"testing"
)

func TestTextIndexPhrase(t *testing.T) {
	ix := Build([][]string{
		{"sign in", "Sign the user in"},
		{"user login", "Lets a user sign in with a password; sign in again"},
		{"", "in sign"},
	}, []float64{4, 2})
	ps, _ := ix.postings(analyse("sign in"))
	var docs []int32
	for _, p := range ps {
		docs = append(docs, p.doc)
	}
	if !slices.Equal(docs, []int32{0, 1}) {
		t.Fatalf("phrase documents %v, want [0 1]", docs)
	}
	if ps[0].wf != 4 || ps[1].wf != 4 {
		t.Errorf("phrase frequencies %v, want 4 (name once) and 4 (description twice)", ps)
	}
}
