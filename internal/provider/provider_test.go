package provider_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/internal/provider"
)

// providerEnv makes the test binary act as a provider (fakeProvider).
const providerEnv = "SKILLHOST_TEST_FAKE_PROVIDER"

func TestMain(m *testing.M) {
	if os.Getenv(providerEnv) == "1" {
		fakeProvider()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeProvider serves the protocol on standard input and output, each
// request in its own goroutine; the method after "t." picks what it does.
func fakeProvider() {
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	send := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		out.WriteString(s + "\n")
		out.Flush()
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	var wg sync.WaitGroup
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
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch req.Capability {
			case "t.echo":
				res, _ := json.Marshal(map[string]any{"capability": req.Capability, "args": req.Args, "tenant": req.Tenant, "pid": os.Getpid()})
				send(fmt.Sprintf(`{"id":%d,"result":%s}`, req.ID, res))
			case "t.env":
				res, _ := json.Marshal(os.Getenv("PROVIDER_TEST_VAR"))
				send(fmt.Sprintf(`{"id":%d,"result":%s}`, req.ID, res))
			case "t.slow":
				time.Sleep(300 * time.Millisecond)
				send(fmt.Sprintf(`{"id":%d,"result":"slow"}`, req.ID))
			case "t.denied":
				send(fmt.Sprintf(`{"id":%d,"error":{"code":"permission_denied","message":"not for this tenant"}}`, req.ID))
			case "t.oddcode":
				send(fmt.Sprintf(`{"id":%d,"error":{"code":"quota","message":"over the mail quota"}}`, req.ID))
			case "t.noresult":
				send(fmt.Sprintf(`{"id":%d}`, req.ID))
			case "t.garbage":
				send("this is not JSON")
				send(`{"result":"no id"}`)
				send(`{"id":987654321,"result":"nobody asked"}`)
				send(fmt.Sprintf(`{"id":%d,"result":"after garbage"}`, req.ID))
			case "t.huge":
				send(fmt.Sprintf(`{"id":%d,"result":"%s"}`, req.ID, strings.Repeat("x", 8000)))
			case "t.stderr":
				fmt.Fprintln(os.Stderr, "provider says hello on stderr")
				send(fmt.Sprintf(`{"id":%d,"result":true}`, req.ID))
			case "t.crash":
				time.Sleep(50 * time.Millisecond) // let other requests arrive
				os.Exit(3)
			case "t.hang":
			}
		}()
	}
	// t.hang requests are never answered. A provider that ignores the end
	// of its input is killed by Close after the stop grace.
	if os.Getenv("FAKE_IGNORE_EOF") == "1" {
		time.Sleep(time.Hour)
	}
}

// recorder keeps the events of a process.
type recorder struct {
	mu  sync.Mutex
	evs []string
}

func (r *recorder) on(name string, fields map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if fields["namespace"] != "t" {
		panic(fmt.Sprintf("event %s without the namespace: %v", name, fields))
	}
	s := name
	for _, k := range []string{"line", "problem", "error"} {
		if v, ok := fields[k]; ok {
			s += " " + fmt.Sprint(v)
		}
	}
	r.evs = append(r.evs, s)
}

func (r *recorder) has(prefix string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.evs {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// eventually waits up to 5 s for the recorder to have an event.
func (r *recorder) eventually(t *testing.T, prefix string) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if r.has(prefix) {
			return
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Errorf("no event %q among %q", prefix, r.evs)
}

func start(t *testing.T, adjust func(*provider.Options)) (*provider.Process, *recorder) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	opts := provider.Options{Namespace: "t", Command: []string{exe, "-test.run=^$"},
		Env: map[string]string{providerEnv: "1", "GORACE": "atexit_sleep_ms=0"}, Timeout: 5 * time.Second,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, StopGrace: time.Second, OnEvent: rec.on}
	if adjust != nil {
		adjust(&opts)
	}
	p, err := provider.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, rec
}

// abiErr returns err's *abi.Error, failing the test when it has none.
func abiErr(t *testing.T, err error, want abi.Code) *abi.Error {
	t.Helper()
	var ae *abi.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T), want an *abi.Error with code %s", err, err, want)
	}
	if ae.Code != want {
		t.Fatalf("code %s (%s), want %s", ae.Code, ae.Message, want)
	}
	return ae
}

func TestCallAnswersWithTenantAndArgs(t *testing.T) {
	p, rec := start(t, func(o *provider.Options) { o.Env["PROVIDER_TEST_VAR"] = "from the config" })
	ctx := context.Background()
	out, err := p.Call(ctx, "t.echo", json.RawMessage(`{"to":"a@example.com"}`), "acme")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Capability string          `json:"capability"`
		Args       json.RawMessage `json:"args"`
		Tenant     string          `json:"tenant"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Capability != "t.echo" || string(got.Args) != `{"to":"a@example.com"}` || got.Tenant != "acme" {
		t.Errorf("provider saw %+v", got)
	}
	if out, err := p.Call(ctx, "t.echo", nil, ""); err != nil || !strings.Contains(string(out), `"args":{}`) {
		t.Errorf("no args: %s, %v; want {} sent", out, err)
	}
	if out, err := p.Call(ctx, "t.env", nil, ""); err != nil || string(out) != `"from the config"` {
		t.Errorf("env: %s, %v", out, err)
	}
	if _, err := p.Call(ctx, "t.echo", json.RawMessage(`{"broken"`), ""); err == nil {
		t.Error("arguments that are not JSON were sent")
	} else {
		abiErr(t, err, abi.CodeInvalidInput)
	}
	rec.eventually(t, provider.EventStarted)
}

func TestCallsAreMultiplexed(t *testing.T) {
	p, _ := start(t, nil)
	ctx := context.Background()
	if _, err := p.Call(ctx, "t.echo", nil, ""); err != nil { // started
		t.Fatal(err)
	}
	slow := make(chan error, 1)
	go func() {
		out, err := p.Call(ctx, "t.slow", nil, "")
		if err == nil && string(out) != `"slow"` {
			err = fmt.Errorf("slow answered %s", out)
		}
		slow <- err
	}()
	time.Sleep(20 * time.Millisecond)
	begin := time.Now()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := p.Call(ctx, "t.echo", json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), "")
			if err != nil || !strings.Contains(string(out), fmt.Sprintf(`"args":{"n":%d}`, i)) {
				t.Errorf("call %d: %s, %v", i, out, err)
			}
		}()
	}
	wg.Wait()
	if d := time.Since(begin); d > 250*time.Millisecond {
		t.Errorf("quick calls took %v behind a slow one: not multiplexed", d)
	}
	select {
	case err := <-slow:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the slow call never finished")
	}
}

func TestProviderErrors(t *testing.T) {
	p, _ := start(t, nil)
	ctx := context.Background()
	_, err := p.Call(ctx, "t.denied", nil, "acme")
	if ae := abiErr(t, err, abi.CodePermissionDenied); ae.Message != "not for this tenant" {
		t.Errorf("message %q", ae.Message)
	}
	_, err = p.Call(ctx, "t.oddcode", nil, "")
	if ae := abiErr(t, err, abi.CodeUnavailable); !strings.Contains(ae.Message, "quota: over the mail quota") {
		t.Errorf("an unknown code is not kept in the message: %q", ae.Message)
	}
	_, err = p.Call(ctx, "t.noresult", nil, "")
	if ae := abiErr(t, err, abi.CodeUnavailable); !strings.Contains(ae.Message, "neither result nor error") {
		t.Errorf("message %q", ae.Message)
	}
}

func TestBadOutputIsReportedAndSkipped(t *testing.T) {
	p, rec := start(t, func(o *provider.Options) { o.MaxLineBytes = 1024 })
	ctx := context.Background()
	out, err := p.Call(ctx, "t.garbage", nil, "")
	if err != nil || string(out) != `"after garbage"` {
		t.Fatalf("after garbage: %s, %v", out, err)
	}
	rec.eventually(t, provider.EventBadOutput+" a line that is not a JSON answer")
	rec.eventually(t, provider.EventBadOutput+" an answer without an id")
	rec.eventually(t, provider.EventBadOutput+" an answer to request 987654321")

	_, err = p.Call(ctx, "t.huge", nil, "")
	if ae := abiErr(t, err, abi.CodeLimitExceeded); !strings.Contains(ae.Message, "more than 1024 bytes") {
		t.Errorf("message %q", ae.Message)
	}
	rec.eventually(t, provider.EventBadOutput+" an output line longer than 1024 bytes")
	// The stream goes on after the refused line.
	if _, err := p.Call(ctx, "t.echo", nil, ""); err != nil {
		t.Errorf("after a huge line: %v", err)
	}
}

func TestStderrIsReported(t *testing.T) {
	p, rec := start(t, nil)
	if _, err := p.Call(context.Background(), "t.stderr", nil, ""); err != nil {
		t.Fatal(err)
	}
	rec.eventually(t, provider.EventStderr+" provider says hello on stderr")
}

func TestTimeouts(t *testing.T) {
	p, _ := start(t, func(o *provider.Options) { o.Timeout = 200 * time.Millisecond })
	begin := time.Now()
	_, err := p.Call(context.Background(), "t.hang", nil, "")
	if ae := abiErr(t, err, abi.CodeTimeout); !strings.Contains(ae.Message, "within 200ms") {
		t.Errorf("message %q", ae.Message)
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("the request timeout took %v", d)
	}

	// A call's deadline shorter than the request timeout wins.
	q, _ := start(t, func(o *provider.Options) { o.Timeout = time.Minute })
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	begin = time.Now()
	_, err = q.Call(ctx, "t.hang", nil, "")
	if ae := abiErr(t, err, abi.CodeTimeout); !strings.Contains(ae.Message, "deadline") {
		t.Errorf("message %q", ae.Message)
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("a provider that never answers held the call %v past its deadline", d)
	}
}

func TestCrashFailsCallsInFlightAndRestarts(t *testing.T) {
	p, rec := start(t, nil)
	ctx := context.Background()
	first, err := p.Call(ctx, "t.echo", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	hung := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, "t.hang", nil, "")
		hung <- err
	}()
	time.Sleep(20 * time.Millisecond)
	_, err = p.Call(ctx, "t.crash", nil, "")
	if ae := abiErr(t, err, abi.CodeUnavailable); !strings.Contains(ae.Message, "exit status 3") {
		t.Errorf("message %q", ae.Message)
	}
	select {
	case err := <-hung:
		abiErr(t, err, abi.CodeUnavailable)
	case <-time.After(5 * time.Second):
		t.Fatal("a call in flight when the provider died did not fail")
	}
	rec.eventually(t, provider.EventExited+" exit status 3")
	second, err := p.Call(ctx, "t.echo", nil, "")
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	pid := func(b []byte) int {
		var v struct{ PID int }
		json.Unmarshal(b, &v)
		return v.PID
	}
	if pid(first) == 0 || pid(first) == pid(second) {
		t.Errorf("pids %d then %d: not a new process", pid(first), pid(second))
	}
}

func TestMissingCommand(t *testing.T) {
	p, rec := start(t, func(o *provider.Options) { o.Command = []string{"/nonexistent/skillhost-provider"} })
	begin := time.Now()
	_, err := p.Call(context.Background(), "t.echo", nil, "")
	if ae := abiErr(t, err, abi.CodeUnavailable); !strings.Contains(ae.Message, "cannot be started") ||
		!strings.Contains(ae.Message, "/nonexistent/skillhost-provider") {
		t.Errorf("message %q", ae.Message)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("a command that cannot start held the call %v", d)
	}
	rec.eventually(t, provider.EventStartFailed)
	if _, err := provider.New(provider.Options{Namespace: "t"}); err == nil {
		t.Error("New accepted a provider without a command")
	}
}

func TestCloseStopsTheCommand(t *testing.T) {
	p, rec := start(t, nil)
	ctx := context.Background()
	if _, err := p.Call(ctx, "t.echo", nil, ""); err != nil {
		t.Fatal(err)
	}
	hung := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, "t.hang", nil, "")
		hung <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-hung:
		if ae := abiErr(t, err, abi.CodeUnavailable); !strings.Contains(ae.Message, "stopped") {
			t.Errorf("message %q", ae.Message)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close left a call in flight waiting")
	}
	if !rec.has(provider.EventExited) {
		t.Error("Close returned before the command exited")
	}
	if _, err := p.Call(ctx, "t.echo", nil, ""); err == nil {
		t.Error("a call after Close was served")
	}
}

func TestCloseKillsACommandThatDoesNotExit(t *testing.T) {
	p, rec := start(t, func(o *provider.Options) {
		o.Env["FAKE_IGNORE_EOF"] = "1"
		o.StopGrace = 100 * time.Millisecond
	})
	if _, err := p.Call(context.Background(), "t.echo", nil, ""); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	p.Close()
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("Close took %v with a 100ms stop grace", d)
	}
	if !rec.has(provider.EventExited + " signal: killed") {
		t.Errorf("events %q: want the command killed", rec.evs)
	}
}

// Calls from many goroutines while the command keeps crashing: each ends,
// with an answer or unavailable, and none waits past its timeout.
func TestHammerWithCrashes(t *testing.T) {
	p, _ := start(t, func(o *provider.Options) { o.Timeout = 5 * time.Second; o.MaxBackoff = 10 * time.Millisecond })
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	served, failed := 0, 0
	stop := make(chan struct{})
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				out, err := p.Call(ctx, "t.echo", json.RawMessage(fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)), "")
				mu.Lock()
				if err == nil {
					served++
					if !strings.Contains(string(out), fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)) {
						t.Errorf("call %d/%d got another call's answer: %s", g, i, out)
					}
				} else {
					failed++
					var ae *abi.Error
					if !errors.As(err, &ae) || ae.Code != abi.CodeUnavailable {
						t.Errorf("call %d/%d: %v, want an answer or unavailable", g, i, err)
					}
				}
				mu.Unlock()
			}
		}()
	}
	for range 3 {
		time.Sleep(30 * time.Millisecond)
		p.Call(ctx, "t.crash", nil, "")
	}
	time.Sleep(30 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d calls served, %d failed with the crashes", served, failed)
	if served == 0 {
		t.Errorf("no call served (%d failed)", failed)
	}
	if _, err := p.Call(ctx, "t.echo", nil, ""); err != nil {
		t.Errorf("after the crashes: %v", err)
	}
}
