package packs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// manifestGoldenDir holds one folder per case: <case>/pack.yaml (and the
// module files it names). A pack that loads is compared with
// <case>.golden.json; one that does not, with <case>.errors.txt, one
// error per line. Regenerate with go test ./packs -run Golden -update.
const manifestGoldenDir = "../testdata/packs/manifest"

func TestManifestGolden(t *testing.T) {
	entries, err := os.ReadDir(manifestGoldenDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(manifestGoldenDir, name)
			p, err := Load(os.DirFS(dir), name, "workspace")
			jsonFile := filepath.Join(manifestGoldenDir, name+".golden.json")
			errFile := filepath.Join(manifestGoldenDir, name+".errors.txt")
			var got []byte
			var golden, stale string
			if err != nil {
				if !errors.Is(err, ErrInvalidManifest) {
					t.Fatalf("err = %v, want ErrInvalidManifest", err)
				}
				got = []byte(err.Error() + "\n")
				golden, stale = errFile, jsonFile
			} else {
				if got, err = json.MarshalIndent(p, "", "  "); err != nil {
					t.Fatal(err)
				}
				got = append(got, '\n')
				golden, stale = jsonFile, errFile
			}
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				os.Remove(stale)
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (the case %s; run with -update to create it)", err, map[bool]string{true: "fails", false: "loads"}[golden == errFile])
			}
			if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")); d != "" {
				t.Errorf("%s (-want +got)\n%s", golden, d)
			}
		})
	}
	if n == 0 {
		t.Fatal("no cases")
	}
}

// Every error of every failing case is a *ManifestError that carries a
// line; the goldens show the text, this checks the structure.
func TestManifestGoldenErrorsHaveLines(t *testing.T) {
	// Cases whose problem has no line: a file too big to read, the
	// parser's own depth limit, a missing module file.
	noLine := map[string]bool{"missing-module-file": true, "empty": true}
	entries, _ := os.ReadDir(manifestGoldenDir)
	for _, e := range entries {
		if !e.IsDir() || noLine[e.Name()] {
			continue
		}
		_, err := Load(os.DirFS(filepath.Join(manifestGoldenDir, e.Name())), e.Name(), "workspace")
		if err == nil {
			continue
		}
		for _, inner := range flatten(err) {
			var me *ManifestError
			if !errors.As(inner, &me) || me.Line == 0 {
				t.Errorf("%s: %v has no line", e.Name(), inner)
			}
		}
	}
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
