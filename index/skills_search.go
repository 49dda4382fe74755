package index

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/skillhost/skillhost/index/internal/textsearch"
	"github.com/skillhost/skillhost/packs"
)

// SkillQuery is a skill search request.
type SkillQuery struct {
	Query      string
	SearchType string // "fts" (default), "regex" or "exact"
	Limit      int    // 1..MaxLimit; 0 means DefaultLimit
	TaskType   string // one of TaskTypes, or "" for all
	Scope      Scope  // the caller; see Scope for what it may see
	// VisibleTool and KnownTools are as in SkillGetRequest: references in
	// the hits' titles and triggers to known tools VisibleTool rejects are
	// rewritten. Nil VisibleTool means every tool is visible.
	VisibleTool func(name string) bool
	KnownTools  []string
}

// SkillHit is one skill search result.
type SkillHit struct {
	Name     string  `json:"name"`
	Title    string  `json:"title,omitempty"`
	Trigger  string  `json:"trigger"`
	TaskType string  `json:"task_type,omitempty"`
	Score    float64 `json:"score"`
}

// SkillSearchResult is the answer to a skill search; SearchType is the type
// actually used.
type SkillSearchResult struct {
	Skills     []SkillHit `json:"skills"`
	Query      string     `json:"query"`
	SearchType string     `json:"search_type"`
}

// skillWeights are the bm25 column weights of skills_fts: name words, title,
// trigger, description, tags, body.
var skillWeights = [6]float64{8, 5, 4, 2.5, 4, 1}

const skillCols = `t.name, t.pack, t.title, t.trigger, t.task_type, t.scope_mode`

func scanSkillHit(r rowScanner, h *hit) error {
	return r.Scan(&h.name, &h.ns, &h.title, &h.trigger, &h.taskType, &h.scopeMode)
}

func scanSkillHitRanked(r rowScanner, h *hit) error {
	return r.Scan(&h.name, &h.ns, &h.title, &h.trigger, &h.taskType, &h.scopeMode, &h.r)
}

// SearchSkills finds the skills visible in q.Scope that match q, best first,
// with the same search types and score contract as SearchTools (name words,
// title, trigger, description, tags and content are searched). When a name
// exists at several scopes the caller sees, only the most specific one is
// considered. When the store's skill snapshot is of the generation the
// search's transaction sees, text matches are ranked in its in-memory text
// index, with FTS5's bm25 and the caller's scope, task type and shadowing
// applied in memory: the SQL path's ranking without its pruning of
// commoner words by document frequency; the query is not expanded. bm25's
// statistics are those of the skills of the caller's scopes, so skills of
// other tenants and projects never change its scores (after a write by
// another process the newest snapshot ranks while a fresh one loads). Titles
// and triggers are handed back with tool-reference rewriting and, unless
// the store's options turn it off, redaction applied.
func (s *Store) SearchSkills(ctx context.Context, q SkillQuery) (*SkillSearchResult, error) {
	res, requested, err := s.searchSkills(ctx, q)
	if err != nil {
		return nil, err
	}
	if len(res.Skills) > 0 && (s.redact || q.VisibleTool != nil) {
		// The search's transaction has ended: the tool names are read in
		// one of their own.
		tr, err := s.toolRefs(ctx, q.VisibleTool, q.KnownTools)
		if err != nil {
			return nil, fmt.Errorf("index: skill search: %w", err)
		}
		for i := range res.Skills {
			h := &res.Skills[i]
			h.Title, h.Trigger = s.clean(tr, h.Title), s.clean(tr, h.Trigger)
		}
	}
	s.emit(EventSkillSearchQuery, map[string]any{
		"query": q.Query, "requested_search_type": requested, "effective_search_type": res.SearchType,
		"results_count": len(res.Skills),
	})
	return res, nil
}

// searchSkills is SearchSkills without the cleaning of the hits' text and
// without the event: pre-flight retrieval reads the skills it finds in
// full and reports its own event. It also returns the search type asked for.
func (s *Store) searchSkills(ctx context.Context, q SkillQuery) (*SkillSearchResult, string, error) {
	if err := s.check(); err != nil {
		return nil, "", err
	}
	req, err := s.validateSearch(q.Query, q.SearchType, q.Limit)
	if err != nil {
		return nil, "", fmt.Errorf("index: skill search: %w", err)
	}
	if q.TaskType != "" && !validTaskType(q.TaskType) {
		return nil, "", fmt.Errorf("index: skill search: %w: %q, want one of %s", ErrBadTaskType, q.TaskType, strings.Join(TaskTypes, ", "))
	}
	if err := checkRequestScope(q.Scope); err != nil {
		return nil, "", fmt.Errorf("index: skill search: %w", err)
	}
	var hits []*hit
	switch req.effective {
	case SearchRegex:
		hits, err = s.regexSkills(ctx, req, q)
	case SearchExact:
		exact := exactSkillSQL(q)
		if err = s.prepare(ctx, exact[0], exact[1], unshadowSQL(q.Scope)); err == nil {
			err = s.read(ctx, func(rd *readTx) (err error) {
				hits, err = s.exactSkills(ctx, rd, req, q, exact)
				return err
			})
		}
	default:
		var rd *readTx // set before the plan's keep runs
		p := s.skillPlan(&rd, q)
		if useSnapshotText && s.skillSnaps.cur.Load() == nil {
			// Text is ranked in the snapshot (rankingSnap): load the
			// first one now, before the read transaction.
			_, err = s.current(ctx, &s.skillSnaps)
		}
		if err == nil {
			err = s.prepare(ctx, p.statements()...)
		}
		if err == nil {
			err = s.read(ctx, func(r *readTx) (err error) {
				rd = r
				hits, err = s.ftsSearch(ctx, r, req, p)
				return err
			})
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("index: skill search: %w", err)
	}
	res := &SkillSearchResult{Skills: make([]SkillHit, len(hits)), Query: q.Query, SearchType: req.effective}
	for i, h := range hits {
		res.Skills[i] = SkillHit{Name: h.name, Title: h.title, Trigger: h.trigger, TaskType: h.taskType, Score: h.score}
	}
	return res, req.requested, nil
}

// skillFilter is the WHERE condition (alias t) for a skill query's scope and
// task type, with its arguments. Its columns carry a unary plus so SQLite
// never picks their indexes over the name's: a scope holds thousands of
// skills, a name a handful.
func skillFilter(q SkillQuery) (string, []any) {
	where, args := scopeWhereAlias(q.Scope, "+t.")
	where = " AND " + where
	if q.TaskType != "" {
		where += " AND +t.task_type = ?"
		args = append(args, q.TaskType)
	}
	return where, args
}

// skillRangesCond keeps a skill text search to three rowid ranges: the
// caller's global, tenant and project blocks (an empty range when the caller
// has none).
const skillRangesCond = ` AND ((rowid >= ? AND rowid < ?) OR (rowid >= ? AND rowid < ?) OR (rowid >= ? AND rowid < ?))`

const scopeIDSQL = `SELECT id FROM skill_scopes WHERE scope_mode = ? AND scope_tenant_id = ? AND scope_project_id = ?`

// skillRanges returns the rowid ranges of the skills a caller sees, as
// arguments of skillRangesCond.
func (s *Store) skillRanges(ctx context.Context, rd *readTx, q SkillQuery) ([]any, error) {
	scopes := []Scope{{Mode: packs.ScopeGlobal}}
	if q.Scope.TenantID != "" {
		scopes = append(scopes, Scope{Mode: packs.ScopeTenant, TenantID: q.Scope.TenantID})
	}
	if q.Scope.ProjectID != "" {
		scopes = append(scopes, Scope{Mode: packs.ScopeProject, TenantID: q.Scope.TenantID, ProjectID: q.Scope.ProjectID})
	}
	args := make([]any, 0, 6)
	for _, sc := range scopes {
		id, ok := s.scopeIDs.Load(sc)
		if !ok {
			var n int64
			err := rd.scanOne(ctx, scopeIDSQL, []any{&n}, sc.Mode, sc.TenantID, sc.ProjectID)
			if err == sql.ErrNoRows {
				continue // no skill was ever stored there
			}
			if err != nil {
				return nil, err
			}
			// Scope rows are never deleted or changed: cache forever.
			s.scopeIDs.Store(sc, n)
			id = n
		}
		lo, hi := skillRange(id.(int64), q.TaskType)
		args = append(args, lo, hi)
	}
	for len(args) < 6 {
		args = append(args, int64(0), int64(0))
	}
	return args, nil
}

// skillPlan builds the statements of an "fts" skill search. rd is set to
// the search's read transaction before keep runs.
func (s *Store) skillPlan(rd **readTx, q SkillQuery) ftsPlan {
	filter, args := skillFilter(q)
	return ftsPlan{
		nameSQL: `SELECT ` + skillCols + ` FROM skills t
			WHERE ((t.name_key >= ?1 AND t.name_key < ?2) OR (t.name_terms >= ?3 AND t.name_terms < ?4))` + filter + `
			ORDER BY ` + nameTierSQL + `, ` + s.nsOrderSQL("t.pack") + `length(t.name), t.name LIMIT ?`,
		args:     args,
		textSQL:  rankSQL(skillCols, "skills_fts", skillWeights[:], "skills", "seq", skillRangesCond),
		text:     &s.skillText,
		ranges:   func(ctx context.Context, rd *readTx) ([]any, error) { return s.skillRanges(ctx, rd, q) },
		scan:     scanSkillHit,
		scanText: scanSkillHitRanked,
		keep: func(ctx context.Context, hs []*hit) ([]*hit, error) {
			snap, err := s.skillSnapText(ctx, *rd)
			if err != nil || snap == nil {
				return s.unshadowed(ctx, *rd, q.Scope, hs)
			}
			out := hs[:0]
			for _, h := range hs {
				if !snap.shadowed(q.Scope, h.name, h.scopeMode) {
					out = append(out, h)
				}
			}
			return out, nil
		},
		extra: []string{unshadowSQL(q.Scope), scopeIDSQL},
		names: func(ctx context.Context, rd *readTx, key, terms string) (*nameIter, error) {
			gen, err := rd.generation(ctx)
			if err != nil {
				return nil, err
			}
			snap := s.at(&s.skillSnaps, gen)
			if snap == nil || !useSnapshotNames {
				return nil, nil
			}
			return s.nameIter(snap, key, terms, func(e *snapEntry) bool {
				return visibleTo(q.Scope, e.scopeMode, e.tenant, e.project) && (q.TaskType == "" || e.taskType == q.TaskType)
			}), nil
		},
		memText: func(ctx context.Context, rd *readTx, query string, need int, seen map[string]bool) ([]*hit, bool, error) {
			gen, err := rd.generation(ctx)
			if err != nil {
				return nil, false, err
			}
			// Ranked with the statistics of the caller's scopes, never
			// by FTS5 (see rankingSnap).
			snap := s.rankingSnap(gen, &s.skillSnaps)
			if snap == nil {
				return nil, false, nil
			}
			ids, typ := snap.scopeFilter(q.Scope, q.TaskType)
			filt := snap.filt
			view := snap.skillView(ids)
			var terms []textsearch.Term
			if view != nil {
				terms = view.WithoutUbiquitous(textsearch.Plain(query), ubiquitous)
			} else {
				terms = snap.text.WithoutUbiquitous(textsearch.Plain(query), ubiquitous)
			}
			hits := s.textSearch(snap, view, textsearch.NewScorer(terms), need, func(doc int32) bool {
				f := filt[doc]
				id := f >> filtTypeBits
				return (id == ids[0] || id == ids[1] || id == ids[2]) && id != 0 && (typ < 0 || int(f&filtTypeMask) == typ)
			}, func(e *snapEntry) bool {
				return !seen[e.name] && !snap.shadowed(q.Scope, e.name, e.scopeMode)
			})
			return hits, true, nil
		},
	}
}

// skillSnapText returns the skill snapshot when it is of the generation rd
// sees and has a text index, for ranking text matches and resolving
// shadowing in memory; nil otherwise (then SQL does both).
func (s *Store) skillSnapText(ctx context.Context, rd *readTx) (*snapshot, error) {
	if !useSnapshotText {
		return nil, nil
	}
	gen, err := rd.generation(ctx)
	if err != nil {
		return nil, err
	}
	snap := s.at(&s.skillSnaps, gen)
	if snap == nil || snap.text == nil {
		return nil, nil
	}
	return snap, nil
}

// shadowed is unshadowed's test in memory: whether the caller with scope
// sc sees a skill named name (the same bytes) stored at a more specific
// scope than mode, whatever its task type.
func (snap *snapshot) shadowed(sc Scope, name, mode string) bool {
	sp := scopeSpecificity(mode)
	if sp >= maxSpecificity(sc) || !snap.sharedNames[name] {
		return false
	}
	// Entries with this name are among those with its lower-case form.
	key := strings.ToLower(name)
	es, list := snap.entries, snap.byKey
	i := sort.Search(len(list), func(i int) bool { return es[list[i]].key >= key })
	for ; i < len(list) && es[list[i]].key == key; i++ {
		e := &es[list[i]]
		if e.name == name && scopeSpecificity(e.scopeMode) > sp && visibleTo(sc, e.scopeMode, e.tenant, e.project) {
			return true
		}
	}
	return false
}

// maxSpecificity is the most specific scope a caller can see.
func maxSpecificity(sc Scope) int {
	switch {
	case sc.ProjectID != "":
		return scopeSpecificity(packs.ScopeProject)
	case sc.TenantID != "":
		return scopeSpecificity(packs.ScopeTenant)
	}
	return scopeSpecificity(packs.ScopeGlobal)
}

// unshadowSQL lists the scopes a caller sees a set of names in, looking
// each name up (CROSS JOIN keeps SQLite from scanning a whole scope instead).
func unshadowSQL(sc Scope) string {
	where, _ := scopeWhereAlias(sc, "s.")
	return `SELECT s.name, s.scope_mode FROM json_each(?) j CROSS JOIN skills s ON s.name = j.value WHERE ` + where
}

// unshadowed drops candidates hidden by a more specific skill of the same
// name in the caller's view (and duplicates of one name), keeping the order.
func (s *Store) unshadowed(ctx context.Context, rd *readTx, sc Scope, hs []*hit) ([]*hit, error) {
	top := maxSpecificity(sc)
	var names []string
	for _, h := range hs {
		if scopeSpecificity(h.scopeMode) < top {
			names = append(names, h.name)
		}
	}
	if len(names) == 0 {
		return hs, nil
	}
	_, args := scopeWhere(sc)
	rows, err := rd.query(ctx, unshadowSQL(sc), append([]any{mustJSON(names)}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	best := make(map[string]int, len(names))
	for rows.Next() {
		var n, mode string
		if err := rows.Scan(&n, &mode); err != nil {
			return nil, s.wrapErr(err)
		}
		if sp := scopeSpecificity(mode); sp > best[n] {
			best[n] = sp
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr(err)
	}
	out := hs[:0]
	for _, h := range hs {
		if b, ok := best[h.name]; ok && b > scopeSpecificity(h.scopeMode) {
			continue
		}
		out = append(out, h)
	}
	return out, nil
}

// exactSkillSQL are the statements of an exact skill search: by name, then
// by lower-case name.
func exactSkillSQL(q SkillQuery) [2]string {
	filter, _ := skillFilter(q)
	return [2]string{
		`SELECT ` + skillCols + ` FROM skills t WHERE t.name = ?` + filter,
		`SELECT ` + skillCols + ` FROM skills t WHERE t.name_key = ?` + filter,
	}
}

// exactSkills finds the skill with exactly this name in the caller's view
// or, failing that, those whose name equals it case-insensitively.
func (s *Store) exactSkills(ctx context.Context, rd *readTx, req searchReq, q SkillQuery, stmts [2]string) ([]*hit, error) {
	_, args := skillFilter(q)
	for i, query := range stmts {
		arg := req.trimmed
		if i == 1 {
			arg = strings.ToLower(arg)
		}
		hits, err := queryHits(ctx, rd, query, scanSkillHit, append([]any{arg}, args...)...)
		if err != nil {
			return nil, err
		}
		if hits, err = s.unshadowed(ctx, rd, q.Scope, hits); err != nil {
			return nil, err
		}
		if len(hits) > 0 {
			for _, h := range hits {
				h.score = scoreExact
			}
			return s.sortHits(dedupeNames(hits), req.limit), nil
		}
	}
	return nil, nil
}

// dedupeNames keeps the most specific of candidates sharing a name.
func dedupeNames(hs []*hit) []*hit {
	best := make(map[string]*hit, len(hs))
	var order []string
	for _, h := range hs {
		b, ok := best[h.name]
		if !ok {
			order = append(order, h.name)
		}
		if !ok || scopeSpecificity(h.scopeMode) > scopeSpecificity(b.scopeMode) {
			best[h.name] = h
		}
	}
	out := make([]*hit, len(order))
	for i, n := range order {
		out[i] = best[n]
	}
	return out
}

// visibleTo is scopeWhere in Go: whether a caller with request scope sc sees
// a skill stored with mode, tenant and project.
func visibleTo(sc Scope, mode, tenant, project string) bool {
	switch mode {
	case packs.ScopeGlobal:
		return true
	case packs.ScopeTenant:
		return sc.TenantID != "" && tenant == sc.TenantID
	case packs.ScopeProject:
		return sc.ProjectID != "" && tenant == sc.TenantID && project == sc.ProjectID
	}
	return false
}

// regexSkills matches the pattern against every visible skill's name, title,
// trigger, description and tags.
func (s *Store) regexSkills(ctx context.Context, req searchReq, q SkillQuery) ([]*hit, error) {
	snap, err := s.current(ctx, &s.skillSnaps)
	if err != nil {
		return nil, err
	}
	var hits []*hit
	for i := range snap.entries {
		e := &snap.entries[i]
		if e.gone || !visibleTo(q.Scope, e.scopeMode, e.tenant, e.project) {
			continue
		}
		if q.TaskType != "" && e.taskType != q.TaskType {
			continue
		}
		sc := req.re.score(e.name, e.text...)
		if sc == 0 || snap.shadowed(q.Scope, e.name, e.scopeMode) {
			continue
		}
		h := e.hit
		h.score = sc
		hits = append(hits, &h)
	}
	return s.sortHits(hits, req.limit), nil
}
