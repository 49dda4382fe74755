package skillhost_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/skillhost/skillhost"

// layerRow is one row of the layer table of RATIONALE.md's "Project
// structure".
type layerRow struct {
	layer    string   // the first column: a layer's name
	packages []string // the packages column: paths in the module, "." for the root
	imports  []string // the imports column: the layers its packages may import
	any      bool     // the imports column says "any"
}

// readLayerTable parses the layer table of RATIONALE.md's "Project
// structure": the rows of the first table after that heading, whose
// columns are the layer, its packages (backquoted paths, "." for the
// root, "—" for none yet), what lives there, and the layers its packages
// import (backquoted layer names, "none" or "any").
func readLayerTable(t *testing.T, rationale string) []layerRow {
	t.Helper()
	_, section, ok := strings.Cut(rationale, "\n# Project structure\n")
	if !ok {
		t.Fatal(`RATIONALE.md has no "# Project structure" section`)
	}
	section, _, _ = strings.Cut(section, "\n# ")
	var rows []layerRow
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if !inTable { // the header
			inTable = true
			if len(cells) != 4 || cells[0] != "layer" || cells[1] != "packages" {
				t.Fatalf("layer table header %q, want | layer | packages | what lives there | imports (of skillhost) |", line)
			}
			continue
		}
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		if len(cells) != 4 {
			t.Fatalf("layer table row %q has %d columns, want 4", line, len(cells))
		}
		r := layerRow{layer: cells[0], packages: quoted(cells[1]), imports: quoted(cells[3]), any: cells[3] == "any"}
		if strings.HasSuffix(r.layer, "(future)") { // a layer to come: no packages, no imports yet
			if len(r.packages) > 0 || len(r.imports) > 0 {
				t.Errorf("layer table row %q has packages or imports: a layer that exists is not \"(future)\"", r.layer)
			}
			rows = append(rows, r)
			continue
		}
		if len(r.packages) == 0 {
			t.Errorf("layer table row %q names no package (a layer to come is marked \"(future)\")", r.layer)
		}
		if len(r.imports) == 0 && !r.any && !strings.HasPrefix(cells[3], "none") {
			t.Errorf("layer table row %q: imports %q, want backquoted layer names, \"none\" or \"any\"", r.layer, cells[3])
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatal("RATIONALE.md's Project structure has no layer table")
	}
	return rows
}

// quoted returns the backquoted words of a table cell.
func quoted(cell string) []string {
	var out []string
	parts := strings.Split(cell, "`")
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}

// layers is the layer table, indexed: the row of each package, and the
// position of each layer in the table.
type layers struct {
	rows  []layerRow
	rowOf map[string]int // package ("." for the root) → row
	pos   map[string]int // layer → row
}

func indexLayers(t *testing.T, rows []layerRow) layers {
	t.Helper()
	l := layers{rows: rows, rowOf: map[string]int{}, pos: map[string]int{}}
	for i, r := range rows {
		if _, dup := l.pos[r.layer]; dup {
			t.Errorf("layer table: layer %q has two rows", r.layer)
		}
		l.pos[r.layer] = i
		for _, p := range r.packages {
			if j, dup := l.rowOf[p]; dup {
				t.Errorf("layer table: package %s is in rows %q and %q", p, rows[j].layer, r.layer)
			}
			l.rowOf[p] = i
		}
	}
	// A layer imports only layers listed before its own: the table is
	// the order of the layers, and no two depend on each other.
	for i, r := range rows {
		for _, imp := range r.imports {
			j, ok := l.pos[imp]
			switch {
			case !ok:
				t.Errorf("layer table: row %q imports %q, which is no layer of the table", r.layer, imp)
			case j >= i:
				t.Errorf("layer table: row %q imports %q, which is not listed before it", r.layer, imp)
			}
		}
	}
	return l
}

// allowed reports whether a package in the row of from may import one in
// the row of to: the same row, a row its imports column names, or any for
// "any".
func (l layers) allowed(from, to string) bool {
	rf, okf := l.rowOf[from]
	rt, okt := l.rowOf[to]
	if !okf || !okt {
		return false
	}
	r := l.rows[rf]
	return rf == rt || r.any || slices.Contains(r.imports, l.rows[rt].layer)
}

// listPackages returns each package of the module ("." for the root)
// with the packages of the module it imports (test files aside).
func listPackages(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) string {
		if p == module {
			return "."
		}
		return strings.TrimPrefix(p, module+"/")
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from := rel(fields[0])
		pkgs[from] = nil
		for _, imp := range fields[1:] {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				pkgs[from] = append(pkgs[from], rel(imp))
			}
		}
	}
	return pkgs
}

// TestPackageLayers holds every package to the layer table of
// RATIONALE.md's "Project structure", read from the file: each package is
// in one row, imports only what its row allows, and the table claims no
// package or import that is not there.
func TestPackageLayers(t *testing.T) {
	text, err := os.ReadFile("RATIONALE.md")
	if err != nil {
		t.Fatal(err)
	}
	l := indexLayers(t, readLayerTable(t, string(text)))
	pkgs := listPackages(t)
	used := map[string]map[string]bool{} // layer → layers its packages import
	for from, imports := range pkgs {
		rf, ok := l.rowOf[from]
		if !ok {
			t.Errorf("package %s is in no row of RATIONALE.md's layer table: add it to the packages of %s", from, suggestRow(from))
			continue
		}
		for _, to := range imports {
			rt, ok := l.rowOf[to]
			if !ok {
				continue // reported as a package of no row
			}
			if !l.allowed(from, to) {
				t.Errorf("%s (layer %s) imports %s (layer %s), which RATIONALE.md's layer table does not allow", from, l.rows[rf].layer, to, l.rows[rt].layer)
			}
			if rf != rt {
				if used[l.rows[rf].layer] == nil {
					used[l.rows[rf].layer] = map[string]bool{}
				}
				used[l.rows[rf].layer][l.rows[rt].layer] = true
			}
		}
	}
	for _, r := range l.rows {
		for _, p := range r.packages {
			if _, ok := pkgs[p]; !ok {
				t.Errorf("RATIONALE.md's layer table lists package %s (row %q), which does not exist", p, r.layer)
			}
		}
		for _, imp := range r.imports {
			if !used[r.layer][imp] {
				t.Errorf("RATIONALE.md's layer table lets %s import %s, which none of its packages does: drop it from the row", r.layer, imp)
			}
		}
	}
}

// suggestRow names the row a new package belongs in, by where it is.
func suggestRow(pkg string) string {
	first, _, _ := strings.Cut(pkg, "/")
	switch {
	case first == "internal":
		return `the row "internal" (helpers several layers share)`
	case first == "guests", strings.HasPrefix(pkg, "packs/bundled/modules/"):
		return `the row "guests" (code built into Wasm modules)`
	case strings.Contains(pkg, "/internal/"):
		return fmt.Sprintf("the row of %s, whose implementation it is", first)
	}
	return "the row of its layer, or a new row where its imports put it"
}

// The table forbids what the layering is for: no lower layer reaches up,
// the host and the index know nothing of each other, and helpers and
// guests stay below everything.
func TestLayerRules(t *testing.T) {
	text, err := os.ReadFile("RATIONALE.md")
	if err != nil {
		t.Fatal(err)
	}
	l := indexLayers(t, readLayerTable(t, string(text)))
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"index", "packs", true}, {"index/internal/textsearch", "index", true}, {"registry", "index", true},
		{"cmd/skillhost", ".", true}, {".", "registry", true}, {"guests/go/skill", "internal/goschema", true},
		{"packs", "abi", true}, {"server", "registry", true},
		{"packs", "index", false}, {"packs", "host", false}, {"index", "host", false}, {"host", "packs", false},
		{"index", "registry", false}, {"abi", "host", false}, {"registry", ".", false}, {".", "server", false},
		{"internal/evalset", "index", false}, {"guests/go/skill", "host", false}, {"host", "index", false},
	} {
		if got := l.allowed(c.from, c.to); got != c.ok {
			t.Errorf("%q importing %q: allowed %v, want %v", c.from, c.to, got, c.ok)
		}
	}
}
