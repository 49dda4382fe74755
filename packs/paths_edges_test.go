package packs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// The edges of the path and size rules of skills, manifests and the
// operator config, each found by `make mutate` as a change no test
// noticed.

// trickFS is a MapFS whose answers a test may replace: errors on opening,
// reading, stat'ing, listing or reading a link; extra entries in a
// listing, as a hostile or broken file system could give; a listing that
// ends without io.EOF; a folder that cannot be listed; files that serve
// more bytes than their size says.
type trickFS struct {
	m          fstest.MapFS
	openErr    map[string]error
	readErr    map[string]error
	statErr    map[string]error // Stat and Lstat
	statOnly   map[string]error // Stat alone
	linkErr    map[string]error
	listErr    map[string]error
	extra      map[string][]fs.DirEntry
	noEOF      map[string]bool
	unlistable map[string]bool
	grow       map[string]int64
	failAtEnd  map[string]bool // the read ends in an error instead of io.EOF
}

var errTrick = errors.New("trickFS: refused")

func (t *trickFS) Open(name string) (fs.File, error) {
	if err := t.openErr[name]; err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f, err := t.m.Open(name)
	if err != nil {
		return nil, err
	}
	if t.unlistable[name] {
		return plainFile{f}, nil
	}
	return &trickFile{File: f, fs: t, name: name}, nil
}

func (t *trickFS) Stat(name string) (fs.FileInfo, error) {
	if err := cmpOr(t.statErr[name], t.statOnly[name]); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return t.m.Stat(name)
}

func (t *trickFS) Lstat(name string) (fs.FileInfo, error) {
	if err := t.statErr[name]; err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return t.m.Lstat(name)
}

func (t *trickFS) ReadLink(name string) (string, error) {
	if err := t.linkErr[name]; err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	return t.m.ReadLink(name)
}

// plainFile is an open folder that cannot be listed.
type plainFile struct{ fs.File }

type trickFile struct {
	fs.File
	fs     *trickFS
	name   string
	extra  io.Reader
	listed bool
}

func (f *trickFile) Read(p []byte) (int, error) {
	if err := f.fs.readErr[f.name]; err != nil {
		return 0, err
	}
	if f.fs.failAtEnd[f.name] {
		n, err := f.File.Read(p)
		if err == io.EOF {
			err = errTrick
		}
		return n, err
	}
	if n, ok := f.fs.grow[f.name]; ok {
		if f.extra == nil {
			f.extra = io.MultiReader(f.File, io.LimitReader(zeros{}, n))
		}
		return f.extra.Read(p)
	}
	return f.File.Read(p)
}

func (f *trickFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if err := f.fs.listErr[f.name]; err != nil {
		return nil, err
	}
	if f.listed {
		if f.fs.noEOF[f.name] {
			return nil, nil
		}
		return nil, io.EOF
	}
	f.listed = true
	all, err := fs.ReadDir(f.fs.m, f.name)
	if err != nil {
		return nil, err
	}
	return append(all, f.fs.extra[f.name]...), nil
}

func cmpOr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// entry is a folder entry of any name.
type entry struct {
	name string
	mode fs.FileMode
}

func (e entry) Name() string               { return e.name }
func (e entry) IsDir() bool                { return e.mode.IsDir() }
func (e entry) Type() fs.FileMode          { return e.mode.Type() }
func (e entry) Info() (fs.FileInfo, error) { return entryInfo(e), nil }

type entryInfo entry

func (i entryInfo) Name() string       { return i.name }
func (i entryInfo) Size() int64        { return 0 }
func (i entryInfo) Mode() fs.FileMode  { return i.mode }
func (i entryInfo) ModTime() time.Time { return time.Time{} }
func (i entryInfo) IsDir() bool        { return i.mode.IsDir() }
func (i entryInfo) Sys() any           { return nil }

// skillTree is a skill folder s with SKILL.md and two resources, one of
// them through a link.
func skillTree() fstest.MapFS {
	return fstest.MapFS{
		"s/SKILL.md":         {Data: []byte(okSkillMD)},
		"s/scripts/run.sh":   {Data: []byte("echo run\n")},
		"s/references/a.md":  {Data: []byte("# A\n")},
		"s/alias.md":         {Data: []byte("references/a.md"), Mode: fs.ModeSymlink},
		"s/references/b.md":  {Data: []byte("a.md"), Mode: fs.ModeSymlink},
		"s/references/c/d.t": {Data: []byte("d")},
		// A link through a link the walk never lists by itself.
		"s/chain.md":  {Data: []byte(".hidden/b"), Mode: fs.ModeSymlink},
		"s/.hidden/b": {Data: []byte("../references/a.md"), Mode: fs.ModeSymlink},
		// A link to a file the walk never lists by itself.
		"s/toh.md":       {Data: []byte(".hidden/t.md"), Mode: fs.ModeSymlink},
		"s/.hidden/t.md": {Data: []byte("t")},
	}
}

// Every failure of the file system while a skill is read is an error
// naming the skill, never a skill read in part.
func TestLoadSkillDirReportsEveryFailure(t *testing.T) {
	if s, err := LoadSkillDir(&trickFS{m: skillTree()}, "s"); err != nil || len(s.Resources) != 7 {
		t.Fatalf("the tree itself: %+v, %v", s, err)
	}
	for name, fsys := range map[string]*trickFS{
		"opening SKILL.md":            {openErr: map[string]error{"s/SKILL.md": errTrick}},
		"reading SKILL.md":            {readErr: map[string]error{"s/SKILL.md": errTrick}},
		"opening a resource":          {openErr: map[string]error{"s/scripts/run.sh": errTrick}},
		"reading a resource":          {readErr: map[string]error{"s/scripts/run.sh": errTrick}},
		"stat'ing a resource":         {statErr: map[string]error{"s/scripts/run.sh": errTrick}},
		"opening a folder":            {openErr: map[string]error{"s/references": errTrick}},
		"listing a folder":            {listErr: map[string]error{"s/references": errTrick}},
		"a folder that cannot list":   {unlistable: map[string]bool{"s/references": true}},
		"reading a link":              {linkErr: map[string]error{"s/alias.md": errTrick}},
		"reading a link on the way":   {linkErr: map[string]error{"s/.hidden/b": errTrick}},
		"stat'ing a link's target":    {statOnly: map[string]error{"s/.hidden/t.md": errTrick}},
		"a SKILL.md read to an error": {failAtEnd: map[string]bool{"s/SKILL.md": true}},
		"lstat'ing a link's way":      {statErr: map[string]error{"s/references": errTrick}},
		"listing the skill folder":    {listErr: map[string]error{"s": errTrick}},
		"opening the skill folder":    {openErr: map[string]error{"s": errTrick}},
		"a listing of hostile names":  {extra: map[string][]fs.DirEntry{"s": {entry{name: ".."}}}},
		"a listing of the folder":     {extra: map[string][]fs.DirEntry{"s": {entry{name: "."}}}},
		"a listing of an empty name":  {extra: map[string][]fs.DirEntry{"s": {entry{name: ""}}}},
		"a listing of a path":         {extra: map[string][]fs.DirEntry{"s": {entry{name: "x/../../y"}}}},
		"a name starting with a bell": {m: fstest.MapFS{"s/\x07x": {Data: []byte("x")}}},
	} {
		tree := skillTree()
		for k, v := range fsys.m {
			tree[k] = v
		}
		fsys.m = tree
		s, err := LoadSkillDir(fsys, "s")
		if err == nil {
			t.Errorf("%s: loaded %d resources, want an error", name, len(s.Resources))
		}
	}
}

// A listing that ends without io.EOF still ends.
func TestLoadSkillDirListingWithoutEOF(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		_, err := LoadSkillDir(&trickFS{m: skillTree(), noEOF: map[string]bool{"s": true, "s/references": true}}, "s")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("LoadSkillDir = %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("LoadSkillDir is still listing a folder whose listing ended without io.EOF")
	}
}

// Files that grow between the listing and the read are held to the
// folder's byte budget all the same, over all of them.
func TestLoadSkillDirBudgetOverFilesThatGrow(t *testing.T) {
	m := fstest.MapFS{
		"s/SKILL.md": {Data: []byte(okSkillMD)},
		"s/a.bin":    {Data: []byte("a")},
		"s/b.bin":    {Data: []byte("b")},
	}
	half := int64(MaxSkillBytes / 2)
	s, err := LoadSkillDir(&trickFS{m: m, grow: map[string]int64{"s/a.bin": half, "s/b.bin": half}}, "s")
	var me *ManifestError
	if !errors.As(err, &me) {
		t.Errorf("two files grown to %d bytes each: %+v, %v; want a *ManifestError", half, s, err)
	}
	if s, err := LoadSkillDir(&trickFS{m: m, grow: map[string]int64{"s/a.bin": half}}, "s"); err != nil {
		t.Errorf("one file grown to %d bytes: %+v, %v", half, s, err)
	}
}

// The caps hold at their exact values: folders, entries of one folder,
// link hops and the size of SKILL.md.
func TestLoadSkillDirCapsExact(t *testing.T) {
	dirs := func(n int) fstest.MapFS {
		m := fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}}
		for i := range n {
			m[fmt.Sprintf("s/d%03d", i)] = &fstest.MapFile{Mode: fs.ModeDir}
		}
		return m
	}
	if _, err := LoadSkillDir(dirs(maxSkillDirs), "s"); err != nil {
		t.Errorf("%d folders: %v", maxSkillDirs, err)
	}
	if _, err := LoadSkillDir(dirs(maxSkillDirs+1), "s"); err == nil {
		t.Errorf("%d folders accepted", maxSkillDirs+1)
	}
	// One folder holding as many entries as a listing may: every file
	// and every folder a skill may have, and SKILL.md.
	full := dirs(maxSkillDirs)
	for i := range MaxSkillFiles {
		full[fmt.Sprintf("s/f%03d", i)] = &fstest.MapFile{Data: []byte("x")}
	}
	if _, err := LoadSkillDir(full, "s"); err != nil {
		t.Errorf("a folder of %d entries: %v", MaxSkillFiles+maxSkillDirs+1, err)
	}

	chain := func(n int) fstest.MapFS {
		m := fstest.MapFS{"s/SKILL.md": {Data: []byte(okSkillMD)}, "s/target.txt": {Data: []byte("t")}}
		for i := range n {
			to := fmt.Sprintf("l%02d", i+1)
			if i == n-1 {
				to = "target.txt"
			}
			m[fmt.Sprintf("s/l%02d", i)] = &fstest.MapFile{Data: []byte(to), Mode: fs.ModeSymlink}
		}
		return m
	}
	if _, err := LoadSkillDir(chain(maxLinkHops), "s"); err != nil {
		t.Errorf("a chain of %d links: %v", maxLinkHops, err)
	}
	var me *ManifestError
	if _, err := LoadSkillDir(chain(maxLinkHops+1), "s"); !errors.As(err, &me) {
		t.Errorf("a chain of %d links: %v, want a *ManifestError", maxLinkHops+1, err)
	}

	exact := okSkillMD + strings.Repeat("x", MaxSkillMDBytes-len(okSkillMD))
	if _, err := LoadSkillDir(fstest.MapFS{"s/SKILL.md": {Data: []byte(exact)}}, "s"); err != nil {
		t.Errorf("a SKILL.md of exactly %d bytes: %v", MaxSkillMDBytes, err)
	}
	if _, err := LoadSkillDir(fstest.MapFS{"s/SKILL.md": {Data: []byte(exact + "x")}}, "s"); !errors.As(err, &me) {
		t.Errorf("a SKILL.md of %d bytes: %v, want a *ManifestError", MaxSkillMDBytes+1, err)
	}
}

// A link whose target is empty, rooted in another way than /, or names a
// drive, leaves the folder.
func TestLoadSkillDirLinkTargetsThatLeave(t *testing.T) {
	for _, target := range []string{"", `\secret`, `C:secret`, `c:/secret`, "/secret"} {
		m := fstest.MapFS{
			"s/SKILL.md": {Data: []byte(okSkillMD)},
			"s/x.txt":    {Data: []byte(target), Mode: fs.ModeSymlink},
			"secret":     {Data: []byte("secret")},
		}
		if strings.Contains(target, ":") {
			// What the target would name inside the folder, read as a
			// relative path.
			m["s/"+target] = &fstest.MapFile{Data: []byte("inside")}
		}
		var me *ManifestError
		if _, err := LoadSkillDir(m, "s"); !errors.As(err, &me) {
			t.Errorf("a link to %q: %v, want a *ManifestError", target, err)
		}
	}
}

// The skill folder is not the root of the FS: its name is the skill's.
// A flat skill is a .md file; one that is missing is fs.ErrNotExist.
func TestLoadSkillPathForms(t *testing.T) {
	m := fstest.MapFS{"SKILL.md": {Data: []byte(okSkillMD)}, "notes.txt": {Data: []byte(okSkillMD)}, "s": {Data: []byte(okSkillMD)}}
	if s, err := LoadSkillDir(m, "."); err == nil {
		t.Errorf("LoadSkillDir(.) loaded %q", s.Name)
	}
	for _, name := range []string{"notes.txt", "s"} {
		if s, err := LoadSkillFile(m, name); err == nil {
			t.Errorf("LoadSkillFile(%s) loaded %q", name, s.Name)
		}
	}
	if _, err := LoadSkillFile(m, "missing.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadSkillFile(missing.md) = %v, want fs.ErrNotExist", err)
	}
}

// Resources are listed by path, whatever order the folders were walked
// in ("a.txt" before "a/x", though the folder a comes first).
func TestLoadSkillDirResourcesSorted(t *testing.T) {
	s, err := LoadSkillDir(fstest.MapFS{
		"s/SKILL.md": {Data: []byte(okSkillMD)},
		"s/a/x":      {Data: []byte("x")},
		"s/a.txt":    {Data: []byte("t")},
		"s/a-b":      {Data: []byte("b")},
	}, "s")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range s.Resources {
		got = append(got, r.Path)
	}
	if strings.Join(got, " ") != "a-b a.txt a/x" {
		t.Errorf("resources %q, want a-b a.txt a/x", got)
	}
}

// A module path of "." and a guest path with .. are manifest errors.
func TestManifestPathEdges(t *testing.T) {
	for name, yaml := range map[string]string{
		"module path .":    "name: p\nmodules:\n  - name: m\n    path: .\n    tools: [{name: t, description: d}]\n",
		"module path ./":   "name: p\nmodules:\n  - name: m\n    path: ./\n    tools: [{name: t, description: d}]\n",
		"module path a/..": "name: p\nmodules:\n  - name: m\n    path: a/..\n    tools: [{name: t, description: d}]\n",
		"guest with ..":    "name: p\nmodules:\n  - name: m\n    path: m.wasm\n    request:\n      mounts: [{guest: /data/../etc}]\n    tools: [{name: t, description: d}]\n",
	} {
		if _, err := Parse([]byte(yaml), "pack.yaml"); !errors.Is(err, ErrInvalidManifest) {
			t.Errorf("%s: %v, want ErrInvalidManifest", name, err)
		}
	}
}

// Mounts in the operator config need a host path and an absolute guest
// path without .., and nothing else; a host path must not be empty, and
// ~ needs a home folder.
func TestConfigMountEdges(t *testing.T) {
	bad := map[string]string{
		"relative guest": `{host = "/srv/data", guest = "data"}`,
		"guest with ..":  `{host = "/srv/data", guest = "/data/../etc"}`,
		"no guest":       `{host = "/srv/data"}`,
		"no host":        `{guest = "/data"}`,
		"empty host":     `{host = "", guest = "/data"}`,
		"unknown key":    `{host = "/srv/data", guest = "/data", mode = "rw"}`,
		"not a table":    `"/srv/data"`,
		"bad read_only":  `{host = "/srv/data", guest = "/data", read_only = "yes"}`,
	}
	for name, mount := range bad {
		toml := "[packs.p]\nmounts = [" + mount + "]\n"
		if _, err := ParseConfig("/etc/skillhost/skillhost.toml", []byte(toml)); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	cfg, err := ParseConfig("/etc/skillhost/skillhost.toml", []byte("[packs.p]\nmounts = [{host = \"data\", guest = \"/data\", read_only = true}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Packs["p"].Mounts; len(got) != 1 || got[0].HostPath != path.Join("/etc/skillhost", "data") || got[0].GuestPath != "/data" || !got[0].ReadOnly {
		t.Errorf("mounts = %+v", got)
	}
	t.Setenv("HOME", "")
	if _, err := ParseConfig("/etc/skillhost/skillhost.toml", []byte("[packs.p]\nmounts = [{host = \"~/data\", guest = \"/data\"}]\n")); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("~ without a home folder: %v, want ErrInvalidConfig", err)
	}
}
