package skillhost_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
)

// An installed pack whose module is invalid — code that writes global 0
// while the module defines no globals, which once refilled the metering
// budget and ran forever — is refused when its tool is first called, with
// a tool error naming the pack and module; the engine keeps serving the
// rest.
func TestInvalidModuleInAPackIsRefused(t *testing.T) {
	// (func (export "run") (result i32) loop i64.const 2^62 global.set 0 br 0 end i32.const 0)
	body := []byte{0x00, 0x03, 0x40, 0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xc0, 0x00, 0x24, 0x00, 0x0c, 0x00, 0x0b, 0x41, 0x00, 0x0b}
	wasm := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 5, 1, 0x60, 0, 1, 0x7f,
		3, 2, 1, 0,
		7, 7, 1, 3, 'r', 'u', 'n', 0, 0,
		10, byte(len(body) + 2), 1, byte(len(body))}
	wasm = append(wasm, body...)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spin.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := "name: spin\nmodules:\n  - name: spin\n    path: spin.wasm\n    tools:\n      - {name: run, description: Runs.}\n"
	if err := os.WriteFile(filepath.Join(dir, "pack.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	e := open(t, skillhost.Config{PackDirs: []string{dir}, Grants: map[string]skillhost.Grant{"spin": {Limits: skillhost.Limits{Timeout: time.Second}}}})
	start := time.Now()
	res, err := e.Call(context.Background(), "run", nil, nil)
	if err != nil || !res.IsError || res.Error.Code != abi.CodeUnavailable ||
		!strings.Contains(res.Error.Message, host.ErrInvalidModule.Error()) || !strings.Contains(res.Error.Message, "pack spin module spin") {
		t.Fatalf("calling the invalid module's tool: %+v, %v; want an unavailable tool error naming the pack, module and invalid module", res, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("refusing the module took %v", d)
	}
	res, err = e.Call(context.Background(), "slugify", json.RawMessage(`{"text":"still here"}`), nil)
	if err != nil || res.IsError {
		t.Errorf("slugify after the refusal: %+v, %v", res, err)
	}
}
