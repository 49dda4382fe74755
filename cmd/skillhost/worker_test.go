package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host"
)

// workerMarkEnv names a file that a worker process started from this test
// binary creates, so that a test can tell a call ran in one.
const workerMarkEnv = "SKILLHOST_TEST_WORKER_MARK"

// TestMain lets the test binary serve as the worker process of the calls
// that run under process isolation, as the skillhost binary does.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("SKILLHOST_WORKER"); ok {
		if mark := os.Getenv(workerMarkEnv); mark != "" {
			os.WriteFile(mark, nil, 0o644)
		}
	}
	host.ServeWorkerIfChild()
	os.Exit(m.Run())
}

const echoPack = `name: echo
version: 1.0.0
modules:
  - name: m
    path: m.wasm
    tools:
      - name: echo
        description: Echo the arguments.
`

// With [sandbox] isolation = "process" a tool's call runs in a worker
// process started from the program's own executable, and answers as it
// would in-process.
func TestCallToolInWorkerProcess(t *testing.T) {
	dir := t.TempDir()
	pack := filepath.Join(dir, "echo")
	if err := os.MkdirAll(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(fixture("wat/echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "skillhost.toml")
	for name, data := range map[string][]byte{
		filepath.Join(pack, "m.wasm"):    wasm,
		filepath.Join(pack, "pack.yaml"): []byte(echoPack),
		cfg:                              []byte("[sources]\nbundled = false\nuser = \"\"\nworkspace = \"\"\n\n[sandbox]\nisolation = \"process\"\n"),
	} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mark := filepath.Join(dir, "worker-ran")
	t.Setenv(workerMarkEnv, mark)
	// call has a --config flag of its own (K=V): the file is named by the
	// environment.
	t.Setenv("SKILLHOST_CONFIG", cfg)
	r := cli(t, "", "--pack", pack, "call", "echo", `{"text":"through a worker"}`)
	if r.code != 0 || !strings.Contains(r.stdout, "through a worker") {
		t.Fatalf("call in a worker process: %+v", r)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("no worker process served the call: %v", err)
	}
	if r := cli(t, "", "--pack", pack, "show", "echo"); !strings.Contains(r.stdout, "isolation: process") {
		t.Errorf("show does not report the process isolation:\n%s", r.stdout)
	}
}
