package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/server"
)

// Attacks of a tenant with a key of its own on what it may reach, its
// quotas and the server's limits. Each test is one attack and the rule
// that stops it.

// rawAnswer is an HTTP answer as a client sees it: the status, the
// Retry-After header, and the JSON-RPC messages of the body (each with
// sorted keys).
type rawAnswer struct {
	Status     int
	RetryAfter string
	Messages   []string
	Session    string `json:"-"`
}

// rawPost posts body to url with key and headers, and reads the answer.
func rawPost(t *testing.T, url, key string, headers map[string]string, body string) rawAnswer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := rawAnswer{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Session: resp.Header.Get("Mcp-Session-Id")}
	for _, m := range messages(data, resp.Header.Get("Content-Type")) {
		a.Messages = append(a.Messages, canonical(t, m))
	}
	if len(a.Messages) == 0 {
		a.Messages = []string{strings.TrimSpace(string(data))}
	}
	return a
}

// rawSession opens a session of version with raw requests and returns its
// id.
func rawSession(t *testing.T, url, key, version string) string {
	t.Helper()
	a := rawPost(t, url, key, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`)
	if a.Status != http.StatusOK || a.Session == "" {
		t.Fatalf("initialize %s: %+v", version, a)
	}
	h := map[string]string{"Mcp-Session-Id": a.Session, "MCP-Protocol-Version": version}
	if n := rawPost(t, url, key, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); n.Status != http.StatusAccepted {
		t.Fatalf("initialized: %+v", n)
	}
	return a.Session
}

// callBody is a tools/call of name with id.
func callBody(id int, name string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"text":"hi"}}}`, id, name)
}

// rawStatelessCall is a 2026-07-28 tools/call request of name.
func rawStatelessCall(id int, name string) (map[string]string, string) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"attacker","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	return map[string]string{"MCP-Protocol-Version": stateless, "Mcp-Method": "tools/call", "Mcp-Name": name},
		fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"text":"hi"},%s}}`, id, name, meta)
}

// Tenant a calls tenant b's Wasm tool and a name no tool has (of the
// same length): with quotas on or off, over a session, statelessly, in
// a batch and on standard input, the answers are the same but for the
// name. Before names were resolved in the tenant, a's memory quota
// answered 429 naming b's tool's memory limit.
func TestAnotherTenantsToolIsUnknown(t *testing.T) {
	const theirs, nobodys = "secret_echo", "secret_ecxo"
	for _, quotas := range []string{
		"",
		"[tenants.a.quotas]\nmemory = \"1MiB\"\n",
		"[tenants.a.quotas]\nmemory = \"1MiB\"\ncalls_per_minute = 1000\nconcurrent_calls = 1\nfuel_per_minute = 1000000\nguest_time_per_minute = \"1s\"\n",
	} {
		t.Run(fmt.Sprintf("quotas=%q", quotas), func(t *testing.T) {
			f := newFixture(t, twoTenants+quotas)
			same := func(what string, ask func(name string) any) {
				t.Helper()
				norm := func(name string) string {
					v := ask(name)
					if a, ok := v.(rawAnswer); ok {
						slices.Sort(a.Messages) // a batch's answers come in any order
						v = a
					}
					b, _ := json.Marshal(v)
					return strings.ReplaceAll(string(b), name, "<name>")
				}
				if got, want := norm(theirs), norm(nobodys); got != want {
					t.Errorf("%s: tenant b's tool answers\n%s\nbut a name no tool has answers\n%s", what, got, want)
				}
			}
			sid := rawSession(t, f.url, keyA, stateful)
			same("a session's call", func(name string) any {
				return rawPost(t, f.url, keyA, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": stateful}, callBody(1, name))
			})
			same("a stateless call", func(name string) any {
				h, body := rawStatelessCall(1, name)
				return rawPost(t, f.url, keyA, h, body)
			})
			old := rawSession(t, f.url, keyA, "2025-03-26")
			same("a batch", func(name string) any {
				return rawPost(t, f.url, keyA, map[string]string{"Mcp-Session-Id": old, "MCP-Protocol-Version": "2025-03-26"},
					"["+callBody(1, name)+","+callBody(2, "slugify")+"]")
			})
			same("tool_search for it", func(name string) any {
				return rawPost(t, f.url, keyA, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": stateful},
					fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tool_search","arguments":{"query":%q,"search_type":"exact"}}}`, name))
			})
			srv, err := server.New(f.e, &server.Options{Config: mustConfig(t, twoTenants+quotas), StdioTenant: "a", Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			same("a call on standard input", func(name string) any {
				return stdioExchange(t, srv, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`,
					`{"jsonrpc":"2.0","method":"notifications/initialized"}`, callBody(1, name))[1:]
			})
		})
	}
}

// stdioExchange writes lines to a ServeStdio of srv and returns the
// answer lines, one per request line (notifications get none), then
// ends the session.
func stdioExchange(t *testing.T, srv *server.Server, lines ...string) []string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, inR, outW) }()
	answers := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"method":"notifications/`) {
				continue // the server's notifications answer nothing
			}
			answers <- sc.Text()
		}
		close(answers)
	}()
	var out []string
	for _, l := range lines {
		if _, err := io.WriteString(inW, l+"\n"); err != nil {
			t.Fatalf("writing %.80q: %v", l, err)
		}
		if strings.Contains(l, `"method":"notifications/`) {
			continue
		}
		select {
		case a, ok := <-answers:
			if !ok {
				t.Fatalf("standard output ended after %.80q", l)
			}
			var v any
			json.Unmarshal([]byte(a), &v)
			b, _ := json.Marshal(v)
			out = append(out, string(b))
		case err := <-done:
			t.Fatalf("ServeStdio ended after %.80q: %v", l, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("no answer to %.80q", l)
		}
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("ServeStdio did not end with its input")
	}
	outW.Close()
	return out
}

// A line that is not a message the server can read gets a JSON-RPC
// error, and the session reads on: before, one bad line ended `serve
// --stdio` with status 2.
func TestStdioReadsOnPastBadLines(t *testing.T) {
	f := newFixture(t, "")
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`
	bad := []struct {
		line string
		code float64
	}{
		{`this is not json`, -32700},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"`, -32700},
		{`{"jsonrpc":"2.0","id":1} {"jsonrpc":"2.0","id":2}`, -32700},
		{`{"foo":1}`, -32600},
		{`[]`, -32600},
		{`null`, -32600},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600}, // no batches in 2025-11-25
		{`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, -32600},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slugify","arguments":{"text":"` + strings.Repeat("x", 5<<20) + `"}}}`, -32600},
	}
	lines := []string{init, `{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	for _, b := range bad {
		lines = append(lines, b.line, callBody(7, "slugify"))
	}
	out := stdioExchange(t, f.srv, lines...)
	if len(out) != 1+2*len(bad) {
		t.Fatalf("%d answers to %d requests", len(out), 1+2*len(bad))
	}
	for i, b := range bad {
		var refusal struct {
			ID    any `json:"id"`
			Error struct {
				Code    float64 `json:"code"`
				Message string  `json:"message"`
			} `json:"error"`
		}
		json.Unmarshal([]byte(out[1+2*i]), &refusal)
		if refusal.Error.Code != b.code || refusal.ID != nil || refusal.Error.Message == "" {
			t.Errorf("%.60q: answered %.300s, want error %v with id null", b.line, out[1+2*i], b.code)
		}
		if next := out[2+2*i]; !strings.Contains(next, `"hi"`) && !strings.Contains(next, "uber") && !strings.Contains(next, `"result"`) {
			t.Errorf("the call after %.60q: %.300s", b.line, next)
		}
	}
}

// A request that two decoders could read differently is either refused or
// admitted as what runs: "Method":"ping" beside "method":"tools/call" is
// a call (keys are case-sensitive, as the SDK reads them) and counts
// against the quota; a repeated key is refused; a batch with an element
// the SDK cannot read has its calls admitted one by one.
func TestQuotaOneReading(t *testing.T) {
	f := newFixture(t, twoTenants+"[tenants.a.quotas]\ncalls_per_minute = 2\n")
	disguised := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","Method":"ping","params":{"name":"slugify","arguments":{"text":"x"}}}`, id)
	}
	sid := rawSession(t, f.url, keyA, stateful)
	h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": stateful}
	for i := range 2 {
		if a := rawPost(t, f.url, keyA, h, disguised(i)); a.Status != http.StatusOK || !strings.Contains(a.Messages[0], `"result"`) {
			t.Fatalf("call %d within the quota: %+v", i, a)
		}
	}
	if a := rawPost(t, f.url, keyA, h, disguised(3)); a.Status != http.StatusTooManyRequests || a.RetryAfter == "" {
		t.Errorf("a third call dressed as a ping: %+v, want 429 with Retry-After", a)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":4,"method":"ping","method":"tools/call","params":{"name":"slugify","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slugify","name":"tool_search","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slugify","arguments":{"text":"x","text":"y"}}}`,
	} {
		if a := rawPost(t, f.url, keyA, h, body); a.Status != http.StatusBadRequest || !strings.Contains(a.Messages[0], "twice") {
			t.Errorf("a repeated key: %+v, want 400 naming it", a)
		}
	}

	// A batch of four calls and one element whose params cannot be read:
	// two calls run (the quota's refill over the test is far below one),
	// the others are refused one by one and the bad element gets its own
	// error.
	g := newFixture(t, twoTenants+"[tenants.a.quotas]\ncalls_per_minute = 2\n")
	old := rawSession(t, g.url, keyA, "2025-03-26")
	batch := "[" + callBody(1, "slugify") + "," + callBody(2, "slugify") + "," + callBody(3, "slugify") + "," +
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"},` + callBody(5, "slugify") + "]"
	a := rawPost(t, g.url, keyA, map[string]string{"Mcp-Session-Id": old, "MCP-Protocol-Version": "2025-03-26"}, batch)
	var ran, refused, bad int
	for _, m := range a.Messages {
		var msgs []map[string]any
		if json.Unmarshal([]byte(m), &msgs) != nil {
			var one map[string]any
			json.Unmarshal([]byte(m), &one)
			msgs = []map[string]any{one}
		}
		for _, msg := range msgs {
			out, _ := json.Marshal(msg)
			switch {
			case msg["error"] != nil:
				bad++
			case strings.Contains(string(out), "limit_exceeded"):
				refused++
			case strings.Contains(string(out), `"isError":true`):
				t.Errorf("a batch element failed otherwise: %s", out)
			default:
				ran++
			}
		}
	}
	if ran != 2 || refused != 2 || bad != 1 {
		t.Errorf("batch: %d ran, %d refused by the quota, %d bad; want 2, 2, 1\n%s", ran, refused, bad, strings.Join(a.Messages, "\n"))
	}
}

// Tenant a's sessions past max_tenant_sessions close its own session idle
// the longest; when each is busy, a new one is refused; past max_sessions
// every tenant's new session is refused. One session's open requests are
// bounded by max_session_streams.
func TestSessionLimits(t *testing.T) {
	f := newFixture(t, strings.Replace(twoTenants, "[server]\n", "[server]\nmax_sessions = 3\nmax_tenant_sessions = 2\nmax_session_streams = 2\n", 1))
	first := rawSession(t, f.url, keyA, stateful)
	time.Sleep(10 * time.Millisecond)
	second := rawSession(t, f.url, keyA, stateful)
	third := rawSession(t, f.url, keyA, stateful) // closes first, idle the longest
	ping := `{"jsonrpc":"2.0","id":9,"method":"ping"}`
	hdr := func(sid string) map[string]string {
		return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": stateful}
	}
	if a := rawPost(t, f.url, keyA, hdr(first), ping); a.Status != http.StatusNotFound {
		t.Errorf("the session idle the longest, after a third: %+v, want 404 (closed)", a)
	}
	for _, sid := range []string{second, third} {
		if a := rawPost(t, f.url, keyA, hdr(sid), ping); a.Status != http.StatusOK {
			t.Errorf("a newer session: %+v", a)
		}
	}

	// Both of a's sessions busy: a third is refused, not made by closing
	// one at work.
	var wg sync.WaitGroup
	for _, sid := range []string{second, third} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rawPost(t, f.url, keyA, hdr(sid), `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow_wait","arguments":{"seconds":60}}}`)
		}()
		select {
		case <-f.slowStarted:
		case <-time.After(30 * time.Second):
			t.Fatal("a slow call did not start")
		}
	}
	a := rawPost(t, f.url, keyA, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`)
	if a.Status != http.StatusTooManyRequests || !strings.Contains(a.Messages[0], "max_tenant_sessions") {
		t.Errorf("a session past the tenant's bound, every one busy: %+v, want 429", a)
	}
	// A session's open requests: one slow call is open on second; a
	// second request may open, a third not.
	streams := []string{}
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rawPost(t, f.url, keyA, hdr(second), `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"slow_wait","arguments":{"seconds":60}}}`)
		mu.Lock()
		streams = append(streams, fmt.Sprint(r.Status))
		mu.Unlock()
	}()
	select {
	case <-f.slowStarted:
	case <-time.After(30 * time.Second):
		t.Fatal("the second slow call did not start")
	}
	if a := rawPost(t, f.url, keyA, hdr(second), ping); a.Status != http.StatusTooManyRequests || !strings.Contains(a.Messages[0], "max_session_streams") {
		t.Errorf("a third open request on one session: %+v, want 429", a)
	}

	// Tenant b, below its own bound, opens the server's third session;
	// its next is refused by max_sessions rather than close a's.
	rawSession(t, f.url, keyB, stateful)
	a = rawPost(t, f.url, keyB, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	if a.Status != http.StatusServiceUnavailable || !strings.Contains(a.Messages[0], "max_sessions") {
		t.Errorf("a session past max_sessions: %+v, want 503", a)
	}
	if a := rawPost(t, f.url, keyA, hdr(third), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`); a.Status != http.StatusAccepted {
		t.Errorf("a's session after b was refused: %+v", a)
	}
	metrics := scrapeMetrics(t, f)
	for _, want := range []string{
		`skillhost_sessions{tenant="a"} 2`, `skillhost_sessions{tenant="b"} 1`,
		`skillhost_session_evictions_total{tenant="a"} 1`,
		`skillhost_limit_refusals_total{limit="tenant_sessions",tenant="a"} 1`,
		`skillhost_limit_refusals_total{limit="session_streams",tenant="a"} 1`,
		`skillhost_limit_refusals_total{limit="sessions",tenant="b"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	for range 3 {
		select {
		case f.release <- struct{}{}:
		case <-time.After(30 * time.Second):
			t.Fatal("a slow call was not there to be released")
		}
	}
	wg.Wait()
}

// scrapeMetrics reads the server's /metrics.
func scrapeMetrics(t *testing.T, f *fixture) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(f.url, server.MCPPath)+server.MetricsPath, nil)
	req.Header.Set("Authorization", "Bearer "+fixtureMetricsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// Tenant b's playbook with the title and file name of one of tenant a's
// neither makes a's aliases ambiguous nor answers them: each tenant's
// alias names its own playbook. Before, aliases were resolved over every
// tenant's playbooks, and a's load_skill by title answered not_found.
func TestAliasesResolveInsideTheTenant(t *testing.T) {
	for _, family := range skillFamilies {
		t.Run(family, func(t *testing.T) { testAliasesResolveInsideTheTenant(t, family) })
	}
}

func testAliasesResolveInsideTheTenant(t *testing.T, family string) {
	read, args := "load_skill", func(alias string) map[string]any { return map[string]any{"skill_name": alias} }
	if family == registry.SkillToolsSearch {
		read, args = "skill_get", func(alias string) map[string]any { return map[string]any{"names": []string{alias}} }
	}
	f := newFamilyFixture(t, family, map[string]string{
		"beta/deploy.skill.yaml": `name: pack.beta.deploy
title: Deploy alpha
description: Tenant b's own deploy, about ocelots.
trigger: The user asks to deploy.
steps:
  - Ship the ocelots.
`,
	})
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			a := f.connect(t, skKeyA, version)
			b := f.connect(t, skKeyB, version)
			for _, alias := range []string{"Deploy alpha", "deploy alpha", "deploy"} {
				for _, tc := range []struct {
					who       string
					cs        *mcp.ClientSession
					want, not string
				}{
					{"a", a, "Ship it", "ocelots"},
					{"b", b, "ocelots", "Ship it"},
				} {
					out, isErr := callText(t, tc.cs, read, args(alias))
					if isErr || !strings.Contains(out, tc.want) || strings.Contains(out, tc.not) {
						t.Errorf("%s's %s %q: %.300s", tc.who, read, alias, out)
					}
				}
			}
		})
	}
}

// Tenant a asks for tenant b's skill and for a name no skill has (of the
// same length) through every skill tool, resources/read and the skills
// extension: the answers are the same but for the name.
func TestAnotherTenantsSkillIsUnknown(t *testing.T) {
	for _, family := range skillFamilies {
		t.Run(family, func(t *testing.T) { testAnotherTenantsSkillIsUnknown(t, family) })
	}
}

func testAnotherTenantsSkillIsUnknown(t *testing.T, family string) {
	const theirs, nobodys = "beta-secret", "beta-secrex"
	f := newFamilyFixture(t, family, nil)
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			var h map[string]string
			wrap := func(method, params string) string {
				if version == stateless {
					params = strings.TrimSuffix(params, "}") + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"attacker","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}`
				}
				return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
			}
			if version == stateless {
				h = map[string]string{"MCP-Protocol-Version": stateless}
			} else {
				sid := rawSession(t, f.url, skKeyA, version)
				h = map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}
			}
			for _, p := range []struct {
				what, method, tool, params string
			}{
				{"load_skill", "tools/call", "load_skill", `{"name":"load_skill","arguments":{"skill_name":"NAME"}}`},
				{"skill_get", "tools/call", "skill_get", `{"name":"skill_get","arguments":{"names":["NAME"]}}`},
				{"read_skill_resource", "tools/call", "read_skill_resource", `{"name":"read_skill_resource","arguments":{"skill_name":"NAME","resource_name":"references/plan.md"}}`},
				{"run_skill_script", "tools/call", "run_skill_script", `{"name":"run_skill_script","arguments":{"skill_name":"NAME","script_name":"scripts/run.wasm"}}`},
				{"skill_search exact", "tools/call", "skill_search", `{"name":"skill_search","arguments":{"query":"NAME","search_type":"exact"}}`},
				{"resources/read of its SKILL.md", "resources/read", "", `{"uri":"skill://NAME/SKILL.md"}`},
				{"resources/read of a file", "resources/read", "", `{"uri":"skill://NAME/references/plan.md"}`},
				{"skills/get", "skills/get", "", `{"uri":"skill://NAME/SKILL.md"}`},
			} {
				if p.tool != "" && !ofFamily(family, p.tool) {
					continue
				}
				ask := func(name string) string {
					hdr := map[string]string{}
					for k, v := range h {
						hdr[k] = v
					}
					if version == stateless {
						hdr["Mcp-Method"] = p.method
						if p.tool != "" {
							hdr["Mcp-Name"] = p.tool
						}
						if p.method == "resources/read" {
							var params struct{ URI string }
							json.Unmarshal([]byte(strings.ReplaceAll(p.params, "NAME", name)), &params)
							hdr["Mcp-Name"] = params.URI
						}
					}
					a := rawPost(t, f.url, skKeyA, hdr, wrap(p.method, strings.ReplaceAll(p.params, "NAME", name)))
					b, _ := json.Marshal(a)
					return strings.ReplaceAll(string(b), name, "<name>")
				}
				if testing.Verbose() {
					t.Logf("%s: %.200s", p.what, ask(nobodys))
				}
				if got, want := ask(theirs), ask(nobodys); got != want {
					t.Errorf("%s: tenant b's skill answers\n%s\nbut a name no skill has answers\n%s", p.what, got, want)
				}
			}
		})
	}
}
