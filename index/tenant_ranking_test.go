package index

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/packs"
)

// The tenant ranking attack: tenant B changes only its own pack — many
// tools and skills that share tenant A's words, and words that make A's
// typos real words — and A's searches must not move. A's scores and order
// depend only on what A can see; otherwise B could read A's rankings, and
// A could learn B's words from its own scores.

// rankTenantA and rankTenantB are the two tenants' scopes.
var rankTenantA, rankTenantB = Scope{TenantID: "tenant-a"}, Scope{TenantID: "tenant-b"}

// rankQueries are A's requests: plain words, a synonym (wipe → erase), a
// typo corrected against the words A sees, and name matches.
var rankQueries = []string{
	"send the invoice to the customer by email",
	"weather forecast for a city",
	"export the sales report",
	"wipe all records",
	"wether forcast",
	"invoice",
	"customer report email",
	"alpha_invoice",
	"close the books at month end",
}

// rankSharedTools are every tenant's; rankToolsA are A's pack's.
var (
	rankSharedTools = []ToolRecord{
		{Name: "read_file", Description: "Read a text file of the granted folder.", Tags: []string{"file"}},
		{Name: "send_email", Description: "Send an email message to one or more recipients.", Tags: []string{"email"}, SideEffects: "external"},
		{Name: "weather_now", Description: "Current weather of a city: temperature and wind.", Tags: []string{"weather"}},
		{Name: "tool_search", Description: "Search the tools by what a task needs.", LoadingMode: packs.LoadingAlways},
	}
	rankToolsA = []ToolRecord{
		{Name: "alpha_invoice_send", Namespace: "alpha", Description: "Send an invoice to a customer by email.", Tags: []string{"invoice", "billing"}, SideEffects: "external"},
		{Name: "alpha_invoice_list", Namespace: "alpha", Description: "List the invoices of a customer, newest first.", Tags: []string{"invoice"}},
		{Name: "alpha_weather_outlook", Namespace: "alpha", Description: "Weather forecast for a city for the next ten days.", Tags: []string{"weather"}},
		{Name: "alpha_report_export", Namespace: "alpha", Description: "Export a sales report of a quarter as CSV.", Tags: []string{"report", "sales"}},
		{Name: "alpha_records_purge", Namespace: "alpha", Description: "Erase every record of a table.", Tags: []string{"records"}, SideEffects: "write"},
		{Name: "alpha_ledger_close", Namespace: "alpha", Description: "Close the books of the ledger at month end.", Tags: []string{"accounting"}, SideEffects: "write"},
	}
)

// rankToolsB returns B's pack's tools: at round 0 a few of its own; later
// n tools that share A's words, and use A's typos as real words.
func rankToolsB(round, n int) []ToolRecord {
	if round == 0 {
		return []ToolRecord{
			{Name: "beta_photo_resize", Namespace: "beta", Description: "Resize a photo to a width and height."},
			{Name: "beta_invoice_archive", Namespace: "beta", Description: "Archive an invoice as PDF."},
		}
	}
	words := []string{"invoice", "customer", "email", "weather", "forecast", "report", "sales", "export", "records",
		"wether", "forcast", "ledger", "books", "month", "city", "send"}
	out := make([]ToolRecord, n)
	for i := range out {
		a, b, c := words[i%len(words)], words[(i*7+round)%len(words)], words[(i*3+1)%len(words)]
		out[i] = ToolRecord{Name: fmt.Sprintf("beta_r%d_%s_%d", round, a, i), Namespace: "beta",
			Description: fmt.Sprintf("%s %s %s of the %s for %s %s", a, b, c, a, b, strings.Repeat("filler ", i%5)),
			Tags:        []string{c}}
	}
	return out
}

// rankSkills are the global skills and A's pack's skills.
var (
	rankSharedSkills = []SkillRecord{
		{Name: "shared-email", Title: "Write a clear email", Trigger: "The user wants an email written.", Steps: []string{"Say what is asked first.", "Keep it short."}},
		{Name: "shared-report", Title: "Summarise a report", Trigger: "The user gives a report to summarise.", Steps: []string{"Read the report.", "List the three main points."}},
	}
	rankSkillsA = []SkillRecord{
		{Name: "alpha.invoice-customer", Title: "Invoice a customer", Trigger: "A customer must be sent an invoice by email.", TaskType: "api",
			Steps: []string{"Find the customer.", "Send the invoice by email with alpha_invoice_send."}},
		{Name: "alpha.month-end", Title: "Close the month", Trigger: "Close the books at month end.", TaskType: "domain",
			Steps: []string{"Export the sales report.", "Close the ledger."}},
		{Name: "alpha.weather-brief", Title: "Weather brief", Trigger: "Someone asks for a weather forecast for a city.",
			Steps: []string{"Get the forecast.", "Summarise it in two lines."}},
		{Name: "shared-report", Title: "Summarise a sales report", Trigger: "The user gives a sales report to summarise.", Steps: []string{"Read the report."}},
	}
)

// rankSkillsB returns B's pack's skills, as rankToolsB.
func rankSkillsB(round, n int) []SkillRecord {
	if round == 0 {
		return []SkillRecord{{Name: "beta.photos", Title: "Resize photos", Trigger: "Photos must be resized.", Steps: []string{"Resize them."}}}
	}
	words := []string{"invoice", "customer", "email", "weather", "forecast", "report", "sales", "month", "books",
		"ledger", "close", "city", "export", "records", "wether", "forcast"}
	out := make([]SkillRecord, n)
	for i := range out {
		a, b := words[i%len(words)], words[(i*5+round)%len(words)]
		out[i] = SkillRecord{Name: fmt.Sprintf("beta.r%d-%s-%d", round, a, i), Title: a + " " + b,
			Trigger: fmt.Sprintf("The %s needs a %s %s.", a, b, a), Tags: []string{b},
			Steps: []string{fmt.Sprintf("Do the %s %s.", a, b), strings.Repeat("and more ", i%4)}}
	}
	if round%2 == 0 {
		out = append(out, rankSharedSkills[0]) // a copy of a global name, at B's scope
		out[len(out)-1].Title += " for " + words[round%len(words)]
	}
	return out
}

// visibleToA is A's tool visibility: its pack's tools and the shared ones.
func visibleToA(name string) bool { return !strings.HasPrefix(name, "beta_") }

// viewA is the same as a view, shared by A's searches.
var viewA = NewToolView(visibleToA)

// rankWorld writes round's catalogue: the shared tools and skills, A's,
// and B's of that round.
func rankWorld(t *testing.T, s *Store, round, n int) {
	t.Helper()
	ctx := context.Background()
	tools := append(append(append([]ToolRecord(nil), rankSharedTools...), rankToolsA...), rankToolsB(round, n)...)
	if _, err := s.SyncTools(ctx, tools); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		name   string
		skills []SkillRecord
		sc     Scope
	}{
		{"core", rankSharedSkills, Scope{}},
		{"alpha", rankSkillsA, rankTenantA},
		{"beta", rankSkillsB(round, min(n, 400)), rankTenantB}, // skill snapshots are never reloaded inside a search
	} {
		if _, err := s.LoadPack(ctx, p.name, p.skills, PackOptions{Scope: p.sc, UpdateExisting: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// rankAnswers is A's answers to every query, tool_search and
// skill_search, as the bytes a model would read.
func rankAnswers(t *testing.T, s *Store, q func(query string) ToolQuery) []byte {
	t.Helper()
	ctx := context.Background()
	var buf bytes.Buffer
	for _, query := range rankQueries {
		tr, err := s.SearchTools(ctx, q(query))
		if err != nil {
			t.Fatal(err)
		}
		sr, err := s.SearchSkills(ctx, SkillQuery{Query: query, Limit: MaxLimit, Scope: rankTenantA})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []any{tr, sr} {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes()
}

// allTools is an operator's search, which sees every tenant's tools.
func allTools(query string) ToolQuery { return ToolQuery{Query: query, Limit: MaxLimit} }

// rankAskers are the ways A's searches are asked: with A's visibility
// test only, with A's view, and with both, as a run asks (the tools A may
// find, less those it shows already).
var rankAskers = []struct {
	name string
	q    func(query string) ToolQuery
}{
	{"visible", func(query string) ToolQuery {
		return ToolQuery{Query: query, Limit: MaxLimit, IncludeAlwaysLoaded: true, Visible: visibleToA}
	}},
	{"view", func(query string) ToolQuery { return ToolQuery{Query: query, Limit: MaxLimit, View: viewA} }},
	{"view and visible", func(query string) ToolQuery {
		return ToolQuery{Query: query, Limit: MaxLimit, IncludeAlwaysLoaded: true, View: viewA,
			Visible: func(name string) bool { return name != "send_email" }}
	}},
}

// TestTenantRankingIgnoresOtherTenants: A's tool_search and skill_search
// answers (names, order, scores, to the byte) stay the same while B's
// pack changes round after round — B's documents added by the hundred,
// sharing A's words and making A's typos real words, then removed —
// whether the change is written through A's store, by another process on
// the same file (A's snapshots then stale, and, but under -race or
// -short, at a size that is not reloaded inside a search), or found by a
// store opened afresh. The operator's own search, which sees B's tools,
// does change: the attack is real.
func TestTenantRankingIgnoresOtherTenants(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rankWorld(t, s, 0, 0)
	answers := func(s *Store) [][]byte {
		out := make([][]byte, len(rankAskers))
		for i, a := range rankAskers {
			out[i] = rankAnswers(t, s, a.q)
		}
		return out
	}
	want := answers(s)
	for i, w := range want {
		if !bytes.Contains(w, []byte(`"alpha_weather_outlook"`)) || !bytes.Contains(w, []byte(`"alpha.month-end"`)) || bytes.Contains(w, []byte("beta")) {
			t.Fatalf("%s: A's answers miss its own tools or skills, or name B's:\n%s", rankAskers[i].name, w)
		}
	}
	check := func(label string, got [][]byte) {
		t.Helper()
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%s, asked with %s: A's answers changed:\n%s", label, rankAskers[i].name, diffLines(want[i], got[i]))
			}
		}
	}
	operator := rankAnswers(t, s, allTools)
	other, err := Open(ctx, path, nil) // another process on the same file
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// Even rounds are written by the other store: A's store finds its
	// snapshots stale, at round 4 too large to reload inside a search.
	rounds := []int{300, 40, 2500, 2600, 0}
	if raceEnabled || testing.Short() {
		rounds = []int{300, 40, 200, 0}
	}
	for round, n := range rounds {
		round++
		w, by := s, "A's store"
		if round%2 == 0 {
			w, by = other, "another store"
		}
		rankWorld(t, w, round, n)
		if w == other {
			gen, err := s.generation(ctx)
			if err != nil {
				t.Fatal(err)
			}
			large := round > 1 && rounds[round-2] > syncSnapshotMax
			if cur := s.toolSnaps.cur.Load(); cur.gen == gen || large != (cur.size() > syncSnapshotMax) {
				t.Fatalf("round %d: A's tool snapshot of %d tools is of generation %d, the store's %d: not the case meant", round, cur.size(), cur.gen, gen)
			}
		}
		check(fmt.Sprintf("round %d (%d of B's documents, written by %s)", round, n, by), answers(s))
		fresh, err := Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("round %d, a store opened afresh", round), answers(fresh))
		fresh.Close()
		if round == 1 && bytes.Equal(rankAnswers(t, s, allTools), operator) {
			t.Fatal("the operator's answers did not change either: B's change does not reach the statistics")
		}
	}
}

// diffLines lists the lines of got that differ from want.
func diffLines(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "- %s\n+ %s\n", a, c)
		}
	}
	return b.String()
}
