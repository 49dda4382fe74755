package host_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host"
)

// Allowed/denied pairs for the WASI capabilities, run in a standard Go guest.

func TestFilesystemCapability(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "go/gocaps/gocaps.wasm")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "notes.txt"), []byte("granted content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(data, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(data, "secret-link")); err != nil {
		t.Fatal(err)
	}
	ro := host.Grant{Mounts: []host.Mount{{HostPath: data, GuestPath: "/data", ReadOnly: true}}}
	rw := host.Grant{Mounts: []host.Mount{{HostPath: data, GuestPath: "/data"}}}

	tests := []struct {
		name, export, input string
		g                   host.Grant
		want                string // exact output, or a prefix ending in "*"
	}{
		{"read granted", "read_file", "/data/notes.txt", ro, "granted content"},
		{"read without grant", "read_file", "/data/notes.txt", host.Grant{}, "error: *"},
		{"list granted", "list_dir", "/data", ro, "escape\nnotes.txt\nsecret-link"},
		{"dot-dot out of the mount", "read_file", "/data/../" + filepath.Base(outside) + "/secret.txt", ro, "error: *"},
		{"relative dot-dot", "read_file", "../../../../../../" + outside + "/secret.txt", ro, "error: *"},
		{"absolute host path", "read_file", filepath.Join(outside, "secret.txt"), ro, "error: *"},
		{"symlink to a folder outside", "read_file", "/data/escape/secret.txt", ro, "error: *"},
		{"symlink to a file outside", "read_file", "/data/secret-link", ro, "error: *"},
		{"write to read-only", "write_file", "/data/new.txt", ro, "error: *"},
		{"mkdir in read-only", "mkdir", "/data/sub", ro, "error: *"},
		{"remove in read-only", "remove", "/data/notes.txt", ro, "error: *"},
		{"write to read-write", "write_file", "/data/new.txt", rw, "ok"},
		{"read back", "read_file", "/data/new.txt", rw, "written"},
		{"guest creates a symlink out", "symlink", outside + " /data/mine", rw, "error: *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustCall(t, m, tt.export, tt.input, tt.g)
			if p, ok := strings.CutSuffix(tt.want, "*"); ok {
				if !strings.HasPrefix(got, p) {
					t.Errorf("%s(%q) = %q, want %q…", tt.export, tt.input, got, p)
				}
			} else if got != tt.want {
				t.Errorf("%s(%q) = %q, want %q", tt.export, tt.input, got, tt.want)
			}
			if strings.Contains(got, "top secret") {
				t.Fatalf("read outside the mount: %q", got)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Error("a write landed outside the mount")
	}
	if b, _ := os.ReadFile(filepath.Join(data, "new.txt")); string(b) != "written" {
		t.Errorf("rw write not on the host: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(data, "mine")); err == nil {
		t.Error("the guest created a symlink")
	}
}

func TestEnvCapability(t *testing.T) {
	t.Setenv("SKILLHOST_TEST_HOST_SECRET", "host value")
	h := newHost(t, testConfig())
	m := load(t, h, "go/gocaps/gocaps.wasm")
	g := host.Grant{Env: map[string]string{"API_KEY": "from the operator"}}
	if got := mustCall(t, m, "getenv", "API_KEY", g); got != "from the operator" {
		t.Errorf("granted env = %q", got)
	}
	if got := mustCall(t, m, "getenv", "API_KEY", host.Grant{}); got != "<unset>" {
		t.Errorf("ungranted env = %q", got)
	}
	if got := mustCall(t, m, "getenv", "SKILLHOST_TEST_HOST_SECRET", g); got != "<unset>" {
		t.Errorf("the host's environment leaked: %q", got)
	}
	if got := mustCall(t, m, "environ", "", g); got != "API_KEY=from the operator" {
		t.Errorf("environ = %q, want only the granted variable", got)
	}
}

func TestGuestClockIsReal(t *testing.T) {
	h := newHost(t, testConfig())
	got := mustCall(t, load(t, h, "go/gocaps/gocaps.wasm"), "clock", "", host.Grant{})
	sec, err := strconv.ParseInt(got, 10, 64)
	if err != nil {
		t.Fatalf("clock = %q", got)
	}
	if d := time.Since(time.Unix(sec, 0)); d < -time.Minute || d > time.Minute {
		t.Errorf("guest clock %v is %v away from the host's", time.Unix(sec, 0), d)
	}
}
