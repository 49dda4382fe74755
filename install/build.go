package install

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"time"
)

// skipped are the folders Build leaves out wherever they are: version
// control and skillhost's own state.
var skipped = map[string]bool{".git": true, ".hg": true, ".svn": true, ".skillhost": true}

// Build writes the folder dir — a pack, a skill folder, or a source of
// several — to w as a reproducible .tar.gz: entries sorted by path,
// folders 0755 and files 0644, owned by uid and gid 0 with no names,
// every time the Unix epoch, no gzip name or time. The same files give
// the same bytes, whatever folder they sit in and whoever built them.
// Links and other entries that are not plain files or folders are an
// error naming them (an archive of them would not install); folders of
// version control (.git, .hg, .svn) and skillhost's state (.skillhost)
// are left out. The archive is checked against lim as Unpack would, so
// what Build writes installs.
func Build(w io.Writer, dir string, lim ArchiveLimits) error {
	lim = lim.withDefaults()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	fsys := root.FS()
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	var epoch = time.Unix(0, 0).UTC()
	var entries int
	var total int64
	u := &unpacker{lim: lim, files: map[string]string{}, dirs: map[string]string{}}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if d.IsDir() && skipped[d.Name()] {
			return fs.SkipDir
		}
		if _, err := u.name(p, d.IsDir()); err != nil {
			return fmt.Errorf("%s: %w", path.Join(dir, p), err)
		}
		if err := u.claim(p, d.IsDir()); err != nil {
			return fmt.Errorf("%s: %w", path.Join(dir, p), err)
		}
		if entries++; entries > lim.MaxFiles {
			return fmt.Errorf("%w: %s has more than %d files and folders", ErrTooLarge, dir, lim.MaxFiles)
		}
		h := &tar.Header{Name: p, ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case d.IsDir():
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, p+"/", 0o755
			return tw.WriteHeader(h)
		case d.Type().IsRegular():
		default:
			return fmt.Errorf("%w: %s is a %s; only plain files and folders are packed", ErrUnsafeArchive, path.Join(dir, p), d.Type())
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if st.Size() > lim.MaxFileBytes {
			return fmt.Errorf("%w: %s has %d bytes; a file may have at most %d", ErrTooLarge, path.Join(dir, p), st.Size(), lim.MaxFileBytes)
		}
		if total += st.Size(); total > lim.MaxBytes {
			return fmt.Errorf("%w: %s holds more than %d bytes", ErrTooLarge, dir, lim.MaxBytes)
		}
		h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, st.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		n, err := io.Copy(tw, f)
		if err == nil && n != st.Size() {
			err = fmt.Errorf("%s changed while it was packed", path.Join(dir, p))
		}
		return err
	})
	if err != nil {
		return err
	}
	if entries == 0 {
		return fmt.Errorf("%w: %s is empty", ErrInvalid, dir)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
