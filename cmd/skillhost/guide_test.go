package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// guideBlock is one shell block of the guest guide and the toolchain it
// needs.
type guideBlock struct {
	lang, script string
	line         int
}

var guideMark = regexp.MustCompile(`^<!-- guide: (go|tinygo|rust) -->$`)

// guideBlocks reads the sh blocks of guests/README.md; each must follow a
// <!-- guide: LANG --> line, so that no command of the guide goes unrun.
func guideBlocks(t *testing.T, path string) []guideBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []guideBlock
	var cur *guideBlock
	lang := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur != nil && strings.HasPrefix(l, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.script += l + "\n"
		case l == "```sh":
			if lang == "" {
				t.Errorf("%s:%d: a sh block without a <!-- guide: go|tinygo|rust --> line before it", path, n)
			}
			cur = &guideBlock{lang: lang, line: n}
		case guideMark.MatchString(l):
			lang = guideMark.FindStringSubmatch(l)[1]
		case strings.TrimSpace(l) != "":
			lang = ""
		}
	}
	return blocks
}

// TestGuide runs every command of guests/README.md, block by block in one
// folder, with the skillhost of this repository on PATH: skillhost init
// for each language, the project's make test (build, unit tests, validate,
// a call), and the guide's other commands. A block needing TinyGo or Rust
// is skipped where the toolchain is missing, unless
// SKILLHOST_REQUIRE_TOOLCHAINS is set. It runs only with
// SKILLHOST_RUN_GUIDE set: make guide (part of make test) runs it on its
// own, after the packages' tests, since its builds take minutes and would
// hold the package's tests past go test's timeout on a busy machine.
func TestGuide(t *testing.T) {
	if os.Getenv("SKILLHOST_RUN_GUIDE") == "" {
		t.Skip("builds a module in each language; make guide runs it")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	blocks := guideBlocks(t, filepath.Join(repo, "guests", "README.md"))
	if len(blocks) < 4 {
		t.Fatalf("found only %d blocks", len(blocks))
	}
	bin := skillhostBinary(t)
	work := t.TempDir()
	env := append(os.Environ(),
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"REPO="+repo,
		"SKILLHOST_STATE_DIR="+stateDir,
		"SKILLHOST_CONFIG=",
		"HOME="+t.TempDir(),
		// Cargo's compiled dependencies (serde, syn) are kept between runs,
		// as a developer's would be.
		"CARGO_TARGET_DIR="+filepath.Join(stateDir, "cargo-target"),
	)
	// HOME is a fresh folder: Go and rustup keep their caches where they were.
	for _, k := range []string{"GOPATH", "GOMODCACHE", "GOCACHE"} {
		if out, err := exec.Command("go", "env", k).Output(); err == nil {
			env = append(env, k+"="+strings.TrimSpace(string(out)))
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		env = append(env, "RUSTUP_HOME="+filepath.Join(home, ".rustup"), "CARGO_HOME="+filepath.Join(home, ".cargo"))
	}
	require := os.Getenv("SKILLHOST_REQUIRE_TOOLCHAINS") != ""
	have := map[string]bool{"go": true}
	if _, err := exec.LookPath("tinygo"); err == nil {
		have["tinygo"] = true
	}
	if exec.Command("sh", filepath.Join(repo, "scripts", "rust-target.sh")).Run() == nil {
		have["rust"] = true
	}
	for _, b := range blocks {
		if !have[b.lang] {
			if require {
				t.Errorf("README.md:%d needs %s, which is not installed (scripts/setup.sh installs it)", b.line, b.lang)
			} else {
				t.Logf("README.md:%d: skipped, %s is not installed", b.line, b.lang)
			}
			continue
		}
		start := time.Now()
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", b.script)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README.md:%d (%s): %v\n%s\n%s", b.line, b.lang, err, b.script, out)
		}
		t.Logf("README.md:%d (%s) took %v", b.line, b.lang, time.Since(start).Round(time.Millisecond))
		if strings.Contains(b.script, "make test") && !strings.Contains(string(out), `{"words":3,"longest":"Hello"}`) {
			t.Errorf("README.md:%d: make test did not call the tool:\n%s", b.line, out)
		}
	}
}
