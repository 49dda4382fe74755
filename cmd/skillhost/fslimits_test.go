package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --write-max and --open-files-max hold a module to the write quota and
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
		{"write quota", []string{"--export", "write_flood", "--input", "/data/b 1048576", "--allow-path", mount, "--write-max", "256KiB"},
			0, "196608 write /data/b: Quota exceeded", ""},
		{"default open files", []string{"--export", "open_flood", "--input", "/data/f.txt 10", "--allow-path", mount}, 0, "10 ok", ""},
		{"open files", []string{"--export", "open_flood", "--input", "/data/f.txt 10", "--allow-path", mount, "--open-files-max", "3"},
			0, "3 open /data/f.txt: Too many open files", ""},
		{"zero write quota", []string{"--export", "noop", "--write-max", "0"}, 2, "", "--write-max 0 must be a positive size such as 1MiB; to refuse every write, mount the folder read-only with :ro"},
		{"bad write size", []string{"--export", "noop", "--write-max", "lots"}, 2, "", `--write-max: size "lots" must start with a number`},
		{"negative write size", []string{"--export", "noop", "--write-max", "-1"}, 2, "", `--write-max: size "-1" must start with a number`},
		{"write size too large", []string{"--export", "noop", "--write-max", "99999999999GiB"}, 2, "", `--write-max: size "99999999999GiB" is too large`},
		{"zero open files", []string{"--export", "noop", "--open-files-max", "0"}, 2, "", "--open-files-max 0 must be a positive number of files"},
		{"negative open files", []string{"--export", "noop", "--open-files-max", "-2"}, 2, "", "--open-files-max -2 must be a positive number of files"},
		{"too many open files", []string{"--export", "noop", "--open-files-max", "2000000"}, 2, "", "--open-files-max 2000000 is above 1048576"},
		{"open files not a number", []string{"--export", "noop", "--open-files-max", "many"}, 2, "", `invalid argument "many" for "--open-files-max"`},
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

// On a pack tool the flags add to the operator's grant, as --memory-max
// does: an explicit zero is refused there too rather than ignored.
func TestCallToolFilesystemLimitFlags(t *testing.T) {
	_, flags := relaySetup(t, "")
	r := cli(t, "", append(flags, "call", "call_tool", "{}", "--open-files-max", "0")...)
	if r.code != 2 || !strings.Contains(r.stderr, "--open-files-max 0 must be a positive number of files") {
		t.Errorf("exit %d, stderr %q; want a usage error for --open-files-max 0", r.code, r.stderr)
	}
	// The name of earlier versions still works, with a warning.
	r = cli(t, "", append(flags, "call", "call_tool", "{}", "--max-open-files", "0")...)
	if r.code != 2 || !strings.Contains(r.stderr, "--max-open-files is now --open-files-max") || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want a warning naming --open-files-max", r.code, r.stdout, r.stderr)
	}
}
