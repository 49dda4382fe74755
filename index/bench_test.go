package index

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost/index/internal/textsearch"
	"github.com/skillhost/skillhost/packs"
)

// The benchmarks search generated catalogues: words from a deterministic
// pseudo-word vocabulary drawn with a Zipf distribution (s 1.1, v 20) whose
// document frequencies follow those of the evaluation catalogue in
// testdata/eval: the commonest word in about a quarter of the tools, the
// tenth in a seventh, the two-hundredth in 2%. Queries (at
// least benchQueries of them) are one to three such words, sometimes with
// stop-words, or a tool's whole name, or the start of one.
//
// Each search benchmark first runs every query once, untimed, as a server
// would have after a while (snapshots loaded, word counts cached), and
// reports that pass's p95 as cold-p95-ms. Then it reports, besides ns/op,
// the p50 and p95 latency of its queries and of the same searches run as
// plain prepared SQL against the same database in the same run (raw-*: the
// name statement and the ranking statement with the MATCH expression the
// index chose; naive-p95-ms: one ranking statement over all the query's
// words), and the ratio of ours to raw (overhead-*-x).
//
// Under -race the catalogues above benchSmallMax records are skipped: the
// race detector makes SQLite tens of times slower. So they are with
// -short, which the test run's smoke pass of every benchmark uses: filling
// them takes most of a minute.

const (
	benchQueries  = 1200
	benchSmallMax = 1000
	benchVocab    = 3000
)

// skipLarge skips a benchmark of a catalogue above benchSmallMax records
// under -race and with -short.
func skipLarge(b *testing.B) {
	b.Helper()
	if raceEnabled {
		b.Skip("large catalogue skipped under -race")
	}
	if testing.Short() {
		b.Skip("large catalogue skipped with -short")
	}
}

var stopFill = []string{"the", "a", "of", "to", "for", "and", "with", "in", "from", "by"}

// vocab returns n distinct pseudo-words built from syllables.
func vocab(n int) []string {
	cons := []string{"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "ch", "sh", "tr", "pl"}
	vows := []string{"a", "e", "i", "o", "u", "ai", "ou"}
	r := rand.New(rand.NewPCG(7, 7))
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for range 2 + r.IntN(2) {
			b.WriteString(cons[r.IntN(len(cons))])
			b.WriteString(vows[r.IntN(len(vows))])
		}
		if r.IntN(3) == 0 {
			b.WriteString(cons[r.IntN(len(cons))])
		}
		w := b.String()
		if !seen[w] && !textsearch.IsStopWord(w) {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// wordSource draws vocabulary words with a Zipf distribution.
type wordSource struct {
	words []string
	z     *rand.Zipf
	r     *rand.Rand
}

func newWordSource(seed uint64) *wordSource {
	r := rand.New(rand.NewPCG(seed, 99))
	return &wordSource{words: vocab(benchVocab), z: rand.NewZipf(r, 1.1, 20, benchVocab-1), r: r}
}

func (w *wordSource) word() string { return w.words[w.z.Uint64()] }

func (w *wordSource) text(min, max int) string {
	n := min + w.r.IntN(max-min+1)
	parts := make([]string, n)
	for i := range parts {
		if w.r.IntN(4) == 0 {
			parts[i] = stopFill[w.r.IntN(len(stopFill))]
		} else {
			parts[i] = w.word()
		}
	}
	return strings.Join(parts, " ")
}

func (w *wordSource) list(min, max int) []string {
	n := min + w.r.IntN(max-min+1)
	out := make([]string, n)
	for i := range out {
		out[i] = w.word()
	}
	return out
}

var benchVerbs = []string{"get", "list", "create", "delete", "update", "search", "send", "read", "write", "run", "start",
	"stop", "fetch", "upload", "download", "sync", "check", "scan", "export", "import"}

// genTools builds n tools.
func genTools(n int, seed uint64) []ToolRecord {
	w := newWordSource(seed)
	sides := []string{"pure", "read", "write", "external", "stateful"}
	seen := map[string]bool{}
	tools := make([]ToolRecord, 0, n)
	for len(tools) < n {
		name := benchVerbs[w.r.IntN(len(benchVerbs))] + "_" + w.word()
		if w.r.IntN(2) == 0 {
			name += "_" + w.word()
		}
		if seen[name] {
			name = fmt.Sprintf("%s_%d", name, len(tools))
		}
		seen[name] = true
		t := ToolRecord{Name: name, Description: w.text(6, 18), Namespace: fmt.Sprintf("pack%02d", w.r.IntN(20)),
			Tags: w.list(1, 3), SideEffects: sides[w.r.IntN(len(sides))], LoadingMode: packs.LoadingDeferred}
		if w.r.IntN(5) == 0 {
			t.LoadingMode = packs.LoadingAlways
		}
		for range 1 + w.r.IntN(3) {
			t.Params = append(t.Params, Param{Name: w.word() + "_" + w.word(), Description: w.text(3, 8)})
		}
		tools = append(tools, t)
	}
	return tools
}

// benchScopes are where generated skills live and who searches them.
func benchScope(r *rand.Rand) Scope {
	switch x := r.IntN(10); {
	case x < 2:
		return Scope{}
	case x < 6:
		return Scope{TenantID: fmt.Sprintf("tenant-%d", r.IntN(10))}
	default:
		return Scope{TenantID: fmt.Sprintf("tenant-%d", r.IntN(10)), ProjectID: fmt.Sprintf("project-%d", r.IntN(3))}
	}
}

// genSkills builds n skills in 1 + 10 + 30 scopes, grouped by scope for
// LoadPack.
func genSkills(n int, seed uint64) map[Scope][]SkillRecord {
	w := newWordSource(seed)
	types := TaskTypes
	out := map[Scope][]SkillRecord{}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		sc := benchScope(w.r)
		name := fmt.Sprintf("pack.bench.%s_%s", w.word(), w.word())
		if seen[name] {
			name = fmt.Sprintf("%s_%d", name, i)
		}
		seen[name] = true
		steps := make([]string, 2+w.r.IntN(4))
		for j := range steps {
			steps[j] = w.text(5, 10)
		}
		out[sc] = append(out[sc], SkillRecord{Name: name, Title: w.text(2, 5), Trigger: w.text(6, 14), Description: w.text(0, 12),
			TaskType: types[w.r.IntN(len(types))], Tags: w.list(1, 3), Steps: steps})
	}
	return out
}

// sortedScopes returns the scopes of genSkills' output in a fixed order.
func sortedScopes(byScope map[Scope][]SkillRecord) []Scope {
	scopes := make([]Scope, 0, len(byScope))
	for sc := range byScope {
		scopes = append(scopes, sc)
	}
	slices.SortFunc(scopes, func(a, b Scope) int {
		return strings.Compare(a.TenantID+"/"+a.ProjectID, b.TenantID+"/"+b.ProjectID)
	})
	return scopes
}

// genQueries builds n queries: words, whole names and name starts.
func genQueries(n int, seed uint64, names []string) []string {
	w := newWordSource(seed)
	qs := make([]string, n)
	for i := range qs {
		switch x := w.r.IntN(20); {
		case x < 3 && len(names) > 0:
			qs[i] = names[w.r.IntN(len(names))]
		case x < 6 && len(names) > 0:
			nm := names[w.r.IntN(len(names))]
			qs[i] = nm[:min(len(nm), 3+w.r.IntN(6))]
		case x < 8:
			qs[i] = "how to " + strings.Join(w.list(1, 3), " ")
		default:
			qs[i] = strings.Join(w.list(1, 3), " ")
		}
	}
	return qs
}

// latencies collects per-query durations.
type latencies []time.Duration

func (l latencies) pct(p float64) float64 {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := min(len(s)-1, int(p*float64(len(s))))
	return float64(s[i]) / float64(time.Millisecond)
}

// report adds the latency metrics: ours, the raw SQL of the same searches,
// and the naive single statement.
func report(b *testing.B, ours, raw, naive latencies) {
	b.ReportMetric(ours.pct(0.50), "p50-ms")
	b.ReportMetric(ours.pct(0.95), "p95-ms")
	b.ReportMetric(raw.pct(0.50), "raw-p50-ms")
	b.ReportMetric(raw.pct(0.95), "raw-p95-ms")
	b.ReportMetric(naive.pct(0.95), "naive-p95-ms")
	if r := raw.pct(0.95); r > 0 {
		b.ReportMetric(ours.pct(0.95)/r, "overhead-p95-x")
	}
	if r := raw.pct(0.50); r > 0 {
		b.ReportMetric(ours.pct(0.50)/r, "overhead-p50-x")
	}
}

// rawPlan is what the index runs for one query, as plain SQL: the
// name-match statement and the ranking statement with the MATCH expression
// the index chose, and the naive single statement over all query words.
type rawPlan struct {
	nameArgs     []any
	pruned, full string
	ranges       []any
}

// planRaw works out the statements' arguments for query q under plan p.
func planRaw(b *testing.B, s *Store, p ftsPlan, q string) rawPlan {
	ctx := context.Background()
	var rp rawPlan
	err := s.read(ctx, func(rd *readTx) error {
		key := strings.ToLower(strings.TrimSpace(q))
		terms := nameTerms(q)
		lo, hi := terms, prefixUpper(terms)
		if terms == "" {
			lo, hi = "\xff", "\xff"
		}
		rp = rawPlan{nameArgs: append([]any{key, prefixUpper(key), lo, hi}, p.args...)}
		if words := textsearch.QueryTerms(q); len(words) > 0 {
			var err error
			if rp.pruned, _, err = s.textExprs(ctx, rd, p, words); err != nil {
				return err
			}
			rp.full = p.text.textCols + " : (" + ftsExpr(words, false) + ")"
			if p.ranges != nil {
				if rp.ranges, err = p.ranges(ctx, rd); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return rp
}

// runRaw times the raw statements of n queries, plans[i%len(plans)], and
// the naive statement. Every plan must have the SQL of the first.
func runRaw(b *testing.B, s *Store, p ftsPlan, plans []rawPlan, n int) (raw, naive latencies) {
	nameSt, err := s.db.Prepare(p.nameSQL)
	if err != nil {
		b.Fatal(err)
	}
	defer nameSt.Close()
	textSt, err := s.db.Prepare(p.textSQL)
	if err != nil {
		b.Fatal(err)
	}
	defer textSt.Close()
	window := 2*DefaultLimit + 8
	for i := range n {
		rp := plans[i%len(plans)]
		t0 := time.Now()
		rawQuery(b, nameSt, append(rp.nameArgs, window)...)
		if rp.pruned != "" {
			rawQuery(b, textSt, append(append([]any{rp.pruned}, rp.ranges...), window)...)
		}
		raw = append(raw, time.Since(t0))
		t0 = time.Now()
		if rp.full != "" {
			rawQuery(b, textSt, append(append([]any{rp.full}, rp.ranges...), DefaultLimit)...)
		}
		naive = append(naive, time.Since(t0))
	}
	return raw, naive
}

// rawQuery runs a prepared statement and reads every row, as a caller of
// database/sql would.
func rawQuery(b *testing.B, st *sql.Stmt, args ...any) {
	rows, err := st.Query(args...)
	if err != nil {
		b.Fatal(err)
	}
	cols, _ := rows.Columns()
	dest := make([]any, len(cols))
	for i := range dest {
		dest[i] = new(any)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			b.Fatal(err)
		}
	}
	rows.Close()
}

// benchData is what a search benchmark's setup leaves: its queries and the
// latencies of the untimed first pass.
type benchData struct {
	queries []string
	cold    latencies
	tools   []ToolRecord // the catalogue of a tool benchmark
}

// warm loads the store's snapshots and runs n queries once, timing each.
func warm(s *Store, query func(i int) error, n int) (latencies, error) {
	ctx := context.Background()
	if _, err := s.current(ctx, &s.toolSnaps); err != nil {
		return nil, err
	}
	if _, err := s.current(ctx, &s.skillSnaps); err != nil {
		return nil, err
	}
	lat := make(latencies, 0, n)
	for i := range n {
		t0 := time.Now()
		if err := query(i); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t0))
	}
	return lat, nil
}

// benchCaller is the scope of the i-th skill query: a tenant and a project.
func benchCaller(i int) Scope {
	r := rand.New(rand.NewPCG(5, uint64(i)))
	return Scope{TenantID: fmt.Sprintf("tenant-%d", r.IntN(10)), ProjectID: fmt.Sprintf("project-%d", r.IntN(3))}
}

// benchStore lazily builds one store for a benchmark and its runs; the file
// lives in the parent benchmark's temp dir.
type benchStore struct {
	once  sync.Once
	s     *Store
	extra any
	err   error
}

func (bs *benchStore) get(b *testing.B, parent *testing.B, build func(s *Store) (any, error)) (*Store, any) {
	bs.once.Do(func() {
		s, err := Open(context.Background(), filepath.Join(parent.TempDir(), "bench.db"), nil)
		if err != nil {
			bs.err = err
			return
		}
		parent.Cleanup(func() { s.Close() })
		bs.s = s
		bs.extra, bs.err = build(s)
	})
	if bs.err != nil {
		b.Fatal(bs.err)
	}
	return bs.s, bs.extra
}

// benchTenants is how many tenants search the tenants variant of
// BenchmarkSearchTools: tenant k owns the generated packs k, k+4, k+8 and
// k+12, and packs 16 to 19 are everyone's, so each sees two fifths of the
// tools.
const benchTenants = 4

// benchTenantQuery is the i-th query of the tenants variant, as a run asks
// it: the tools its tenant may find (a view shared by the tenant's
// searches), of which those it shows already are left out.
func benchTenantQuery(q string, i int, views []*ToolView, visible []func(string) bool) ToolQuery {
	k := i % benchTenants
	return ToolQuery{Query: q, View: views[k], Visible: visible[k]}
}

func BenchmarkSearchTools(b *testing.B) {
	for _, n := range []int{200, 10000} {
		var bs benchStore
		parent := b
		build := func(s *Store) (any, error) {
			tools := genTools(n, uint64(n))
			if _, err := s.SyncTools(context.Background(), tools); err != nil {
				return nil, err
			}
			names := make([]string, len(tools))
			for i, t := range tools {
				names[i] = t.Name
			}
			queries := genQueries(benchQueries, 1, names)
			cold, err := warm(s, func(i int) error {
				_, err := s.SearchTools(context.Background(), ToolQuery{Query: queries[i]})
				return err
			}, len(queries))
			return benchData{queries: queries, cold: cold, tools: tools}, err
		}
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			if n > benchSmallMax {
				skipLarge(b)
			}
			s, extra := bs.get(b, parent, build)
			benchToolSearches(b, s, extra.(benchData), func(q string, _ int) ToolQuery { return ToolQuery{Query: q} })
		})
		// The tenants' views, and their visibility tests less the tools
		// a run shows already (a fifth of them), as tool_search asks.
		var (
			tenantsOnce sync.Once
			views       []*ToolView
			visible     []func(string) bool
		)
		tenants := func(data benchData) {
			tenantsOnce.Do(func() {
				ns := make(map[string]int, n)
				for _, t := range data.tools {
					var p int
					fmt.Sscanf(t.Namespace, "pack%d", &p)
					ns[t.Name] = p
				}
				for k := range benchTenants {
					findable := func(name string) bool { p := ns[name]; return p >= 16 || p%benchTenants == k }
					views = append(views, NewToolView(findable))
					visible = append(visible, func(name string) bool { return findable(name) && len(name)%5 != 0 })
				}
			})
		}
		b.Run(fmt.Sprintf("tools=%d/tenants=%d", n, benchTenants), func(b *testing.B) {
			if n > benchSmallMax {
				skipLarge(b)
			}
			s, extra := bs.get(b, parent, build)
			data := extra.(benchData)
			tenants(data)
			for i, q := range data.queries { // each tenant's view made, as a server has them
				if _, err := s.SearchTools(context.Background(), benchTenantQuery(q, i, views, visible)); err != nil {
					b.Fatal(err)
				}
			}
			benchToolSearches(b, s, data, func(q string, i int) ToolQuery { return benchTenantQuery(q, i, views, visible) })
		})
		// Without a view, each search works the statistics out from
		// Visible alone.
		b.Run(fmt.Sprintf("tools=%d/tenants=%d/no-view", n, benchTenants), func(b *testing.B) {
			if n > benchSmallMax {
				skipLarge(b)
			}
			s, extra := bs.get(b, parent, build)
			data := extra.(benchData)
			tenants(data)
			benchToolSearches(b, s, data, func(q string, i int) ToolQuery {
				return ToolQuery{Query: q, Visible: visible[i%benchTenants]}
			})
		})
	}
}

// benchToolSearches times b.N tool searches of the store's queries, each
// asked as query makes it, and reports them beside the raw SQL.
func benchToolSearches(b *testing.B, s *Store, data benchData, query func(q string, i int) ToolQuery) {
	queries := data.queries
	ctx := context.Background()
	ours := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if _, err := s.SearchTools(ctx, query(queries[i%len(queries)], i)); err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(t0))
	}
	b.StopTimer()
	p := s.toolPlan(ToolQuery{})
	plans := make([]rawPlan, min(b.N, len(queries)))
	for i := range plans {
		plans[i] = planRaw(b, s, p, queries[i])
	}
	raw, naive := runRaw(b, s, p, plans, b.N)
	report(b, ours, raw, naive)
	b.ReportMetric(data.cold.pct(0.95), "cold-p95-ms")
}

func BenchmarkSearchSkills(b *testing.B) {
	for _, n := range []int{500, 50000} {
		var bs benchStore
		parent := b
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			if n > benchSmallMax {
				skipLarge(b)
			}
			s, extra := bs.get(b, parent, func(s *Store) (any, error) {
				var names []string
				ctx := context.Background()
				byScope := genSkills(n, uint64(n))
				for _, sc := range sortedScopes(byScope) {
					if _, err := s.LoadPack(ctx, "bench", byScope[sc], PackOptions{Scope: sc}); err != nil {
						return nil, err
					}
					for _, sk := range byScope[sc] {
						names = append(names, sk.Name)
					}
				}
				queries := genQueries(benchQueries, 2, names)
				cold, err := warm(s, func(i int) error {
					_, err := s.SearchSkills(context.Background(), SkillQuery{Query: queries[i], Scope: benchCaller(i)})
					return err
				}, len(queries))
				return benchData{queries: queries, cold: cold}, err
			})
			queries := extra.(benchData).queries
			callers := make([]Scope, len(queries))
			for i := range callers {
				callers[i] = benchCaller(i)
			}
			ctx := context.Background()
			ours := make(latencies, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				k := i % len(queries)
				t0 := time.Now()
				if _, err := s.SearchSkills(ctx, SkillQuery{Query: queries[k], Scope: callers[k]}); err != nil {
					b.Fatal(err)
				}
				ours = append(ours, time.Since(t0))
			}
			b.StopTimer()
			// Raw SQL for the same queries, each with its caller's scope
			// (every caller has a tenant and a project: one statement shape).
			plans := make([]rawPlan, min(b.N, len(queries)))
			for i := range plans {
				plans[i] = planRaw(b, s, s.skillPlan(nil, SkillQuery{Scope: callers[i]}), queries[i])
			}
			raw, naive := runRaw(b, s, s.skillPlan(nil, SkillQuery{Scope: callers[0]}), plans, b.N)
			report(b, ours, raw, naive)
			b.ReportMetric(extra.(benchData).cold.pct(0.95), "cold-p95-ms")
		})
	}
}

func BenchmarkSyncTools(b *testing.B) {
	const n = 10000
	b.Run(fmt.Sprintf("from-scratch/tools=%d", n), func(b *testing.B) {
		skipLarge(b)
		tools := genTools(n, 3)
		ctx := context.Background()
		b.ReportAllocs()
		for i := range b.N {
			b.StopTimer()
			s, err := Open(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("scratch%d.db", i)), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := s.SyncTools(ctx, tools); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
	})
	change := func(tools []ToolRecord) func(ctx context.Context, s *Store, i int) error {
		orig := tools[n/2].Description
		return func(ctx context.Context, s *Store, i int) error {
			tools[n/2].Description = fmt.Sprintf("%s v%d", orig, i)
			rep, err := s.SyncTools(ctx, tools)
			if err == nil && (len(rep.Changed) != 1 || rep.Unchanged != n-1) {
				err = fmt.Errorf("report %d changed, %d unchanged", len(rep.Changed), rep.Unchanged)
			}
			return err
		}
	}
	setup := func(tools []ToolRecord) func(ctx context.Context, s *Store) error {
		return func(ctx context.Context, s *Store) error {
			_, err := s.SyncTools(ctx, tools)
			return err
		}
	}
	b.Run(fmt.Sprintf("one-changed/tools=%d", n), func(b *testing.B) {
		tools := genTools(n, 3)
		benchOneChanged(b, setup(tools), change(tools), nil)
	})
	b.Run(fmt.Sprintf("one-changed+search/tools=%d", n), func(b *testing.B) {
		tools := genTools(n, 3)
		benchOneChanged(b, setup(tools), change(tools), func(ctx context.Context, s *Store) error {
			_, err := s.SearchTools(ctx, ToolQuery{Query: "search records"})
			return err
		})
	})
	// The first search of a tenant after a write works its view out again.
	b.Run(fmt.Sprintf("one-changed+tenant-search/tools=%d", n), func(b *testing.B) {
		tools := genTools(n, 3)
		view := NewToolView(func(name string) bool { return len(name)%2 == 0 })
		benchOneChanged(b, setup(tools), change(tools), func(ctx context.Context, s *Store) error {
			_, err := s.SearchTools(ctx, ToolQuery{Query: "search records", View: view})
			return err
		})
	})
}

// BenchmarkPutSkill times one changed skill in a catalogue of 50,000 in
// 41 scopes (genSkills): the write, which brings the skill snapshot to the
// new generation in place, and the first search after it.
func BenchmarkPutSkill(b *testing.B) {
	const n = 50000
	b.Run(fmt.Sprintf("one-changed+search/skills=%d", n), func(b *testing.B) {
		var changed SkillRecord
		benchOneChanged(b, func(ctx context.Context, s *Store) error {
			byScope := genSkills(n, n)
			for _, sc := range sortedScopes(byScope) {
				skills := byScope[sc]
				if _, err := s.LoadPack(ctx, "bench", skills, PackOptions{Scope: sc}); err != nil {
					return err
				}
				if sc.ProjectID != "" {
					changed = skills[len(skills)/2]
					changed.Scope, changed.Origin, changed.OriginRef = sc, OriginPack, "bench"
				}
			}
			return nil
		}, func(ctx context.Context, s *Store, i int) error {
			sk := changed
			sk.Trigger = fmt.Sprintf("%s v%d", changed.Trigger, i)
			if err := s.PutSkill(ctx, sk); err != nil {
				return err
			}
			if gen, err := s.generation(ctx); err != nil || s.skillSnaps.cur.Load().gen != gen {
				return fmt.Errorf("the skill snapshot did not follow the write (%v)", err)
			}
			return nil
		}, func(ctx context.Context, s *Store) error {
			_, err := s.SearchSkills(ctx, SkillQuery{Query: changed.Title, Scope: changed.Scope})
			return err
		})
	})
}

// benchOneChanged times b.N writes of one changed record to a large
// catalogue built by setup, each followed by one search when search is not
// nil, and reports the median of each. The snapshots are loaded before the
// timing, as a running server has them, so each write brings them to its
// generation in place and the search finds them current.
func benchOneChanged(b *testing.B, setup func(ctx context.Context, s *Store) error,
	write func(ctx context.Context, s *Store, i int) error, search func(ctx context.Context, s *Store) error) {
	skipLarge(b)
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "incr.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := setup(ctx, s); err != nil {
		b.Fatal(err)
	}
	if err := s.Warm(ctx); err != nil {
		b.Fatal(err)
	}
	var writes, searches latencies
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if err := write(ctx, s, i); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		writes = append(writes, t1.Sub(t0))
		if search != nil {
			if err := search(ctx, s); err != nil {
				b.Fatal(err)
			}
			searches = append(searches, time.Since(t1))
		}
	}
	b.StopTimer()
	b.ReportMetric(writes.pct(0.50), "write-p50-ms")
	if search != nil {
		b.ReportMetric(searches.pct(0.50), "search-p50-ms")
	}
}

// BenchmarkToolSnapshot loads the tool snapshot with its text index, as the
// first search after a write does.
func BenchmarkToolSnapshot(b *testing.B) {
	skipLarge(b)
	const n = 10000
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "snap.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SyncTools(ctx, genTools(n, 3)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.loadSnapshot(ctx, &s.toolSnaps); err != nil {
			b.Fatal(err)
		}
	}
}
