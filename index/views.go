package index

import "github.com/skillhost/skillhost/index/internal/textsearch"

// Per-caller ranking statistics.
//
// bm25 weighs a word by how many documents hold it and a document by its
// length against the average; spelling correction asks which words exist.
// Taken over the whole index, those figures mix every tenant's tools and
// skills: a tenant's scores moved when another tenant's pack changed, and
// told it about words it cannot see. So a search ranks text in a view of
// the snapshot's text index (textsearch.View) holding only what its caller
// may find: for skills the caller's scopes, for tools its ToolView (or,
// without one, what its Visible admits). A caller who sees everything
// gets the index's own figures, unchanged.

// ToolView is the set of indexed tools one kind of caller may find — a
// tenant's, say. A search given it returns only those tools, and ranks
// their text with statistics (document counts, lengths, word frequencies,
// the spelling vocabulary) of those tools alone, so tools outside it
// never change the caller's scores.
//
// A view remembers its statistics per snapshot of the index, made on its
// first search after each write: give every search of callers who see the
// same tools the same *ToolView. Its admits function is called once per
// indexed tool each time, must give the same answer for a name for as
// long as the view is used, must be safe for concurrent use, and must not
// call back into the store.
type ToolView struct {
	admits func(name string) bool
}

// NewToolView returns the view of the tools admits accepts.
func NewToolView(admits func(name string) bool) *ToolView {
	return &ToolView{admits: admits}
}

// findable is the test a tool search applies to every candidate: the
// query's view and its Visible, nil when there is neither.
func (q ToolQuery) findable() func(name string) bool {
	switch {
	case q.View == nil:
		return q.Visible
	case q.Visible == nil:
		return q.View.admits
	}
	return func(name string) bool { return q.View.admits(name) && q.Visible(name) }
}

// restricted reports whether the query's statistics come from part of the
// index: then its text is never ranked by FTS5, whose bm25 counts every
// row.
func (q ToolQuery) restricted() bool { return q.View != nil || q.Visible != nil }

// textView returns the view of snap's text index a tool search ranks in:
// the query's ToolView (remembered in the index), or else the tools its
// Visible admits (made for this search), or nil for the whole index.
func (q ToolQuery) textView(snap *snapshot) *textsearch.View {
	var v *textsearch.View
	switch {
	case q.View != nil:
		v = snap.text.CachedView(q.View, func(doc int32) bool { return q.View.admits(snap.entries[doc].name) })
	case q.Visible != nil:
		v = snap.text.NewView(func(doc int32) bool { return q.Visible(snap.entries[doc].name) })
	}
	if v != nil && v.Whole() {
		return nil
	}
	return v
}

// skillView returns the view of a skill snapshot's text index holding the
// skills of the scopes numbered ids (the caller's global, tenant and
// project scopes; 0 for one with no skills), or nil when those are every
// skill. A copy another of the caller's skills shadows stays in: it is
// the caller's own scopes' text, whatever other tenants store.
func (snap *snapshot) skillView(ids [3]uint32) *textsearch.View {
	v := snap.text.CachedView(ids, func(doc int32) bool {
		id := snap.filt[doc] >> filtTypeBits
		return id != 0 && (id == ids[0] || id == ids[1] || id == ids[2])
	})
	if v.Whole() {
		return nil
	}
	return v
}

// rankingSnap returns the snapshot of h a search ranks text in when its
// statistics come from part of the index: the one of generation gen (the
// one its read transaction sees), or else — after a write by another process — the newest, while a
// fresh one loads in the background (Store.at). FTS5 cannot rank such a
// search: its bm25 counts every row. Nil when there is no snapshot at all
// (the search loads one before its transaction) or tests turned the
// snapshot text off.
func (s *Store) rankingSnap(gen int64, h *snapHolder) *snapshot {
	if !useSnapshotText {
		return nil
	}
	snap := s.at(h, gen)
	if snap == nil {
		snap = h.cur.Load()
	}
	if snap == nil || snap.text == nil {
		return nil
	}
	return snap
}

// searchIn runs a text search of snap in view v, or in the whole index
// when v is nil.
func searchIn(snap *snapshot, v *textsearch.View, sc *textsearch.Scorer, accept func(doc int32) bool) []textsearch.Match {
	if v == nil {
		return snap.text.Search(sc, accept)
	}
	return v.Search(sc, accept)
}
