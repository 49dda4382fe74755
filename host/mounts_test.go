package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host"
)

// The mount budget seen from a standard Go guest (gohostile's filesystem
// floods): what it gets back is the errno the guest's own code reports, and
// what reaches the host folder stays within the caps.

const (
	testWriteCap = 1 << 20
	testOpenCap  = 16
	createCharge = 4096 // sandboxfs.CreateCharge
)

// rwGrant mounts a new folder read-write at /data under the test caps.
func rwGrant(t *testing.T) (host.Grant, string) {
	t.Helper()
	dir := t.TempDir()
	return host.Grant{
		Mounts: []host.Mount{{HostPath: dir, GuestPath: "/data"}},
		Limits: host.Limits{Timeout: time.Minute, MaxWriteBytes: testWriteCap, MaxOpenFiles: testOpenCap},
	}, dir
}

// fsCall calls a gohostile filesystem flood and splits its output
// "<count> <error or ok>".
func fsCall(t *testing.T, m *host.Module, export, input string, g host.Grant) (int64, string) {
	t.Helper()
	out := mustCall(t, m, export, input, g)
	var n int64
	countText, rest, _ := strings.Cut(out, " ")
	if _, err := fmt.Sscan(countText, &n); err != nil {
		t.Fatalf("%s(%q) output %q: %v", export, input, out, err)
	}
	return n, rest
}

func TestMountWriteQuota(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "go/gohostile/gohostile.wasm")
	g, dir := rwGrant(t)

	// A loop of 64 KiB writes with no end of its own.
	n, msg := fsCall(t, m, "write_flood", "/data/flood", g)
	if want := "write /data/flood: Quota exceeded"; msg != want {
		t.Errorf("write_flood ended with %q, want %q", msg, want)
	}
	info, err := os.Stat(filepath.Join(dir, "flood"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != n || n > testWriteCap-createCharge || n < testWriteCap-createCharge-64<<10 {
		t.Errorf("the guest wrote %d bytes and the host file holds %d; want the same, within one 64 KiB chunk below the %d-byte cap less the creation charge",
			n, info.Size(), testWriteCap)
	}

	// Growing a file by truncate.
	if _, msg := fsCall(t, m, "truncate", "/data/flood 107374182400", g); msg != "truncate /data/flood: Quota exceeded" {
		t.Errorf("truncate to 100 GiB: %q", msg)
	}
	if info, err := os.Stat(filepath.Join(dir, "flood")); err != nil || info.Size() != n {
		t.Errorf("after the refused truncate the file holds %v bytes (%v), want %d", info.Size(), err, n)
	}
	if got, msg := fsCall(t, m, "truncate", "/data/flood 4096", g); got != 4096 || msg != "ok" {
		t.Errorf("truncate to 4 KiB: %d %q", got, msg)
	}
}

func TestMountCreateQuota(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "go/gohostile/gohostile.wasm")
	g, dir := rwGrant(t)
	if err := os.Mkdir(filepath.Join(dir, "many"), 0o755); err != nil {
		t.Fatal(err)
	}
	created, msg := fsCall(t, m, "create_flood", "/data/many 100000", g)
	want := int64(testWriteCap / createCharge)
	if created != want || msg != fmt.Sprintf("open /data/many/%d: Quota exceeded", want) {
		t.Errorf("create_flood: %d %q; want %d files, then the quota", created, msg, want)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "many"))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(entries)) != created {
		t.Errorf("the host folder holds %d files, want %d", len(entries), created)
	}
}

func TestMountOpenFilesCap(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "go/gohostile/gohostile.wasm")
	g, dir := rwGrant(t)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	pool, err := m.NewPool(host.CallOptions{Grant: g}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// Twice in one instance: the guest closes what it opened, and the
	// second call gets as many as the first.
	for call := range 2 {
		res, err := pool.Call(context.Background(), "open_flood", []byte("/data/notes.txt"))
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%d open /data/notes.txt: Too many open files", testOpenCap)
		if got := string(res.Output); got != want {
			t.Errorf("call %d: open_flood = %q, want %q", call, got, want)
		}
	}
	// Mount roots are not counted: with a cap of one, the guest opens one
	// file through each of two mounts, one call after the other.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.Mounts = append(g.Mounts, host.Mount{HostPath: other, GuestPath: "/other", ReadOnly: true})
	g.Limits.MaxOpenFiles = 1
	for _, p := range []string{"/data/notes.txt", "/other/notes.txt"} {
		if n, msg := fsCall(t, m, "open_flood", p+" 1", g); n != 1 || msg != "ok" {
			t.Errorf("open_flood(%s 1) with a cap of one: %d %q", p, n, msg)
		}
		if n, msg := fsCall(t, m, "open_flood", p+" 2", g); n != 1 || msg != "open "+p+": Too many open files" {
			t.Errorf("open_flood(%s 2) with a cap of one: %d %q", p, n, msg)
		}
	}
}

// The write count starts again with each call, also when calls share an
// instance (a pool, or the restored instances of Module.Call).
func TestMountWriteQuotaPerCall(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "go/gohostile/gohostile.wasm")
	g, dir := rwGrant(t)
	sixty := fmt.Sprint(testWriteCap * 6 / 10)
	pool, err := m.NewPool(host.CallOptions{Grant: g}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	calls := map[string]func(input string) (string, error){
		"pool": func(input string) (string, error) {
			res, err := pool.Call(context.Background(), "write_flood", []byte(input))
			return string(res.Output), err
		},
		"module": func(input string) (string, error) {
			res, err := call(m, "write_flood", input, g)
			return string(res.Output), err
		},
	}
	for name, do := range calls {
		for i := range 3 {
			p := fmt.Sprintf("/data/%s%d", name, i)
			out, err := do(p + " " + sixty)
			if err != nil || out != sixty+" ok" {
				t.Errorf("%s call %d writing 60%% of the cap: %q, %v", name, i, out, err)
			}
		}
		out, err := do(fmt.Sprintf("/data/%s-big %d", name, testWriteCap*12/10))
		if err != nil || !strings.HasSuffix(out, ": Quota exceeded") {
			t.Errorf("%s call writing 120%% of the cap: %q, %v", name, out, err)
		}
	}
	if info, err := os.Stat(filepath.Join(dir, "pool2")); err != nil || info.Size() != testWriteCap*6/10 {
		t.Errorf("pool2: %v, %v", info, err)
	}
}

// A read-only mount reads under any write cap, and refuses writes as
// before.
func TestMountReadOnlyUnaffectedByQuota(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "go/gohostile/gohostile.wasm")
	dir := t.TempDir()
	content := strings.Repeat("r", 100_000)
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	g := host.Grant{
		Mounts: []host.Mount{{HostPath: dir, GuestPath: "/ro", ReadOnly: true}},
		Limits: host.Limits{MaxWriteBytes: 1},
	}
	for range 3 {
		if got := mustCall(t, m, "fs_escape", "/ro/big.txt", g); got != content {
			t.Fatalf("read through a read-only mount with a 1-byte write cap: %.40q", got)
		}
	}
	if _, msg := fsCall(t, m, "write_flood", "/ro/new", g); msg != "open /ro/new: Read-only file system" {
		t.Errorf("write_flood on a read-only mount: %q", msg)
	}
}
