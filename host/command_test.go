package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host"
)

func TestRunCommandArgsStdinStdout(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "go/goscript/goscript.wasm")
	if !m.IsCommand() {
		t.Fatal("goscript is not a command")
	}
	res, err := m.RunCommand(context.Background(), "goscript", &host.CommandOptions{
		Args: []string{"--query", "x y", "--verbose"}, Stdin: []byte("piped in")})
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, res.Stderr)
	}
	var got struct {
		Args  []string `json:"args"`
		Stdin string   `json:"stdin"`
	}
	if err := json.Unmarshal(res.Stdout, &got); err != nil {
		t.Fatalf("stdout %q: %v", res.Stdout, err)
	}
	if strings.Join(got.Args, "|") != "--query|x y|--verbose" || got.Stdin != "piped in" || res.ExitCode != 0 {
		t.Errorf("got %+v exit %d", got, res.ExitCode)
	}
	// No stdin given reads as empty.
	res, err = m.RunCommand(context.Background(), "goscript", nil)
	if err != nil || !strings.Contains(string(res.Stdout), `"stdin":""`) {
		t.Errorf("without stdin: %s, %v", res.Stdout, err)
	}
}

func TestRunCommandExitCodes(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "go/goscript/goscript.wasm")
	for _, code := range []int32{1, 2, 42, 255} {
		res, err := m.RunCommand(context.Background(), "goscript", &host.CommandOptions{Args: []string{"--exit", itoa(code)}})
		ce := wantKind(t, err, host.ErrGuest)
		if ce.ReturnCode != code || res.ExitCode != code {
			t.Errorf("exit %d: error code %d, result %d", code, ce.ReturnCode, res.ExitCode)
		}
		if !strings.HasSuffix(string(res.Stderr), "failing with "+itoa(code)+"\n") {
			t.Errorf("exit %d: stderr %q", code, res.Stderr)
		}
	}
	res, err := m.RunCommand(context.Background(), "goscript", &host.CommandOptions{Args: []string{"--exit", "0"}})
	if err != nil || res.ExitCode != 0 {
		t.Errorf("exit 0: %v, %d", err, res.ExitCode)
	}
}

func itoa(n int32) string { b, _ := json.Marshal(n); return string(b) }

func TestRunCommandCapsAndTimeout(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "go/goscript/goscript.wasm")
	res, err := m.RunCommand(context.Background(), "goscript", &host.CommandOptions{
		Args: []string{"--flood", "100000"}, Grant: host.Grant{Limits: host.Limits{MaxOutputBytes: 1000, MaxLogBytes: 500}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stdout) != 1000 || !res.StdoutTruncated || len(res.Stderr) != 500 || !res.StderrTruncated {
		t.Errorf("stdout %d bytes (truncated %v), stderr %d (truncated %v)", len(res.Stdout), res.StdoutTruncated, len(res.Stderr), res.StderrTruncated)
	}
	start := time.Now()
	_, err = m.RunCommand(context.Background(), "goscript", &host.CommandOptions{
		Args: []string{"--spin"}, Grant: host.Grant{Limits: host.Limits{Timeout: 300 * time.Millisecond}}})
	ce := wantKind(t, err, host.ErrTimeout)
	if el := time.Since(start); el > 5*time.Second || !strings.Contains(ce.Message, "timed out") {
		t.Errorf("spin stopped after %v: %v", el, err)
	}
}

// A command sees a mount or a variable only when its grant names it.
func TestRunCommandCapabilities(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "go/goscript/goscript.wasm")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("mounted"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(g host.Grant, args ...string) (*host.CommandResult, error) {
		return m.RunCommand(context.Background(), "goscript", &host.CommandOptions{Grant: g, Args: args})
	}
	res, err := run(host.Grant{Mounts: []host.Mount{{HostPath: dir, GuestPath: "/data", ReadOnly: true}}}, "--read", "/data/f.txt")
	if err != nil || string(res.Stdout) != "mounted" {
		t.Errorf("read with the mount: %q, %v", res.Stdout, err)
	}
	res, err = run(host.Grant{}, "--read", "/data/f.txt")
	if ce := wantKind(t, err, host.ErrGuest); ce.ReturnCode != 2 || len(res.Stdout) != 0 {
		t.Errorf("read without the mount: exit %d, stdout %q", ce.ReturnCode, res.Stdout)
	}
	res, err = run(host.Grant{Env: map[string]string{"TOKEN": "s3"}}, "--env", "TOKEN")
	if err != nil || string(res.Stdout) != "s3" {
		t.Errorf("env granted: %q, %v", res.Stdout, err)
	}
	_, err = run(host.Grant{}, "--env", "TOKEN")
	if ce := wantKind(t, err, host.ErrGuest); ce.ReturnCode != 3 {
		t.Errorf("env not granted: exit %d", ce.ReturnCode)
	}
	if os.Getenv("HOME") != "" {
		if _, err := run(host.Grant{}, "--env", "HOME"); err == nil {
			t.Error("the host's HOME reached the command")
		}
	}
}

func TestRunCommandRefusesAReactor(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/echo.wasm")
	if m.IsCommand() {
		t.Fatal("echo.wasm reads as a command")
	}
	_, err := m.RunCommand(context.Background(), "echo", nil)
	if !strings.Contains(err.Error(), "not a WASI command module") {
		t.Errorf("err %v", err)
	}
	wantErr(t, err, host.ErrExportNotFound)
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("err %v does not match %v", err, target)
	}
}
