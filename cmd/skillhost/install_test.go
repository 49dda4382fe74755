package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The install flow from the command line: a skill folder installed, seen
// by list, listed by installed, refused at load once changed, put back
// by install with no source, uninstalled; a built archive pinned by its
// digest.
func TestInstallFlow(t *testing.T) {
	ws := t.TempDir()
	conf := filepath.Join(ws, "skillhost.toml")
	if err := os.WriteFile(conf, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SKILLHOST_CONFIG", conf)
	src := filepath.Join(t.TempDir(), "tidy")
	os.MkdirAll(filepath.Join(src, "scripts"), 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: tidy\ndescription: Tidy a folder of notes, for the install test.\n---\nRun scripts/tidy.py.\n"), 0o644)
	os.WriteFile(filepath.Join(src, "scripts", "tidy.py"), []byte("print('tidy')\n"), 0o644)

	r := cli(t, "", "install", src)
	if r.code != 0 || !strings.Contains(r.stdout, "installed skill tidy") {
		t.Fatalf("install: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "skillhost.lock")); err != nil {
		t.Fatal(err)
	}
	r = cli(t, "", "--no-bundled", "list", "--skills")
	if r.code != 0 || !strings.Contains(r.stdout, "tidy") {
		t.Fatalf("list after install: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, "", "installed")
	if r.code != 0 || !strings.Contains(r.stdout, "ok") || !strings.Contains(r.stdout, "scripts tidy/scripts/tidy.py") {
		t.Fatalf("installed: %d %s %s", r.code, r.stdout, r.stderr)
	}

	// A changed file is refused at load, naming the folder.
	script := filepath.Join(ws, ".skillhost", "installed", "tidy", "scripts", "tidy.py")
	os.WriteFile(script, []byte("import os; os.system('curl evil')\n"), 0o644)
	r = cli(t, "", "--no-bundled", "list", "--skills")
	if r.code == 0 || !strings.Contains(r.stderr, filepath.Join(ws, ".skillhost", "installed", "tidy")) {
		t.Fatalf("list after tampering: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r = cli(t, "", "installed"); r.code == 0 || !strings.Contains(r.stdout, "CHANGED") {
		t.Fatalf("installed after tampering: %d %s", r.code, r.stdout)
	}
	r = cli(t, "", "install")
	if r.code != 0 || !strings.Contains(r.stdout, "installed tidy") {
		t.Fatalf("install from the lock: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(script); string(b) != "print('tidy')\n" {
		t.Fatalf("the script is %q after install", b)
	}

	// pack build, then install the archive pinned by another digest.
	archive := filepath.Join(t.TempDir(), "tidy.tar.gz")
	r = cli(t, "", "pack", "build", src, "-o", archive)
	if r.code != 0 || !strings.Contains(r.stdout, "sha256:") {
		t.Fatalf("pack build: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, "", "install", archive, "--digest", "sha256:"+strings.Repeat("0", 64))
	if r.code == 0 || !strings.Contains(r.stderr, "digest mismatch") {
		t.Fatalf("install with a wrong digest: %d %s %s", r.code, r.stdout, r.stderr)
	}

	r = cli(t, "", "uninstall", "tidy")
	if r.code != 0 {
		t.Fatalf("uninstall: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r = cli(t, "", "--no-bundled", "list", "--skills"); strings.Contains(r.stdout, "tidy") {
		t.Fatalf("list after uninstall: %s", r.stdout)
	}
}

// keygen, pack sign and pack verify: 0 for a trusted signer, 1 with the
// reason for a changed archive or another key.
func TestSigningFlow(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "tidy")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: tidy\ndescription: Tidy notes, for the signing test.\n---\nTidy.\n"), 0o644)
	archive := filepath.Join(dir, "tidy.tar.gz")
	if r := cli(t, "", "pack", "build", src, "-o", archive); r.code != 0 {
		t.Fatalf("pack build: %s %s", r.stdout, r.stderr)
	}
	for _, k := range []string{"release", "other"} {
		if r := cli(t, "", "keygen", "--out", filepath.Join(dir, k)); r.code != 0 || !strings.Contains(r.stdout, "sha256:") {
			t.Fatalf("keygen: %d %s %s", r.code, r.stdout, r.stderr)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "release.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("release.key: %v %v", st.Mode(), err)
	}
	if r := cli(t, "", "keygen", "--out", filepath.Join(dir, "release")); r.code == 0 {
		t.Fatal("keygen overwrote a key")
	}
	if r := cli(t, "", "pack", "sign", archive, "--key", filepath.Join(dir, "release.key")); r.code != 0 {
		t.Fatalf("pack sign: %s %s", r.stdout, r.stderr)
	}
	r := cli(t, "", "pack", "verify", archive, "--trusted-key", filepath.Join(dir, "release.pub"))
	if r.code != 0 || !strings.Contains(r.stdout, "ok: signed by key sha256:") {
		t.Fatalf("pack verify: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, "", "pack", "verify", archive, "--trusted-key", filepath.Join(dir, "other.pub"))
	if r.code != 1 || !strings.Contains(r.stderr, "untrusted") {
		t.Fatalf("pack verify with another key: %d %s %s", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(archive)
	b[len(b)/2] ^= 1
	os.WriteFile(archive, b, 0o644)
	r = cli(t, "", "pack", "verify", archive, "--trusted-key", filepath.Join(dir, "release.pub"))
	if r.code != 1 || !strings.Contains(r.stderr, "bad signature") {
		t.Fatalf("pack verify of a changed archive: %d %s %s", r.code, r.stdout, r.stderr)
	}
	os.Remove(archive + ".sigstore.json")
	if r = cli(t, "", "pack", "verify", archive, "--trusted-key", filepath.Join(dir, "release.pub")); r.code != 1 || !strings.Contains(r.stderr, "not signed") {
		t.Fatalf("pack verify of an unsigned archive: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// outdated and upgrade from the command line: a folder source changed
// after install is listed, and upgrade installs it.
func TestOutdatedAndUpgrade(t *testing.T) {
	ws := t.TempDir()
	conf := filepath.Join(ws, "skillhost.toml")
	os.WriteFile(conf, nil, 0o644)
	t.Setenv("SKILLHOST_CONFIG", conf)
	src := filepath.Join(t.TempDir(), "tidy")
	os.MkdirAll(src, 0o755)
	write := func(body string) {
		os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: tidy\ndescription: Tidy notes, for the upgrade test.\n---\n"+body+"\n"), 0o644)
	}
	write("one")
	if r := cli(t, "", "install", src); r.code != 0 {
		t.Fatalf("install: %s %s", r.stdout, r.stderr)
	}
	if r := cli(t, "", "outdated"); r.code != 0 {
		t.Fatalf("outdated right after install: %d %s %s", r.code, r.stdout, r.stderr)
	}
	write("two")
	if r := cli(t, "", "outdated"); r.code != 1 || !strings.Contains(r.stdout, "tidy") {
		t.Fatalf("outdated after a change: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := cli(t, "", "upgrade"); r.code != 0 || !strings.Contains(r.stdout, "upgraded tidy") {
		t.Fatalf("upgrade: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".skillhost", "installed", "tidy", "SKILL.md")); !strings.Contains(string(b), "two") {
		t.Fatalf("after upgrade: %s", b)
	}
	if r := cli(t, "", "upgrade", "nonesuch"); r.code != 2 {
		t.Fatalf("upgrade of what is not installed: %d %s", r.code, r.stderr)
	}
}

// The [trust] section of skillhost.toml: a signature by a key it lists is
// locked with its signer; a key it revokes is refused.
func TestTrustFromConfig(t *testing.T) {
	ws := t.TempDir()
	conf := filepath.Join(ws, "skillhost.toml")
	t.Setenv("SKILLHOST_CONFIG", conf)
	src := filepath.Join(t.TempDir(), "tidy")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: tidy\ndescription: Tidy notes, for the trust test.\n---\nTidy.\n"), 0o644)
	archive := filepath.Join(t.TempDir(), "tidy.tar.gz")
	if r := cli(t, "", "pack", "build", src, "-o", archive); r.code != 0 {
		t.Fatalf("pack build: %s", r.stderr)
	}
	r := cli(t, "", "keygen", "--out", filepath.Join(ws, "release"))
	if r.code != 0 {
		t.Fatalf("keygen: %s", r.stderr)
	}
	id := strings.TrimSpace(r.stdout[strings.LastIndex(strings.TrimSpace(r.stdout), "\n")+1:])
	if r := cli(t, "", "pack", "sign", archive, "--key", filepath.Join(ws, "release.key")); r.code != 0 {
		t.Fatalf("pack sign: %s", r.stderr)
	}

	os.WriteFile(conf, []byte("[trust]\nkeys = [\"release.pub\"]\nrevoked = [\""+id+"\"]\n"), 0o644)
	if r := cli(t, "", "install", archive); r.code != 1 || !strings.Contains(r.stderr, "revoked") {
		t.Fatalf("install signed by a revoked key: %d %s %s", r.code, r.stdout, r.stderr)
	}
	os.WriteFile(conf, []byte("[trust]\nkeys = [\"release.pub\"]\n"), 0o644)
	if r := cli(t, "", "install", archive); r.code != 0 {
		t.Fatalf("install: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := cli(t, "", "installed"); r.code != 0 || !strings.Contains(r.stdout, "signed by key "+id) {
		t.Fatalf("installed: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// The engine reads the same file, [trust] and all.
	if r := cli(t, "", "--no-bundled", "list", "--skills"); r.code != 0 || !strings.Contains(r.stdout, "tidy") {
		t.Fatalf("list: %d %s %s", r.code, r.stdout, r.stderr)
	}
	os.WriteFile(conf, []byte("[trust]\nrevoked = [\"nope\"]\n"), 0o644)
	if r := cli(t, "", "validate", conf); r.code != 1 || !strings.Contains(r.stdout, "skillhost.toml:2: trust.revoked[0]") {
		t.Fatalf("validate of a bad [trust]: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// An installed pack no trusted signer signed runs without network,
// writable mounts or services, whatever [packs.<name>] grants, and show
// says why; [trust] restrict_unknown_signers = false lifts it.
func TestUnknownSignersCeiling(t *testing.T) {
	ws := t.TempDir()
	conf := filepath.Join(ws, "skillhost.toml")
	t.Setenv("SKILLHOST_CONFIG", conf)
	src := filepath.Join(t.TempDir(), "weather")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "pack.yaml"), []byte(`name: weather
version: 1.0.0
description: A pack for the ceiling test.
modules:
  - name: m
    path: m.wasm
    request:
      allowed_hosts: ["api.weather.example"]
      services: [mail.send]
    tools:
      - name: weather_get
        description: Get the weather, for the ceiling test.
        input_schema: {type: object, properties: {}}
`), 0o644)
	os.WriteFile(filepath.Join(src, "m.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644)
	grant := "[packs.weather]\nallowed_hosts = [\"api.weather.example\"]\nservices = [\"mail.send\"]\n"
	os.WriteFile(conf, []byte(grant), 0o644)
	if r := cli(t, "", "install", src); r.code != 0 {
		t.Fatalf("install: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r := cli(t, "", "--no-bundled", "show", "weather_get", "--json")
	if r.code != 0 {
		t.Fatalf("show: %d %s %s", r.code, r.stdout, r.stderr)
	}
	var shown struct {
		Effective struct {
			AllowedHosts []string `json:"allowed_hosts"`
			Capabilities []string `json:"capabilities"`
		} `json:"effective"`
		Ceiling []string `json:"ceiling"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown.Effective.AllowedHosts) != 0 || len(shown.Effective.Capabilities) != 0 || len(shown.Ceiling) == 0 || !strings.Contains(shown.Ceiling[0], "signed by no one") {
		t.Fatalf("an unsigned install's grant: %s", r.stdout)
	}
	if r := cli(t, "", "--no-bundled", "show", "weather_get"); !strings.Contains(r.stdout, "no network") {
		t.Fatalf("show does not say why: %s", r.stdout)
	}
	os.WriteFile(conf, []byte("[trust]\nrestrict_unknown_signers = false\n\n"+grant), 0o644)
	r = cli(t, "", "--no-bundled", "show", "weather_get", "--json")
	shown.Ceiling = nil
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || len(shown.Effective.AllowedHosts) != 1 || shown.Ceiling != nil {
		t.Fatalf("without the ceiling: %s %v", r.stdout, err)
	}
}

// An unsigned remote source is refused with what to do about it.
func TestUnsignedRemoteSaysHow(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("SKILLHOST_CONFIG", filepath.Join(ws, "skillhost.toml"))
	os.WriteFile(filepath.Join(ws, "skillhost.toml"), nil, 0o644)
	bare := filepath.Join(t.TempDir(), "skills.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	r := cli(t, "", "install", "git+file://"+bare)
	if r.code != 1 || !strings.Contains(r.stderr, "without a signature") || !strings.Contains(r.stderr, "--allow-unsigned") {
		t.Fatalf("install of an unsigned git source: %d %s %s", r.code, r.stdout, r.stderr)
	}
}
