package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillhost/skillhost/packs"
)

// largeCatalogue is the expansion catalogue among n filler tools whose
// words are none of the expansion tests' requests or their synonyms.
func largeCatalogue(n int) []ToolRecord {
	words := []string{"chart", "invoice", "calendar", "photo", "translate", "stock", "ticket", "playlist",
		"recipe", "flight", "currency", "lyrics", "parcel", "garden", "museum", "podcast"}
	tools := expansionCatalogue()
	for i := range n {
		a, b, c := words[i%len(words)], words[(i/len(words))%len(words)], words[(i*7+3)%len(words)]
		tools = append(tools, ToolRecord{Name: fmt.Sprintf("f%d_%s_%s", i, a, b),
			Description: fmt.Sprintf("Shows the %s %s of a %s.", a, b, c), LoadingMode: packs.LoadingDeferred})
	}
	return tools
}

// TestLargeCatalogueExpandedFromTheStart: a catalogue far above the size
// whose stale snapshot is reloaded inside the search still gets the
// expanded ranking on the first search of a freshly opened store (no
// snapshot yet), and after writes made through the store (the snapshot
// follows them): a request found only by a synonym finds its tool every
// time, whenever it runs.
func TestLargeCatalogueExpandedFromTheStart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	tools := largeCatalogue(2 * syncSnapshotMax)
	w, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.SyncTools(ctx, tools); err != nil {
		t.Fatal(err)
	}
	w.Close()

	const q, want = "wipe it all", "records_purge" // wipe → erase, a synonym
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := searchNames(t, s, q); len(got) == 0 || got[0] != want {
		t.Fatalf("first search of a fresh store: got %v, want %s first", got, want)
	}
	useSnapshotText = false
	got := searchNames(t, s, q)
	useSnapshotText = true
	if slices.Contains(got, want) {
		t.Fatalf("the unexpanded SQL path finds %s (%v): the case does not test expansion", want, got)
	}

	for i := range 3 {
		tools[len(tools)-1-i].Description += " Updated."
		if _, err := s.SyncTools(ctx, tools); err != nil {
			t.Fatal(err)
		}
		if err := s.PutSkill(ctx, SkillRecord{Name: fmt.Sprintf("s%d", i), Title: "A skill", Description: "Does a thing.", Steps: []string{"Do it."}, Origin: OriginLearned,
			Scope: Scope{Mode: packs.ScopeGlobal}}); err != nil {
			t.Fatal(err)
		}
		gen, err := s.generation(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cur := s.toolSnaps.cur.Load(); cur == nil || cur.gen != gen {
			t.Fatalf("after write %d the tool snapshot is not of generation %d", i, gen)
		}
		if got := searchNames(t, s, q); len(got) == 0 || got[0] != want {
			t.Fatalf("after write %d: got %v, want %s first", i, got, want)
		}
	}
}

// TestSnapshotUpdateMatchesReload: a tool snapshot brought up to date in
// place after each write (changed, added, removed, moved tools) answers
// every query exactly as a snapshot loaded from scratch in another store
// on the same file, names and scores, spelling corrections included.
func TestSnapshotUpdateMatchesReload(t *testing.T) {
	ctx := context.Background()
	cat, queries := loadEvalSet(t, "a", "c")
	all := evalTools(cat)
	r := rand.New(rand.NewPCG(5, 6))
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	tools := slices.Clone(all[:len(all)*3/4])
	spare := all[len(all)*3/4:]
	qs := []string{"wipe it all", "wether forcast", "resturant reservaton", "send an email"}
	for _, qu := range queries[:min(len(queries), 80)] {
		qs = append(qs, qu.Text)
	}

	path := filepath.Join(t.TempDir(), "index.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SyncTools(ctx, tools); err != nil {
		t.Fatal(err)
	}
	searchNames(t, s, "load the snapshot")
	updated, reloaded := 0, 0
	for round := range 16 {
		for range 1 + r.IntN(20) {
			i := r.IntN(len(tools))
			switch k := r.IntN(4); {
			case k == 0 && len(spare) > 0:
				tools, spare = append(tools, spare[0]), spare[1:]
			case k == 1:
				tools = slices.Delete(tools, i, i+1)
			case k == 2:
				tools[i].Description = spare[r.IntN(len(spare))].Description
			default:
				if tools[i].LoadingMode == packs.LoadingAlways {
					tools[i].LoadingMode = packs.LoadingDeferred
				} else {
					tools[i].LoadingMode = packs.LoadingAlways
				}
			}
		}
		before := s.toolSnaps.cur.Load()
		if _, err := s.SyncTools(ctx, tools); err != nil {
			t.Fatal(err)
		}
		cur := s.toolSnaps.cur.Load()
		if cur.gen != before.gen+1 {
			t.Fatalf("round %d: snapshot of generation %d after a write from %d", round, cur.gen, before.gen)
		}
		switch {
		case cur.gone > 0:
			updated++
		case before.gone > 0:
			reloaded++ // too many entries gone: loaded afresh
		}
		fresh, err := Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			for _, always := range []bool{false, true} {
				tq := ToolQuery{Query: q, Limit: 10, IncludeAlwaysLoaded: always}
				got, want := search(t, s, tq), search(t, fresh, tq)
				if fmt.Sprint(got.Tools) != fmt.Sprint(want.Tools) {
					t.Fatalf("round %d, %q (always %v):\nupdated %v\nreloaded %v", round, q, always, got.Tools, want.Tools)
				}
			}
		}
		if f := fresh.toolSnaps.cur.Load(); f.text.Len() != cur.text.Len() || f.text.Tokens() != cur.text.Tokens() {
			t.Fatalf("round %d: updated index has %d documents, %d tokens; reloaded %d, %d",
				round, cur.text.Len(), cur.text.Tokens(), f.text.Len(), f.text.Tokens())
		}
		fresh.Close()
	}
	if updated == 0 || reloaded == 0 {
		t.Errorf("%d rounds updated in place, %d reloaded: want both paths taken", updated, reloaded)
	}
}
