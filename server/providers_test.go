package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/server"
	"github.com/skillhost/skillhost/server/serveconf"
)

// capsPack is capcall.wat's three exports, each asking one service.
const capsPack = `name: capspack
version: 1.0.0
modules:
  - name: m
    path: m.wasm
    request:
      services: [test.echo, test.fail, other.echo]
    tools:
      - {name: cap_send, export: send, description: Ask test.echo.}
      - {name: cap_fail, export: fail, description: Ask test.fail.}
      - {name: cap_other, export: other, description: Ask other.echo.}
`

// providerScript answers test.fail with an error and anything else with
// the tenant it was asked for; it writes its process id to the file
// named by its argument.
const providerScript = `echo $$ > "$1"
echo "provider up" >&2
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  tenant=$(printf '%s' "$line" | sed -n 's/.*"tenant":"\([^"]*\)".*/\1/p')
  case "$line" in
    *'"capability":"test.fail"'*) printf '{"id":%s,"error":{"code":"permission_denied","message":"refused by the provider"}}\n' "$id" ;;
    *) printf '{"id":%s,"result":{"served_by":"command","tenant":"%s"}}\n' "$id" "$tenant" ;;
  esac
done
`

// newCapsServer serves capsPack, whose grant allows test.echo and
// test.fail (and other.echo when other is set), with the engine's
// providers: the [capabilities.providers] commands of toml and inGo
// (Config.Services). Closing the engine stops the commands.
func newCapsServer(t *testing.T, toml string, inGo map[string]skillhost.ServiceProvider, other bool) (*skillhost.Engine, *mcp.ClientSession, string) {
	t.Helper()
	granted := []string{"test.echo", "test.fail"}
	if other {
		granted = append(granted, "other.echo")
	}
	e, ts := serveCaps(t, toml, inGo, granted)
	return e, opsClient(t, ts, ""), ts.URL
}

// serveCaps serves capsPack with the operator config toml (its
// providers and tenants), the providers in Go inGo and a grant of the
// services granted.
func serveCaps(t *testing.T, toml string, inGo map[string]skillhost.ServiceProvider, granted []string) (*skillhost.Engine, *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	pack := filepath.Join(dir, "packs", "capspack")
	os.MkdirAll(pack, 0o755)
	wasm, err := os.ReadFile(filepath.Join("testdata", "capcall.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pack, "m.wasm"), wasm, 0o644)
	os.WriteFile(filepath.Join(pack, "pack.yaml"), []byte(capsPack), 0o644)
	cfg, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	hub := server.NewEventHub(nil)
	e, err := skillhost.Open(context.Background(), skillhost.Config{
		StateDir: testenv.StateDir(), IndexPath: filepath.Join(dir, "index.db"), NoBundled: true, NoUserSources: true,
		PackDirs: []string{filepath.Join(dir, "packs")}, Events: hub, Operator: cfg, Services: inGo,
		Grants: map[string]skillhost.Grant{"capspack": {Capabilities: granted}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	srv, err := server.New(e, &server.Options{Config: serveconf.Of(cfg), Events: hub, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return e, (&opsFixture{srv: srv}).serve(t)
}

// capResult is what a capcall tool outputs: the service's answer as the
// host gave it to the guest.
type capResult struct {
	Output  json.RawMessage `json:"output"`
	IsError bool            `json:"is_error"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func callCap(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) capResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res := opsCall(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s failed: %+v", tool, res.Content[0])
	}
	var r capResult
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &r); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return r
}

func TestProviderInGo(t *testing.T) {
	var calls atomic.Int64
	echo := skillhost.ServiceProviderFunc(func(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
		calls.Add(1)
		return json.Marshal(map[string]any{"id": id, "tenant": skillhost.RunFrom(ctx).Context().Tenant, "args": args})
	})
	_, cs, url := newCapsServer(t, "", map[string]skillhost.ServiceProvider{"test": echo}, true)

	r := callCap(t, cs, "cap_send", map[string]any{"to": "ops@example.com"})
	want := `{"args":{"to":"ops@example.com"},"id":"test.echo","tenant":"local"}`
	if r.IsError || string(r.Output) != want {
		t.Errorf("cap_send: %+v, want output %s", r, want)
	}
	// A namespace nobody serves, though granted: not found.
	if r := callCap(t, cs, "cap_other", nil); !r.IsError || r.Error.Code != "not_found" {
		t.Errorf("cap_other: %+v, want not_found", r)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the provider was asked %d times, want once", n)
	}
	_, body := get(t, url+server.MetricsPath, "")
	for _, want := range []string{
		`skillhost_capability_calls_total{namespace="test",outcome="ok",tenant="local"} 1`,
		`skillhost_capability_call_duration_seconds_count{namespace="test",tenant="local"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, `namespace="other"`) {
		t.Error("a namespace no provider serves became a label")
	}
}

// TestProviderNotGranted: a service the tool's grant does not allow never
// reaches its provider.
func TestProviderNotGranted(t *testing.T) {
	var calls atomic.Int64
	count := skillhost.ServiceProviderFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		calls.Add(1)
		return json.RawMessage(`true`), nil
	})
	_, cs, _ := newCapsServer(t, "", map[string]skillhost.ServiceProvider{"other": count}, false)
	if r := callCap(t, cs, "cap_other", nil); !r.IsError || r.Error.Code != "permission_denied" || calls.Load() != 0 {
		t.Errorf("cap_other without the grant: %+v after %d provider calls, want permission_denied and none", r, calls.Load())
	}
}

func TestProviderCommand(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "provider.sh")
	pidFile := filepath.Join(dir, "pid")
	os.WriteFile(script, []byte(providerScript), 0o644)
	toml := "[capabilities.providers.test]\ncommand = [\"sh\", \"" + script + "\", \"" + pidFile + "\"]\ntimeout = \"10s\"\n"
	e, cs, _ := newCapsServer(t, toml, nil, false)

	r := callCap(t, cs, "cap_send", map[string]any{"text": "hi"})
	if r.IsError || string(r.Output) != `{"served_by":"command","tenant":"local"}` {
		t.Fatalf("cap_send through the command: %+v", r)
	}
	if r := callCap(t, cs, "cap_fail", nil); !r.IsError || r.Error.Code != "permission_denied" || r.Error.Message != "refused by the provider" {
		t.Errorf("cap_fail: %+v, want the provider's error", r)
	}
	pid := readPid(t, pidFile)

	// Killed, the command is started again by a later call.
	syscall.Kill(pid, syscall.SIGKILL)
	var again capResult
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if again = callCap(t, cs, "cap_send", nil); !again.IsError {
			break
		}
		if again.Error.Code != "unavailable" {
			t.Fatalf("while the provider is down: %+v, want unavailable", again)
		}
	}
	if again.IsError {
		t.Fatalf("the provider was not started again: %+v", again)
	}
	newPid := readPid(t, pidFile)
	if newPid == pid {
		t.Errorf("the provider answers with the process that was killed (%d)", pid)
	}

	// Closing the engine stops it.
	e.Close(context.Background())
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(newPid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("provider %d still runs after the engine closed", newPid)
		}
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestProviderCommandBroken: a command that cannot start, or answers
// nonsense, fails the call with unavailable, not the server.
func TestProviderCommandBroken(t *testing.T) {
	dir := t.TempDir()
	liar := filepath.Join(dir, "liar.sh")
	os.WriteFile(liar, []byte("read -r line; echo 'not json'; sleep 5\n"), 0o644)
	for name, command := range map[string]string{
		"missing":  `["` + filepath.Join(dir, "no-such-program") + `"]`,
		"nonsense": `["sh", "` + liar + `"]`,
	} {
		t.Run(name, func(t *testing.T) {
			_, cs, _ := newCapsServer(t, "[capabilities.providers.test]\ncommand = "+command+"\n", nil, false)
			// Twice: the second call comes while the provider waits to be
			// started again.
			for range 2 {
				if r := callCap(t, cs, "cap_send", nil); !r.IsError || r.Error.Code != "unavailable" {
					t.Errorf("cap_send: %+v, want unavailable", r)
				}
			}
		})
	}
}

// A namespace served both in Go and by a command is refused when the
// engine opens.
func TestProviderConfigConflict(t *testing.T) {
	cfg := mustParse(t, "[capabilities.providers.test]\ncommand = [\"true\"]\n")
	_, err := skillhost.Open(context.Background(), skillhost.Config{
		StateDir: testenv.StateDir(), IndexPath: filepath.Join(t.TempDir(), "index.db"), NoBundled: true, NoUserSources: true,
		Operator: cfg, Services: map[string]skillhost.ServiceProvider{
			"test": skillhost.ServiceProviderFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return nil, nil }),
		}})
	if err == nil {
		t.Error("a namespace served both in Go and by a command was accepted")
	}
}

// TestProviderCommandMisbehaves: a command that never answers, one that
// stops reading its input, and one that answers twice cost the calls
// their timeout at most, and never the calls after them.
func TestProviderCommandMisbehaves(t *testing.T) {
	dir := t.TempDir()
	scripts := map[string]string{
		"silent": "while IFS= read -r line; do :; done\n",
		"deaf":   "exec sleep 30\n",
		"twice": `while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  printf '{"id":%s,"result":1}\n{"id":%s,"result":2}\n' "$id" "$id"
done
`,
	}
	big := map[string]any{"text": strings.Repeat("x", 256<<10)} // more than a pipe holds
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".sh")
			os.WriteFile(path, []byte(script), 0o644)
			// A short timeout where the call is to time out; where it is
			// to be answered, one that covers starting sh and a sed per
			// call on a loaded machine.
			timeout := "10s"
			if name == "silent" || name == "deaf" {
				timeout = "300ms"
			}
			_, cs, _ := newCapsServer(t, "[capabilities.providers.test]\ncommand = [\"sh\", \""+path+"\"]\ntimeout = \""+timeout+"\"\n", nil, false)
			switch name {
			case "silent", "deaf":
				if r := callCap(t, cs, "cap_send", big); !r.IsError || r.Error.Code != "timeout" {
					t.Errorf("cap_send: %+v, want timeout", r)
				}
			case "twice":
				for i := range 3 {
					if r := callCap(t, cs, "cap_send", nil); r.IsError || string(r.Output) != "1" {
						t.Errorf("call %d: %+v, want the first answer, 1", i, r)
					}
				}
			}
		})
	}
}
