package index

import (
	"context"
	"database/sql"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// A snapshot is an in-memory copy of the searchable fields of every tool or
// every skill, taken in one read transaction and labelled with the store
// generation it saw. Regex searches scan it (RE2 over Go strings beats a
// scalar function called per row), and "fts" searches find name and
// name-prefix matches in its sorted name lists when its generation is the
// one their own transaction sees; otherwise they use SQL and a fresh copy is
// loaded in the background.
type snapshot struct {
	gen     int64
	entries []snapEntry
	byKey   []int32 // entries ordered by lower-case name
	byTerms []int32 // entries ordered by name words
}

// snapEntry is one tool or skill.
type snapEntry struct {
	hit
	key, terms      string // name_key, name_terms
	tenant, project string // a skill's scope identifiers
	text            []string
}

// snapKind says how to load one kind of record.
type snapKind struct {
	query string
	scan  func(rows *sql.Rows, e *snapEntry) error
}

var toolSnapKind = snapKind{
	query: `SELECT name, namespace, side_rank, description, loading_mode, name_key, name_terms, tags_text FROM tools`,
	scan: func(rows *sql.Rows, e *snapEntry) error {
		var tags string
		err := rows.Scan(&e.name, &e.ns, &e.side, &e.desc, &e.loading, &e.key, &e.terms, &tags)
		e.text = []string{e.desc, tags}
		return err
	},
}

var skillSnapKind = snapKind{
	query: `SELECT name, pack, title, trigger, task_type, scope_mode, name_key, name_terms, scope_tenant_id,
		scope_project_id, description, tags_text FROM skills`,
	scan: func(rows *sql.Rows, e *snapEntry) error {
		var desc, tags string
		err := rows.Scan(&e.name, &e.ns, &e.title, &e.trigger, &e.taskType, &e.scopeMode, &e.key, &e.terms,
			&e.tenant, &e.project, &desc, &tags)
		e.text = []string{e.title, e.trigger, desc, tags}
		return err
	},
}

// snapHolder holds the latest snapshot of one kind.
type snapHolder struct {
	kind    snapKind
	cur     atomic.Pointer[snapshot]
	mu      sync.Mutex  // serialises synchronous loads
	pending atomic.Bool // a background load is running
}

const generationSQL = `SELECT CAST(value AS INTEGER) FROM index_meta WHERE key = 'generation'`

// txGeneration is the store generation the transaction sees.
func (rd *readTx) generation(ctx context.Context) (int64, error) {
	var g int64
	err := rd.scanOne(ctx, generationSQL, []any{&g})
	if err == sql.ErrNoRows {
		return 0, nil
	}
	return g, err
}

// load reads a snapshot in one transaction.
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
	snap.byKey = make([]int32, len(snap.entries))
	snap.byTerms = make([]int32, len(snap.entries))
	for i := range snap.entries {
		snap.byKey[i], snap.byTerms[i] = int32(i), int32(i)
	}
	es := snap.entries
	sort.Slice(snap.byKey, func(i, j int) bool { return es[snap.byKey[i]].key < es[snap.byKey[j]].key })
	sort.Slice(snap.byTerms, func(i, j int) bool { return es[snap.byTerms[i]].terms < es[snap.byTerms[j]].terms })
	h.offer(snap)
	return snap, nil
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
// loading one if needed.
func (s *Store) current(ctx context.Context, h *snapHolder) (*snapshot, error) {
	gen, err := s.generation(ctx)
	if err != nil {
		return nil, err
	}
	if cur := h.cur.Load(); cur != nil && cur.gen >= gen {
		return cur, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
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

// nameCands returns the entries whose name matches the query as an "fts"
// name match (see nameTierSQL) and that want accepts, with their tiers, in
// the order of preLess.
func (s *Store) nameCands(snap *snapshot, key, terms string, want func(*snapEntry) bool) []*hit {
	tiers := make(map[int32]int)
	es := snap.entries
	i := sort.Search(len(snap.byKey), func(i int) bool { return es[snap.byKey[i]].key >= key })
	for ; i < len(snap.byKey) && strings.HasPrefix(es[snap.byKey[i]].key, key); i++ {
		idx := snap.byKey[i]
		if es[idx].key == key {
			tiers[idx] = tierName
		} else {
			tiers[idx] = tierPrefix
		}
	}
	if terms != "" {
		i = sort.Search(len(snap.byTerms), func(i int) bool { return es[snap.byTerms[i]].terms >= terms })
		for ; i < len(snap.byTerms) && strings.HasPrefix(es[snap.byTerms[i]].terms, terms); i++ {
			idx := snap.byTerms[i]
			t := tierWordPrefix
			if es[idx].terms == terms {
				t = tierName
			}
			if old, ok := tiers[idx]; !ok || t < old {
				tiers[idx] = t
			}
		}
	}
	hits := make([]*hit, 0, len(tiers))
	for idx, t := range tiers {
		e := &es[idx]
		if !want(e) {
			continue
		}
		h := e.hit
		h.tier = t
		hits = append(hits, &h)
	}
	sort.Slice(hits, func(i, j int) bool { return s.preLess(hits[i], hits[j]) })
	return hits
}
