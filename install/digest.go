package install

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// DigestPrefix starts every digest the package writes or reads.
const DigestPrefix = "sha256:"

// ContentDigest is the content digest of the plain files of fsys: sha256
// over one line per file, sorted by path (bytewise), each the file's
// slash-separated path, a NUL byte, the 32 bytes of the sha256 of its
// contents and a line feed; written "sha256:<hex>". Modes, times,
// folders and links do not count (the loader reads none of them). It is
// the digest other skill installers pin in their locks, so that each can
// check the other's. A path with a control character, which could make
// two trees hash alike, is an error, as is a tree with no file.
func ContentDigest(fsys fs.FS) (string, error) { return contentDigest(fsys, false) }

// sourceDigest is the content digest a folder source installs to: its
// files less those Build leaves out (.git and the others of skipped).
func sourceDigest(dir string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	return contentDigest(root.FS(), true)
}

func contentDigest(fsys fs.FS, skip bool) (string, error) {
	type entry struct {
		path string
		sum  [sha256.Size]byte
	}
	var files []entry
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip && d.IsDir() && skipped[d.Name()] {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fmt.Errorf("%w: %q: a control character in a file name", ErrUnsafeArchive, p)
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		e := entry{path: p}
		h.Sum(e.sum[:0])
		files = append(files, e)
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("%w: no file to digest", ErrInvalid)
	}
	slices.SortFunc(files, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	h := sha256.New()
	for _, f := range files {
		io.WriteString(h, f.path)
		h.Write([]byte{0})
		h.Write(f.sum[:])
		h.Write([]byte{'\n'})
	}
	return DigestPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// DirDigest is ContentDigest of the folder dir, read through an os.Root
// so that no link leads the walk outside it.
func DirDigest(dir string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	return ContentDigest(root.FS())
}

// FileDigest is "sha256:<hex>" of the bytes of file.
func FileDigest(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return DigestPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// parseDigest checks that d is "sha256:" and 64 lowercase hex digits.
func parseDigest(d string) error {
	hexPart, ok := strings.CutPrefix(d, DigestPrefix)
	if !ok || len(hexPart) != 2*sha256.Size || strings.ToLower(hexPart) != hexPart {
		return fmt.Errorf("%w: digest %q: want sha256: and 64 lowercase hex digits", ErrBadSource, d)
	}
	if _, err := hex.DecodeString(hexPart); err != nil {
		return fmt.Errorf("%w: digest %q: want sha256: and 64 lowercase hex digits", ErrBadSource, d)
	}
	return nil
}

// checkDigest compares want with got, both "sha256:<hex>", and names
// what was checked when they differ.
func checkDigest(what, want, got string) error {
	if want == got {
		return nil
	}
	return fmt.Errorf("%w: %s is %s; %s was expected", ErrDigestMismatch, what, got, want)
}
