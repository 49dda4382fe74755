package sandboxfs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// TestGuest runs a Go program compiled for wasip1 under wazero with a
// read-only mount at /ro and a read-write mount at /rw, and checks what each
// of its probes (testdata/guest/main.go) got, end to end through wazero's
// WASI implementation.
func TestGuest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasip1 program; skipped with -short")
	}
	wasm := buildGuest(t)

	roFx, rwFx := newFixture(t), newFixture(t)
	roBefore, roOutside, rwOutside := snapshot(t, roFx.mount), snapshot(t, roFx.outside), snapshot(t, rwFx.outside)
	ro, rw := roFx.open(t, true), rwFx.open(t, false)

	ctx := context.Background()
	// The interpreter: compiling a 3 MB Go module takes half a minute under
	// -race, interpreting this program a second.
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	fsConfig := wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(ro, "/ro").(sysfs.FSConfig).WithSysFSMount(rw, "/rw")
	var stdout, stderr bytes.Buffer
	config := wazero.NewModuleConfig().WithName("guest").WithArgs("guest").
		WithFSConfig(fsConfig).WithStdout(&stdout).WithStderr(&stderr)
	_, err := r.InstantiateWithConfig(ctx, wasm, config)
	if exitErr := (*sys.ExitError)(nil); errors.As(err, &exitErr) && exitErr.ExitCode() == 0 {
		err = nil // main returned
	}
	if err != nil {
		t.Fatalf("guest failed: %v\nstderr:\n%s", err, stderr.String())
	}

	want := []string{
		"ro read: ok hello",
		"ro read through link inside: ok hello",
		// Go's wasip1 runtime cleans paths and finds no preopen for these,
		// so they never reach the FS; TestContainment covers them there.
		"ro read dotdot: EBADF",
		"ro read absolute: EBADF",
		"ro read through absolute link: EPERM",
		"ro read through relative link: EPERM",
		"ro read through file link: EPERM",
		"ro lstat escaping link: ok L---------",
		"ro stat escaping link: EPERM",
		"ro list: ok abs dangling dir empty hello.txt inside up",
		"ro list through escaping link: EPERM",
		"ro write: EROFS",
		"ro overwrite: EROFS",
		"ro open read-only truncating: EROFS",
		"ro open read-only creating: EROFS",
		"ro mkdir: EROFS",
		"ro remove: EROFS",
		"ro rename: EROFS",
		"rw write: ok",
		"rw read back: ok written",
		"rw write through escaping link: EPERM",
		"rw write through dangling link: EPERM",
		"rw mkdir: ok",
		"rw rename: ok",
		"rw remove: ok",
		"rw symlink absolute: EPERM",
		"rw symlink relative: EPERM",
		"rw hard link: EPERM",
		"rw readlink inside: ok hello.txt",
		"rw readlink escaping: EPERM",
	}
	got := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("guest output (-want +got):\n%s\nstderr:\n%s", diff, stderr.String())
	}

	for _, c := range []struct {
		name string
		dir  string
		want map[string]string
	}{
		{"read-only mount", roFx.mount, roBefore},
		{"outside of the read-only mount", roFx.outside, roOutside},
		{"outside of the read-write mount", rwFx.outside, rwOutside},
	} {
		if diff := cmp.Diff(c.want, snapshot(t, c.dir)); diff != "" {
			t.Errorf("%s changed (-want +got):\n%s", c.name, diff)
		}
	}
	if b, err := os.ReadFile(filepath.Join(rwFx.mount, "d", "moved.txt")); err != nil || string(b) != "written" {
		t.Errorf("read-write mount: d/moved.txt holds %q, %v; want %q", b, err, "written")
	}
}

// buildGuest compiles testdata/guest for wasip1, or skips the test when that
// is not possible here.
func buildGuest(t *testing.T) []byte {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build the wasip1 guest: %v", err)
	}
	out := filepath.Join(t.TempDir(), "guest.wasm")
	cmd := exec.Command(goBin, "build", "-o", out, "./testdata/guest")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot build the wasip1 guest with %s: %v\n%s", goBin, err, output)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}
