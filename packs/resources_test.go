package packs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

const okSkillMD = "---\nname: s\ndescription: A test skill.\n---\nInstructions.\n"

// writeTree writes files (slash paths relative to root) and returns root.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

// extraEntryFS adds a directory entry with an arbitrary name to one
// folder's listing, as a broken or hostile fs.FS could.
type extraEntryFS struct {
	fstest.MapFS
	dir, name string
}

func (f extraEntryFS) Open(name string) (fs.File, error) {
	file, err := f.MapFS.Open(name)
	if err != nil || name != f.dir {
		return file, err
	}
	return &extraEntryDir{ReadDirFile: file.(fs.ReadDirFile), name: f.name}, nil
}

type extraEntryDir struct {
	fs.ReadDirFile
	name string
	done bool
}

func (d *extraEntryDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.done {
		return nil, io.EOF
	}
	d.done = true
	entries, err := d.ReadDirFile.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	fi := fstest.MapFile{Data: []byte("x")}
	entries = append(entries, fs.FileInfoToDirEntry(namedInfo{name: d.name, mode: fi.Mode}))
	return entries, nil
}

type namedInfo struct {
	name string
	mode fs.FileMode
}

func (i namedInfo) Name() string       { return i.name }
func (i namedInfo) Size() int64        { return 1 }
func (i namedInfo) Mode() fs.FileMode  { return i.mode }
func (i namedInfo) ModTime() time.Time { return time.Time{} }
func (i namedInfo) IsDir() bool        { return i.mode.IsDir() }
func (i namedInfo) Sys() any           { return nil }

// lyingSizeFS reports every file other than SKILL.md as 1 byte long,
// whatever it holds, as a file that grows while it is read would.
type lyingSizeFS struct{ m fstest.MapFS }

func (f lyingSizeFS) Open(name string) (fs.File, error) {
	file, err := f.m.Open(name)
	if err != nil || strings.HasSuffix(name, SkillFile) {
		return file, err
	}
	if st, err := file.Stat(); err == nil && !st.IsDir() {
		return lyingFile{file}, nil
	}
	return file, nil
}

type lyingFile struct{ fs.File }

func (f lyingFile) Stat() (fs.FileInfo, error) {
	st, err := f.File.Stat()
	if err != nil {
		return nil, err
	}
	return namedInfo{name: st.Name(), mode: st.Mode()}, nil
}

// noLinkFS hides ReadLink/Lstat from a MapFS that holds symlinks.
type noLinkFS struct{ m fstest.MapFS }

func (f noLinkFS) Open(name string) (fs.File, error) { return f.m.Open(name) }

// TestLoadSkillDirHostile checks that hostile skill folders are refused
// with the exact messages in testdata/packs/skillmd/hostile-folder.golden.txt.
func TestLoadSkillDirHostile(t *testing.T) {
	manyFiles := fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}}
	for i := range MaxSkillFiles + 1 {
		manyFiles[fmt.Sprintf("s/assets/f%03d.txt", i)] = &fstest.MapFile{Data: []byte("x")}
	}
	big := fstest.MapFS{
		"s/SKILL.md":         {Data: []byte(okSkillMD)},
		"s/assets/a.bin":     {Data: make([]byte, 9<<20)},
		"s/assets/b/c.bin":   {Data: make([]byte, 8<<20)},
		"s/references/r.md":  {Data: []byte("# r\n")},
		"s/scripts/run.wasm": {Data: []byte("\x00asm")},
	}
	deep := fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}}
	deep["s/"+strings.Repeat("d/", maxSkillDepth+1)+"f.txt"] = &fstest.MapFile{Data: []byte("x")}
	manyDirs := fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}}
	for i := range maxSkillDirs + 1 {
		manyDirs[fmt.Sprintf("s/d%03d/f.txt", i)] = &fstest.MapFile{Data: []byte("x")}
	}
	wideDir := fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}}
	for i := range MaxSkillFiles + maxSkillDirs + 2 {
		wideDir[fmt.Sprintf("s/assets/e%04d", i)] = &fstest.MapFile{Mode: fs.ModeDir}
	}

	cases := []struct {
		name string
		fsys func(t *testing.T) fs.FS
	}{
		{"dotdot-entry", func(t *testing.T) fs.FS {
			return extraEntryFS{fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}, "s/scripts/a.sh": {Data: []byte("x")}}, "s/scripts", ".."}
		}},
		{"dotdot-path-entry", func(t *testing.T) fs.FS {
			return extraEntryFS{fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}, "s/scripts/a.sh": {Data: []byte("x")}}, "s/scripts", "../../../etc/passwd"}
		}},
		{"control-character-entry", func(t *testing.T) fs.FS {
			return extraEntryFS{fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}, "s/assets/a.txt": {Data: []byte("x")}}, "s/assets", "evil\nname.txt"}
		}},
		{"invalid-utf8-entry", func(t *testing.T) fs.FS {
			return extraEntryFS{fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}, "s/assets/a.txt": {Data: []byte("x")}}, "s/assets", "caf\xe9.txt"}
		}},
		{"symlink-absolute", func(t *testing.T) fs.FS {
			root := writeTree(t, map[string]string{"s/SKILL.md": okSkillMD})
			symlink(t, "/etc/passwd", filepath.Join(root, "s", "references", "passwd.md"))
			return os.DirFS(root)
		}},
		{"symlink-relative-out", func(t *testing.T) fs.FS {
			root := writeTree(t, map[string]string{"s/SKILL.md": okSkillMD, "secret.txt": "token"})
			symlink(t, "../../secret.txt", filepath.Join(root, "s", "assets", "secret.txt"))
			return os.DirFS(root)
		}},
		{"symlink-dir-out", func(t *testing.T) fs.FS {
			root := writeTree(t, map[string]string{"s/SKILL.md": okSkillMD, "outside/key.pem": "k"})
			symlink(t, "../outside", filepath.Join(root, "s", "assets"))
			return os.DirFS(root)
		}},
		{"symlink-dotdot-through-link", func(t *testing.T) fs.FS {
			// here -> . is inside; a lexical check would take
			// here/../secret.txt for secret.txt inside the folder, but the
			// system resolves here first and leaves it.
			root := writeTree(t, map[string]string{"s/SKILL.md": okSkillMD, "secret.txt": "token"})
			symlink(t, ".", filepath.Join(root, "s", "here"))
			symlink(t, "here/../secret.txt", filepath.Join(root, "s", "trick.txt"))
			return os.DirFS(root)
		}},
		{"symlink-loop", func(t *testing.T) fs.FS {
			root := writeTree(t, map[string]string{"s/SKILL.md": okSkillMD})
			symlink(t, "b", filepath.Join(root, "s", "a"))
			symlink(t, "a", filepath.Join(root, "s", "b"))
			return os.DirFS(root)
		}},
		{"symlink-dangling", func(t *testing.T) fs.FS {
			root := writeTree(t, map[string]string{"s/SKILL.md": okSkillMD})
			symlink(t, "missing.md", filepath.Join(root, "s", "references", "gone.md"))
			return os.DirFS(root)
		}},
		{"symlink-skill-md-out", func(t *testing.T) fs.FS {
			root := writeTree(t, map[string]string{"other/SKILL.md": okSkillMD})
			symlink(t, "../other/SKILL.md", filepath.Join(root, "s", "SKILL.md"))
			return os.DirFS(root)
		}},
		{"mapfs-symlink-out", func(t *testing.T) fs.FS {
			return fstest.MapFS{
				"s/SKILL.md":      {Data: []byte(okSkillMD)},
				"s/scripts/x.sh":  {Data: []byte("../../outside.sh"), Mode: fs.ModeSymlink},
				"outside.sh":      {Data: []byte("echo out")},
				"s/scripts/ok.sh": {Data: []byte("echo ok")},
			}
		}},
		{"symlink-without-readlinkfs", func(t *testing.T) fs.FS {
			return noLinkFS{fstest.MapFS{
				"s/SKILL.md":      {Data: []byte(okSkillMD)},
				"s/scripts/x.sh":  {Data: []byte("ok.sh"), Mode: fs.ModeSymlink},
				"s/scripts/ok.sh": {Data: []byte("echo ok")},
			}}
		}},
		{"513-files", func(t *testing.T) fs.FS { return manyFiles }},
		{"17-MiB", func(t *testing.T) fs.FS { return big }},
		{"file-larger-than-listed", func(t *testing.T) fs.FS {
			return lyingSizeFS{fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}, "s/assets/big.bin": {Data: make([]byte, MaxSkillBytes)}}}
		}},
		{"too-deep", func(t *testing.T) fs.FS { return deep }},
		{"too-many-folders", func(t *testing.T) fs.FS { return manyDirs }},
		{"huge-folder-listing", func(t *testing.T) fs.FS { return wideDir }},
		{"skill-md-over-1MiB", func(t *testing.T) fs.FS {
			return fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD + strings.Repeat("x\n", 600<<10))}}
		}},
		{"skill-md-is-folder", func(t *testing.T) fs.FS {
			return fstest.MapFS{"s/SKILL.md/x": {Data: []byte("x")}}
		}},
		{"problems-in-both", func(t *testing.T) fs.FS {
			root := writeTree(t, map[string]string{"s/SKILL.md": "---\nname: t\ndescription: d\n---\n"})
			symlink(t, "/etc", filepath.Join(root, "s", "etc"))
			return os.DirFS(root)
		}},
		{"special-file", func(t *testing.T) fs.FS {
			return fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}, "s/pipe": {Mode: fs.ModeNamedPipe}}
		}},
	}
	var got strings.Builder
	for _, tc := range cases {
		s, err := LoadSkillDir(tc.fsys(t), "s")
		if err == nil {
			t.Errorf("%s: accepted: %+v", tc.name, s)
			continue
		}
		if s != nil {
			t.Errorf("%s: a skill returned with the error", tc.name)
		}
		if !errors.Is(err, ErrInvalidManifest) {
			t.Errorf("%s: %v does not match ErrInvalidManifest", tc.name, err)
		}
		fmt.Fprintf(&got, "== %s\n%s\n", tc.name, err)
	}
	compareGolden(t, filepath.Join(skillmdTestdata, "hostile-folder.golden.txt"), got.String())
}

// TestLoadSkillDirLimitsExact checks that a folder exactly at the caps
// loads.
func TestLoadSkillDirLimitsExact(t *testing.T) {
	m := fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}}
	for i := range MaxSkillFiles {
		m[fmt.Sprintf("s/assets/f%03d.txt", i)] = &fstest.MapFile{Data: []byte("x")}
	}
	s, err := LoadSkillDir(m, "s")
	if err != nil {
		t.Fatalf("%d files: %v", MaxSkillFiles, err)
	}
	if len(s.Resources) != MaxSkillFiles {
		t.Errorf("%d resources, want %d", len(s.Resources), MaxSkillFiles)
	}

	full := fstest.MapFS{
		"s/SKILL.md":     {Data: []byte(okSkillMD)},
		"s/assets/a.bin": {Data: make([]byte, MaxSkillBytes-len(okSkillMD))},
	}
	if _, err := LoadSkillDir(full, "s"); err != nil {
		t.Errorf("exactly %d bytes: %v", MaxSkillBytes, err)
	}
	full["s/assets/b.bin"] = &fstest.MapFile{Data: []byte("x")}
	if _, err := LoadSkillDir(full, "s"); err == nil {
		t.Errorf("%d bytes accepted", MaxSkillBytes+1)
	}
}

// TestLoadSkillDirSymlinksInside checks that links resolving inside the
// folder are followed (files) or skipped with a warning (folders), on a
// real folder and on a MapFS.
func TestLoadSkillDirSymlinksInside(t *testing.T) {
	root := writeTree(t, map[string]string{
		"s/SKILL.md":               okSkillMD,
		"s/references/guide.md":    "# Guide\n",
		"s/scripts/lib/helpers.sh": "echo help\n",
	})
	symlink(t, "../references/guide.md", filepath.Join(root, "s", "assets", "guide.md"))
	symlink(t, "lib", filepath.Join(root, "s", "scripts", "current"))
	symlink(t, "./scripts/../references/./guide.md", filepath.Join(root, "s", "GUIDE.md"))
	symlink(t, "assets/guide.md", filepath.Join(root, "s", "chain.md"))

	check := func(t *testing.T, fsys fs.FS) {
		s, err := LoadSkillDir(fsys, "s")
		if err != nil {
			t.Fatal(err)
		}
		sum := map[string]string{}
		for _, r := range s.Resources {
			sum[r.Path] = r.SHA256
		}
		want := []string{"GUIDE.md", "assets/guide.md", "chain.md", "references/guide.md", "scripts/lib/helpers.sh"}
		var got []string
		for _, r := range s.Resources {
			got = append(got, r.Path)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("resources (-want +got):\n%s", diff)
		}
		for _, p := range []string{"GUIDE.md", "assets/guide.md", "chain.md"} {
			if sum[p] != sum["references/guide.md"] {
				t.Errorf("%s does not hash as its target", p)
			}
		}
		if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], `s/scripts/current: symlink to folder "scripts/lib" skipped`) {
			t.Errorf("warnings = %q", s.Warnings)
		}
	}
	t.Run("os.DirFS", func(t *testing.T) { check(t, os.DirFS(root)) })
	t.Run("os.Root", func(t *testing.T) {
		r, err := os.OpenRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		check(t, r.FS())
	})
	t.Run("MapFS", func(t *testing.T) {
		check(t, fstest.MapFS{
			"s/SKILL.md":               {Data: []byte(okSkillMD)},
			"s/references/guide.md":    {Data: []byte("# Guide\n")},
			"s/scripts/lib/helpers.sh": {Data: []byte("echo help\n")},
			"s/assets/guide.md":        {Data: []byte("../references/guide.md"), Mode: fs.ModeSymlink},
			"s/scripts/current":        {Data: []byte("lib"), Mode: fs.ModeSymlink},
			"s/GUIDE.md":               {Data: []byte("./scripts/../references/./guide.md"), Mode: fs.ModeSymlink},
			"s/chain.md":               {Data: []byte("assets/guide.md"), Mode: fs.ModeSymlink},
		})
	})
}

func TestLoadSkillFileFlat(t *testing.T) {
	m := fstest.MapFS{
		"skills/notes.md":    {Data: []byte("---\nname: notes\ndescription: d\n---\nbody\n")},
		"skills/wrong.md":    {Data: []byte("---\nname: notes\ndescription: d\n---\nbody\n")},
		"skills/alias.md":    {Data: []byte("notes.md"), Mode: fs.ModeSymlink},
		"skills/escape.md":   {Data: []byte("../outside.md"), Mode: fs.ModeSymlink},
		"outside.md":         {Data: []byte("---\nname: escape\ndescription: d\n---\n")},
		"skills/huge.md":     {Data: []byte(okSkillMD + strings.Repeat("x", MaxSkillMDBytes))},
		"skills/notes/x.txt": {Data: []byte("x")},
	}
	s, err := LoadSkillFile(m, "skills/notes.md")
	if err != nil || s.Name != "notes" || s.File != "skills/notes.md" || s.Resources != nil {
		t.Errorf("notes.md: %+v, %v", s, err)
	}
	tests := map[string]string{
		"skills/wrong.md":  `skills/wrong.md:2: name "notes" differs from the file name "wrong.md"; a flat skill's name is its file name without .md`,
		"skills/alias.md":  `skills/alias.md:2: name "notes" differs from the file name "alias.md"; a flat skill's name is its file name without .md`,
		"skills/escape.md": `skills/escape.md: symlink points to "../outside.md", outside the skill folder; a skill may only link to its own files (copy the target into the folder instead)`,
		"skills/huge.md":   `skills/huge.md: file is larger than 1048576 bytes (1 MiB); keep instructions short and move detail into references/`,
	}
	for name, want := range tests {
		_, err := LoadSkillFile(m, name)
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v\nwant %s", name, err, want)
		}
	}
}

// TestLoadSkillDirPlainFS checks that an FS without fs.ReadLinkFS (as
// embed.FS) loads when it holds no links.
func TestLoadSkillDirPlainFS(t *testing.T) {
	s, err := LoadSkillDir(noLinkFS{fstest.MapFS{
		"skills/s/SKILL.md":      {Data: []byte(okSkillMD)},
		"skills/s/scripts/a.sh":  {Data: []byte("echo a\n")},
		"skills/s/.git/config":   {Data: []byte("[core]\n")},
		"skills/s/.hidden/x.txt": {Data: []byte("x")},
	}}, "skills/s")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Resources) != 1 || s.Resources[0].Path != "scripts/a.sh" || s.File != "skills/s/SKILL.md" {
		t.Errorf("resources %+v file %q: want only scripts/a.sh (hidden entries skipped)", s.Resources, s.File)
	}
}
