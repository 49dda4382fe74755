package install

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// LockFile is the lock's file name, beside skillhost.toml.
const LockFile = "skillhost.lock"

// lockVersion is the version of the lock's format.
const lockVersion = 1

// Lock is skillhost.lock: what is installed, pinned by its bytes, its
// signer and the capabilities it was approved with. It is written for
// people to review in pull requests: TOML, entries sorted by name, no
// times.
type Lock struct {
	Version int      `toml:"version"`
	Entries []*Entry `toml:"installed"`
}

// Entry is one installed skill or pack.
type Entry struct {
	// Name is the folder it is installed as: the pack's or skill's name.
	Name string `toml:"name"`
	// Kind is "pack" (a folder with pack.yaml) or "skill".
	Kind string `toml:"kind"`
	// Version is the pack's version, if it has one.
	Version string `toml:"version,omitempty"`
	// Source is the source as given to install (its canonical form).
	Source string `toml:"source"`
	// Subpath is the unit's folder inside the source, "" at its root.
	Subpath string `toml:"subpath,omitempty"`
	// Resolved pins what Source named when it was installed: an
	// archive's sha256, a git commit, an OCI manifest digest.
	Resolved string `toml:"resolved,omitempty"`
	// Digest is the content digest of the installed folder
	// (ContentDigest).
	Digest string `toml:"digest"`
	// Signer and Issuer identify who signed it, when it was signed.
	Signer string `toml:"signer,omitempty"`
	Issuer string `toml:"issuer,omitempty"`
	// Approved are the capabilities it was approved with.
	Approved Capabilities `toml:"approved"`
}

// ErrLock: a lock that cannot be read, or an installed folder that no
// longer matches it.
var ErrLock = errors.New("install: lock")

// ReadLock reads the lock at file; a missing file is an empty lock.
func ReadLock(file string) (*Lock, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Version: lockVersion}, nil
	}
	if err != nil {
		return nil, err
	}
	var l Lock
	md, err := toml.Decode(string(data), &l)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrLock, file, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%w: %s: unknown key %s", ErrLock, file, und[0])
	}
	if l.Version != lockVersion {
		return nil, fmt.Errorf("%w: %s: version %d; this skillhost reads version %d", ErrLock, file, l.Version, lockVersion)
	}
	seen := map[string]bool{}
	for i, e := range l.Entries {
		switch {
		case e.Name == "" || !validName(e.Name):
			return nil, fmt.Errorf("%w: %s: installed[%d]: name %q is not a skill or pack name", ErrLock, file, i, e.Name)
		case seen[e.Name]:
			return nil, fmt.Errorf("%w: %s: %q is locked twice", ErrLock, file, e.Name)
		case e.Kind != "pack" && e.Kind != "skill":
			return nil, fmt.Errorf("%w: %s: %q: kind %q; want pack or skill", ErrLock, file, e.Name, e.Kind)
		}
		if err := parseDigest(e.Digest); err != nil {
			return nil, fmt.Errorf("%w: %s: %q: %v", ErrLock, file, e.Name, err)
		}
		seen[e.Name] = true
	}
	return &l, nil
}

// Write writes the lock to file, atomically (a temporary file renamed).
func (l *Lock) Write(file string) error {
	l.Version = lockVersion
	slices.SortFunc(l.Entries, func(a, b *Entry) int { return strings.Compare(a.Name, b.Name) })
	var buf bytes.Buffer
	buf.WriteString("# skillhost.lock: what `skillhost install` installed, pinned by content,\n# signer and the capabilities approved. Review changes; do not edit by hand.\n\n")
	if err := toml.NewEncoder(&buf).Encode(l); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".skillhost.lock-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// A file to commit and review, not a secret.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// Find returns the entry named name, or nil.
func (l *Lock) Find(name string) *Entry {
	for _, e := range l.Entries {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// put adds e, replacing an entry of its name.
func (l *Lock) put(e *Entry) {
	l.remove(e.Name)
	l.Entries = append(l.Entries, e)
}

func (l *Lock) remove(name string) bool {
	n := len(l.Entries)
	l.Entries = slices.DeleteFunc(l.Entries, func(e *Entry) bool { return e.Name == name })
	return len(l.Entries) != n
}

// Check compares each locked entry with its folder under dir: a folder
// missing, or whose content digest is not the locked one, is an error
// naming it (every one found, joined). Folders under dir the lock does
// not name are errors too: an installed folder is only ever written by
// an install, which locks it.
func (l *Lock) Check(dir string) error {
	var errs []error
	for _, e := range l.Entries {
		got, err := DirDigest(filepath.Join(dir, e.Name))
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s is locked but cannot be read: %v", ErrLock, filepath.Join(dir, e.Name), err))
			continue
		}
		if got != e.Digest {
			errs = append(errs, fmt.Errorf("%w: %s: %w", ErrLock, filepath.Join(dir, e.Name),
				checkDigest("its content", e.Digest, got)))
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, d := range ents {
		if strings.HasPrefix(d.Name(), ".") || l.Find(d.Name()) != nil {
			continue
		}
		errs = append(errs, fmt.Errorf("%w: %s is installed but not in the lock; install it again or remove it", ErrLock, filepath.Join(dir, d.Name())))
	}
	return errors.Join(errs...)
}

// validName is the rule for an installed folder's name: a skill or pack
// name (lowercase letters, digits, '-', '_', '.'), not hidden.
func validName(n string) bool {
	if n == "" || len(n) > 128 || n[0] == '.' || n[0] == '-' {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return n != "." && n != ".."
}
