package evalset

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// LoadSets reads the parts of an evaluation set kept in dir: for each part
// P of sets, the catalogue tools-P.jsonl and the queries queries-P.jsonl.
// Files are read in name order; a part whose files are missing adds
// nothing, so a dir without the set gives no tools and no queries.
func LoadSets(dir string, sets ...string) ([]Tool, []Query, error) {
	var toolFiles, queryFiles []string
	for _, set := range sets {
		tf, _ := filepath.Glob(filepath.Join(dir, "tools-"+set+".jsonl"))
		qf, _ := filepath.Glob(filepath.Join(dir, "queries-"+set+".jsonl"))
		toolFiles, queryFiles = append(toolFiles, tf...), append(queryFiles, qf...)
	}
	sort.Strings(toolFiles)
	sort.Strings(queryFiles)
	var tools []Tool
	for _, p := range toolFiles {
		ts, err := readSetFile(p, LoadCatalog)
		if err != nil {
			return nil, nil, err
		}
		tools = append(tools, ts...)
	}
	var queries []Query
	for _, p := range queryFiles {
		qs, err := readSetFile(p, LoadQueries)
		if err != nil {
			return nil, nil, err
		}
		queries = append(queries, qs...)
	}
	return tools, queries, nil
}

func readSetFile[T any](path string, load func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
