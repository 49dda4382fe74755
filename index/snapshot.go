package index

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillhost/skillhost/index/internal/textsearch"
	"github.com/skillhost/skillhost/packs"
)

// A snapshot is an in-memory copy of the searchable fields of every tool or
// every skill, taken in one read transaction and labelled with the store
// generation it saw. Regex searches scan it (RE2 over Go strings beats a
// scalar function called per row), and "fts" searches find name and
// name-prefix matches in its sorted name lists when its generation is the
// one their own transaction sees; otherwise they use SQL and a fresh copy is
// loaded in the background. A write through the store moves the snapshots
// to its generation as it commits (Store.follow): changed tools and skills
// are applied in place (snapshot.update), so only writes by other processes
// leave a snapshot stale.
type snapshot struct {
	gen     int64
	entries []snapEntry
	byKey   []int32 // entries ordered by lower-case name
	byTerms []int32 // entries ordered by name words
	// rank is each entry's place in the order of the contract's
	// tie-breakers (namespace preference, side effects, name length, name).
	rank []int32

	mu     sync.Mutex
	ranked map[string][]int32 // large prefix ranges in rank order, by range

	// text is the inverted index of the entries' searchable text (nil for
	// kinds without one); document i is entries[i].
	text *textsearch.Index
	// gone counts the entries marked gone.
	gone int

	// scoped says the entries are skills: filt holds, for every entry, its
	// scope's number in scopes and its task type (see skillFilterBits), so
	// that a search filters posting lists on a compact array instead of
	// the entries.
	scoped bool
	scopes map[Scope]uint32
	filt   []uint32
	// sharedNames holds the skill names of more than one live entry (in
	// several scopes), the only ones shadowing can hide.
	sharedNames map[string]bool
}

// maxRankedRanges bounds the cache of prefix ranges sorted by rank.
const maxRankedRanges = 256

// largeRange is the size from which a sorted prefix range is cached.
const largeRange = 256

// snapEntry is one tool or skill.
type snapEntry struct {
	hit
	key, terms      string // name_key, name_terms
	tenant, project string // a skill's scope identifiers
	// uid identifies the record across writes: a tool's name, a skill's
	// storage ID (one per name and scope).
	uid  string
	text []string
	// gone marks an entry removed by a later write (see snapshot.update);
	// it is in none of the snapshot's lists and no search returns it.
	gone bool
	// cols are the full-text columns, in the FTS5 table's order, while the
	// snapshot's text index is built.
	cols []string
}

// snapKind says how to load one kind of record.
type snapKind struct {
	query string
	// uidCol is the column holding snapEntry.uid, for reading changed
	// records (Store.changedRows).
	uidCol string
	scan   func(rows *sql.Rows, e *snapEntry) error
	// weights are the bm25 column weights of the text index of
	// snapEntry.cols; nil for no text index.
	weights []float64
	// scoped says the records are skills (see snapshot.filt).
	scoped bool
}

var toolSnapKind = snapKind{
	query: `SELECT name, namespace, side_rank, description, loading_mode, name_key, name_terms, tags_text,
		params_text, examples_text FROM tools`,
	uidCol: "name",
	scan: func(rows *sql.Rows, e *snapEntry) error {
		var tags, params, examples string
		err := rows.Scan(&e.name, &e.ns, &e.side, &e.desc, &e.loading, &e.key, &e.terms, &tags, &params, &examples)
		e.uid = e.name
		e.text = []string{e.desc, tags}
		e.cols = []string{e.terms, e.desc, tags, params, examples}
		return err
	},
	weights: toolWeights[:],
}

// skillSnapKind reads skills; the text index has the columns of
// skills_fts (schema.go), read from the same table columns its triggers
// copy, with the weights of skillWeights.
var skillSnapKind = snapKind{
	query: `SELECT name, pack, title, trigger, task_type, scope_mode, name_key, name_terms, scope_tenant_id,
		scope_project_id, description, tags_text, body, id FROM skills`,
	uidCol: "id",
	scan: func(rows *sql.Rows, e *snapEntry) error {
		var desc, tags, body string
		err := rows.Scan(&e.name, &e.ns, &e.title, &e.trigger, &e.taskType, &e.scopeMode, &e.key, &e.terms,
			&e.tenant, &e.project, &desc, &tags, &body, &e.uid)
		e.text = []string{e.title, e.trigger, desc, tags}
		e.cols = []string{e.terms, e.title, e.trigger, desc, tags, body}
		return err
	},
	weights: skillWeights[:],
	scoped:  true,
}

// snapHolder holds the latest snapshot of one kind.
type snapHolder struct {
	kind snapKind
	cur  atomic.Pointer[snapshot]
	// loading is closed when the synchronous load in progress ends, and
	// nil while none runs (see fresh); mu guards it and is never held
	// while a load runs.
	mu      sync.Mutex
	loading chan struct{}
	pending atomic.Bool // a background load is running
}

const generationSQL = `SELECT CAST(value AS INTEGER) FROM index_meta WHERE key = 'generation'`

// txGeneration is the store generation the transaction sees.
func (rd *readTx) generation(ctx context.Context) (int64, error) {
	if rd.genOK {
		return rd.gen, nil
	}
	var g int64
	err := rd.scanOne(ctx, generationSQL, []any{&g})
	if err == sql.ErrNoRows {
		err = nil
	}
	if err == nil {
		rd.gen, rd.genOK = g, true
	}
	return g, err
}

// loadSnapshot reads a snapshot in one read transaction and offers it to h.
func (s *Store) loadSnapshot(ctx context.Context, h *snapHolder) (*snapshot, error) {
	snap := &snapshot{}
	err := s.read(ctx, func(rd *readTx) error {
		var err error
		if snap.gen, err = rd.generation(ctx); err != nil {
			return err
		}
		rows, err := rd.tx.QueryContext(ctx, h.kind.query)
		if err != nil {
			return s.wrapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			var e snapEntry
			if err := h.kind.scan(rows, &e); err != nil {
				return s.wrapErr(err)
			}
			e.nlen = nameLen(e.name)
			snap.entries = append(snap.entries, e)
		}
		return s.wrapErr(rows.Err())
	})
	if err != nil {
		return nil, err
	}
	if h.kind.weights != nil {
		docs := make([][]string, len(snap.entries))
		for i := range snap.entries {
			docs[i], snap.entries[i].cols = snap.entries[i].cols, nil
		}
		snap.text = textsearch.Build(docs, h.kind.weights)
	}
	if h.kind.scoped {
		snap.scoped, snap.scopes = true, make(map[Scope]uint32)
		snap.addFilters(0)
	}
	s.order(snap)
	h.offer(snap)
	return snap, nil
}

// order sorts the snapshot's live entries into its name lists and ranks
// every entry by the contract's tie-breakers.
func (s *Store) order(snap *snapshot) {
	es := snap.entries
	snap.byKey = make([]int32, 0, len(es))
	for i := range es {
		if !es[i].gone {
			snap.byKey = append(snap.byKey, int32(i))
		}
	}
	snap.byTerms = slices.Clone(snap.byKey)
	sort.Slice(snap.byKey, func(i, j int) bool { return es[snap.byKey[i]].key < es[snap.byKey[j]].key })
	sort.Slice(snap.byTerms, func(i, j int) bool { return es[snap.byTerms[i]].terms < es[snap.byTerms[j]].terms })
	order := make([]int32, len(es))
	for i := range order {
		order[i] = int32(i)
	}
	sort.Slice(order, func(i, j int) bool { return s.tieLess(&es[order[i]].hit, &es[order[j]].hit) })
	snap.setRank(order)
	snap.findSharedNames()
}

// reorder is order for a snapshot made by update from prev: its entries
// are prev's (some now gone) followed by new ones from index from, so
// prev's lists are merged with the sorted new entries instead of sorting
// everything again (at 50,000 skills the sorts took 95 of 125 ms).
func (s *Store) reorder(snap, prev *snapshot, from int) {
	es := snap.entries
	added := make([]int32, 0, len(es)-from)
	for i := from; i < len(es); i++ {
		added = append(added, int32(i))
	}
	// merge returns old without gone entries (dropGone) merged with the
	// added entries, in the order of less.
	merge := func(old []int32, dropGone bool, less func(a, b *snapEntry) bool) []int32 {
		add := slices.Clone(added)
		sort.Slice(add, func(i, j int) bool { return less(&es[add[i]], &es[add[j]]) })
		out := make([]int32, 0, len(old)+len(add))
		j := 0
		for _, idx := range old {
			if dropGone && es[idx].gone {
				continue
			}
			for j < len(add) && less(&es[add[j]], &es[idx]) {
				out = append(out, add[j])
				j++
			}
			out = append(out, idx)
		}
		return append(out, add[j:]...)
	}
	snap.byKey = merge(prev.byKey, true, func(a, b *snapEntry) bool { return a.key < b.key })
	snap.byTerms = merge(prev.byTerms, true, func(a, b *snapEntry) bool { return a.terms < b.terms })
	// The rank covers every entry, gone ones included.
	order := make([]int32, len(prev.rank))
	for idx, r := range prev.rank {
		order[r] = int32(idx)
	}
	snap.setRank(merge(order, false, func(a, b *snapEntry) bool { return s.tieLess(&a.hit, &b.hit) }))
	snap.findSharedNames()
}

// setRank sets each entry's rank from the entries in rank order.
func (snap *snapshot) setRank(order []int32) {
	snap.rank = make([]int32, len(snap.entries))
	for r, idx := range order {
		snap.rank[idx] = int32(r)
	}
}

// findSharedNames fills sharedNames for a skill snapshot from its byKey
// list: equal names have equal keys, so they are in one run of a key.
func (snap *snapshot) findSharedNames() {
	if !snap.scoped {
		return
	}
	es, list := snap.entries, snap.byKey
	snap.sharedNames = make(map[string]bool)
	for i := 0; i < len(list); {
		j := i + 1
		for j < len(list) && es[list[j]].key == es[list[i]].key {
			j++
		}
		for a := i; a < j; a++ {
			for b := a + 1; b < j; b++ {
				if n := es[list[a]].name; n == es[list[b]].name {
					snap.sharedNames[n] = true
				}
			}
		}
		i = j
	}
}

// size is the number of live entries.
func (snap *snapshot) size() int { return len(snap.byKey) }

// relabel returns the snapshot as the one of generation gen: a write that
// changed none of its records.
func (snap *snapshot) relabel(gen int64) *snapshot {
	return &snapshot{gen: gen, entries: snap.entries, byKey: snap.byKey, byTerms: snap.byTerms,
		rank: snap.rank, text: snap.text, gone: snap.gone, scoped: snap.scoped, scopes: snap.scopes, filt: snap.filt,
		sharedNames: snap.sharedNames}
}

// Bits of snapshot.filt: a skill's scope number above its task type's
// place in TaskTypes.
const (
	filtTypeBits = 3
	filtTypeMask = 1<<filtTypeBits - 1
)

// addFilters fills filt for the entries from index from on, numbering
// scopes not seen before. The scopes map must be the snapshot's own.
func (snap *snapshot) addFilters(from int) {
	for i := from; i < len(snap.entries); i++ {
		e := &snap.entries[i]
		sc := Scope{Mode: e.scopeMode, TenantID: e.tenant, ProjectID: e.project}
		id, ok := snap.scopes[sc]
		if !ok {
			id = uint32(len(snap.scopes)) + 1 // 0: no scope
			snap.scopes[sc] = id
		}
		snap.filt = append(snap.filt, id<<filtTypeBits|uint32(taskIndex(e.taskType)))
	}
}

// scopeFilter returns the filter bits a caller's skills may have: the
// numbers of the caller's global, tenant and project scopes (0 for none
// stored), and the task type's index (-1: any).
func (snap *snapshot) scopeFilter(sc Scope, taskType string) (ids [3]uint32, typ int) {
	ids[0] = snap.scopes[Scope{Mode: packs.ScopeGlobal}]
	if sc.TenantID != "" {
		ids[1] = snap.scopes[Scope{Mode: packs.ScopeTenant, TenantID: sc.TenantID}]
	}
	if sc.ProjectID != "" {
		ids[2] = snap.scopes[Scope{Mode: packs.ScopeProject, TenantID: sc.TenantID, ProjectID: sc.ProjectID}]
	}
	typ = -1
	if taskType != "" {
		typ = taskIndex(taskType)
	}
	return ids, typ
}

// update returns the snapshot of generation gen after a write that
// replaced the records identified by uids (snapEntry.uid: tool names, skill
// IDs) by rows (the records now stored under those uids, with their cols; a
// uid without a row was deleted). Changed records are appended and their
// old entries marked gone; the text index is updated in place of a rebuild
// (textsearch.Index.Update), so the cost is that of the changed records plus
// copying the snapshot's lists.
func (s *Store) update(snap *snapshot, gen int64, uids []string, rows []snapEntry) *snapshot {
	drop := make(map[string]bool, len(uids))
	for _, n := range uids {
		drop[n] = true
	}
	entries := make([]snapEntry, len(snap.entries), len(snap.entries)+len(rows))
	copy(entries, snap.entries)
	var gone []int32
	for i := range entries {
		if e := &entries[i]; !e.gone && drop[e.uid] {
			e.gone = true
			gone = append(gone, int32(i))
		}
	}
	docs := make([][]string, len(rows))
	for i, e := range rows {
		docs[i] = e.cols
		e.cols = nil
		e.nlen = nameLen(e.name)
		entries = append(entries, e)
	}
	nx := &snapshot{gen: gen, entries: entries, gone: snap.gone + len(gone)}
	if snap.text != nil {
		nx.text = snap.text.Update(gone, docs)
	}
	if snap.scoped {
		nx.scoped, nx.scopes = true, snap.scopes
		nx.filt = slices.Clip(snap.filt)
		for _, e := range rows {
			if _, ok := snap.scopes[Scope{Mode: e.scopeMode, TenantID: e.tenant, ProjectID: e.project}]; !ok {
				nx.scopes = maps.Clone(snap.scopes) // a new scope: numbered in a copy
				break
			}
		}
		nx.addFilters(len(snap.entries))
	}
	s.reorder(nx, snap, len(snap.entries))
	return nx
}

// tieLess is the contract order among equal scores.
func (s *Store) tieLess(a, b *hit) bool {
	if ra, rb := s.nsOrder(a.ns), s.nsOrder(b.ns); ra != rb {
		return ra < rb
	}
	if a.side != b.side {
		return a.side < b.side
	}
	if a.nlen != b.nlen {
		return a.nlen < b.nlen
	}
	return a.name < b.name
}

// prefixRange returns the entries of the sorted list whose field has prefix
// p, in rank order.
func (snap *snapshot) prefixRange(list []int32, field func(*snapEntry) string, tag, p string) []int32 {
	es := snap.entries
	lo := sort.Search(len(list), func(i int) bool { return field(&es[list[i]]) >= p })
	hi := lo + sort.Search(len(list)-lo, func(i int) bool { return !strings.HasPrefix(field(&es[list[lo+i]]), p) })
	if hi-lo < largeRange {
		r := append([]int32(nil), list[lo:hi]...)
		sort.Slice(r, func(i, j int) bool { return snap.rank[r[i]] < snap.rank[r[j]] })
		return r
	}
	key := tag + p
	snap.mu.Lock()
	r, ok := snap.ranked[key]
	snap.mu.Unlock()
	if ok {
		return r
	}
	r = append([]int32(nil), list[lo:hi]...)
	sort.Slice(r, func(i, j int) bool { return snap.rank[r[i]] < snap.rank[r[j]] })
	snap.mu.Lock()
	if snap.ranked == nil {
		snap.ranked = make(map[string][]int32)
	}
	if len(snap.ranked) < maxRankedRanges {
		snap.ranked[key] = r
	}
	snap.mu.Unlock()
	return r
}

// offer installs snap unless a newer one is already there.
func (h *snapHolder) offer(snap *snapshot) {
	for {
		cur := h.cur.Load()
		if cur != nil && cur.gen >= snap.gen {
			return
		}
		if h.cur.CompareAndSwap(cur, snap) {
			return
		}
	}
}

// current returns a snapshot at least as new as the store generation now,
// loading one if needed. Like every caller of fresh, it holds no
// connection: it asks the pool for the generation, then for the load's.
func (s *Store) current(ctx context.Context, h *snapHolder) (*snapshot, error) {
	gen, err := s.generation(ctx)
	if err != nil {
		return nil, err
	}
	return s.fresh(ctx, h, gen)
}

// fresh returns h's snapshot when it is of generation gen or later, else
// loads one. One synchronous load runs at a time: a caller that finds one
// running waits for it to end, or for its own context to end, and then
// looks again (the load may have failed, or seen an older generation). No
// lock is held while the load waits for its connection, and the callers
// of fresh hold none, so the loader only ever waits for connections that
// are being given back.
func (s *Store) fresh(ctx context.Context, h *snapHolder, gen int64) (*snapshot, error) {
	for {
		if cur := h.cur.Load(); cur != nil && cur.gen >= gen {
			return cur, nil
		}
		h.mu.Lock()
		running := h.loading
		if running == nil {
			h.loading = make(chan struct{})
		}
		h.mu.Unlock()
		if running != nil {
			select {
			case <-running:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		snap, err := s.loadUnlessFresh(ctx, h, gen)
		h.mu.Lock()
		close(h.loading)
		h.loading = nil
		h.mu.Unlock()
		return snap, err
	}
}

// loadUnlessFresh is fresh's load, made by the one caller that runs it:
// a load that ended between that caller's look and its turn may have made
// it needless.
func (s *Store) loadUnlessFresh(ctx context.Context, h *snapHolder, gen int64) (*snapshot, error) {
	if cur := h.cur.Load(); cur != nil && cur.gen >= gen {
		return cur, nil
	}
	return s.loadSnapshot(ctx, h)
}

// at returns the snapshot of exactly generation gen, or nil after starting a
// background load of a fresh one.
func (s *Store) at(h *snapHolder, gen int64) *snapshot {
	if cur := h.cur.Load(); cur != nil && cur.gen == gen {
		return cur
	}
	if !s.closed.Load() && h.pending.CompareAndSwap(false, true) {
		go func() {
			defer h.pending.Store(false)
			s.loadSnapshot(context.Background(), h) // on error the next search tries again
		}()
	}
	return nil
}

// nameIter yields the entries whose name matches a query as an "fts" name
// match (see nameTierSQL) and that want accepts, in the order of preLess:
// whole-name matches, then name-prefix matches, then name-word-prefix
// matches, each in rank order. Large prefix ranges come sorted from the
// snapshot's cache, so a prefix shared by every name costs little.
type nameIter struct {
	snap       *snapshot
	want       func(*snapEntry) bool
	key, terms string
	stages     [3][]int32
	stage, pos int
	exact      map[int32]bool
}

func (s *Store) nameIter(snap *snapshot, key, terms string, want func(*snapEntry) bool) *nameIter {
	it := &nameIter{snap: snap, want: want, key: key, terms: terms, exact: make(map[int32]bool)}
	byKey := func(e *snapEntry) string { return e.key }
	byTerms := func(e *snapEntry) string { return e.terms }
	keyRange := snap.prefixRange(snap.byKey, byKey, "k", key)
	var termRange []int32
	if terms != "" {
		termRange = snap.prefixRange(snap.byTerms, byTerms, "t", terms)
	}
	var exact []int32
	add := func(list []int32, field func(*snapEntry) string, p string) {
		es := snap.entries
		i := sort.Search(len(list), func(i int) bool { return field(&es[list[i]]) >= p })
		for ; i < len(list) && field(&es[list[i]]) == p; i++ {
			if idx := list[i]; !it.exact[idx] {
				it.exact[idx] = true
				exact = append(exact, idx)
			}
		}
	}
	add(snap.byKey, byKey, key)
	if terms != "" {
		add(snap.byTerms, byTerms, terms)
	}
	sort.Slice(exact, func(i, j int) bool { return snap.rank[exact[i]] < snap.rank[exact[j]] })
	it.stages = [3][]int32{exact, keyRange, termRange}
	return it
}

// next returns up to n more candidates.
func (it *nameIter) next(n int) []*hit {
	var out []*hit
	for it.stage < len(it.stages) && len(out) < n {
		list := it.stages[it.stage]
		if it.pos >= len(list) {
			it.stage, it.pos = it.stage+1, 0
			continue
		}
		idx := list[it.pos]
		it.pos++
		e := &it.snap.entries[idx]
		tier := it.stage
		switch {
		case tier > tierName && it.exact[idx]:
			continue // already given as a whole-name match
		case tier == tierWordPrefix && strings.HasPrefix(e.key, it.key):
			continue // already given as a name-prefix match
		}
		if !it.want(e) {
			continue
		}
		h := e.hit
		h.tier = tier
		out = append(out, &h)
	}
	return out
}

// Warm loads the in-memory search snapshots of the index as it is now, so
// that the next searches find them current. A search with no snapshot
// loads one itself; Warm moves that one-time cost (about 40 ms at 2,000
// tools, 200–300 ms at 10,000) to a moment of the caller's choosing, such
// as right after indexing a catalogue.
func (s *Store) Warm(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	if _, err := s.current(ctx, &s.toolSnaps); err != nil {
		return fmt.Errorf("index: loading the tool snapshot: %w", err)
	}
	if _, err := s.current(ctx, &s.skillSnaps); err != nil {
		return fmt.Errorf("index: loading the skill snapshot: %w", err)
	}
	return nil
}
