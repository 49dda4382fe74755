package install_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillhost/skillhost/install"
)

// entry is one member of a test archive.
type entry struct {
	name string
	body string
	typ  byte // a tar type flag; 0 is a plain file
	link string
}

func tarGz(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	writeTar(t, zw, entries)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeTar(t testing.TB, w interface{ Write([]byte) (int, error) }, entries []entry) {
	t.Helper()
	tw := tar.NewWriter(w)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: e.typ, Linkname: e.link}
		if e.typ == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
}

func zipOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		switch e.typ {
		case tar.TypeSymlink:
			h.SetMode(fs.ModeSymlink | 0o777)
		case tar.TypeDir:
			h.SetMode(fs.ModeDir | 0o755)
		case tar.TypeFifo:
			h.SetMode(fs.ModeNamedPipe | 0o644)
		default:
			h.SetMode(0o644)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		body := e.body
		if e.typ == tar.TypeSymlink {
			body = e.link
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// unpack writes archive to a file and unpacks it into a fresh folder
// inside a parent folder, which it checks holds nothing else afterwards.
func unpack(t *testing.T, archive []byte, lim install.ArchiveLimits) (string, *install.Unpacked, error) {
	t.Helper()
	parent := t.TempDir()
	file := filepath.Join(t.TempDir(), "a")
	if err := os.WriteFile(file, archive, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	u, err := install.Unpack(file, dir, lim)
	names, rerr := os.ReadDir(parent)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(names) != 1 || names[0].Name() != "out" {
		t.Fatalf("unpacking wrote beside its folder: %v", names)
	}
	return dir, u, err
}

func TestUnpackWritesPlainFilesAndFolders(t *testing.T) {
	files := []entry{
		{name: "./", typ: tar.TypeDir},
		{name: "./pdf/", typ: tar.TypeDir},
		{name: "./pdf/SKILL.md", body: "---\nname: pdf\n---\nbody\n"},
		{name: "pdf/scripts/fill.py", body: "print('x')\n"},
		{name: "pdf/empty", body: ""},
	}
	for name, archive := range map[string][]byte{"tar.gz": tarGz(t, files...), "zip": zipOf(t, files...), "tar": func() []byte {
		var buf bytes.Buffer
		writeTar(t, &buf, files)
		return buf.Bytes()
	}()} {
		t.Run(name, func(t *testing.T) {
			dir, u, err := unpack(t, archive, install.ArchiveLimits{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"pdf/SKILL.md", "pdf/scripts/fill.py", "pdf/empty"}
			if strings.Join(u.Files, ",") != strings.Join(want, ",") {
				t.Fatalf("files %v, want %v", u.Files, want)
			}
			if u.Bytes != int64(len(files[2].body)+len(files[3].body)) {
				t.Fatalf("bytes %d", u.Bytes)
			}
			got, err := os.ReadFile(filepath.Join(dir, "pdf", "scripts", "fill.py"))
			if err != nil || string(got) != "print('x')\n" {
				t.Fatalf("fill.py: %q, %v", got, err)
			}
			st, err := os.Stat(filepath.Join(dir, "pdf", "SKILL.md"))
			if err != nil || st.Mode().Perm() != 0o644 {
				t.Fatalf("SKILL.md mode %v, %v", st.Mode(), err)
			}
		})
	}
}

// Every archive an attacker would send is refused whole, with the error
// naming the entry, and nothing is written outside the folder.
func TestUnpackRefusesHostileArchives(t *testing.T) {
	big := strings.Repeat("a", 2048)
	cases := []struct {
		name    string
		entries []entry
		zipToo  bool
		lim     install.ArchiveLimits
		want    error
		entry   string
	}{
		{name: "dot-dot", entries: []entry{{name: "../evil", body: "x"}}, zipToo: true, want: install.ErrUnsafeArchive, entry: "../evil"},
		{name: "dot-dot inside", entries: []entry{{name: "a/../../evil", body: "x"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "absolute", entries: []entry{{name: "/etc/evil", body: "x"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "backslash", entries: []entry{{name: `..\evil`, body: "x"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "drive", entries: []entry{{name: "C:/evil", body: "x"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "not canonical", entries: []entry{{name: "a//b", body: "x"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "dot segment", entries: []entry{{name: "a/./b", body: "x"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "control character", entries: []entry{{name: "a\nb", body: "x"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "not UTF-8", entries: []entry{{name: "a\xffb", body: "x"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "symlink", entries: []entry{{name: "link", typ: tar.TypeSymlink, link: "/etc/passwd"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "symlink inside", entries: []entry{{name: "a", body: "x"}, {name: "link", typ: tar.TypeSymlink, link: "a"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "hard link", entries: []entry{{name: "a", body: "x"}, {name: "b", typ: tar.TypeLink, link: "a"}}, want: install.ErrUnsafeArchive},
		{name: "char device", entries: []entry{{name: "null", typ: tar.TypeChar}}, want: install.ErrUnsafeArchive},
		{name: "block device", entries: []entry{{name: "sda", typ: tar.TypeBlock}}, want: install.ErrUnsafeArchive},
		{name: "fifo", entries: []entry{{name: "pipe", typ: tar.TypeFifo}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "duplicate", entries: []entry{{name: "SKILL.md", body: "one"}, {name: "SKILL.md", body: "two"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "case collision", entries: []entry{{name: "SKILL.md", body: "one"}, {name: "skill.md", body: "two"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "unicode collision", entries: []entry{{name: "caf\u00e9", body: "one"}, {name: "cafe\u0301", body: "two"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "folder case collision", entries: []entry{{name: "Docs/a", body: "one"}, {name: "docs/b", body: "two"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "file then folder", entries: []entry{{name: "a", body: "one"}, {name: "a/b", body: "two"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "folder then file", entries: []entry{{name: "a/b", body: "one"}, {name: "a", body: "two"}}, zipToo: true, want: install.ErrUnsafeArchive},
		{name: "file bomb", entries: []entry{{name: "a", body: "1"}, {name: "b", body: "2"}, {name: "c", body: "3"}}, zipToo: true, lim: install.ArchiveLimits{MaxFiles: 2}, want: install.ErrTooLarge},
		{name: "size bomb", entries: []entry{{name: "a", body: big}}, zipToo: true, lim: install.ArchiveLimits{MaxFileBytes: 1024}, want: install.ErrTooLarge},
		{name: "total bomb", entries: []entry{{name: "a", body: big}, {name: "b", body: big}}, zipToo: true, lim: install.ArchiveLimits{MaxBytes: 3000}, want: install.ErrTooLarge},
		{name: "empty name", entries: []entry{{name: "", body: "x"}}, want: install.ErrUnsafeArchive},
		{name: "long segment", entries: []entry{{name: strings.Repeat("a", 256), body: "x"}}, zipToo: true, want: install.ErrUnsafeArchive},
	}
	for _, c := range cases {
		formats := map[string]func(testing.TB, ...entry) []byte{"tar.gz": tarGz}
		if c.zipToo {
			formats["zip"] = zipOf
		}
		for format, make := range formats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				dir, _, err := unpack(t, make(t, c.entries...), c.lim)
				if !errors.Is(err, c.want) {
					t.Fatalf("err %v, want %v", err, c.want)
				}
				var ee *install.EntryError
				if c.want == install.ErrUnsafeArchive && !errors.As(err, &ee) {
					t.Fatalf("%v is not an *EntryError naming the entry", err)
				}
				if c.entry != "" && ee.Entry != c.entry {
					t.Fatalf("the error names %q, want %q", ee.Entry, c.entry)
				}
				// Nothing the refused entry names exists, inside the folder
				// or beside it.
				if _, err := os.Lstat(filepath.Join(filepath.Dir(dir), "evil")); err == nil {
					t.Fatal("an entry was written outside the folder")
				}
				for _, e := range c.entries {
					if e.typ == tar.TypeSymlink || e.typ == tar.TypeChar || e.typ == tar.TypeFifo {
						if _, err := os.Lstat(filepath.Join(dir, e.name)); err == nil {
							t.Fatalf("%s was written", e.name)
						}
					}
				}
			})
		}
	}
}

// A declared size is not trusted: a zip entry that says it is small but
// inflates to a megabyte is refused, not written in full.
func TestUnpackCountsBytesNotHeaders(t *testing.T) {
	archive := zipOf(t, entry{name: "a", body: strings.Repeat("z", 1<<20)})
	// Patch the central directory's and the local header's uncompressed
	// size to 10 bytes.
	patched := bytes.Clone(archive)
	for _, sig := range []string{"PK\x03\x04", "PK\x01\x02"} {
		i := bytes.Index(patched, []byte(sig))
		off := 22
		if sig == "PK\x01\x02" {
			off = 24
		}
		copy(patched[i+off:], []byte{10, 0, 0, 0})
	}
	dir, _, err := unpack(t, patched, install.ArchiveLimits{MaxFileBytes: 4096})
	if !errors.Is(err, install.ErrTooLarge) && !errors.Is(err, install.ErrBadArchive) {
		t.Fatalf("err %v, want ErrTooLarge or ErrBadArchive", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "a")); err == nil && st.Size() > 4097 {
		t.Fatalf("%d bytes were written", st.Size())
	}
}

func TestUnpackRefusesBrokenArchives(t *testing.T) {
	good := tarGz(t, entry{name: "SKILL.md", body: strings.Repeat("body ", 200)})
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	truncated := good[:len(good)-12]
	zipFlipped := zipOf(t, entry{name: "SKILL.md", body: strings.Repeat("body ", 200)})
	zipFlipped[40] ^= 0xff
	for name, archive := range map[string][]byte{
		"flipped gzip": flipped, "truncated gzip": truncated, "flipped zip": zipFlipped,
		"not an archive": []byte("hello, world"), "empty": nil,
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := unpack(t, archive, install.ArchiveLimits{})
			if !errors.Is(err, install.ErrBadArchive) {
				t.Fatalf("err %v, want ErrBadArchive", err)
			}
		})
	}
}

func TestUnpackNeedsAnEmptyFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a.tar.gz")
	if err := os.WriteFile(file, tarGz(t, entry{name: "a", body: "new"}), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := install.Unpack(file, dir, install.ArchiveLimits{}); err == nil {
		t.Fatal("unpacked into a folder that holds files")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a")); string(got) != "old" {
		t.Fatalf("the file already there was overwritten: %q", got)
	}
	// A folder holding other files is refused too, before anything is
	// written.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "b"), []byte("old"), 0o644)
	if _, err := install.Unpack(file, other, install.ArchiveLimits{}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("unpacked into a folder holding another file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "a")); err == nil {
		t.Fatal("a was written into a folder that was not empty")
	}
}

// The digest is the one other installers pin: these vectors are theirs.
func TestContentDigestVectors(t *testing.T) {
	for _, c := range []struct {
		files fstest.MapFS
		want  string
	}{
		{fstest.MapFS{"a.txt": {Data: []byte("hello world")}}, "sha256:79d1b89c9733bc5a3c51bd715612a85ab13add6933cb9aa7cc1ae44fd5d181a3"},
		{fstest.MapFS{"SKILL.md": {Data: []byte("# Skill")}, "refs/guide.md": {Data: []byte("guide")}}, "sha256:9b46342aaebede490f12bf67a5ecb4be507c7684ee5e11a0511b54c701f464bd"},
	} {
		got, err := install.ContentDigest(c.files)
		if err != nil || got != c.want {
			t.Fatalf("digest %s, %v; want %s", got, err, c.want)
		}
	}
	// Modes, times, folders and links do not count; contents and names do.
	base := fstest.MapFS{"SKILL.md": {Data: []byte("# Skill")}}
	same := fstest.MapFS{"SKILL.md": {Data: []byte("# Skill"), Mode: 0o755}, "empty": {Mode: fs.ModeDir}, "l": {Data: []byte("SKILL.md"), Mode: fs.ModeSymlink}}
	other := fstest.MapFS{"SKILL.md": {Data: []byte("# Skill!")}}
	renamed := fstest.MapFS{"skill.md": {Data: []byte("# Skill")}}
	d0, _ := install.ContentDigest(base)
	d1, _ := install.ContentDigest(same)
	d2, _ := install.ContentDigest(other)
	d3, _ := install.ContentDigest(renamed)
	if d0 != d1 || d0 == d2 || d0 == d3 {
		t.Fatalf("digests %s %s %s %s", d0, d1, d2, d3)
	}
	if _, err := install.ContentDigest(fstest.MapFS{}); err == nil {
		t.Fatal("an empty tree has a digest")
	}
	if _, err := install.ContentDigest(fstest.MapFS{"a\nb": {Data: []byte("x")}}); err == nil {
		t.Fatal("a name with a line feed has a digest")
	}
}

// FuzzUnpack: whatever the bytes, Unpack returns, writes nothing outside
// its folder, and writes only plain files and folders inside it.
func FuzzUnpack(f *testing.F) {
	f.Add(tarGz(f, entry{name: "a/SKILL.md", body: "x"}))
	f.Add(tarGz(f, entry{name: "../x", body: "x"}))
	f.Add(tarGz(f, entry{name: "l", typ: tar.TypeSymlink, link: "/"}))
	f.Add(zipOf(f, entry{name: "a/b", body: "x"}, entry{name: "A/c", body: "y"}))
	f.Add([]byte("PK\x05\x06"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		file := filepath.Join(parent, "archive")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(parent, "out")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		_, _ = install.Unpack(file, dir, install.ArchiveLimits{MaxFiles: 64, MaxBytes: 1 << 20})
		names, _ := os.ReadDir(parent)
		if len(names) != 2 {
			t.Fatalf("unpacking wrote beside its folder: %v", names)
		}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && !d.Type().IsRegular() {
				t.Fatalf("%s is a %v", p, d.Type())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
