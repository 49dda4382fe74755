package index

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/packs"
)

// sampleTools is a small catalogue used across tests.
func sampleTools() []ToolRecord {
	return []ToolRecord{
		{Name: "web_search", Description: "Search the web for pages matching a query", Namespace: "web",
			Tags: []string{"internet", "search"}, Params: []Param{{Name: "query", Description: "words to look for"}},
			LoadingMode: packs.LoadingDeferred, SideEffects: "external"},
		{Name: "web_search_news", Description: "Search recent news articles", Namespace: "web",
			LoadingMode: packs.LoadingDeferred, SideEffects: "external"},
		{Name: "read_file", Description: "Read a file from the workspace", Namespace: "fs",
			Tags: []string{"filesystem"}, Params: []Param{{Name: "path", Description: "file path"}},
			LoadingMode: packs.LoadingDeferred, SideEffects: "read"},
		{Name: "write_file", Description: "Write text to a file in the workspace", Namespace: "fs",
			Tags: []string{"filesystem"}, LoadingMode: packs.LoadingDeferred, SideEffects: "write"},
		{Name: "slugify", Description: "Turn text into a URL slug", LoadingMode: packs.LoadingAlways},
		{Name: "getWeatherForecast", Description: "Weather forecast for a city", Namespace: "weather",
			Examples: []string{"forecast for Paris tomorrow"}, LoadingMode: packs.LoadingDeferred, SideEffects: "external"},
	}
}

func mustSync(t testing.TB, s *Store, tools []ToolRecord) SyncReport {
	t.Helper()
	rep, err := s.SyncTools(context.Background(), tools)
	if err != nil {
		t.Fatalf("SyncTools: %v", err)
	}
	return rep
}

// toolUpdatedAt returns each tool's updated_at, to see which rows a sync
// rewrote.
func toolUpdatedAt(t testing.TB, s *Store) map[string]int64 {
	t.Helper()
	rows, err := s.db.Query(`SELECT name, updated_at FROM tools`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var n string
		var u int64
		if err := rows.Scan(&n, &u); err != nil {
			t.Fatal(err)
		}
		m[n] = u
	}
	return m
}

func TestSyncToolsIncremental(t *testing.T) {
	var events []Event
	s := openTest(t, &Options{Now: fixedClock(), OnEvent: func(e Event) { events = append(events, e) }})
	tools := sampleTools()
	rep := mustSync(t, s, tools)
	want := SyncReport{Added: []string{"getWeatherForecast", "read_file", "slugify", "web_search", "web_search_news", "write_file"}, Fingerprint: rep.Fingerprint}
	if d := cmp.Diff(want, rep); d != "" {
		t.Fatalf("first sync (-want +got):\n%s", d)
	}
	before := toolUpdatedAt(t, s)
	gen, _ := s.generation(context.Background())

	// The same catalogue in another order: nothing is written.
	rev := append([]ToolRecord(nil), tools...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	rep2 := mustSync(t, s, rev)
	if d := cmp.Diff(SyncReport{Unchanged: 6, Fingerprint: rep.Fingerprint}, rep2); d != "" {
		t.Errorf("unchanged sync (-want +got):\n%s", d)
	}
	if gen2, _ := s.generation(context.Background()); gen2 != gen {
		t.Errorf("an unchanged sync wrote: generation %d → %d", gen, gen2)
	}

	// One changed description, one removed tool, one new tool.
	tools[2].Description = "Read a whole text file from the workspace"
	tools = append(tools[:4], tools[5:]...) // drop slugify
	tools = append(tools, ToolRecord{Name: "list_dir", Description: "List a directory", SideEffects: "read"})
	rep3 := mustSync(t, s, tools)
	want3 := SyncReport{Added: []string{"list_dir"}, Changed: []string{"read_file"}, Removed: []string{"slugify"}, Unchanged: 4}
	want3.Fingerprint = rep3.Fingerprint
	if d := cmp.Diff(want3, rep3); d != "" {
		t.Errorf("incremental sync (-want +got):\n%s", d)
	}
	if rep3.Fingerprint == rep.Fingerprint {
		t.Error("fingerprint did not change")
	}
	after := toolUpdatedAt(t, s)
	var rewritten []string
	for n, u := range after {
		if before[n] != u {
			rewritten = append(rewritten, n)
		}
	}
	if d := cmp.Diff([]string{"list_dir", "read_file"}, sortedCopy(rewritten)); d != "" {
		t.Errorf("rows rewritten (-want +got):\n%s", d)
	}
	// The full-text index follows the change.
	res, err := s.SearchTools(context.Background(), ToolQuery{Query: "whole"})
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "read_file" {
		t.Errorf("search for the new description word: %+v, %v", res, err)
	}
	fp, err := s.ToolsFingerprint(context.Background())
	if err != nil || fp != rep3.Fingerprint {
		t.Errorf("ToolsFingerprint = %q, %v; want %q", fp, err, rep3.Fingerprint)
	}
	var synced int
	for _, e := range events {
		if e.Name == EventToolsSynced {
			synced++
		}
	}
	if synced != 2 {
		t.Errorf("%d tools_synced events, want 2 (the unchanged sync writes nothing)", synced)
	}
}

func TestRebuildToolsRewritesEverything(t *testing.T) {
	s := openTest(t, &Options{Now: fixedClock()})
	mustSync(t, s, sampleTools())
	rep, err := s.RebuildTools(context.Background(), sampleTools()[:3])
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"read_file", "web_search", "web_search_news"}, rep.Added); d != "" || len(rep.Changed) != 0 || rep.Unchanged != 0 {
		t.Errorf("rebuild report %+v (added diff %s)", rep, d)
	}
	var n int
	s.db.QueryRow(`SELECT count(*) FROM tools`).Scan(&n)
	if n != 3 {
		t.Errorf("%d rows after rebuild, want 3", n)
	}
	var fts int
	s.db.QueryRow(`SELECT count(*) FROM tools_fts WHERE tools_fts MATCH 'slug'`).Scan(&fts)
	if fts != 0 {
		t.Errorf("the full-text index still finds a removed tool")
	}
}

func TestFailedSyncLeavesIndexIntact(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	old := sampleTools()
	rep := mustSync(t, s, old)
	snapshot := func() map[string]string {
		rows, err := s.db.Query(`SELECT name, record_hash FROM tools`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]string{}
		for rows.Next() {
			var n, h string
			rows.Scan(&n, &h)
			m[n] = h
		}
		return m
	}
	before := snapshot()

	// A new catalogue changing every tool and adding more; the third write fails.
	var next []ToolRecord
	for _, tl := range old {
		tl.Description += " (v2)"
		next = append(next, tl)
	}
	for i := range 5 {
		next = append(next, ToolRecord{Name: fmt.Sprintf("extra_%d", i), Description: "extra"})
	}
	writes := 0
	boom := errors.New("disk on fire")
	failToolWrite = func(string) error {
		writes++
		if writes == 3 {
			return boom
		}
		return nil
	}
	defer func() { failToolWrite = nil }()
	for _, sync := range []func(context.Context, []ToolRecord) (SyncReport, error){s.SyncTools, s.RebuildTools} {
		writes = 0
		if _, err := sync(ctx, next); !errors.Is(err, boom) {
			t.Fatalf("sync error = %v, want the injected failure", err)
		}
		if d := cmp.Diff(before, snapshot()); d != "" {
			t.Errorf("rows after a failed sync (-want +got):\n%s", d)
		}
		if fp, _ := s.ToolsFingerprint(ctx); fp != rep.Fingerprint {
			t.Errorf("fingerprint changed by a failed sync")
		}
		res, err := s.SearchTools(ctx, ToolQuery{Query: "news"})
		if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "web_search_news" {
			t.Errorf("search after failed sync: %+v %v", res, err)
		}
		res, _ = s.SearchTools(ctx, ToolQuery{Query: "extra"})
		if len(res.Tools) != 0 {
			t.Errorf("a failed sync left rows in the full-text index: %+v", res.Tools)
		}
	}
}

func TestSyncToolsRejectsBadRecords(t *testing.T) {
	cases := map[string][]ToolRecord{
		"empty name":     {{Name: " "}},
		"control char":   {{Name: "a\nb"}},
		"duplicate":      {{Name: "a"}, {Name: "a"}},
		"loading mode":   {{Name: "a", LoadingMode: "lazy"}},
		"side effects":   {{Name: "a", SideEffects: "explosive"}},
		"dup after good": {{Name: "b"}, {Name: "c"}, {Name: "b"}},
	}
	s := openTest(t, nil)
	mustSync(t, s, sampleTools())
	for name, tools := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := s.SyncTools(context.Background(), tools); !errors.Is(err, ErrBadTool) {
				t.Errorf("err = %v, want ErrBadTool", err)
			}
		})
	}
	var n int
	s.db.QueryRow(`SELECT count(*) FROM tools`).Scan(&n)
	if n != len(sampleTools()) {
		t.Errorf("rejected syncs changed the index: %d rows", n)
	}
}

func TestRecordHashCoversEveryField(t *testing.T) {
	base := ToolRecord{Name: "t", Description: "d", Namespace: "n", Category: "c", Tags: []string{"x"},
		Params: []Param{{Name: "p", Description: "pd"}}, Examples: []string{"e"}, LoadingMode: packs.LoadingDeferred, SideEffects: "read"}
	mutations := map[string]func(*ToolRecord){
		"description": func(t *ToolRecord) { t.Description = "d2" },
		"namespace":   func(t *ToolRecord) { t.Namespace = "n2" },
		"category":    func(t *ToolRecord) { t.Category = "c2" },
		"tags":        func(t *ToolRecord) { t.Tags = []string{"y"} },
		"param name":  func(t *ToolRecord) { t.Params = []Param{{Name: "q", Description: "pd"}} },
		"param desc":  func(t *ToolRecord) { t.Params = []Param{{Name: "p", Description: "other"}} },
		"examples":    func(t *ToolRecord) { t.Examples = nil },
		"loading":     func(t *ToolRecord) { t.LoadingMode = packs.LoadingAlways },
		"side":        func(t *ToolRecord) { t.SideEffects = "write" },
	}
	r0, err := prepareTool(base)
	if err != nil {
		t.Fatal(err)
	}
	for name, mut := range mutations {
		tl := base
		mut(&tl)
		r, err := prepareTool(tl)
		if err != nil {
			t.Fatal(err)
		}
		if r.hash == r0.hash {
			t.Errorf("changing %s leaves the record hash unchanged", name)
		}
	}
	// Defaults hash like their explicit values.
	a, _ := prepareTool(ToolRecord{Name: "x"})
	b, _ := prepareTool(ToolRecord{Name: "x", LoadingMode: packs.LoadingDeferred, SideEffects: "pure", Tags: []string{}})
	if a.hash != b.hash {
		t.Error("default loading mode and side effects hash differently from the explicit values")
	}
}
