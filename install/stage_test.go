package install_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/install"
)

// newInstaller returns an installer into a fresh folder, with its lock
// beside it.
func newInstaller(t *testing.T) *install.Installer {
	t.Helper()
	ws := t.TempDir()
	return &install.Installer{Dir: filepath.Join(ws, ".skillhost", "installed"), LockFile: filepath.Join(ws, install.LockFile)}
}

func skillMD(name, body string) string {
	return "---\nname: " + name + "\ndescription: The " + name + " skill, for tests.\n---\n" + body + "\n"
}

// packYAML is a pack of one module whose request names hosts.
func packYAML(name string, hosts ...string) map[string]string {
	q := make([]string, len(hosts))
	for i, h := range hosts {
		q[i] = `"` + h + `"`
	}
	return map[string]string{
		"pack.yaml": "name: " + name + "\nversion: 1.0.0\ndescription: A pack for tests.\nmodules:\n  - name: m\n    path: m.wasm\n    request:\n      allowed_hosts: [" + strings.Join(q, ", ") + "]\n    limits: {timeout: 2s}\n    tools:\n      - name: " + name + "_get\n        description: Get a thing for tests.\n        input_schema: {type: object, properties: {}}\n",
		"m.wasm":    "\x00asm\x01\x00\x00\x00",
	}
}

func installed(t *testing.T, in *install.Installer) []string {
	t.Helper()
	ents, err := os.ReadDir(in.Dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestInstallAFolder(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"SKILL.md": skillMD("pdf", "Use scripts/fill.py."), "scripts/fill.py": "print(1)\n"})
	in := newInstaller(t)
	got, err := in.Install(context.Background(), install.Request{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "pdf" || got[0].Kind != "skill" {
		t.Fatalf("installed %+v", got)
	}
	if b, err := os.ReadFile(filepath.Join(in.Dir, "pdf", "scripts", "fill.py")); err != nil || string(b) != "print(1)\n" {
		t.Fatalf("fill.py: %q, %v", b, err)
	}
	lock, err := install.ReadLock(in.LockFile)
	if err != nil {
		t.Fatal(err)
	}
	e := lock.Find("pdf")
	want, _ := install.DirDigest(filepath.Join(in.Dir, "pdf"))
	if e == nil || e.Digest != want || e.Source != src {
		t.Fatalf("lock entry %+v, want digest %s", e, want)
	}
	if !slices.Equal(e.Approved.Scripts, []string{"pdf/scripts/fill.py"}) {
		t.Fatalf("approved scripts %v", e.Approved.Scripts)
	}
	if err := lock.Check(in.Dir); err != nil {
		t.Fatal(err)
	}
}

func TestInstallChoosesFromASourceOfSeveral(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"skills/alpha/SKILL.md": skillMD("alpha", "a"),
		"skills/beta/SKILL.md":  skillMD("beta", "b"),
		"README.md":             "# two skills\n",
	})
	in := newInstaller(t)
	_, err := in.Install(context.Background(), install.Request{Source: src})
	if !errors.Is(err, install.ErrBadSource) || !strings.Contains(err.Error(), "alpha") || !strings.Contains(err.Error(), "beta") {
		t.Fatalf("err %v; want a refusal listing alpha and beta", err)
	}
	if _, err := in.Install(context.Background(), install.Request{Source: src, Skills: []string{"gamma"}}); !errors.Is(err, install.ErrBadSource) {
		t.Fatalf("installing a skill the source lacks: %v", err)
	}
	if _, err := in.Install(context.Background(), install.Request{Source: src, Skills: []string{"beta"}}); err != nil {
		t.Fatal(err)
	}
	if got := installed(t, in); !slices.Equal(got, []string{"beta"}) {
		t.Fatalf("installed %v", got)
	}
	if _, err := in.Install(context.Background(), install.Request{Source: src, All: true}); err != nil {
		t.Fatal(err)
	}
	if got := installed(t, in); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Fatalf("installed %v", got)
	}
}

// serve serves files (path → body) over TLS and returns the server.
func serve(t *testing.T, files map[string][]byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func TestInstallAnArchiveURL(t *testing.T) {
	archive := tarGz(t, entry{name: "pdf/SKILL.md", body: skillMD("pdf", "x")})
	srv := serve(t, map[string][]byte{"/pdf.tar.gz": archive})
	url := srv.URL + "/pdf.tar.gz"

	t.Run("pinned", func(t *testing.T) {
		in := newInstaller(t)
		in.Client = srv.Client()
		got, err := in.Install(context.Background(), install.Request{Source: url + "#" + strings.Replace(sum(archive), ":", "=", 1)})
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Resolved != sum(archive) {
			t.Fatalf("resolved %s, want the archive's digest", got[0].Resolved)
		}
	})
	t.Run("wrong digest", func(t *testing.T) {
		in := newInstaller(t)
		in.Client = srv.Client()
		_, err := in.Install(context.Background(), install.Request{Source: url, Digest: sum([]byte("other"))})
		if !errors.Is(err, install.ErrDigestMismatch) {
			t.Fatalf("err %v, want ErrDigestMismatch", err)
		}
		if got := installed(t, in); len(got) != 0 {
			t.Fatalf("installed %v after a digest mismatch", got)
		}
		if _, err := os.Stat(in.LockFile); !os.IsNotExist(err) {
			t.Fatal("a lock was written after a digest mismatch")
		}
	})
	t.Run("plain http", func(t *testing.T) {
		in := newInstaller(t)
		if _, err := in.Install(context.Background(), install.Request{Source: strings.Replace(url, "https", "http", 1)}); !errors.Is(err, install.ErrBadSource) {
			t.Fatalf("err %v, want ErrBadSource", err)
		}
	})
}

func TestInstallFromAWellKnownIndex(t *testing.T) {
	alpha := []byte(skillMD("alpha", "a"))
	beta := tarGz(t, entry{name: "beta/SKILL.md", body: skillMD("beta", "b")}, entry{name: "beta/references/r.md", body: "r"})
	index := func(alphaDigest string) []byte {
		b, _ := json.Marshal(map[string]any{"version": "0.2.0", "skills": []map[string]string{
			{"name": "alpha", "type": "skill-md", "description": "a", "url": "/skills/alpha/SKILL.md", "digest": alphaDigest},
			{"name": "beta", "type": "archive", "description": "b", "url": "beta.tar.gz", "digest": sum(beta)},
		}})
		return b
	}
	good := serve(t, map[string][]byte{"/.well-known/agent-skills/index.json": index(sum(alpha)), "/skills/alpha/SKILL.md": alpha, "/.well-known/agent-skills/beta.tar.gz": beta})
	in := newInstaller(t)
	in.Client = good.Client()
	if _, err := in.Install(context.Background(), install.Request{Source: good.URL, All: true}); err != nil {
		t.Fatal(err)
	}
	if got := installed(t, in); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Fatalf("installed %v", got)
	}
	if _, err := os.Stat(filepath.Join(in.Dir, "beta", "references", "r.md")); err != nil {
		t.Fatal(err)
	}
	lock, _ := install.ReadLock(in.LockFile)
	if e := lock.Find("alpha"); e == nil || e.Resolved != sum(alpha) {
		t.Fatalf("alpha's entry %+v", e)
	}

	// The index says one digest, the server serves other bytes.
	tampered := serve(t, map[string][]byte{"/.well-known/agent-skills/index.json": index(sum([]byte("the published bytes"))), "/skills/alpha/SKILL.md": alpha})
	in2 := newInstaller(t)
	in2.Client = tampered.Client()
	_, err := in2.Install(context.Background(), install.Request{Source: tampered.URL, Skills: []string{"alpha"}})
	if !errors.Is(err, install.ErrDigestMismatch) {
		t.Fatalf("err %v, want ErrDigestMismatch", err)
	}
	if got := installed(t, in2); len(got) != 0 {
		t.Fatalf("installed %v", got)
	}
}

// An upgrade that asks for a host the lock did not approve stops and
// says which; approved, it goes through; one that asks for less needs
// no approval.
func TestUpgradeThatAsksForMoreNeedsApproval(t *testing.T) {
	in := newInstaller(t)
	src := t.TempDir()
	writeTree(t, src, packYAML("weather", "api.weather.example"))
	if _, err := in.Install(context.Background(), install.Request{Source: src}); err != nil {
		t.Fatal(err)
	}
	before, _ := install.DirDigest(filepath.Join(in.Dir, "weather"))

	writeTree(t, src, packYAML("weather", "api.weather.example", "*.tracker.example"))
	_, err := in.Install(context.Background(), install.Request{Source: src})
	var ae *install.ApprovalError
	if !errors.As(err, &ae) || !errors.Is(err, install.ErrNeedsApproval) || !slices.Equal(ae.More, []string{"host *.tracker.example"}) {
		t.Fatalf("err %v; want an approval error naming host *.tracker.example", err)
	}
	if after, _ := install.DirDigest(filepath.Join(in.Dir, "weather")); after != before {
		t.Fatal("the refused upgrade changed the installed pack")
	}
	if _, err := in.Install(context.Background(), install.Request{Source: src, Approve: true}); err != nil {
		t.Fatal(err)
	}
	lock, _ := install.ReadLock(in.LockFile)
	if !slices.Equal(lock.Find("weather").Approved.Hosts, []string{"*.tracker.example", "api.weather.example"}) {
		t.Fatalf("approved hosts %v", lock.Find("weather").Approved.Hosts)
	}
	writeTree(t, src, packYAML("weather", "api.weather.example"))
	if _, err := in.Install(context.Background(), install.Request{Source: src}); err != nil {
		t.Fatalf("an upgrade asking for less: %v", err)
	}
}

func TestBeyond(t *testing.T) {
	approved := install.Capabilities{Hosts: []string{"a.example"}, Paths: []string{"/data:rw"}, Env: []string{"TOKEN"}, Ceilings: install.Ceilings{Timeout: "2s", MaxMemory: 64 << 20}}
	for _, c := range []struct {
		asks install.Capabilities
		want []string
	}{
		{install.Capabilities{Hosts: []string{"a.example"}, Paths: []string{"/data:ro"}}, nil},
		{install.Capabilities{Paths: []string{"/other:ro"}}, []string{"path /other:ro"}},
		{install.Capabilities{Env: []string{"TOKEN", "SECRET"}}, []string{"env SECRET"}},
		{install.Capabilities{Services: []string{"mail.send"}}, []string{"service mail.send"}},
		{install.Capabilities{Tools: []string{"shell"}}, []string{"tool shell"}},
		{install.Capabilities{Scripts: []string{"x/scripts/new.py"}}, []string{"script x/scripts/new.py"}},
		{install.Capabilities{Ceilings: install.Ceilings{Timeout: "3s"}}, []string{"limit timeout 3s (approved 2s)"}},
		{install.Capabilities{Ceilings: install.Ceilings{Timeout: "1s", MaxMemory: 32 << 20}}, nil},
		{install.Capabilities{Ceilings: install.Ceilings{MaxMemory: 128 << 20}}, []string{"limit max_memory 134217728 (approved 67108864)"}},
		{install.Capabilities{Ceilings: install.Ceilings{MaxFuel: 10}}, []string{"limit max_fuel 10 (approved none)"}},
	} {
		if got := c.asks.Beyond(approved); !slices.Equal(got, c.want) {
			t.Errorf("%+v beyond the approval: %q, want %q", c.asks, got, c.want)
		}
	}
}

func TestInstallRefusesWhatDoesNotLoad(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"pdf/SKILL.md": "---\nname: other\ndescription: x\n---\n"})
	in := newInstaller(t)
	if _, err := in.Install(context.Background(), install.Request{Source: src}); !errors.Is(err, install.ErrInvalid) {
		t.Fatalf("err %v, want ErrInvalid", err)
	}
	if got := installed(t, in); len(got) != 0 {
		t.Fatalf("installed %v", got)
	}
	// A pack whose module is not a Wasm module, as skillhost validate
	// refuses it.
	bad := t.TempDir()
	files := packYAML("broken", "api.example")
	files["m.wasm"] = "this is not wasm"
	writeTree(t, bad, files)
	if _, err := in.Install(context.Background(), install.Request{Source: bad}); !errors.Is(err, install.ErrInvalid) {
		t.Fatalf("a pack with a broken module: %v, want ErrInvalid", err)
	}
	if got := installed(t, in); len(got) != 0 {
		t.Fatalf("installed %v", got)
	}
}

// The lock notices a flipped byte, a file added, and a folder it does
// not name.
func TestLockCheckFindsChanges(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"SKILL.md": skillMD("pdf", "x")})
	in := newInstaller(t)
	if _, err := in.Install(context.Background(), install.Request{Source: src}); err != nil {
		t.Fatal(err)
	}
	lock, _ := install.ReadLock(in.LockFile)
	file := filepath.Join(in.Dir, "pdf", "SKILL.md")
	orig, _ := os.ReadFile(file)
	flipped := bytes.Clone(orig)
	flipped[len(flipped)-2] ^= 1
	os.WriteFile(file, flipped, 0o644)
	if err := lock.Check(in.Dir); !errors.Is(err, install.ErrLock) || !errors.Is(err, install.ErrDigestMismatch) || !strings.Contains(err.Error(), filepath.Join(in.Dir, "pdf")) {
		t.Fatalf("a flipped byte: %v", err)
	}
	os.WriteFile(file, orig, 0o644)
	os.WriteFile(filepath.Join(in.Dir, "pdf", "extra.md"), []byte("x"), 0o644)
	if err := lock.Check(in.Dir); !errors.Is(err, install.ErrDigestMismatch) {
		t.Fatalf("a file added: %v", err)
	}
	os.Remove(filepath.Join(in.Dir, "pdf", "extra.md"))
	os.Mkdir(filepath.Join(in.Dir, "stowaway"), 0o755)
	if err := lock.Check(in.Dir); !errors.Is(err, install.ErrLock) || !strings.Contains(err.Error(), "stowaway") {
		t.Fatalf("a folder the lock does not name: %v", err)
	}
}

// What a killed install leaves is cleaned up by the next one: staging
// folders removed, a folder moved aside put back.
func TestAKilledInstallIsCleanedUp(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"SKILL.md": skillMD("pdf", "x")})
	in := newInstaller(t)
	if _, err := in.Install(context.Background(), install.Request{Source: src}); err != nil {
		t.Fatal(err)
	}
	// Killed mid-upgrade: the old folder aside, the new one not yet in.
	if err := os.Rename(filepath.Join(in.Dir, "pdf"), filepath.Join(in.Dir, ".old-pdf-12345")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(in.Dir, ".staging-999", "tree"), 0o755)
	other := t.TempDir()
	writeTree(t, other, map[string]string{"SKILL.md": skillMD("notes", "x")})
	if _, err := in.Install(context.Background(), install.Request{Source: other}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(in.Dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{".install.lock", "notes", "pdf"}) {
		t.Fatalf("the installed folder holds %v", names)
	}
	lock, _ := install.ReadLock(in.LockFile)
	if err := lock.Check(in.Dir); err != nil {
		t.Fatal(err)
	}
}

func TestUninstall(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"SKILL.md": skillMD("pdf", "x")})
	in := newInstaller(t)
	if _, err := in.Install(context.Background(), install.Request{Source: src}); err != nil {
		t.Fatal(err)
	}
	if err := in.Uninstall("pdf"); err != nil {
		t.Fatal(err)
	}
	if got := installed(t, in); len(got) != 0 {
		t.Fatalf("installed %v", got)
	}
	lock, _ := install.ReadLock(in.LockFile)
	if len(lock.Entries) != 0 {
		t.Fatalf("lock %+v", lock.Entries)
	}
	if err := in.Uninstall("pdf"); !errors.Is(err, install.ErrBadSource) {
		t.Fatalf("uninstalling twice: %v", err)
	}
	if err := in.Uninstall("../x"); !errors.Is(err, install.ErrBadSource) {
		t.Fatalf("uninstalling ../x: %v", err)
	}
}

// Sync puts back what the lock names, from its source, only when the
// source still gives the locked bytes.
func TestSyncReproducesTheLock(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "pdf.tar.gz")
	os.WriteFile(archive, tarGz(t, entry{name: "pdf/SKILL.md", body: skillMD("pdf", "v1")}), 0o644)
	in := newInstaller(t)
	if _, err := in.Install(context.Background(), install.Request{Source: archive}); err != nil {
		t.Fatal(err)
	}
	st, err := in.Sync(context.Background())
	if err != nil || len(st) != 1 || st[0].Action != "ok" {
		t.Fatalf("sync of an intact install: %+v, %v", st, err)
	}
	os.RemoveAll(filepath.Join(in.Dir, "pdf"))
	st, err = in.Sync(context.Background())
	if err != nil || len(st) != 1 || st[0].Action != "installed" {
		t.Fatalf("sync of a missing folder: %+v, %v", st, err)
	}
	lock, _ := install.ReadLock(in.LockFile)
	if err := lock.Check(in.Dir); err != nil {
		t.Fatal(err)
	}
	// The source changed under the lock: Sync refuses it.
	os.WriteFile(archive, tarGz(t, entry{name: "pdf/SKILL.md", body: skillMD("pdf", "v2")}), 0o644)
	os.RemoveAll(filepath.Join(in.Dir, "pdf"))
	if _, err := in.Sync(context.Background()); !errors.Is(err, install.ErrDigestMismatch) {
		t.Fatalf("sync from a changed source: %v", err)
	}
	if got := installed(t, in); len(got) != 0 {
		t.Fatalf("installed %v from a changed source", got)
	}
}

func TestOutdatedFolderAndArchive(t *testing.T) {
	ctx := context.Background()
	in := newInstaller(t)
	folder := t.TempDir()
	writeTree(t, folder, map[string]string{"SKILL.md": skillMD("notes", "one")})
	archive := filepath.Join(t.TempDir(), "pdf.tar.gz")
	os.WriteFile(archive, tarGz(t, entry{name: "pdf/SKILL.md", body: skillMD("pdf", "one")}), 0o644)
	for _, src := range []string{folder, archive} {
		if _, err := in.Install(ctx, install.Request{Source: src}); err != nil {
			t.Fatal(err)
		}
	}
	if od, err := in.Outdated(ctx); err != nil || len(od) != 0 {
		t.Fatalf("outdated right after install: %+v, %v", od, err)
	}
	writeTree(t, folder, map[string]string{"SKILL.md": skillMD("notes", "two")})
	os.WriteFile(archive, tarGz(t, entry{name: "pdf/SKILL.md", body: skillMD("pdf", "two")}), 0o644)
	od, err := in.Outdated(ctx)
	if err != nil || len(od) != 2 || od[0].Name != "notes" || od[1].Name != "pdf" {
		t.Fatalf("outdated after both changed: %+v, %v", od, err)
	}
}

// A folder of several skills: each installed one is outdated only when
// its own files change, and .git does not count.
func TestOutdatedOneSkillOfAFolder(t *testing.T) {
	ctx := context.Background()
	in := newInstaller(t)
	folder := t.TempDir()
	writeTree(t, folder, map[string]string{
		"skills/alpha/SKILL.md": skillMD("alpha", "a"),
		"skills/beta/SKILL.md":  skillMD("beta", "b"),
		".git/HEAD":             "ref: refs/heads/main\n",
	})
	if _, err := in.Install(ctx, install.Request{Source: folder, All: true}); err != nil {
		t.Fatal(err)
	}
	lock, _ := install.ReadLock(in.LockFile)
	if e := lock.Find("alpha"); e.Subpath != "skills/alpha" {
		t.Fatalf("alpha's subpath %q", e.Subpath)
	}
	if od, err := in.Outdated(ctx); err != nil || len(od) != 0 {
		t.Fatalf("outdated right after install: %+v, %v", od, err)
	}
	writeTree(t, folder, map[string]string{"skills/beta/SKILL.md": skillMD("beta", "b2"), ".git/HEAD": "x"})
	if od, err := in.Outdated(ctx); err != nil || len(od) != 1 || od[0].Name != "beta" {
		t.Fatalf("outdated after beta changed: %+v, %v", od, err)
	}
}

// A repository that lists its plugins in .claude-plugin/marketplace.json,
// as public skill repositories do: a plugin's name installs its skills.
func TestInstallAPluginOfAMarketplace(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		".claude-plugin/marketplace.json": `{"name":"m","plugins":[
			{"name":"document-skills","source":"./","skills":["./skills/pdf","./skills/docx"]},
			{"name":"escapes","source":"./","skills":["../../etc"]},
			{"name":"remote","source":{"source":"github","repo":"x/y"},"skills":["./skills/pdf"]}]}`,
		"skills/pdf/SKILL.md":   skillMD("pdf", "p"),
		"skills/docx/SKILL.md":  skillMD("docx", "d"),
		"skills/other/SKILL.md": skillMD("other", "o"),
	})
	in := newInstaller(t)
	if _, err := in.Install(context.Background(), install.Request{Source: src, Skills: []string{"document-skills"}}); err != nil {
		t.Fatal(err)
	}
	if got := installed(t, in); !slices.Equal(got, []string{"docx", "pdf"}) {
		t.Fatalf("installed %v", got)
	}
	for _, bad := range []string{"escapes", "remote"} {
		if _, err := in.Install(context.Background(), install.Request{Source: src, Skills: []string{bad}}); !errors.Is(err, install.ErrBadSource) {
			t.Fatalf("plugin %s: %v", bad, err)
		}
	}
}

// A download redirected to plain http is refused; the lock is a file to
// commit (0644), not a secret.
func TestRedirectToHTTPAndLockMode(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) }))
	defer plain.Close()
	srv := httptest.NewTLSServer(http.RedirectHandler(plain.URL+"/pdf.tar.gz", http.StatusFound))
	defer srv.Close()
	in := newInstaller(t)
	in.Client = srv.Client()
	if _, err := in.Install(context.Background(), install.Request{Source: srv.URL + "/pdf.tar.gz"}); err == nil || !strings.Contains(err.Error(), "plain http") {
		t.Fatalf("a redirect to http: %v", err)
	}
	src := t.TempDir()
	writeTree(t, src, map[string]string{"SKILL.md": skillMD("pdf", "x")})
	if _, err := in.Install(context.Background(), install.Request{Source: src}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(in.LockFile); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("lock mode %v, %v", st.Mode(), err)
	}
}
