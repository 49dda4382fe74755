package evalset

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// evalDir holds the project's own evaluation set, written in halves
// (tools-a/queries-a, tools-b/queries-b) that are checked together.
const evalDir = "../../testdata/eval"

// minEvalSet is how many tools and queries the full set must have.
const minEvalSet = 500

func TestEvalSetValid(t *testing.T) {
	toolFiles, _ := filepath.Glob(filepath.Join(evalDir, "tools-*.jsonl"))
	queryFiles, _ := filepath.Glob(filepath.Join(evalDir, "queries-*.jsonl"))
	sort.Strings(toolFiles)
	sort.Strings(queryFiles)
	if len(toolFiles) == 0 || len(queryFiles) == 0 {
		t.Fatalf("no evaluation set in %s", evalDir)
	}

	var catalog []Tool
	defined := map[string]string{} // name -> file:line
	for _, path := range toolFiles {
		tools := loadFile(t, path, LoadCatalog)
		for _, tool := range tools {
			where := filepath.Base(path) + ":" + strconv.Itoa(tool.Line)
			if prev, dup := defined[tool.Name]; dup {
				t.Errorf("tool %q defined at %s and again at %s", tool.Name, prev, where)
			}
			defined[tool.Name] = where
		}
		catalog = append(catalog, tools...)
		t.Logf("%s: %d tools", filepath.Base(path), len(tools))
	}

	var queries []Query
	for _, path := range queryFiles {
		qs := loadFile(t, path, LoadQueries)
		if err := Validate(catalog, qs); err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
		}
		for _, q := range qs {
			if len(q.Expected) > 3 {
				t.Errorf("%s:%d lists %d expected tools; expected 1 to 3", filepath.Base(path), q.Line, len(q.Expected))
			}
		}
		queries = append(queries, qs...)
		t.Logf("%s: %d queries", filepath.Base(path), len(qs))
	}

	seenText := map[string]bool{}
	for _, q := range queries {
		if seenText[q.Text] {
			t.Errorf("query %q appears twice", q.Text)
		}
		seenText[q.Text] = true
	}

	if len(toolFiles) < 2 || len(queryFiles) < 2 {
		t.Skipf("only %d tool files and %d query files; the %d-tool, %d-query minimum is checked once both halves exist", len(toolFiles), len(queryFiles), minEvalSet, minEvalSet)
	}
	if len(catalog) < minEvalSet {
		t.Errorf("%d tools in all, want at least %d", len(catalog), minEvalSet)
	}
	if len(queries) < minEvalSet {
		t.Errorf("%d queries in all, want at least %d", len(queries), minEvalSet)
	}
}

func loadFile[T any](t *testing.T, path string, load func(io.Reader) ([]T, error)) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := load(f)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return v
}

func BenchmarkLoadCatalog(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(evalDir, "tools-a.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadCatalog(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
