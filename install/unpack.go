package install

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ArchiveLimits bound what one archive may unpack to. A zero field takes
// its default.
type ArchiveLimits struct {
	// MaxFiles bounds the entries, folders included (default 10,000).
	MaxFiles int
	// MaxBytes bounds the bytes of all files unpacked (default 256 MiB).
	MaxBytes int64
	// MaxFileBytes bounds one file (default 64 MiB).
	MaxFileBytes int64
}

// Default archive limits.
const (
	DefaultMaxFiles     = 10_000
	DefaultMaxBytes     = 256 << 20
	DefaultMaxFileBytes = 64 << 20
	// maxNameBytes bounds an entry's name, and maxSegmentBytes one of its
	// segments (what common file systems store).
	maxNameBytes    = 1024
	maxSegmentBytes = 255
)

func (l ArchiveLimits) withDefaults() ArchiveLimits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	return l
}

// Unpacked is what an archive unpacked to.
type Unpacked struct {
	// Files are the files written, by their names in the archive, in
	// archive order.
	Files []string
	// Bytes is their total size.
	Bytes int64
}

// Unpack unpacks the archive at file into dir, which must exist and be
// empty. The format is read from the archive's first bytes: gzip (a
// .tar.gz), zip, or a plain tar. Only plain files and folders are
// written, each file 0644 and each folder 0755 whatever the archive says;
// every other entry, and every name that is absolute, not canonical
// ("a//b", "a/./b"), has a .. segment, a backslash, a colon or a control
// character, or folds to a name already written (as a case-insensitive
// disk would store it), refuses the whole archive with an *EntryError.
// On error dir holds part of the archive: the caller removes it.
func Unpack(file, dir string, lim ArchiveLimits) (*Unpacked, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	u := &unpacker{root: root, lim: lim.withDefaults(), files: map[string]string{}, dirs: map[string]string{}}
	if empty, err := isEmptyDir(root); err != nil || !empty {
		if err == nil {
			err = fmt.Errorf("install: unpacking into %s: the folder is not empty", dir)
		}
		return nil, err
	}
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(bufio.NewReader(f))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: gzip: %v", ErrBadArchive, file, err)
		}
		if err := u.tar(zr); err != nil {
			return nil, err
		}
		// Read what follows the tar's end, so that the gzip checksum is
		// checked (a bounded read: padding, not content).
		if _, err := io.Copy(io.Discard, io.LimitReader(zr, 1<<20)); err != nil {
			return nil, fmt.Errorf("%w: %s: gzip: %v", ErrBadArchive, file, err)
		}
	case bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")):
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if err := u.zip(f, st.Size()); err != nil {
			return nil, err
		}
	case len(head) >= 262 && string(head[257:262]) == "ustar":
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		if err := u.tar(f); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: %s is not a .tar.gz, .tar or .zip archive", ErrBadArchive, file)
	}
	return &u.out, nil
}

func isEmptyDir(root *os.Root) (bool, error) {
	d, err := root.Open(".")
	if err != nil {
		return false, err
	}
	defer d.Close()
	names, err := d.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return len(names) == 0, err
}

type unpacker struct {
	root *os.Root
	lim  ArchiveLimits
	out  Unpacked
	// files and dirs map each name written, folded, to its name in the
	// archive.
	files, dirs map[string]string
	entries     int
}

func (u *unpacker) tar(r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: tar: %v", ErrBadArchive, err)
		}
		switch h.Typeflag {
		case tar.TypeReg, 0: // 0: a regular file in the oldest tar format
			if err := u.file(h.Name, tr, h.Size); err != nil {
				return err
			}
		case tar.TypeDir:
			if err := u.dir(h.Name); err != nil {
				return err
			}
		case tar.TypeXGlobalHeader:
			// Defaults for the entries that follow (a pax global header);
			// nothing to write.
		default:
			return &EntryError{Entry: h.Name, Why: "a " + tarType(h.Typeflag) + ": only plain files and folders are installed", Err: ErrUnsafeArchive}
		}
	}
}

func tarType(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "named pipe"
	case tar.TypeGNUSparse:
		return "sparse file"
	}
	return fmt.Sprintf("tar entry of type %q", t)
}

func (u *unpacker) zip(r io.ReaderAt, size int64) error {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// ErrInsecurePath comes with a usable reader; names are checked
		// below, as for tar.
		return fmt.Errorf("%w: zip: %v", ErrBadArchive, err)
	}
	if len(zr.File) > u.lim.MaxFiles {
		return fmt.Errorf("%w: the archive has %d entries; at most %d are installed", ErrTooLarge, len(zr.File), u.lim.MaxFiles)
	}
	for _, f := range zr.File {
		mode := f.Mode()
		switch {
		case f.Flags&0x1 != 0:
			return &EntryError{Entry: f.Name, Why: "encrypted: installed archives are not encrypted", Err: ErrUnsafeArchive}
		case mode&fs.ModeSymlink != 0:
			return &EntryError{Entry: f.Name, Why: "a symbolic link: only plain files and folders are installed", Err: ErrUnsafeArchive}
		case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
			if err := u.dir(f.Name); err != nil {
				return err
			}
		case mode.Type() != 0:
			return &EntryError{Entry: f.Name, Why: "a " + mode.Type().String() + " entry: only plain files and folders are installed", Err: ErrUnsafeArchive}
		default:
			if f.UncompressedSize64 > uint64(u.lim.MaxFileBytes) {
				return &EntryError{Entry: f.Name, Why: fmt.Sprintf("says it unpacks to %d bytes; a file may have at most %d", f.UncompressedSize64, u.lim.MaxFileBytes), Err: ErrTooLarge}
			}
			rc, err := f.Open()
			if err != nil {
				return fmt.Errorf("%w: zip entry %q: %v", ErrBadArchive, f.Name, err)
			}
			err = u.file(f.Name, rc, -1)
			rc.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// name checks an entry's name and returns it with any leading "./" and
// a folder's trailing slash removed; "" is the archive's root folder.
func (u *unpacker) name(raw string, dir bool) (string, error) {
	refuse := func(why string) (string, error) {
		return "", &EntryError{Entry: raw, Why: why, Err: ErrUnsafeArchive}
	}
	name := raw
	if dir {
		name = strings.TrimSuffix(name, "/")
	}
	for strings.HasPrefix(name, "./") {
		name = name[2:]
	}
	if name == "." || (name == "" && dir) {
		return "", nil
	}
	switch {
	case name == "":
		return refuse("an empty name")
	case !utf8.ValidString(name):
		return refuse("a name that is not UTF-8")
	case len(name) > maxNameBytes:
		return refuse(fmt.Sprintf("a name of %d bytes; at most %d", len(name), maxNameBytes))
	case strings.HasPrefix(name, "/"):
		return refuse("an absolute name: names are relative to the archive's folder")
	case strings.ContainsAny(name, `\:`):
		return refuse(`a backslash or colon in the name: a Windows path, drive or stream that other systems read differently`)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return refuse("a control character in the name")
		}
	}
	for seg := range strings.SplitSeq(name, "/") {
		if seg == ".." {
			return refuse("a .. segment: the entry would be written outside the archive's folder")
		}
		if len(seg) > maxSegmentBytes {
			return refuse(fmt.Sprintf("a name segment of %d bytes; at most %d", len(seg), maxSegmentBytes))
		}
	}
	if path.Clean(name) != name {
		return refuse(fmt.Sprintf("a name that is not canonical (%q): every reader must see the one name", path.Clean(name)))
	}
	return name, nil
}

// fold is the key two names share when a case-insensitive disk (or one
// that normalises Unicode, as macOS does) would store them as one file.
func fold(name string) string {
	return strings.ToLower(norm.NFC.String(name))
}

func (u *unpacker) count(raw string) error {
	u.entries++
	if u.entries > u.lim.MaxFiles {
		return &EntryError{Entry: raw, Why: fmt.Sprintf("more than %d entries", u.lim.MaxFiles), Err: ErrTooLarge}
	}
	return nil
}

// parents records the folders above name, refusing one that is a file
// or collides with another folder's name.
func (u *unpacker) parents(raw, name string) error {
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		if err := u.claimDir(raw, p); err != nil {
			return err
		}
	}
	return nil
}

func (u *unpacker) claimDir(raw, name string) error {
	key := fold(name)
	if _, ok := u.files[key]; ok {
		return &EntryError{Entry: raw, Why: fmt.Sprintf("needs %q as a folder, but it is a file of the archive", name), Err: ErrUnsafeArchive}
	}
	if prev, ok := u.dirs[key]; ok && prev != name {
		return &EntryError{Entry: raw, Why: fmt.Sprintf("folder %q and %q are one folder on a case-insensitive disk", name, prev), Err: ErrUnsafeArchive}
	}
	u.dirs[key] = name
	return nil
}

func (u *unpacker) dir(raw string) error {
	if err := u.count(raw); err != nil {
		return err
	}
	name, err := u.name(raw, true)
	if err != nil || name == "" {
		return err
	}
	if err := u.parents(raw, name); err != nil {
		return err
	}
	if err := u.claimDir(raw, name); err != nil {
		return err
	}
	return u.root.MkdirAll(name, 0o755)
}

// file writes one file of size bytes (-1: unknown) from r.
func (u *unpacker) file(raw string, r io.Reader, size int64) error {
	if err := u.count(raw); err != nil {
		return err
	}
	name, err := u.name(raw, false)
	if err != nil {
		return err
	}
	if name == "" {
		return &EntryError{Entry: raw, Why: "a file named as the archive's folder", Err: ErrUnsafeArchive}
	}
	if err := u.claim(name, false); err != nil {
		if ee, ok := err.(*EntryError); ok {
			ee.Entry = raw
		}
		return err
	}
	limit := min(u.lim.MaxFileBytes, u.lim.MaxBytes-u.out.Bytes)
	if size > limit {
		return u.tooLarge(raw, size)
	}
	if dir := path.Dir(name); dir != "." {
		if err := u.root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := u.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("install: writing %q: %w", name, err)
	}
	src := &readErr{r: io.LimitReader(r, limit+1)}
	n, err := io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if src.err != nil {
		return fmt.Errorf("%w: entry %q: %v", ErrBadArchive, raw, src.err)
	}
	if err != nil {
		return fmt.Errorf("install: writing %q: %w", name, err)
	}
	if n > limit {
		return u.tooLarge(raw, n)
	}
	u.out.Files = append(u.out.Files, name)
	u.out.Bytes += n
	return nil
}

func (u *unpacker) tooLarge(raw string, n int64) error {
	if n > u.lim.MaxFileBytes {
		return &EntryError{Entry: raw, Why: fmt.Sprintf("unpacks to more than %d bytes, the most one file may have", u.lim.MaxFileBytes), Err: ErrTooLarge}
	}
	return &EntryError{Entry: raw, Why: fmt.Sprintf("the archive unpacks to more than %d bytes", u.lim.MaxBytes), Err: ErrTooLarge}
}

// readErr remembers the error its reader returned, so that a broken
// archive is told apart from a disk that cannot be written.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return n, err
}

// claim records name, a file or a folder (and the folders above it),
// refusing a duplicate, a name a case-insensitive disk would store as
// another, and a file where a folder is needed or the reverse.
func (u *unpacker) claim(name string, dir bool) error {
	if err := u.parents(name, name); err != nil {
		return err
	}
	if dir {
		return u.claimDir(name, name)
	}
	key := fold(name)
	if prev, ok := u.files[key]; ok {
		if prev == name {
			return &EntryError{Entry: name, Why: "a second entry of the same name: readers disagree on which one wins", Err: ErrUnsafeArchive}
		}
		return &EntryError{Entry: name, Why: fmt.Sprintf("%q and %q are one file on a case-insensitive disk", name, prev), Err: ErrUnsafeArchive}
	}
	if prev, ok := u.dirs[key]; ok {
		return &EntryError{Entry: name, Why: fmt.Sprintf("a file where the archive has folder %q", prev), Err: ErrUnsafeArchive}
	}
	u.files[key] = name
	return nil
}
