package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --max-write and --max-open-files hold a module to the write quota and
// the open-file cap; without them the defaults (64 MiB, 64 files) hold.
func TestCallModuleFilesystemLimits(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := fixture("go/gohostile/gohostile.wasm")
	mount := dir + ":/data"
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string // substring
	}{
		// 1 MiB is well inside the default quota.
		{"default write quota", []string{"--export", "write_flood", "--input", "/data/a 1048576", "--allow-path", mount}, 0, "1048576 ok", ""},
		// 4 KiB for the file, then three 64 KiB chunks fit in 256 KiB;
		// the fourth does not, and nothing of it is written.
		{"write quota", []string{"--export", "write_flood", "--input", "/data/b 1048576", "--allow-path", mount, "--max-write", "256KiB"},
			0, "196608 write /data/b: Quota exceeded", ""},
		{"default open files", []string{"--export", "open_flood", "--input", "/data/f.txt 10", "--allow-path", mount}, 0, "10 ok", ""},
		{"open files", []string{"--export", "open_flood", "--input", "/data/f.txt 10", "--allow-path", mount, "--max-open-files", "3"},
			0, "3 open /data/f.txt: Too many open files", ""},
		{"zero write quota", []string{"--export", "noop", "--max-write", "0"}, 2, "", "--max-write 0 must be a positive size such as 1MiB; to refuse every write, mount the folder read-only with :ro"},
		{"bad write size", []string{"--export", "noop", "--max-write", "lots"}, 2, "", `--max-write: size "lots" must start with a number`},
		{"negative write size", []string{"--export", "noop", "--max-write", "-1"}, 2, "", `--max-write: size "-1" must start with a number`},
		{"write size too large", []string{"--export", "noop", "--max-write", "99999999999GiB"}, 2, "", `--max-write: size "99999999999GiB" is too large`},
		{"zero open files", []string{"--export", "noop", "--max-open-files", "0"}, 2, "", "--max-open-files 0 must be a positive number of files"},
		{"negative open files", []string{"--export", "noop", "--max-open-files", "-2"}, 2, "", "--max-open-files -2 must be a positive number of files"},
		{"too many open files", []string{"--export", "noop", "--max-open-files", "2000000"}, 2, "", "--max-open-files 2000000 is above 1048576"},
		{"open files not a number", []string{"--export", "noop", "--max-open-files", "many"}, 2, "", `invalid argument "many" for "--max-open-files"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, "", append([]string{"call", "--module", m}, tt.args...)...)
			if r.code != tt.code || r.stdout != tt.stdout || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr containing %q", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

// On a pack tool the flags add to the operator's grant, as --max-memory
// does: an explicit zero is refused there too rather than ignored.
func TestCallToolFilesystemLimitFlags(t *testing.T) {
	_, flags := relaySetup(t, "")
	// call has a --config flag of its own (K=V), so the file is named by
	// the environment.
	t.Setenv("SKILLHOST_CONFIG", flags[1])
	r := cli(t, "", append(flags[2:], "call", "call_tool", "{}", "--max-open-files", "0")...)
	if r.code != 2 || !strings.Contains(r.stderr, "--max-open-files 0 must be a positive number of files") {
		t.Errorf("exit %d, stderr %q; want a usage error for --max-open-files 0", r.code, r.stderr)
	}
}
