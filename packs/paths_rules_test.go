package packs

import (
	"io/fs"
	"path"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// looseFS is an fs.FS that does not validate the names it is given, as a
// hand-written FS over a folder may not: it serves the folder "root/in"
// of a larger tree, and a name with ".." steps reaches out of it. It
// records every name it is asked to open.
type looseFS struct {
	tree fstest.MapFS
	mu   sync.Mutex
	seen []string
}

func (l *looseFS) Open(name string) (fs.File, error) {
	l.mu.Lock()
	l.seen = append(l.seen, name)
	l.mu.Unlock()
	return l.tree.Open(path.Join("root/in", name))
}

// outside returns the names it was asked for that lie outside its folder.
func (l *looseFS) outside() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, name := range l.seen {
		if p := path.Join("root/in", name); p != "root/in" && !strings.HasPrefix(p, "root/in/") {
			out = append(out, name)
		}
	}
	return out
}

func skillMD(name string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: A skill.\n---\nBody.\n")}
}

// LoadSkillDir and LoadSkillFile refuse a path that climbs out of the FS
// by themselves, before asking the FS for anything: an FS that does not
// check the names it is given would otherwise serve a skill from outside
// the folder it stands for.
func TestLoadSkillRefusesPathsOutOfTheFS(t *testing.T) {
	loose := &looseFS{tree: fstest.MapFS{
		"root/in/inside/SKILL.md": skillMD("inside"),
		"root/in/flat.md":         skillMD("flat"),
		"root/x/SKILL.md":         skillMD("x"),
		"root/x/secret.txt":       {Data: []byte("secret")},
		"root/x.md":               skillMD("x"),
		"x/SKILL.md":              skillMD("x"),
		"x.md":                    skillMD("x"),
	}}
	// The FS does serve what lies outside, and what lies inside loads.
	if _, err := fs.Stat(loose, "../x/SKILL.md"); err != nil {
		t.Fatalf("the loose FS does not reach out: %v", err)
	}
	if s, err := LoadSkillDir(loose, "inside"); err != nil || s.Name != "inside" {
		t.Fatalf("a skill folder inside: %+v, %v", s, err)
	}
	if s, err := LoadSkillFile(loose, "flat.md"); err != nil || s.Name != "flat" {
		t.Fatalf("a skill file inside: %+v, %v", s, err)
	}
	loose.seen = nil
	for _, dir := range []string{"../x", "inside/../../x", "../../x", "..", "/x", "./x"} {
		if s, err := LoadSkillDir(loose, dir); err == nil {
			t.Errorf("LoadSkillDir(%q) loaded %q", dir, s.Name)
		}
	}
	for _, name := range []string{"../x.md", "inside/../../x.md", "../../x.md", "/x.md", "./x.md"} {
		if s, err := LoadSkillFile(loose, name); err == nil {
			t.Errorf("LoadSkillFile(%q) loaded %q", name, s.Name)
		}
	}
	if out := loose.outside(); len(out) > 0 {
		t.Errorf("the FS was asked for %q, outside its folder", out)
	}
}
