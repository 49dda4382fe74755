package skillhost_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/server/serveconf"
)

// mailProviderEnv makes the test binary a provider command (mailBridge).
const mailProviderEnv = "SKILLHOST_TEST_MAIL_BRIDGE"

// TestMain lets the test binary serve as a provider command, and as the
// worker process of calls under process isolation.
func TestMain(m *testing.M) {
	host.ServeWorkerIfChild()
	if os.Getenv(mailProviderEnv) == "1" {
		mailBridge()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// mailBridge answers each request line with what it was asked, its
// tenant and the bridge's pid, or refuses the tenant "blocked".
func mailBridge() {
	in := bufio.NewScanner(os.Stdin)
	fmt.Fprintln(os.Stderr, "mail bridge ready")
	for in.Scan() {
		var req struct {
			ID         uint64          `json:"id"`
			Capability string          `json:"capability"`
			Args       json.RawMessage `json:"args"`
			Tenant     string          `json:"tenant"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "bad request:", err)
			continue
		}
		if strings.Contains(string(req.Args), `"hang"`) {
			continue // never answered
		}
		if req.Tenant == "blocked" {
			fmt.Printf(`{"id":%d,"error":{"code":"permission_denied","message":"no mail for this tenant"}}`+"\n", req.ID)
			continue
		}
		res, _ := json.Marshal(map[string]any{"capability": req.Capability, "args": req.Args, "tenant": req.Tenant,
			"pid": os.Getpid(), "token": os.Getenv("MAIL_TOKEN")})
		fmt.Printf(`{"id":%d,"result":%s}`+"\n", req.ID, res)
	}
}

// mailPack's send tool calls capability mail.send with its arguments;
// its module requests the service.
const mailPack = `name: mailer
default_loading: always
modules:
  - name: m
    path: m.wasm
    request:
      services: [mail.send]
    tools:
      - {name: send, description: Sends mail.}
`

// sendResult calls send in run and returns the tool result its guest got
// back from capability_call.
func sendResult(t *testing.T, run *skillhost.Run, args string) abi.ToolResult {
	t.Helper()
	res, err := run.Call(context.Background(), "send", json.RawMessage(args), nil)
	if err != nil || res.IsError {
		t.Fatalf("send: %+v, %v", res, err)
	}
	var tr abi.ToolResult
	if err := json.Unmarshal(res.Output, &tr); err != nil {
		t.Fatalf("send output %s: %v", res.Output, err)
	}
	return tr
}

// tenantRun is a run of the config's tenant id, with its grants.
func tenantRun(t *testing.T, e *skillhost.Engine, op *packs.Config, id string) *skillhost.Run {
	t.Helper()
	opts := &skillhost.RunOptions{}
	for _, tc := range serveconf.Of(op).Tenants {
		if tc.ID == id {
			opts.Grants = tc.Grants
		}
	}
	run, err := e.NewRun(skillhost.RunContext{Tenant: id}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

const tenantsTOML = `
[packs.mailer]
services = ["mail.send"]

[tenants.acme]
api_keys = ["sha256:0000000000000000000000000000000000000000000000000000000000000000"]

[tenants.narrow]
api_keys = ["sha256:1111111111111111111111111111111111111111111111111111111111111111"]
[tenants.narrow.grants.mailer]
services = []
`

func TestServicesInGo(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	mail := skillhost.ServiceProviderFunc(func(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
		run := skillhost.RunFrom(ctx)
		if run == nil {
			return nil, &abi.Error{Code: abi.CodeInternal, Message: "no run in the provider's context"}
		}
		mu.Lock()
		seen = append(seen, run.Context().Tenant+" "+id+" "+string(args))
		mu.Unlock()
		return json.RawMessage(`{"queued":true}`), nil
	})
	op := operator(t, tenantsTOML)
	e := open(t, skillhost.Config{PackDirs: []string{writePack(t, mailPack, "wat/capability.wasm", "m.wasm")}, NoBundled: true,
		Operator: op, Services: map[string]skillhost.ServiceProvider{"mail": mail}})

	if tr := sendResult(t, tenantRun(t, e, op, "acme"), `{"to":"ops@example.com"}`); tr.IsError || string(tr.Output) != `{"queued":true}` {
		t.Errorf("acme: %+v, want the provider's result", tr)
	}
	// The tenant whose [tenants.narrow.grants.mailer] leaves no services
	// is refused before the provider is asked.
	if tr := sendResult(t, tenantRun(t, e, op, "narrow"), `{}`); !tr.IsError || tr.Error.Code != abi.CodePermissionDenied {
		t.Errorf("narrow: %+v, want permission_denied", tr)
	}
	// The engine's own run reaches it too.
	if res, err := e.Call(context.Background(), "send", json.RawMessage(`{"n":1}`), nil); err != nil || !strings.Contains(string(res.Output), "queued") {
		t.Errorf("Engine.Call: %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != `acme mail.send {"to":"ops@example.com"}` || !strings.HasPrefix(seen[1], " mail.send") {
		t.Errorf("the provider saw %q", seen)
	}

	// Without the operator's grant nothing reaches it.
	bare := open(t, skillhost.Config{PackDirs: []string{writePack(t, mailPack, "wat/capability.wasm", "m.wasm")}, NoBundled: true,
		Operator: operator(t, ""), Services: map[string]skillhost.ServiceProvider{"mail": mail}})
	if res, err := bare.Call(context.Background(), "send", nil, nil); err != nil || !strings.Contains(string(res.Output), "permission_denied") {
		t.Errorf("ungranted: %+v, %v", res, err)
	}
}

// A provider command that cannot be started is one of the engine's
// problems, and its calls fail with unavailable naming the program.
func TestServicesMissingCommand(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-bridge")
	op := operator(t, fmt.Sprintf("[packs.mailer]\nservices = [\"mail.send\"]\n[capabilities.providers.mail]\ncommand = [%q]\n", missing))
	e := open(t, skillhost.Config{PackDirs: []string{writePack(t, mailPack, "wat/capability.wasm", "m.wasm")}, NoBundled: true, Operator: op})
	if p := e.Problems(); len(p) != 1 || !strings.Contains(p[0].Error(), "no-such-bridge") {
		t.Errorf("problems %v, want the missing command", p)
	}
	res, err := e.Call(context.Background(), "send", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tr abi.ToolResult
	if json.Unmarshal(res.Output, &tr) != nil || tr.Error == nil || tr.Error.Code != abi.CodeUnavailable || !strings.Contains(tr.Error.Message, "no-such-bridge") {
		t.Errorf("send: %s, want unavailable naming the program", res.Output)
	}
	// A disabled section is neither a problem nor a provider.
	op = operator(t, fmt.Sprintf("[packs.mailer]\nservices = [\"mail.send\"]\n[capabilities.providers.mail]\ncommand = [%q]\nenabled = false\n", missing))
	e = open(t, skillhost.Config{PackDirs: []string{writePack(t, mailPack, "wat/capability.wasm", "m.wasm")}, NoBundled: true, Operator: op})
	if p := e.Problems(); len(p) != 0 {
		t.Errorf("problems %v with the section disabled", p)
	}
	if res, _ := e.Call(context.Background(), "send", nil, nil); !strings.Contains(string(res.Output), "unavailable") {
		t.Errorf("send with the provider disabled: %s", res.Output)
	}
}

func TestServicesBadConfig(t *testing.T) {
	ok := skillhost.ServiceProviderFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	for name, c := range map[string]struct {
		toml     string
		services map[string]skillhost.ServiceProvider
	}{
		"both in Go and in the file": {"[capabilities.providers.mail]\ncommand = [\"mail-bridge\"]\n", map[string]skillhost.ServiceProvider{"mail": ok}},
		"a dotted namespace in Go":   {"", map[string]skillhost.ServiceProvider{"mail.send": ok}},
	} {
		_, err := skillhost.Open(context.Background(), skillhost.Config{NoBundled: true, NoIndex: true, NoCache: true,
			Operator: operator(t, c.toml), Services: c.services})
		if err == nil || !strings.Contains(err.Error(), `"mail`) {
			t.Errorf("%s: %v, want an error naming the namespace", name, err)
		}
	}
}

// events keeps the names and fields of the events it is given.
type providerEvents struct {
	mu  sync.Mutex
	all []registry.Event
}

func (p *providerEvents) Event(_ context.Context, ev registry.Event) {
	p.mu.Lock()
	p.all = append(p.all, ev)
	p.mu.Unlock()
}

func (p *providerEvents) has(name, field, value string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ev := range p.all {
		if ev.Name == name && fmt.Sprint(ev.Fields[field]) == value {
			return true
		}
	}
	return false
}

func TestServicesFromProviderCommand(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	op := operator(t, tenantsTOML+fmt.Sprintf(`
[capabilities.providers.mail]
command = [%q, "-test.run=^$"]
timeout = "10s"
env = { %s = "1", GORACE = "atexit_sleep_ms=0", MAIL_TOKEN = "from-the-config" }
`, exe, mailProviderEnv))
	ev := &providerEvents{}
	e, err := skillhost.Open(context.Background(), skillhost.Config{PackDirs: []string{writePack(t, mailPack, "wat/capability.wasm", "m.wasm")},
		NoBundled: true, NoUserSources: true, StateDir: stateDir, IndexPath: t.TempDir() + "/index.db", Operator: op, Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	closeEngine := sync.OnceFunc(func() { e.Close(context.Background()) })
	defer closeEngine()

	tr := sendResult(t, tenantRun(t, e, op, "acme"), `{"to":"ops@example.com"}`)
	var got struct {
		Capability, Tenant, Token string
		Args                      json.RawMessage
		PID                       int
	}
	if tr.IsError || json.Unmarshal(tr.Output, &got) != nil {
		t.Fatalf("acme: %+v", tr)
	}
	if got.Capability != "mail.send" || got.Tenant != "acme" || string(got.Args) != `{"to":"ops@example.com"}` || got.Token != "from-the-config" {
		t.Errorf("the command saw %+v", got)
	}
	if tr := sendResult(t, tenantRun(t, e, op, "narrow"), `{}`); !tr.IsError || tr.Error.Code != abi.CodePermissionDenied {
		t.Errorf("narrow: %+v, want permission_denied", tr)
	}
	if tr := sendResult(t, tenantRun(t, e, op, "blocked"), `{}`); !tr.IsError || tr.Error.Code != abi.CodePermissionDenied || tr.Error.Message != "no mail for this tenant" {
		t.Errorf("blocked: %+v, want the command's refusal", tr)
	}
	// The commands outlive a reload.
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	var again struct{ PID int }
	if tr := sendResult(t, tenantRun(t, e, op, "acme"), `{}`); tr.IsError || json.Unmarshal(tr.Output, &again) != nil || again.PID != got.PID {
		t.Errorf("after a reload: %+v (pid %d, was %d)", tr, again.PID, got.PID)
	}
	for end := time.Now().Add(5 * time.Second); !ev.has(skillhost.EventProviderStderr, "line", "mail bridge ready"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the command's stderr did not reach the events")
		}
	}
	if !ev.has(skillhost.EventProviderStarted, "pid", strconv.Itoa(got.PID)) {
		t.Error("no started event")
	}

	// Close stops the command.
	closeEngine()
	for end := time.Now().Add(5 * time.Second); syscall.Kill(got.PID, 0) == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("provider %d still runs after Engine.Close", got.PID)
		}
	}
}

// A command that never answers cannot hold a call past the tool's own
// deadline, however long the provider's timeout. (The deadline, 2s, also
// covers the first call, which starts the command.)
func TestServicesCommandHeldToTheCallDeadline(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	op := operator(t, fmt.Sprintf(`
[limits]
timeout = "2s"

[packs.mailer]
services = ["mail.send"]

[capabilities.providers.mail]
command = [%q, "-test.run=^$"]
timeout = "10m"
env = { %s = "1", GORACE = "atexit_sleep_ms=0" }
`, exe, mailProviderEnv))
	e := open(t, skillhost.Config{PackDirs: []string{writePack(t, mailPack, "wat/capability.wasm", "m.wasm")}, NoBundled: true, Operator: op})
	if res, err := e.Call(context.Background(), "send", json.RawMessage(`{}`), nil); err != nil || res.IsError {
		t.Fatalf("a first call that is answered: %+v, %v", res, err)
	}
	begin := time.Now()
	res, err := e.Call(context.Background(), "send", json.RawMessage(`{"hang":true}`), nil)
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("the call took %v with a 2s deadline", d)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Output), `"timeout"`) && (res.Error == nil || res.Error.Code != abi.CodeTimeout) {
		t.Errorf("result %+v (output %s), want a timeout", res.Error, res.Output)
	}
}

// Under process isolation the guest runs in a worker process; its
// capability_call comes back to the engine's provider, with the run.
func TestServicesUnderProcessIsolation(t *testing.T) {
	mail := skillhost.ServiceProviderFunc(func(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
		run := skillhost.RunFrom(ctx)
		if run == nil {
			return nil, &abi.Error{Code: abi.CodeInternal, Message: "no run in the provider's context"}
		}
		return json.Marshal(map[string]string{"tenant": run.Context().Tenant, "id": id, "args": string(args)})
	})
	op := operator(t, tenantsTOML+"[sandbox]\nisolation = \"process\"\n")
	e := open(t, skillhost.Config{PackDirs: []string{writePack(t, mailPack, "wat/capability.wasm", "m.wasm")}, NoBundled: true,
		Operator: op, Services: map[string]skillhost.ServiceProvider{"mail": mail}})
	if tool, err := e.Tool("send"); err != nil || tool.Isolation != host.IsolationProcess {
		t.Fatalf("send: %v, isolation %v", err, tool)
	}
	tr := sendResult(t, tenantRun(t, e, op, "acme"), `{"to":"ops@example.com"}`)
	if tr.IsError || string(tr.Output) != `{"args":"{\"to\":\"ops@example.com\"}","id":"mail.send","tenant":"acme"}` {
		t.Errorf("acme: %+v (%s)", tr, tr.Output)
	}
	if tr := sendResult(t, tenantRun(t, e, op, "narrow"), `{}`); !tr.IsError || tr.Error.Code != abi.CodePermissionDenied {
		t.Errorf("narrow: %+v, want permission_denied", tr)
	}
}
