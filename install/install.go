// Package install brings skills and packs onto disk from outside the
// workspace — a folder, a .tar.gz or .zip archive, an https:// archive URL
// — and keeps the record of what was installed: the lock.
//
// Every source goes through one staging path: the bytes are fetched into
// a staging folder beside the installed folder, checked against the
// digest the caller expects, unpacked with every unsafe entry refused
// (absolute names, .. segments, links, devices, names that collide on a
// case-insensitive disk, more files or bytes than the limits allow),
// validated as a skill source, and only then renamed into place. Nothing
// a failed or killed install leaves is ever read as installed: staging
// folders start with a dot, which sources skip, and are removed by the
// next install. No script or module of what is installed runs during an
// install.
//
// The content digest (ContentDigest) is the one other skill installers
// pin in their locks: sha256 over the lines path NUL sha256(file) LF,
// sorted by path, written "sha256:<hex>".
package install

import (
	"errors"
	"fmt"
)

// Errors of the package. Every error an install returns matches one of
// them with errors.Is and names the entry, file or source concerned.
var (
	// ErrUnsafeArchive: an archive entry that could write outside its
	// folder or is not a plain file or folder: an absolute or
	// non-canonical name, a .. segment, a link, a device, a duplicate,
	// or two names one case-insensitive disk would store as one.
	ErrUnsafeArchive = errors.New("install: unsafe archive entry")
	// ErrTooLarge: more files, or more bytes unpacked or fetched, than
	// the limits allow.
	ErrTooLarge = errors.New("install: too large")
	// ErrBadArchive: bytes that are not a readable .tar.gz, .tar or .zip
	// archive (a bad checksum included).
	ErrBadArchive = errors.New("install: unreadable archive")
	// ErrDigestMismatch: the bytes fetched, or the files on disk, are not
	// the ones the digest the caller gave (or the lock) names.
	ErrDigestMismatch = errors.New("install: digest mismatch")
	// ErrInvalid: what was fetched is not a skill source skillhost can
	// load: no skill or pack in it, or one that does not validate.
	ErrInvalid = errors.New("install: not a valid skill source")
	// ErrBadSource: a source reference that names nothing installable.
	ErrBadSource = errors.New("install: bad source")
)

// EntryError is an archive entry refused, with why.
type EntryError struct {
	Entry string // the entry's name as the archive gives it
	Why   string
	Err   error // ErrUnsafeArchive or ErrTooLarge
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("archive entry %q: %s", e.Entry, e.Why)
}

func (e *EntryError) Unwrap() error { return e.Err }
