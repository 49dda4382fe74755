package index

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skillhost/skillhost/index/internal/textsearch"
	"github.com/skillhost/skillhost/packs"
)

// Search types.
const (
	SearchFTS   = "fts"
	SearchRegex = "regex"
	SearchExact = "exact"
)

// Result limits.
const (
	DefaultLimit = 8
	MaxLimit     = 20
	// MaxPatternLength is the longest regex pattern accepted, in characters.
	MaxPatternLength = 200
)

// Regex scores of the score contract.
const (
	scoreExact       = 1.0
	scoreRegexFull   = 0.95
	scoreRegexPrefix = 0.90
	scoreRegexInName = 0.85
	scoreRegexOther  = 0.75
)

// ToolQuery is a tool search request.
type ToolQuery struct {
	Query      string
	SearchType string // "fts" (default), "regex" or "exact"
	Limit      int    // 1..MaxLimit; 0 means DefaultLimit
	// IncludeAlwaysLoaded also returns tools with loading mode "always",
	// which are visible anyway and left out by default.
	IncludeAlwaysLoaded bool
	// Visible reports whether the caller may see or activate a tool; tools
	// it refuses are never returned and never take a result slot. Nil allows
	// every indexed tool. It is called during the search and must not call
	// back into the store. Without a View, an "fts" search also ranks with
	// the statistics of the tools Visible admits (asking it of every
	// indexed tool), so that tools the caller cannot see never change its
	// scores.
	Visible func(name string) bool
	// View, when set, is the set of tools the caller may find at all: only
	// they are returned, and an "fts" search ranks with their statistics,
	// remembered in the view between searches. A caller whose Visible
	// also leaves out tools for other reasons (tools it already shows)
	// passes a View, so that those do not change the statistics either,
	// and so that the statistics are not worked out again per search.
	View *ToolView
}

// ToolHit is one search result.
type ToolHit struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
	MatchType   string  `json:"match_type"`
	LoadingMode string  `json:"loading_mode"`
}

// ToolSearchResult is the answer to a tool search. SearchType is the search
// type actually used: "regex" when "fts" was asked for and FTS5 is not in
// use.
type ToolSearchResult struct {
	Tools      []ToolHit `json:"tools"`
	Query      string    `json:"query"`
	SearchType string    `json:"search_type"`
}

// searchReq is a validated search request.
type searchReq struct {
	query     string // as given
	trimmed   string
	requested string // search type asked for ("" → fts)
	effective string // search type used
	limit     int
	re        *matcher // regex searches
}

// validateSearch checks the fields shared by tool and skill searches and
// works out the effective search type.
func (s *Store) validateSearch(query, searchType string, limit int) (searchReq, error) {
	r := searchReq{query: query, trimmed: strings.TrimSpace(query), requested: searchType, limit: limit}
	if r.requested == "" {
		r.requested = SearchFTS
	}
	switch r.requested {
	case SearchFTS, SearchRegex, SearchExact:
	default:
		return r, fmt.Errorf("%w (got %q)", ErrBadSearchType, searchType)
	}
	if r.trimmed == "" {
		return r, ErrEmptyQuery
	}
	if r.limit == 0 {
		r.limit = DefaultLimit
	}
	if r.limit < 1 || r.limit > MaxLimit {
		return r, fmt.Errorf("%w: %d, want 1..%d (0 means %d)", ErrBadLimit, limit, MaxLimit, DefaultLimit)
	}
	r.effective = r.requested
	switch {
	case r.requested == SearchRegex:
		if n := utf8.RuneCountInString(query); n > MaxPatternLength {
			return r, fmt.Errorf("%w: %d characters, at most %d", ErrPatternTooLong, n, MaxPatternLength)
		}
		m, err := newMatcher(query)
		if err != nil {
			return r, err
		}
		r.re = m
	case r.requested == SearchFTS && !s.fts:
		// Without FTS5 the words become a literal alternation, matched as
		// any regex pattern is.
		r.effective = SearchRegex
		r.re = fallbackMatcher(r.trimmed)
	}
	return r, nil
}

// matcher holds a user pattern compiled three ways: unanchored, anchored at
// the start, and anchored at both ends. RE2 matching is linear in the input.
type matcher struct {
	any, prefix, full *regexp.Regexp
}

func newMatcher(pattern string) (*matcher, error) {
	any, err := regexp.Compile(`(?i)` + pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPattern, err)
	}
	// The pattern compiled alone, so the wrapped forms compile too.
	return &matcher{
		any:    any,
		prefix: regexp.MustCompile(`(?i)^(?:` + pattern + `)`),
		full:   regexp.MustCompile(`(?i)^(?:` + pattern + `)$`),
	}, nil
}

// fallbackMatcher turns free text into a pattern matching any of its words
// (roughly stemmed, quoted), for "fts" searches without FTS5. When the text
// has no words it is matched literally.
func fallbackMatcher(text string) *matcher {
	terms := textsearch.QueryTerms(text)
	if len(terms) == 0 {
		m, _ := newMatcher(regexp.QuoteMeta(text))
		return m
	}
	alts := make([]string, len(terms))
	for i, t := range terms {
		alts[i] = regexp.QuoteMeta(roughStem(t))
	}
	m, _ := newMatcher(strings.Join(alts, "|"))
	return m
}

// roughStem strips a common English suffix so a fallback pattern built from
// "searching" also matches "search".
func roughStem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// regexScore scores a name and the other searchable text against m: 0 when
// nothing matches.
func (m *matcher) score(name string, other ...string) float64 {
	if m.any.MatchString(name) {
		switch {
		case m.full.MatchString(name):
			return scoreRegexFull
		case m.prefix.MatchString(name):
			return scoreRegexPrefix
		}
		return scoreRegexInName
	}
	for _, o := range other {
		if o != "" && m.any.MatchString(o) {
			return scoreRegexOther
		}
	}
	return 0
}

// hit is a search candidate of either kind.
type hit struct {
	name  string
	ns    string // tool namespace or skill pack: namespace preference
	side  int    // side-effect rank (tools)
	nlen  int
	tier  int     // fts: 0 whole name, 1 name prefix, 2 bm25 only
	r     float64 // fts: bm25 (lower is better)
	score float64

	desc, loading string // tools

	title, trigger, taskType, scopeMode string // skills
}

// Ranking tiers of an "fts" search.
const (
	tierName       = 0 // the name is the query, or its words are the query's words
	tierPrefix     = 1 // the name starts with the query
	tierWordPrefix = 2 // the name's words start with the query's words
	tierText       = 3 // bm25 match only
)

// less is the contract order: higher score, preferred namespace, milder side
// effects, shorter name, then name.
func (s *Store) less(a, b *hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
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

func (s *Store) nsOrder(ns string) int {
	if r, ok := s.nsRank[ns]; ok {
		return r
	}
	return s.nsDefault
}

// nsOrderSQL is an ORDER BY term, with its trailing comma, ranking column
// col like nsOrder; empty without preferred namespaces.
func (s *Store) nsOrderSQL(col string) string {
	if len(s.nsRank) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("CASE " + col)
	for ns, r := range s.nsRank {
		fmt.Fprintf(&b, " WHEN '%s' THEN %d", strings.ReplaceAll(ns, "'", "''"), r)
	}
	fmt.Fprintf(&b, " ELSE %d END, ", s.nsDefault)
	return b.String()
}

// ftsScores applies the score contract to fts candidates already cut to the
// returned set. Each candidate gets a raw cost, lower is better: its tier
// number for name matches (0, 1 or 2), and for bm25 matches their bm25
// distance from the best bm25 in the set, plus 3 when name matches are
// present so they stay below them. FTS5's bm25() is negative for every match,
// so the distance (not the value) is what the transform 1/(1+max(raw,0))
// needs to keep relevance order; then min–max normalisation over the set
// (0.5 when all are equal) and clamping to [0, 1].
func ftsScores(hits []*hit) {
	best := math.Inf(1)
	names := false
	for _, h := range hits {
		if h.tier == tierText {
			best = math.Min(best, h.r)
		} else {
			names = true
		}
	}
	base := 0.0
	if names {
		base = tierText
	}
	raw := make([]float64, len(hits))
	for i, h := range hits {
		if h.tier == tierText {
			raw[i] = base + (h.r - best)
		} else {
			raw[i] = float64(h.tier)
		}
		if math.IsNaN(raw[i]) || math.IsInf(raw[i], 0) {
			raw[i] = math.MaxFloat64
		}
	}
	normalise(hits, raw)
}

// normalise turns raw costs into contract scores.
func normalise(hits []*hit, raw []float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	sr := make([]float64, len(raw))
	for i, r := range raw {
		sr[i] = 1 / (1 + math.Max(r, 0))
		lo, hi = math.Min(lo, sr[i]), math.Max(hi, sr[i])
	}
	for i, h := range hits {
		if hi == lo {
			h.score = 0.5
			continue
		}
		v := (sr[i] - lo) / (hi - lo)
		h.score = math.Min(1, math.Max(0, v))
	}
}

// sortHits orders hits by the contract and cuts them to limit.
func (s *Store) sortHits(hits []*hit, limit int) []*hit {
	sort.SliceStable(hits, func(i, j int) bool { return s.less(hits[i], hits[j]) })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// ftsPlan describes one kind of record (tools or skills) to the shared
// "fts" search.
type ftsPlan struct {
	// nameSQL selects name matches; its arguments are ?1 and ?2 (the range of
	// lower-case names starting with the query), ?3 and ?4 (the same for name
	// words), then args and the LIMIT.
	nameSQL string
	args    []any // arguments of nameSQL's filter
	// textSQL ranks full-text matches; its arguments are the MATCH
	// expression and the LIMIT.
	textSQL string
	// text names the full-text index for statistics.
	text *ftsText
	// ranges gives the rowid ranges the text search keeps to, as arguments
	// of textSQL after the MATCH expression (nil: no ranges).
	ranges   func(ctx context.Context, rd *readTx) ([]any, error)
	scan     func(rowScanner, *hit) error
	scanText func(rowScanner, *hit) error // scan plus the bm25 column
	// keep drops the candidates the caller may not see, keeping the order.
	keep func(ctx context.Context, hs []*hit) ([]*hit, error)
	// extra are further statements keep may run.
	extra []string
	// names returns the name-match candidates, in order, from the store's
	// snapshot when that is of the generation rd sees (nil otherwise: then
	// nameSQL runs).
	names func(ctx context.Context, rd *readTx, key, terms string) (*nameIter, error)
	// memText, when set, ranks the text matches from the store's snapshot
	// (textSearch) when that is of the generation rd sees: at most need
	// kept hits, none named in seen, best first. ok is false when it could
	// not (then the SQL text search runs).
	memText func(ctx context.Context, rd *readTx, query string, need int, seen map[string]bool) (hits []*hit, ok bool, err error)
}

// statements lists the queries the plan may run, to prepare them before the
// read transaction.
func (p ftsPlan) statements() []string {
	return append([]string{p.nameSQL, p.textSQL, p.text.countSQL(), p.text.dfSQL(), generationSQL}, p.extra...)
}

// ftsText is one full-text index: its tables and column groups, and cached
// document frequencies of query words.
type ftsText struct {
	fts, table string
	textCols   string // the columns words are searched in, as an FTS5 column set
	shortCols  string // the short, distinctive columns (name words, titles, tags)
	budget     int    // the most matchBudget may be

	mu  sync.Mutex
	gen uint64         // store write generation the cache belongs to
	n   int            // rows
	df  map[string]int // documents matching each word in textCols
}

// maxCachedWords bounds the document-frequency cache; past it the cache
// starts again.
const maxCachedWords = 1 << 16

func (t *ftsText) countSQL() string { return `SELECT count(*) FROM ` + t.table }

func (t *ftsText) dfSQL() string {
	return `SELECT count(*) FROM ` + t.fts + ` WHERE ` + t.fts + ` MATCH ?`
}

// matchBudget bounds the work of one full-text query: the sum of the
// document frequencies of the words in its MATCH expression. FTS5 spends
// about a microsecond per matching document on bm25 (a docsize lookup and
// the sums) and counts every document of every word for its IDF, so a word
// in thousands of documents costs milliseconds while bm25 gives it little
// weight. Words are taken rarest first until the budget is spent; the
// rarest is always taken. On the evaluation set a budget of 20% of the
// catalogue cost 0.003 MRR@10, 10% cost 0.027 (see RATIONALE-index.md). The
// budget is a fifth of the rows, at least 256 (small catalogues are never
// pruned) and at most the index's cap.
func matchBudget(rows, cap int) int { return max(256, min(rows/5, cap)) }

// ubiquitous is the document frequency above which a word is never searched
// in the text, only in names: it is in a quarter of everything, says next to
// nothing about which record is meant, and counting its documents alone
// would cost milliseconds in a large index.
func ubiquitous(rows int) int { return max(256, rows/4) }

// stats returns the row count and the document frequency of each word,
// from the cache when the store has not been written since.
func (s *Store) stats(ctx context.Context, rd *readTx, t *ftsText, words []string) (int, []int, error) {
	gen := s.writeGen.Load()
	t.mu.Lock()
	if t.df == nil || t.gen != gen || len(t.df) > maxCachedWords {
		t.df, t.gen, t.n = make(map[string]int), gen, -1
	}
	n := t.n
	dfs := make([]int, len(words))
	var missing []int
	for i, w := range words {
		if d, ok := t.df[w]; ok {
			dfs[i] = d
		} else {
			missing = append(missing, i)
		}
	}
	t.mu.Unlock()
	if n < 0 {
		if err := rd.scanOne(ctx, t.countSQL(), []any{&n}); err != nil {
			return 0, nil, err
		}
	}
	for _, i := range missing {
		if err := rd.scanOne(ctx, t.dfSQL(), []any{&dfs[i]},
			t.textCols+" : "+textsearch.QuoteFTS(words[i])); err != nil {
			return 0, nil, err
		}
	}
	t.mu.Lock()
	if t.gen == gen {
		t.n = n
		for _, i := range missing {
			t.df[words[i]] = dfs[i]
		}
	}
	t.mu.Unlock()
	return n, dfs, nil
}

// textExprs builds the MATCH expressions for query words. Words no document
// has and ubiquitous words are left out. The others are taken rarest first:
// while their document frequencies add up to at most matchBudget they are
// searched in every text column; the more common ones after that (up to
// five budgets in all) only in the short, distinctive columns (names,
// titles, tags), where they match fewer documents to rank. The first
// expression is the cheap words, or, without any, the common ones; the
// second, run only when the first finds nothing, the common ones. "" means
// no query.
func (s *Store) textExprs(ctx context.Context, rd *readTx, p ftsPlan, words []string) (first, second string, err error) {
	n, dfs, err := s.stats(ctx, rd, p.text, words)
	if err != nil {
		return "", "", err
	}
	order := make([]int, 0, len(words))
	for i := range words {
		if dfs[i] > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return dfs[order[a]] < dfs[order[b]] })
	budget, ubi := matchBudget(n, p.text.budget), ubiquitous(n)
	var cheap, common []string
	spent := 0
	for _, i := range order {
		switch {
		case dfs[i] > ubi:
		case spent+dfs[i] <= budget:
			cheap = append(cheap, words[i])
			spent += dfs[i]
		case len(common) == 0 || spent+dfs[i] <= 5*budget:
			common = append(common, words[i])
			spent += dfs[i]
		}
	}
	var c string
	if len(common) > 0 {
		c = p.text.shortCols + " : (" + ftsExpr(common, false) + ")"
	}
	if len(cheap) == 0 {
		return c, "", nil
	}
	return p.text.textCols + " : (" + ftsExpr(cheap, false) + ")", c, nil
}

// preLess orders fts candidates before scoring: by tier, by bm25 within the
// text tier, then by the contract's tie-breakers. Scores are a monotone
// function of this order, so cutting here cuts the contract order.
func (s *Store) preLess(a, b *hit) bool {
	if a.tier != b.tier {
		return a.tier < b.tier
	}
	if a.tier == tierText && a.r != b.r {
		return a.r < b.r
	}
	return s.tieLess(a, b)
}

// ftsSearch runs an "fts" search: whole-name and name-prefix matches first,
// then bm25 matches of the query words, each filtered by plan.keep before it
// can take a result slot.
func (s *Store) ftsSearch(ctx context.Context, rd *readTx, req searchReq, p ftsPlan) ([]*hit, error) {
	key := strings.ToLower(req.trimmed)
	terms := nameTerms(req.trimmed)
	termLo, termHi := terms, prefixUpper(terms)
	if terms == "" {
		termLo, termHi = "\xff", "\xff" // an empty range
	}
	// Name matches rank above all text matches and come in the final order
	// among them, so the first visible ones are the answer.
	it, err := p.names(ctx, rd, key, terms)
	if err != nil {
		return nil, err
	}
	var out []*hit
	if it != nil {
		out, err = takeKept(ctx, it, req.limit, p.keep)
	} else {
		err = s.fetchWindows(ctx, rd, p.nameSQL, []any{key, prefixUpper(key), termLo, termHi}, p.args, req.limit, p.scan, p.keep,
			func(kept []*hit, full bool) bool {
				out = kept
				for _, h := range out {
					lower := strings.ToLower(h.name)
					switch {
					case lower == key || (terms != "" && nameTerms(h.name) == terms):
						h.tier = tierName
					case strings.HasPrefix(lower, key):
						h.tier = tierPrefix
					default:
						h.tier = tierWordPrefix
					}
				}
				if len(out) >= req.limit {
					out = out[:req.limit]
					return true
				}
				return !full
			})
	}
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(out))
	for _, h := range out {
		seen[h.name] = true
	}
	words := textsearch.QueryTerms(req.trimmed)
	need := req.limit - len(out)
	if need > 0 && len(words) > 0 && p.memText != nil {
		text, ok, err := p.memText(ctx, rd, req.trimmed, need, seen)
		if err != nil {
			return nil, err
		}
		if ok {
			out, need = append(out, text...), 0
		}
	}
	if need > 0 && len(words) > 0 {
		first, second, err := s.textExprs(ctx, rd, p, words)
		if err != nil {
			return nil, err
		}
		var ranges []any
		if p.ranges != nil {
			if ranges, err = p.ranges(ctx, rd); err != nil {
				return nil, err
			}
		}
		var text []*hit
		collect := func(kept []*hit, more bool) bool {
			text = text[:0]
			for _, h := range kept {
				if !seen[h.name] {
					h.tier = tierText
					text = append(text, h)
				}
			}
			if len(text) < need {
				return !more // exhausted, or fetch a larger window
			}
			// Keep every candidate tied with the last one that fits: the
			// contract order decides among equal scores, not SQLite's row
			// order.
			cut := text[need-1].r
			n := need
			for n < len(text) && text[n].r == cut {
				n++
			}
			if n == len(text) && more {
				return false // the ties may go on past the window
			}
			text = text[:n]
			return true
		}
		if first != "" {
			err = s.fetchWindows(ctx, rd, p.textSQL, []any{first}, ranges, need, p.scanText, p.keep, collect)
		}
		if err == nil && len(out)+len(text) == 0 && second != "" {
			// Nothing with the rarest words: try the more common ones.
			err = s.fetchWindows(ctx, rd, p.textSQL, []any{second}, ranges, need, p.scanText, p.keep, collect)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, text...)
	}
	sort.SliceStable(out, func(i, j int) bool { return s.preLess(out[i], out[j]) })
	if len(out) > req.limit {
		out = out[:req.limit]
	}
	ftsScores(out)
	return s.sortHits(out, req.limit), nil
}

// takeKept passes candidates through keep a window at a time until limit
// of them are kept.
func takeKept(ctx context.Context, it *nameIter, limit int, keep func(context.Context, []*hit) ([]*hit, error)) ([]*hit, error) {
	var out []*hit
	window := 2*limit + 8
	for len(out) < limit {
		cands := it.next(window)
		if len(cands) == 0 {
			break
		}
		kept, err := keep(ctx, cands)
		if err != nil {
			return nil, err
		}
		out = append(out, kept...)
		window *= 4
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// fetchWindows runs query with args, filter arguments and a LIMIT, growing
// the window until done accepts the candidates or the rows run out. done sees
// the rows plan.keep kept, in SQL order; full says the window was filled, so
// more rows may exist.
func (s *Store) fetchWindows(ctx context.Context, rd *readTx, query string, args, filterArgs []any, need int,
	scan func(rowScanner, *hit) error, keep func(context.Context, []*hit) ([]*hit, error),
	done func(kept []*hit, full bool) bool) error {
	window := 2*need + 8
	all := make([]any, 0, len(args)+len(filterArgs)+1)
	for {
		all = append(append(append(all[:0], args...), filterArgs...), window)
		rows, err := rd.query(ctx, query, all...)
		if err != nil {
			return err
		}
		var batch []*hit
		for rows.Next() {
			h := &hit{}
			if err := scan(rows, h); err != nil {
				rows.Close()
				return s.wrapErr(err)
			}
			h.nlen = nameLen(h.name)
			batch = append(batch, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return s.wrapErr(err)
		}
		full := len(batch) == window
		kept, err := keep(ctx, batch)
		if err != nil {
			return err
		}
		if done(kept, full) || !full {
			return nil
		}
		window *= 4
	}
}

// SearchTools finds indexed tools matching q, best first, with scores in
// [0, 1] comparable within this result only.
//
// An "fts" search ranks, in this order: tools whose name is the query (case
// folded, or word for word: "web search" names web_search), tools whose name
// starts with it, tools whose name words start with its words, then tools
// matching any of the query's words in their name words, tags, description,
// parameters or examples by weighted bm25. When the store's snapshot is
// current the text matches are ranked in its in-memory text index, where
// the query is expanded with synonyms and spelling corrections, each
// weighted below the query's own words (textSearch). bm25's statistics and
// the spelling vocabulary are those of the tools q.View (else q.Visible)
// admits, so tools the caller cannot see never change its scores; such a
// search is never ranked by FTS5. Scores follow the contract:
// 1/(1+cost) min–max normalised over the result, where the cost of a name
// match is its tier (0, 1, 2) and that of a bm25 match 3 plus its distance
// from the best bm25 in the result (without the 3 when no name matched).
func (s *Store) SearchTools(ctx context.Context, q ToolQuery) (*ToolSearchResult, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	req, err := s.validateSearch(q.Query, q.SearchType, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("index: tool search: %w", err)
	}
	var hits []*hit
	switch req.effective {
	case SearchRegex:
		hits, err = s.regexTools(ctx, req, q)
	case SearchExact:
		exact := exactToolSQL(q)
		if err = s.prepare(ctx, exact[:]...); err == nil {
			err = s.read(ctx, func(rd *readTx) (err error) {
				hits, err = s.exactTools(ctx, rd, req, q, exact)
				return err
			})
		}
	default:
		p := s.toolPlan(q)
		if useSnapshotText {
			err = s.refreshSmall(ctx, &s.toolSnaps)
		}
		if err == nil {
			err = s.prepare(ctx, p.statements()...)
		}
		if err == nil {
			err = s.read(ctx, func(rd *readTx) (err error) {
				hits, err = s.ftsSearch(ctx, rd, req, p)
				return err
			})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("index: tool search: %w", err)
	}
	res := &ToolSearchResult{Tools: make([]ToolHit, len(hits)), Query: q.Query, SearchType: req.effective}
	for i, h := range hits {
		res.Tools[i] = ToolHit{Name: h.name, Description: h.desc, Score: h.score, MatchType: req.effective, LoadingMode: h.loading}
	}
	s.emit(EventToolSearchQuery, map[string]any{
		"query": q.Query, "requested_search_type": req.requested, "effective_search_type": req.effective,
		"results_count": len(hits),
	})
	return res, nil
}

// syncSnapshotMax is the most records whose stale snapshot a search
// reloads itself, before its read transaction (about 40 ms for 2,000
// tools). A snapshot goes stale only through a write made by another
// process: writes made through this store bring it up to date as they
// commit (Store.follow). A larger catalogue's stale snapshot is reloaded in
// the background (about 200 ms for 10,000 tools) while searches use the
// SQL path. A search that finds no snapshot at all loads it, whatever the
// size, so a fresh process never answers from the SQL path.
const syncSnapshotMax = 2000

// refreshSmall brings h's snapshot up to date when there is none yet or it
// is small enough to reload at once. It runs before the search's read
// transaction, which holds a connection that a load would wait for.
func (s *Store) refreshSmall(ctx context.Context, h *snapHolder) error {
	if cur := h.cur.Load(); cur != nil && cur.size() > syncSnapshotMax {
		return nil
	}
	_, err := s.current(ctx, h)
	return err
}

// useSnapshotNames lets "fts" searches take name matches from a current
// snapshot, and useSnapshotText lets them rank text matches in the
// snapshot's text index (tools with query expansion) and resolve skill
// shadowing in memory; tests turn them off to compare with the SQL path.
var useSnapshotNames, useSnapshotText = true, true

// nameTierSQL computes the tier of a name match in SQL, as ftsSearch does in
// Go.
const nameTierSQL = `CASE WHEN t.name_key = ?1 OR t.name_terms = ?3 THEN 0
	WHEN t.name_key >= ?1 AND t.name_key < ?2 THEN 1 ELSE 2 END`

// toolWeights are the bm25 column weights of tools_fts: name words,
// description, tags, parameters, examples.
var toolWeights = [5]float64{4, 2, 4, 1, 1}

const toolCols = `t.name, t.namespace, t.side_rank, t.description, t.loading_mode`

func scanTool(r rowScanner, h *hit) error {
	return r.Scan(&h.name, &h.ns, &h.side, &h.desc, &h.loading)
}

func scanToolRanked(r rowScanner, h *hit) error {
	return r.Scan(&h.name, &h.ns, &h.side, &h.desc, &h.loading, &h.r)
}

// rankSQL ranks the rows of a full-text index matching the first argument
// (and the rowid condition cond, with the arguments after it) by weighted
// bm25, best first, at most the last argument of them, and only then joins
// their records, so that unreturned matches never cost a lookup.
func rankSQL(cols, fts string, weights []float64, table, id, cond string) string {
	ws := make([]string, len(weights))
	for i, w := range weights {
		ws[i] = strconv.FormatFloat(w, 'g', -1, 64)
	}
	return `SELECT ` + cols + `, f.r FROM (SELECT rowid AS rid, bm25(` + fts + `, ` + strings.Join(ws, ", ") + `) AS r
		FROM ` + fts + ` WHERE ` + fts + ` MATCH ?` + cond + ` ORDER BY r LIMIT ?) f
		JOIN ` + table + ` t ON t.` + id + ` = f.rid ORDER BY f.r`
}

// toolPlan builds the statements of an "fts" tool search.
func (s *Store) toolPlan(q ToolQuery) ftsPlan {
	filter, rowids := "", ""
	if !q.IncludeAlwaysLoaded {
		filter = " AND t.loading_mode <> 'always'"
		rowids = " AND rowid < " + strconv.Itoa(alwaysBase)
	}
	return ftsPlan{
		nameSQL: `SELECT ` + toolCols + ` FROM tools t
			WHERE ((t.name_key >= ?1 AND t.name_key < ?2) OR (t.name_terms >= ?3 AND t.name_terms < ?4))` + filter + `
			ORDER BY ` + nameTierSQL + `, ` + s.nsOrderSQL("t.namespace") + `t.side_rank, length(t.name), t.name LIMIT ?`,
		textSQL:  rankSQL(toolCols, "tools_fts", toolWeights[:], "tools", "id", rowids),
		text:     &s.toolText,
		scan:     scanTool,
		scanText: scanToolRanked,
		keep:     func(_ context.Context, hs []*hit) ([]*hit, error) { return visibleTools(hs, q.findable()), nil },
		names: func(ctx context.Context, rd *readTx, key, terms string) (*nameIter, error) {
			gen, err := rd.generation(ctx)
			if err != nil {
				return nil, err
			}
			snap := s.at(&s.toolSnaps, gen)
			if snap == nil || !useSnapshotNames {
				return nil, nil
			}
			return s.nameIter(snap, key, terms, func(e *snapEntry) bool {
				return q.IncludeAlwaysLoaded || e.loading != packs.LoadingAlways
			}), nil
		},
		memText: func(ctx context.Context, rd *readTx, query string, need int, seen map[string]bool) ([]*hit, bool, error) {
			if !useSnapshotText {
				return nil, false, nil
			}
			gen, err := rd.generation(ctx)
			if err != nil {
				return nil, false, err
			}
			var snap *snapshot
			if q.restricted() {
				// Never FTS5, whose statistics are every tenant's: the
				// search loaded a snapshot before its transaction, so
				// there is none only when tests turned the text off
				// (then the SQL path runs, to be compared with).
				if snap = s.rankingSnap(gen, &s.toolSnaps); snap == nil {
					return nil, useSnapshotText, nil
				}
			} else if snap = s.at(&s.toolSnaps, gen); snap == nil || snap.text == nil {
				return nil, false, nil
			}
			view := q.textView(snap)
			var vocab textsearch.Vocab = snap.text
			if view != nil {
				vocab = view
			}
			sc := textsearch.NewScorer(textsearch.Expand(textsearch.SplitWords(query), vocab))
			visible := q.findable()
			hits := s.textSearch(snap, view, sc, need, func(doc int32) bool {
				e := &snap.entries[doc]
				return (q.IncludeAlwaysLoaded || e.loading != packs.LoadingAlways) && !seen[e.name]
			}, func(e *snapEntry) bool { return visible == nil || visible(e.name) })
			return hits, true, nil
		},
	}
}

func visibleTools(hs []*hit, visible func(string) bool) []*hit {
	if visible == nil {
		return hs
	}
	out := hs[:0]
	for _, h := range hs {
		if visible(h.name) {
			out = append(out, h)
		}
	}
	return out
}

// exactToolSQL are the statements of an exact tool search: by name, then
// by lower-case name.
func exactToolSQL(q ToolQuery) [2]string {
	filter := ""
	if !q.IncludeAlwaysLoaded {
		filter = " AND t.loading_mode <> 'always'"
	}
	return [2]string{
		`SELECT ` + toolCols + ` FROM tools t WHERE t.name = ?` + filter,
		`SELECT ` + toolCols + ` FROM tools t WHERE t.name_key = ?` + filter,
	}
}

// exactTools finds the tool with exactly this name or, failing that, the
// tools whose name equals it case-insensitively.
func (s *Store) exactTools(ctx context.Context, rd *readTx, req searchReq, q ToolQuery, stmts [2]string) ([]*hit, error) {
	for i, query := range stmts {
		arg := req.trimmed
		if i == 1 {
			arg = strings.ToLower(arg)
		}
		hits, err := queryHits(ctx, rd, query, scanTool, arg)
		if err != nil {
			return nil, err
		}
		hits = visibleTools(hits, q.findable())
		if len(hits) > 0 {
			for _, h := range hits {
				h.score = scoreExact
			}
			return s.sortHits(hits, req.limit), nil
		}
	}
	return nil, nil
}

// queryHits runs a query and scans every row.
func queryHits(ctx context.Context, rd *readTx, query string, scan func(rowScanner, *hit) error, args ...any) ([]*hit, error) {
	rows, err := rd.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []*hit
	for rows.Next() {
		h := &hit{}
		if err := scan(rows, h); err != nil {
			return nil, rd.s.wrapErr(err)
		}
		h.nlen = nameLen(h.name)
		hits = append(hits, h)
	}
	return hits, rd.s.wrapErr(rows.Err())
}

// regexTools matches the pattern against every tool's name, description and
// tags.
func (s *Store) regexTools(ctx context.Context, req searchReq, q ToolQuery) ([]*hit, error) {
	snap, err := s.current(ctx, &s.toolSnaps)
	if err != nil {
		return nil, err
	}
	visible := q.findable()
	var hits []*hit
	for i := range snap.entries {
		e := &snap.entries[i]
		if e.gone || (!q.IncludeAlwaysLoaded && e.loading == packs.LoadingAlways) {
			continue
		}
		sc := req.re.score(e.name, e.text...)
		if sc == 0 || (visible != nil && !visible(e.name)) {
			continue
		}
		h := e.hit
		h.score = sc
		hits = append(hits, &h)
	}
	return s.sortHits(hits, req.limit), nil
}
