package skillhost_test

import (
	"os/exec"
	"strings"
	"testing"
)

// layerRank orders the layers of RATIONALE.md's "Project structure": a
// package may import packages of a lower rank (and of its own layer).
var layerRank = map[string]int{"abi": 0, "host": 1, "packs": 2, "index": 3, "registry": 4, "root": 7, "server": 8, "cmd": 9}

// layerOf names the layer of a package path inside the module: a layer,
// "internal" (the shared helpers under internal/) or "guest" (code built
// into Wasm modules).
func layerOf(rel string) string {
	first, _, _ := strings.Cut(rel, "/")
	switch {
	case rel == "":
		return "root"
	case strings.HasPrefix(rel, "packs/bundled/modules/"), first == "guests":
		return "guest"
	case first == "internal":
		return "internal"
	}
	return first
}

// allowed reports whether a package of layer from may import one of layer
// to.
func allowed(from, to string) bool {
	switch from {
	case "internal":
		return to == "abi" || to == "internal"
	case "guest":
		return to == "abi" || to == "internal" || to == "guest"
	}
	if to == "internal" {
		return true
	}
	rf, okf := layerRank[from]
	rt, okt := layerRank[to]
	return okf && okt && (rt < rf || from == to)
}

// TestPackageLayers holds every package to the import rules of
// RATIONALE.md's "Project structure" (test files aside).
func TestPackageLayers(t *testing.T) {
	const module = "github.com/skillhost/skillhost"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		for _, imp := range fields[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if !allowed(layerOf(from), layerOf(to)) {
				t.Errorf("%s (%s) imports %s (%s)", fields[0], layerOf(from), imp, layerOf(to))
			}
		}
	}
}

// The rules refuse what RATIONALE.md forbids.
func TestLayerRules(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"index", "packs", true}, {"index/internal/textsearch", "index", true}, {"registry", "index", true},
		{"cmd/skillhost", "", true}, {"", "registry", true}, {"guests/go/skill", "internal/goschema", true},
		{"packs", "index", false}, {"host", "packs", false}, {"index", "registry", false}, {"abi", "host", false},
		{"registry", "", false}, {"", "cmd/skillhost", false}, {"internal/evalset", "index", false}, {"guests/go/skill", "host", false},
	} {
		if got := allowed(layerOf(c.from), layerOf(c.to)); got != c.ok {
			t.Errorf("%q importing %q: allowed %v, want %v", c.from, c.to, got, c.ok)
		}
	}
}
