package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/server"
	"github.com/skillhost/skillhost/server/serveconf"
)

// The API keys of the ranking test's tenants.
const (
	rankKeyA = "sk_rank_tenant_a_0123456789"
	rankKeyB = "sk_rank_tenant_b_9876543210"
)

// rankTenants gives tenant a the pack alpha and tenant b the pack beta.
var rankTenants = `
[skill_discovery]
tools = "search"

[server]
shared_packs = []

[tenants.a]
api_keys = ["` + serveconf.HashKey(rankKeyA) + `"]
packs = ["alpha"]

[tenants.b]
api_keys = ["` + serveconf.HashKey(rankKeyB) + `"]
packs = ["beta"]
`

// rankTool is one tool of a fixture pack, served by echo.wasm's echo.
type rankTool struct{ name, desc string }

// rankPackYAML is the pack.yaml of a pack of tools.
func rankPackYAML(name string, tools []rankTool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nversion: 1.0.0\ndefault_loading: deferred\nmodules:\n  - name: m\n    path: m.wasm\n    tools:\n", name)
	for _, t := range tools {
		fmt.Fprintf(&b, "      - name: %s\n        export: echo\n        description: %q\n        input_schema: {type: object}\n", t.name, t.desc)
	}
	return b.String()
}

// rankSkillYAML is a playbook skill file.
func rankSkillYAML(name, title, trigger string, steps ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\ntitle: %q\ntrigger: %q\nsteps:\n", name, title, trigger)
	for _, s := range steps {
		fmt.Fprintf(&b, "  - %q\n", s)
	}
	return b.String()
}

// rankAlpha is tenant a's pack: tools and skills whose words tenant b's
// pack will copy.
var rankAlpha = []rankTool{
	{"alpha_invoice_send", "Send an invoice to a customer by email."},
	{"alpha_invoice_list", "List the invoices of a customer, newest first."},
	{"alpha_weather_outlook", "Weather forecast for a city for the next ten days."},
	{"alpha_report_export", "Export a sales report of a quarter as CSV."},
	{"alpha_ledger_close", "Close the books of the ledger at month end."},
}

// writeRankBeta writes tenant b's pack of round: at round 0 two tools
// and a skill of its own, later n tools and skills made of tenant a's
// words (and of a's typos, as real words).
func writeRankBeta(t *testing.T, dir string, round, n int) {
	t.Helper()
	tools := []rankTool{{"beta_photo_resize", "Resize a photo to a width and height."}}
	skills := map[string]string{"photos.skill.yaml": rankSkillYAML("beta.photos", "Resize photos", "Photos must be resized.", "Resize them.")}
	if round > 0 {
		words := []string{"invoice", "customer", "email", "weather", "forecast", "report", "sales", "export",
			"wether", "forcast", "ledger", "books", "month", "city", "send"}
		tools, skills = nil, map[string]string{}
		for i := range n {
			a, b, c := words[i%len(words)], words[(i*7+round)%len(words)], words[(i*3+1)%len(words)]
			tools = append(tools, rankTool{fmt.Sprintf("beta_r%d_%s_%d", round, a, i), fmt.Sprintf("%s %s %s of the %s for %s.", a, b, c, a, b)})
			skills[fmt.Sprintf("s%d.skill.yaml", i)] = rankSkillYAML(fmt.Sprintf("beta.r%d-%s-%d", round, a, i), a+" "+b,
				fmt.Sprintf("The %s needs a %s %s.", a, b, a), fmt.Sprintf("Do the %s %s.", a, b))
		}
	}
	if len(tools) == 0 {
		tools = []rankTool{{"beta_photo_crop", "Crop a photo."}} // a module needs a tool
	}
	beta := filepath.Join(dir, "beta")
	if err := os.RemoveAll(filepath.Join(beta, "skills")); err != nil {
		t.Fatal(err)
	}
	writeRankFiles(t, beta, map[string]string{"pack.yaml": rankPackYAML("beta", tools)})
	for name, content := range skills {
		writeRankFiles(t, beta, map[string]string{filepath.Join("skills", name): content})
	}
}

func writeRankFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rankQueries are tenant a's searches.
var rankQueries = []string{
	"send the invoice to the customer by email",
	"weather forecast for a city",
	"export the sales report",
	"wether forcast",
	"customer report email",
	"close the books at month end",
}

// rankAnswers is what tenant a's model reads for every query, from
// tool_search and skill_search, in a session of cs.
func rankAnswers(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	var b strings.Builder
	for _, q := range rankQueries {
		for _, tool := range []string{"tool_search", "skill_search"} {
			args, _ := json.Marshal(map[string]any{"query": q, "limit": 20})
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
			if err != nil || res.IsError {
				t.Fatalf("%s %q: %v %s", tool, q, err, text(res))
			}
			b.WriteString(text(res))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestTenantRankingThroughServer: tenant a's tool_search and skill_search
// answers, as its model reads them over MCP, stay the same byte for byte
// while tenant b's pack is rewritten and the server reloads — hundreds
// of tools and skills made of a's words, then none — in a session open
// across the reloads and in new ones, stateful and stateless.
func TestTenantRankingThroughServer(t *testing.T) {
	dir := t.TempDir()
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "guests", "wat", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"alpha/pack.yaml": rankPackYAML("alpha", rankAlpha),
		"alpha/skills/invoice.skill.yaml": rankSkillYAML("alpha.invoice-customer", "Invoice a customer",
			"A customer must be sent an invoice by email.", "Find the customer.", "Send the invoice by email."),
		"alpha/skills/month.skill.yaml": rankSkillYAML("alpha.month-end", "Close the month",
			"Close the books at month end.", "Export the sales report.", "Close the ledger."),
		"alpha/skills/weather.skill.yaml": rankSkillYAML("alpha.weather-brief", "Weather brief",
			"Someone asks for a weather forecast for a city.", "Get the forecast.", "Summarise it in two lines."),
	}
	writeRankFiles(t, dir, files)
	for _, p := range []string{"alpha", "beta"} {
		writeRankFiles(t, dir, map[string]string{filepath.Join(p, "m.wasm"): string(wasm)})
	}
	writeRankBeta(t, dir, 0, 0)
	cfg, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(rankTenants))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e, err := skillhost.Open(ctx, skillhost.Config{Operator: cfg, StateDir: testenv.StateDir(),
		IndexPath: filepath.Join(dir, "index.db"), NoBundled: true, NoUserSources: true,
		PackDirs: []string{filepath.Join(dir, "alpha"), filepath.Join(dir, "beta")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	if p := e.Problems(); len(p) > 0 {
		t.Fatalf("loading the fixture: %v", p)
	}
	srv, err := server.New(e, &server.Options{Config: serveconf.Of(cfg), Version: "test", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	connect := func(key, version string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "ranking-test", Version: "1"}, nil)
		tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + server.MCPPath,
			HTTPClient: &http.Client{Transport: keyTransport{key}}, MaxRetries: -1}
		cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connecting (%s): %v", version, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}

	open := connect(rankKeyA, stateful)
	want := rankAnswers(t, open)
	for _, name := range []string{"alpha_weather_outlook", "alpha_report_export", "alpha.month-end", "alpha.weather-brief"} {
		if !strings.Contains(want, `"`+name+`"`) {
			t.Fatalf("tenant a's answers do not name %s:\n%s", name, want)
		}
	}
	if strings.Contains(want, "beta") {
		t.Fatalf("tenant a's answers name tenant b's tools or skills:\n%s", want)
	}
	for round, n := range []int{250, 600, 0} {
		round++
		writeRankBeta(t, dir, round, n)
		if err := srv.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		if p := e.Problems(); len(p) > 0 {
			t.Fatalf("round %d: loading tenant b's pack: %v", round, p)
		}
		if n > 0 {
			b := rankAnswers(t, connect(rankKeyB, stateless))
			if !strings.Contains(b, fmt.Sprintf("beta_r%d_", round)) {
				t.Fatalf("round %d: tenant b does not find its new tools:\n%s", round, b)
			}
		}
		for label, cs := range map[string]*mcp.ClientSession{
			"the open session": open, "a new session": connect(rankKeyA, stateful), "a stateless request": connect(rankKeyA, stateless),
		} {
			if got := rankAnswers(t, cs); got != want {
				t.Fatalf("round %d (%d of tenant b's tools and skills), %s: tenant a's answers changed\nbefore:\n%s\nafter:\n%s", round, n, label, want, got)
			}
		}
	}
}
