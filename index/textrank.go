package index

import "github.com/skillhost/skillhost/index/internal/textsearch"

// Text search in memory.
//
// FTS5 keeps the index of record: it is written in the same transaction as
// the rows and answers an "fts" search of the whole index whose snapshot
// is not current (the SQL path). A snapshot of the tools or of the skills
// also holds their text in a textsearch.Index, tokenised as FTS5 indexes
// it, and ranks with FTS5's own bm25 formula over it: only there can a
// query be expanded (synonyms, spelling corrections) with a weight per
// term, and only there can the statistics be those of what the caller may
// see (views.go). Tool searches are expanded (textsearch.Expand); skill
// searches keep FTS5's ranking of the query's own words (textsearch.Plain).

// textSearch ranks the snapshot's entries in view (nil: every entry)
// against the terms of sc (an expanded query, or textsearch.Plain), with
// the view's statistics, and returns the best limit entries that both
// filters accept, as text-tier hits whose r is the negated score (lower is
// better, like bm25()). Equal scores are ordered by the contract's
// tie-breakers. match is a cheap filter applied to every matching entry,
// by its index; keep (nil for none) is applied in rank order, only until
// limit are kept.
func (s *Store) textSearch(snap *snapshot, view *textsearch.View, sc *textsearch.Scorer, limit int, match func(doc int32) bool, keep func(*snapEntry) bool) []*hit {
	ms := searchIn(snap, view, sc, match)
	better := func(a, b textsearch.Match) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return int(snap.rank[a.Doc] - snap.rank[b.Doc])
	}
	var out []*hit
	for window := 2*limit + 8; ; window *= 4 {
		top := textsearch.Top(ms, window, better)
		out = out[:0]
		for _, m := range top {
			e := &snap.entries[m.Doc]
			if keep != nil && !keep(e) {
				continue
			}
			h := e.hit
			h.tier, h.r = tierText, -m.Score
			out = append(out, &h)
			if len(out) == limit {
				return out
			}
		}
		if len(top) == len(ms) {
			return out
		}
	}
}
