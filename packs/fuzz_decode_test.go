package packs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecodeYAML feeds arbitrary text to decodeYAML: it never panics,
// every error is a ManifestError, and a document it accepts can be
// converted and checked against every embedded schema without panicking.
func FuzzDecodeYAML(f *testing.F) {
	for _, seed := range []string{
		goodManifest,
		billionLaughs(4),
		"a: &x [1, *x]\n",
		"{\"a\": \"\\ud83d\\ude00\", \"n\": 1e400}",
		"a:\n\tb: 1\n",
		"1: a\n[x]: y\n",
		"x: {<<: [*y]}\n",
		"base: &b {k: 1}\nm:\n  <<: *b\n",
		"v: !!int 0x1F\nw: .inf\n",
		strings.Repeat("[", 300) + strings.Repeat("]", 300),
		"--- a\n--- b\n",
	} {
		f.Add([]byte(seed))
	}
	// The testdata manifests and any YAML or JSON the other parsers keep.
	_ = filepath.WalkDir("../testdata/packs", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if ext := filepath.Ext(p); ext == ".yaml" || ext == ".yml" || ext == ".json" {
			if data, err := os.ReadFile(p); err == nil && len(data) < 16<<10 {
				f.Add(data)
			}
		}
		return nil
	})
	names, _ := fs.Glob(schemaFiles, "schemas/*.schema.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := decodeYAML("f.yaml", data)
		if err != nil {
			if !errors.Is(err, ErrInvalidManifest) {
				t.Fatalf("error %v is not a ManifestError", err)
			}
			return
		}
		if _, err := nodeValue("f.yaml", n); err != nil && !errors.Is(err, ErrInvalidManifest) {
			t.Fatalf("nodeValue: %v", err)
		}
		for _, name := range names {
			schema := strings.TrimSuffix(strings.TrimPrefix(name, "schemas/"), ".schema.json")
			for _, e := range checkSchema(schema, "f.yaml", n) {
				if e == nil {
					t.Fatal("nil error")
				}
			}
		}
	})
}
