package install_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillhost/skillhost/install"
)

// writeTree writes files (path → contents) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var pdfSkill = map[string]string{
	"pdf/SKILL.md":          "---\nname: pdf\ndescription: Fill PDF forms.\n---\nUse scripts/fill.py.\n",
	"pdf/scripts/fill.py":   "import sys\nprint(sys.argv)\n",
	"pdf/references/api.md": "# API\n",
}

// The same files give the same bytes: built twice, from two folders with
// other modes and times, the archives are identical.
func TestBuildIsReproducible(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeTree(t, a, pdfSkill)
	writeTree(t, b, pdfSkill)
	// Other times, modes and state that is not packed.
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(b, "pdf", "SKILL.md"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(b, "pdf", "scripts", "fill.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, b, map[string]string{".git/HEAD": "ref: refs/heads/main\n", "pdf/.skillhost/index.db": "x"})
	var first, second, third bytes.Buffer
	for _, run := range []struct {
		dir string
		buf *bytes.Buffer
	}{{a, &first}, {a, &second}, {b, &third}} {
		if err := install.Build(run.buf, run.dir, install.ArchiveLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatal("two builds of one folder differ")
	}
	if !bytes.Equal(first.Bytes(), third.Bytes()) {
		t.Fatal("builds of two folders with the same files differ")
	}
	// It unpacks to the same content digest as the folder.
	file := filepath.Join(t.TempDir(), "pdf.tar.gz")
	if err := os.WriteFile(file, first.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := install.Unpack(file, out, install.ArchiveLimits{}); err != nil {
		t.Fatal(err)
	}
	want, err := install.DirDigest(a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := install.DirDigest(out)
	if err != nil || got != want {
		t.Fatalf("unpacked digest %s, %v; the folder's %s", got, err, want)
	}
}

func TestBuildRefusesWhatWouldNotInstall(t *testing.T) {
	t.Run("link", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, pdfSkill)
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, "pdf", "passwd")); err != nil {
			t.Fatal(err)
		}
		err := install.Build(&bytes.Buffer{}, dir, install.ArchiveLimits{})
		if !errors.Is(err, install.ErrUnsafeArchive) {
			t.Fatalf("err %v, want ErrUnsafeArchive", err)
		}
	})
	t.Run("too many files", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, pdfSkill)
		err := install.Build(&bytes.Buffer{}, dir, install.ArchiveLimits{MaxFiles: 3})
		if !errors.Is(err, install.ErrTooLarge) {
			t.Fatalf("err %v, want ErrTooLarge", err)
		}
	})
	t.Run("empty", func(t *testing.T) {
		err := install.Build(&bytes.Buffer{}, t.TempDir(), install.ArchiveLimits{})
		if !errors.Is(err, install.ErrInvalid) {
			t.Fatalf("err %v, want ErrInvalid", err)
		}
	})
}
