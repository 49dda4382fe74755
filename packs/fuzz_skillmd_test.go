package packs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
)

var hex64RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// FuzzParseSkillMD feeds arbitrary files to ParseSkillMD, seeded with the
// golden and hostile cases. It never panics; a success is a well-formed
// skill whose instructions are the file's tail, a failure a
// *ManifestError.
func FuzzParseSkillMD(f *testing.F) {
	fsys := os.DirFS(skillmdTestdata)
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			if data, err := fs.ReadFile(fsys, p); err == nil {
				f.Add(data, path.Base(path.Dir(p)))
			}
		}
		return nil
	})
	for _, tc := range hostileSkillMDCases() {
		if len(tc.data) < 64<<10 {
			f.Add(tc.data, tc.dir)
		}
	}
	f.Add([]byte("---\r\nname: a\r\ndescription: b\r\nallowed-tools: Bash(x y) z\r\n---\r\n"), "a")
	f.Add([]byte("\ufeff---\nname: a\ndescription: b\nmetadata: {k: 1}\n---"), "a")
	f.Fuzz(func(t *testing.T, data []byte, dir string) {
		s, err := ParseSkillMD("f/SKILL.md", data, dir)
		if err != nil {
			if s != nil {
				t.Fatal("skill returned with an error")
			}
			if !errors.Is(err, ErrInvalidManifest) {
				t.Fatalf("error %q is not a manifest error", err)
			}
			return
		}
		if s.Name == "" || s.Kind != KindAgent || s.Subagent == nil {
			t.Fatalf("incomplete skill: %+v", s)
		}
		if dir != "" && s.Name != dir {
			t.Fatalf("name %q accepted for folder %q", s.Name, dir)
		}
		if !strings.HasSuffix(string(data), s.Instructions) {
			t.Fatalf("instructions %q are not the end of the file", s.Instructions)
		}
		if !hex64RE.MatchString(s.ContentHash) {
			t.Fatalf("content hash %q", s.ContentHash)
		}
		if it := s.Subagent.MaxIterations; it < 1 || it > 100 {
			t.Fatalf("max_iterations %d", it)
		}
		for _, tool := range s.AllowedTools {
			if strings.TrimSpace(tool) == "" {
				t.Fatalf("blank tool in %q", s.AllowedTools)
			}
		}
	})
}
