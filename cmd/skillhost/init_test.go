package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

func TestInitWritesProjects(t *testing.T) {
	for _, tt := range []struct {
		lang string
		want []string
	}{
		{"go", []string{"Makefile", "README.md", "go.mod", "go.sum", "main.go", "main_test.go", "pack.yaml",
			"third_party/skillhost/abi/abi.go", "third_party/skillhost/go.mod", "third_party/skillhost/guests/go/skill/skill.go",
			"third_party/skillhost/guests/go/skill/skilltest/skilltest.go", "third_party/skillhost/internal/goschema/schema.go"}},
		{"tinygo", []string{"Makefile", "main.go", "third_party/skillhost/guests/go/skill/skill.go"}},
		{"rust", []string{".gitignore", "Cargo.toml", "Makefile", "README.md", "build.sh", "pack.yaml", "rust-target.sh", "src/lib.rs",
			"skillhost-guest/Cargo.toml", "skillhost-guest/src/lib.rs", "skillhost-guest/src/typed.rs", "skillhost-guest/derive/src/lib.rs"}},
	} {
		t.Run(tt.lang, func(t *testing.T) {
			files, err := initProject("my-tools", tt.lang)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if _, ok := files[w]; !ok {
					t.Errorf("no %s among %v", w, sortedKeys(files))
				}
			}
			for p, b := range files {
				if strings.HasSuffix(p, "_test.go") && !strings.HasPrefix(p, "main") || strings.HasSuffix(p, ".tmpl") {
					t.Errorf("%s should not be written", p)
				}
				if strings.Contains(string(b), "{%") {
					t.Errorf("%s holds an unexpanded template action", p)
				}
			}
			if lines := strings.Count(strings.TrimSpace(string(files["README.md"])), "\n") + 1; lines != 5 {
				t.Errorf("README.md has %d lines, want 5", lines)
			}
			if !strings.Contains(string(files["pack.yaml"]), "name: my-tools") {
				t.Errorf("pack.yaml:\n%s", files["pack.yaml"])
			}
		})
	}
	for _, bad := range []struct{ name, lang, want string }{
		{"My Tools", "go", "cannot name a pack"},
		{"1tools", "go", "cannot name a pack"},
		{"tools", "cobol", `--lang "cobol": use go, tinygo or rust`},
	} {
		if _, err := initProject(bad.name, bad.lang); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("init %q --lang %s: %v, want %q", bad.name, bad.lang, err, bad.want)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "keep.txt"), nil, 0o644)
	if r := cli(t, "", "init", "x", "--dir", dir); r.code != 2 || !strings.Contains(r.stderr, "is not empty") {
		t.Errorf("init into a folder with files: exit %d, %s", r.code, r.stderr)
	}
}

// The SDK versions a Go project is given are those skillhost is built with.
func TestInitGoModulesMatchTheRepository(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join("..", "..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go " + goVersion + "\n", "github.com/extism/go-pdk " + goPDK + "\n", "github.com/google/go-cmp " + goCmp + "\n"} {
		if !strings.Contains(string(mod), want) {
			t.Errorf("go.mod has no %q: update init.go", strings.TrimSpace(want))
		}
	}
	sc := bufio.NewScanner(strings.NewReader(goSum))
	for sc.Scan() {
		if !strings.Contains(string(sum), sc.Text()+"\n") {
			t.Errorf("go.sum has no %q: update init.go", sc.Text())
		}
	}
}

// The Rust template's toolchain finder is the repository's.
func TestInitRustTargetScriptIsTheRepositorys(t *testing.T) {
	repo, err := os.ReadFile(filepath.Join("..", "..", "scripts", "rust-target.sh"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := initProject("x", "rust")
	if err != nil {
		t.Fatal(err)
	}
	if string(files["rust-target.sh"]) != string(repo) {
		t.Error("the template's rust-target.sh differs from scripts/rust-target.sh: copy it over")
	}
}

var (
	cliBinOnce sync.Once
	cliBin     string
	cliBinErr  error
)

// skillhostBinary builds the skillhost command once, without the race
// detector: the projects' Makefiles run it.
func skillhostBinary(t *testing.T) string {
	t.Helper()
	cliBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "skillhost-bin-")
		if err != nil {
			cliBinErr = err
			return
		}
		cliBin = filepath.Join(dir, "skillhost")
		out, err := exec.Command("go", "build", "-o", cliBin, ".").CombinedOutput()
		if err != nil {
			cliBinErr = &buildError{string(out)}
		}
	})
	if cliBinErr != nil {
		t.Fatal(cliBinErr)
	}
	return cliBin
}

type buildError struct{ out string }

func (e *buildError) Error() string { return "building skillhost: " + e.out }

func sortedKeys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// rust-target.sh prefers a rustup toolchain's wasm32-wasip1, takes
// wasm32-wasi from an older one, falls back to Debian's rustc, and says
// what to install when nothing fits. The toolchains are fakes: a rustc
// script that prints a sysroot holding the targets' libraries.
func TestRustTargetDetection(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "rust-target.sh"))
	if err != nil {
		t.Fatal(err)
	}
	fake := func(targets ...string) string {
		dir := t.TempDir()
		sysroot := filepath.Join(dir, "sysroot")
		for _, tg := range targets {
			if err := os.MkdirAll(filepath.Join(sysroot, "lib", "rustlib", tg, "lib"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		bin := filepath.Join(dir, "bin")
		os.MkdirAll(bin, 0o755)
		os.WriteFile(filepath.Join(bin, "rustc"), []byte("#!/bin/sh\n[ \"$1 $2\" = \"--print sysroot\" ] && echo "+sysroot+"\n"), 0o755)
		os.WriteFile(filepath.Join(bin, "cargo"), []byte("#!/bin/sh\n"), 0o755)
		return bin
	}
	run := func(bin, want string) (string, error) {
		cmd := exec.Command("sh", script)
		cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin")
		if want != "" {
			cmd.Env = append(cmd.Env, "RUST_TARGET="+want)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	debian := false
	if _, err := os.Stat("/usr/lib/rustlib/wasm32-wasi/lib"); err == nil {
		debian = true
	}
	wasip1 := fake("x86_64-unknown-linux-gnu", "wasm32-wasip1", "wasm32-wasi")
	out, err := run(wasip1, "")
	if err != nil || !strings.Contains(out, "RUSTC="+wasip1+"/rustc\n") || !strings.Contains(out, "RUST_TARGET=wasm32-wasip1\n") || !strings.Contains(out, "CARGO="+wasip1+"/cargo\n") {
		t.Errorf("rustup with wasm32-wasip1: %v\n%s", err, out)
	}
	if out, err := run(fake("wasm32-wasi"), ""); err != nil || !strings.Contains(out, "RUST_TARGET=wasm32-wasi\n") {
		t.Errorf("older rustup with wasm32-wasi: %v\n%s", err, out)
	}
	if out, err := run(fake("wasm32-unknown-unknown"), "wasm32-unknown-unknown"); err != nil || !strings.Contains(out, "RUST_TARGET=wasm32-unknown-unknown\n") {
		t.Errorf("RUST_TARGET=wasm32-unknown-unknown: %v\n%s", err, out)
	}
	out, err = run(fake("x86_64-unknown-linux-gnu"), "")
	if debian {
		if err != nil || !strings.Contains(out, "RUSTC=/usr/bin/rustc\n") || !strings.Contains(out, "RUST_TARGET=wasm32-wasi\n") {
			t.Errorf("rustup without wasm targets, Debian's rustc installed: %v\n%s", err, out)
		}
	} else if err == nil || !strings.Contains(out, "rustup target add wasm32-wasip1") {
		t.Errorf("no wasm toolchain: %v\n%s", err, out)
	}
	// Debian's rustc 1.63 has no wasm32-wasip1 either.
	out, err = run(fake("x86_64-unknown-linux-gnu"), "wasm32-wasip1")
	if err == nil || !strings.Contains(out, "rustup target add wasm32-wasip1") {
		t.Errorf("RUST_TARGET=wasm32-wasip1 and no toolchain has it: %v\n%s", err, out)
	}
}
