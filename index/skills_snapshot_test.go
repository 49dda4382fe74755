package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/index/internal/textsearch"
)

// skillTestScopes are where the generated skills live.
var skillTestScopes = []Scope{
	{}, {TenantID: "t1"}, {TenantID: "t2"}, {TenantID: "t1", ProjectID: "p1"}, {TenantID: "t1", ProjectID: "p2"},
	{TenantID: "t2", ProjectID: "p1"}, {ProjectID: "p1"},
}

// skillTestCallers are who searches them: every stored scope, and callers
// with scopes nothing is stored in.
var skillTestCallers = []Scope{
	{}, {TenantID: "t1"}, {TenantID: "t2"}, {TenantID: "t1", ProjectID: "p1"}, {TenantID: "t1", ProjectID: "p2"},
	{TenantID: "t2", ProjectID: "p1"}, {ProjectID: "p1"}, {TenantID: "t3"}, {TenantID: "t1", ProjectID: "p9"},
}

// skillTestWords is the vocabulary of generated skills: small enough that
// words repeat across skills, large enough that no query's words reach the
// document-frequency budget of the SQL path (which would prune them).
func skillTestWords() []string {
	return vocab(300)
}

// genTestSkill builds one skill named name whose text is drawn from words.
func genTestSkill(r *rand.Rand, words []string, name string) SkillRecord {
	text := func(lo, hi int) string {
		n := lo + r.IntN(hi-lo+1)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = words[r.IntN(len(words))]
			if r.IntN(6) == 0 {
				parts[i] = stopFill[r.IntN(len(stopFill))]
			}
		}
		return strings.Join(parts, " ")
	}
	// Every title has "guide": in a catalogue of more than 256 skills it
	// is a word both paths leave out as ubiquitous.
	sk := SkillRecord{Name: name, Title: "Guide: " + text(1, 4), Trigger: text(3, 9), Description: text(0, 8),
		TaskType: TaskTypes[r.IntN(len(TaskTypes))], Tags: []string{words[r.IntN(len(words))]}}
	for range r.IntN(3) {
		sk.Steps = append(sk.Steps, text(2, 6))
	}
	if r.IntN(4) == 0 {
		sk.Instructions = "# " + text(1, 3) + "\n" + text(4, 10)
	}
	return sk
}

// genScopedPacks builds, for each of skillTestScopes, a pack of skills.
// Names repeat across scopes (so more specific copies shadow less specific
// ones, often with another task type and other text), and some skills
// share their whole text (so scores tie and the contract's order decides).
func genScopedPacks(r *rand.Rand, words []string, perScope int) map[Scope][]SkillRecord {
	out := map[Scope][]SkillRecord{}
	for si, sc := range skillTestScopes {
		for i := range perScope {
			name := fmt.Sprintf("pack.s%d.%s_%d", si, words[r.IntN(len(words))], i)
			if i%3 == 0 {
				name = fmt.Sprintf("shared.%s_%d", words[i%17], i%9) // also in other scopes
			}
			sk := genTestSkill(r, words, name)
			if i%11 == 5 && len(out[sc]) > 0 {
				prev := out[sc][len(out[sc])-1]
				prev.Name = fmt.Sprintf("twin.%d.%d", si, i)
				sk = prev
			}
			out[sc] = append(out[sc], sk)
		}
		// Names are unique within a pack.
		seen := map[string]bool{}
		out[sc] = slices.DeleteFunc(out[sc], func(sk SkillRecord) bool {
			dup := seen[sk.Name]
			seen[sk.Name] = true
			return dup
		})
	}
	return out
}

// skillTestQueries are word queries drawn from words, and names and name
// starts of the stored skills.
func skillTestQueries(r *rand.Rand, words []string, names []string, n int) []string {
	qs := []string{"the", "how to", "shared", "pack.s1", "twin", "guide", "guide " + words[0], "Guide to " + words[1] + " " + words[2]}
	for range n {
		switch x := r.IntN(10); {
		case x == 0:
			qs = append(qs, names[r.IntN(len(names))])
		case x == 1:
			nm := names[r.IntN(len(names))]
			qs = append(qs, nm[:min(len(nm), 2+r.IntN(8))])
		case x == 2:
			qs = append(qs, "how to "+words[r.IntN(len(words))])
		default:
			k := 1 + r.IntN(3)
			parts := make([]string, k)
			for i := range parts {
				parts[i] = words[r.IntN(len(words))]
			}
			qs = append(qs, strings.Join(parts, " "))
		}
	}
	return qs
}

// loadScopedPacks stores the packs, scope by scope, and returns the names.
func loadScopedPacks(t *testing.T, s *Store, packs map[Scope][]SkillRecord) []string {
	t.Helper()
	var names []string
	for i, sc := range skillTestScopes {
		if _, err := s.LoadPack(context.Background(), []string{"alpha", "beta", "gamma"}[i%3], packs[sc], PackOptions{Scope: sc}); err != nil {
			t.Fatal(err)
		}
		for _, sk := range packs[sc] {
			names = append(names, sk.Name)
		}
	}
	return names
}

// skillAnswers runs every query for every caller (skillTestCallers
// when none are given) and task type and returns the results.
func skillAnswers(t *testing.T, s *Store, queries []string, types []string, callers ...Scope) []*SkillSearchResult {
	t.Helper()
	if len(callers) == 0 {
		callers = skillTestCallers
	}
	var out []*SkillSearchResult
	for _, q := range queries {
		for _, caller := range callers {
			for _, tt := range types {
				res, err := s.SearchSkills(context.Background(), SkillQuery{Query: q, Limit: 12, Scope: caller, TaskType: tt})
				if err != nil {
					t.Fatalf("%q caller %+v type %q: %v", q, caller, tt, err)
				}
				out = append(out, res)
			}
		}
	}
	return out
}

// sameSkillAnswers reports the first difference between two sets of
// answers: names and order exactly, scores to 1e-9 (bm25 computed by FTS5
// and in Go may differ in the last bits).
func sameSkillAnswers(a, b []*SkillSearchResult) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d answers against %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i].Skills, b[i].Skills
		diff := len(x) != len(y) || a[i].SearchType != b[i].SearchType
		for j := 0; !diff && j < len(x); j++ {
			diff = x[j].Name != y[j].Name || x[j].Title != y[j].Title || x[j].Trigger != y[j].Trigger ||
				x[j].TaskType != y[j].TaskType || math.Abs(x[j].Score-y[j].Score) > 1e-9
		}
		if diff {
			return fmt.Sprintf("query %q:\n%+v\nagainst\n%+v", a[i].Query, x, y)
		}
	}
	return ""
}

// checkUnpruned fails the test when the SQL path would prune a query's
// words by their document frequencies beyond leaving out ubiquitous words
// (which the in-memory ranking leaves out too): the in-memory ranking reads
// whole posting lists, so the two agree only without pruning. With
// wantUbiquitous it also fails when no query has a ubiquitous word.
func checkUnpruned(t *testing.T, s *Store, queries []string, wantUbiquitous bool) {
	t.Helper()
	ctx := context.Background()
	ubi := 0
	err := s.read(ctx, func(rd *readTx) error {
		for _, q := range queries {
			words := textsearch.QueryTerms(q)
			if len(words) == 0 {
				continue
			}
			n, dfs, err := s.stats(ctx, rd, &s.skillText, words)
			if err != nil {
				return err
			}
			sum := 0
			for _, d := range dfs {
				if d > ubiquitous(n) {
					ubi++
					continue
				}
				sum += d
			}
			if sum > matchBudget(n, s.skillText.budget) {
				t.Fatalf("%q: the words' %d documents exceed the budget: the catalogue is too dense", q, sum)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ubi == 0 && wantUbiquitous {
		t.Fatal("no query has a ubiquitous word")
	}
}

// TestSkillTextFromSnapshotMatchesSQL: "fts" skill searches ranked in the
// skill snapshot's text index, with scope, task type and shadowing
// resolved in memory, return exactly what FTS5 returns over the skills
// the caller's scopes hold (names, order, titles, scores), for every
// caller (global only, tenants, projects, callers nothing is stored for)
// and task type, with names shadowed at several scopes and skills tied in
// score. FTS5's bm25 counts every row of its table, and the in-memory
// ranking only the caller's (views.go), so each caller's answers are held
// to the SQL path of a store of its scopes' skills alone; for a caller who
// sees every skill that is the store itself.
func TestSkillTextFromSnapshotMatchesSQL(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(11, 12))
	words := skillTestWords()
	opts := &Options{PreferredNamespaces: []string{"gamma", "alpha"}}
	s := openTest(t, opts)
	packs := genScopedPacks(r, words, 40)
	names := loadScopedPacks(t, s, packs)
	queries := skillTestQueries(r, words, names, 120)
	checkUnpruned(t, s, queries, true)
	snap, err := s.current(ctx, &s.skillSnaps)
	if err != nil {
		t.Fatal(err)
	}
	if snap.text == nil || snap.text.Len() != len(names) {
		t.Fatalf("skill snapshot text index: %+v, want %d documents", snap.text, len(names))
	}
	types := []string{"", "api", "unknown"}
	var mem []*SkillSearchResult
	partial := 0
	for _, caller := range skillTestCallers {
		own := map[Scope][]SkillRecord{}
		for sc, skills := range packs {
			n, err := normScope(sc)
			if err != nil {
				t.Fatal(err)
			}
			if visibleTo(caller, n.Mode, n.TenantID, n.ProjectID) {
				own[sc] = skills
			}
		}
		ref := s
		if len(own) < len(packs) {
			partial++
			ref = openTest(t, opts)
			loadScopedPacks(t, ref, own)
			checkUnpruned(t, ref, queries, false)
		}
		got := skillAnswers(t, s, queries, types, caller)
		useSnapshotNames, useSnapshotText = false, false
		want := skillAnswers(t, ref, queries, types, caller)
		useSnapshotNames, useSnapshotText = true, true
		if d := sameSkillAnswers(got, want); d != "" {
			t.Fatalf("caller %+v: snapshot and SQL answers differ: %s", caller, d)
		}
		mem = append(mem, got...)
	}
	// The comparison means something: text matches, several of them,
	// callers who see part of the skills, and shadowed copies that text
	// alone would find.
	text, shadowedHidden := 0, 0
	for _, res := range mem {
		if len(res.Skills) > 3 {
			text++
		}
	}
	if partial == 0 {
		t.Error("every caller sees every skill")
	}
	for _, sc := range skillTestCallers {
		for i := range snap.entries {
			e := &snap.entries[i]
			if visibleTo(sc, e.scopeMode, e.tenant, e.project) && snap.shadowed(sc, e.name, e.scopeMode) {
				shadowedHidden++
			}
		}
	}
	if text < len(mem)/4 || shadowedHidden == 0 {
		t.Errorf("%d of %d answers with more than 3 hits, %d shadowed copies: the case tests too little", text, len(mem), shadowedHidden)
	}
}

// TestSkillSnapshotUpdateMatchesReload: a skill snapshot brought up to date
// in place after each PutSkill and LoadPack (skills added, rewritten,
// moved to another task type, repinned into another pack, removed, in
// several scopes under shared names) answers every query exactly as a
// snapshot loaded from scratch in another store on the same file.
func TestSkillSnapshotUpdateMatchesReload(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(21, 22))
	words := skillTestWords()
	path := filepath.Join(t.TempDir(), "index.db")
	// Preferred packs make a skill's pack part of the order.
	opts := &Options{PreferredNamespaces: []string{"beta"}}
	s, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	packs := genScopedPacks(r, words, 30)
	names := loadScopedPacks(t, s, packs)
	queries := skillTestQueries(r, words, names, 40)
	if _, err := s.current(ctx, &s.skillSnaps); err != nil {
		t.Fatal(err)
	}
	updated, reloaded := 0, 0
	for round := range 14 {
		switch round % 3 {
		case 0, 1: // a few PutSkill calls
			for range 1 + r.IntN(4) {
				sc := skillTestScopes[r.IntN(len(skillTestScopes))]
				name := names[r.IntN(len(names))]
				if r.IntN(3) == 0 {
					name = fmt.Sprintf("learned.round%d_%d", round, r.IntN(5))
				}
				sk := genTestSkill(r, words, name)
				sk.Scope = sc
				if err := s.PutSkill(ctx, sk); err != nil {
					t.Fatal(err)
				}
			}
		default: // a pack reloaded in one scope: some changed, some gone, some new
			sc := skillTestScopes[r.IntN(len(skillTestScopes))]
			var next []SkillRecord
			for _, sk := range packs[sc] {
				switch r.IntN(6) {
				case 0: // removed
				case 1:
					sk.Trigger = genTestSkill(r, words, sk.Name).Trigger
					next = append(next, sk)
				case 2:
					sk.TaskType = TaskTypes[r.IntN(len(TaskTypes))]
					next = append(next, sk)
				default:
					next = append(next, sk)
				}
			}
			if round > 6 {
				// Every skill of the pack rewritten: with the entries
				// earlier rounds left behind, too many for an update.
				next = slices.Clone(packs[sc])
				for i := range next {
					next[i].Description += " revised"
				}
			}
			next = append(next, genTestSkill(r, words, fmt.Sprintf("pack.new%d", round)))
			packs[sc] = next
			pack := []string{"alpha", "beta", "gamma"}[r.IntN(3)]
			var pinned []string
			if len(next) > 1 && r.IntN(2) == 0 {
				pinned = []string{next[0].Name}
			}
			if _, err := s.LoadPack(ctx, pack, next, PackOptions{Scope: sc, UpdateExisting: true, Pinned: pinned}); err != nil {
				t.Fatal(err)
			}
		}
		cur := s.skillSnaps.cur.Load()
		gen, err := s.generation(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cur.gen != gen {
			t.Fatalf("round %d: skill snapshot of generation %d after a write to %d", round, cur.gen, gen)
		}
		// An update always leaves the text index a list of dead documents;
		// a reload builds one without.
		if !cur.text.Derived() {
			reloaded++
		} else {
			updated++
		}
		fresh, err := Open(ctx, path, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := fresh.Warm(ctx); err != nil {
			t.Fatal(err)
		}
		got := skillAnswers(t, s, queries, []string{"", "code"})
		want := skillAnswers(t, fresh, queries, []string{"", "code"})
		if d := sameSkillAnswers(got, want); d != "" {
			t.Fatalf("round %d: followed and reloaded snapshots differ: %s", round, d)
		}
		for _, caller := range skillTestCallers {
			q := SkillQuery{Query: "pack", SearchType: SearchRegex, Limit: MaxLimit, Scope: caller}
			a, err := s.SearchSkills(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			b, err := fresh.SearchSkills(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if d := sameSkillAnswers([]*SkillSearchResult{a}, []*SkillSearchResult{b}); d != "" {
				t.Fatalf("round %d: regex answers differ: %s", round, d)
			}
		}
		f := fresh.skillSnaps.cur.Load()
		if f.text.Len() != cur.text.Len() || f.text.Tokens() != cur.text.Tokens() || f.size() != cur.size() {
			t.Fatalf("round %d: followed index has %d documents, %d tokens, %d entries; reloaded %d, %d, %d",
				round, cur.text.Len(), cur.text.Tokens(), cur.size(), f.text.Len(), f.text.Tokens(), f.size())
		}
		fresh.Close()
	}
	t.Logf("%d rounds updated in place, %d reloaded", updated, reloaded)
	if updated == 0 || reloaded == 0 {
		t.Errorf("%d rounds updated in place, %d reloaded: want both paths taken", updated, reloaded)
	}
}
