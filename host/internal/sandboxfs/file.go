package sandboxfs

import (
	"io"
	"io/fs"
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// file is a regular file or directory opened by FS.OpenFile. Like every
// wazero file it belongs to one module instance and is not safe for
// concurrent use.
//
// It does not embed experimentalsys.UnimplementedFile: a method added to
// experimentalsys.File by a wazero upgrade should fail to compile here and be
// decided on, not answered with ENOSYS unseen.
type file struct {
	seekMethod[int64]

	fs *FS
	// name is the path the file was opened with, relative to the root. It is
	// used to reopen the file (SetAppend) and to set its times (Utimens),
	// each time checking that it still names the same file.
	name string
	// osFlag is what the file was opened with, for reopening.
	osFlag int
	f      *os.File
	// info is from the open file; type, device and inode do not change.
	info     fs.FileInfo
	st       sys.Stat_t
	writable bool
	append   bool
	nonblock bool
	closed   bool
	// counted is set when the file holds a slot of the FS's budget, which
	// Close gives back.
	counted bool
}

var _ experimentalsys.PollableFile = (*file)(nil)

func newFile(s *FS, name string, flag experimentalsys.Oflag, osFlag int, of *os.File, info fs.FileInfo) *file {
	f := &file{
		fs:       s,
		name:     name,
		osFlag:   osFlag,
		f:        of,
		info:     info,
		st:       sys.NewStat_t(info),
		writable: flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR) != 0,
		append:   flag&experimentalsys.O_APPEND != 0,
		nonblock: flag&experimentalsys.O_NONBLOCK != 0,
	}
	f.seekMethod.f = f
	return f
}

// Dev implements the same method as documented on experimentalsys.File.
func (f *file) Dev() (uint64, experimentalsys.Errno) { return f.st.Dev, 0 }

// Ino implements the same method as documented on experimentalsys.File.
func (f *file) Ino() (sys.Inode, experimentalsys.Errno) { return f.st.Ino, 0 }

// IsDir implements the same method as documented on experimentalsys.File.
func (f *file) IsDir() (bool, experimentalsys.Errno) { return f.info.IsDir(), 0 }

// IsAppend implements the same method as documented on experimentalsys.File.
func (f *file) IsAppend() bool { return f.append }

// SetAppend implements the same method as documented on experimentalsys.File.
// A file open for writing is reopened through the root, because an os.File
// cannot change its append mode.
func (f *file) SetAppend(enable bool) experimentalsys.Errno {
	switch {
	case f.closed:
		return experimentalsys.EBADF
	case f.info.IsDir():
		return experimentalsys.EISDIR
	case enable == f.append:
		return 0
	case !f.writable:
		f.append = enable // nothing can be written anyway
		return 0
	}
	osFlag := f.osFlag &^ (os.O_CREATE | os.O_TRUNC | os.O_EXCL | os.O_APPEND)
	if enable {
		osFlag |= os.O_APPEND
	}
	nf, errno := f.reopen(osFlag)
	if errno != 0 {
		return errno
	}
	offset, err := f.f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = nf.Seek(offset, io.SeekStart)
	}
	if err != nil {
		_ = nf.Close()
		return f.fs.errno(err)
	}
	_ = f.f.Close()
	f.f, f.osFlag, f.append = nf, osFlag, enable
	return 0
}

// reopen opens f.name again and checks that it is still the same file.
func (f *file) reopen(osFlag int) (*os.File, experimentalsys.Errno) {
	nf, err := f.fs.root.OpenFile(f.name, osFlag, 0)
	if err != nil {
		return nil, f.fs.errno(err)
	}
	info, err := nf.Stat()
	if err != nil {
		_ = nf.Close()
		return nil, f.fs.errno(err)
	}
	if !os.SameFile(f.info, info) {
		_ = nf.Close()
		return nil, experimentalsys.ENOENT // renamed or replaced since opened
	}
	return nf, 0
}

// IsNonblock implements the same method as documented on
// experimentalsys.PollableFile.
func (f *file) IsNonblock() bool { return f.nonblock }

// SetNonblock implements the same method as documented on
// experimentalsys.PollableFile. Regular files and directories never block, so
// the mode is only recorded.
func (f *file) SetNonblock(enable bool) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	f.nonblock = enable
	return 0
}

// Poll implements the same method as documented on experimentalsys.Pollable.
// Regular files and directories are always ready.
func (f *file) Poll(experimentalsys.Pflag, int32) (bool, experimentalsys.Errno) {
	if f.closed {
		return false, experimentalsys.EBADF
	}
	return true, 0
}

// Stat implements the same method as documented on experimentalsys.File.
func (f *file) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	info, err := f.f.Stat()
	if err != nil {
		return sys.Stat_t{}, f.fs.errno(err)
	}
	return sys.NewStat_t(info), 0
}

// Read implements the same method as documented on experimentalsys.File.
func (f *file) Read(buf []byte) (int, experimentalsys.Errno) {
	if errno := f.check(false); errno != 0 {
		return 0, errno
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.Read(buf)
	return n, f.fs.errno(err)
}

// Pread implements the same method as documented on experimentalsys.File.
func (f *file) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if errno := f.check(false); errno != 0 {
		return 0, errno
	}
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.ReadAt(buf, off)
	return n, f.fs.errno(err)
}

// seekMethod gives file its Seek method. experimentalsys.File.Seek returns an
// Errno, not an error, and go vet's stdmethods check reports every method
// declared as Seek(int64, int) (int64, Errno), wazero's own included. With the
// offset type as a type parameter, only ever int64, the method set is the
// same and the check does not apply.
type seekMethod[Offset ~int64] struct{ f *file }

// Seek implements the same method as documented on experimentalsys.File.
func (m seekMethod[Offset]) Seek(offset Offset, whence int) (Offset, experimentalsys.Errno) {
	n, errno := m.f.seek(int64(offset), whence)
	return Offset(n), errno
}

// seek is Seek. A directory can only be rewound, with offset zero from
// io.SeekStart.
func (f *file) seek(offset int64, whence int) (int64, experimentalsys.Errno) {
	if f.closed {
		return 0, experimentalsys.EBADF
	}
	if whence < io.SeekStart || whence > io.SeekEnd {
		return 0, experimentalsys.EINVAL
	}
	if f.info.IsDir() && (offset != 0 || whence != io.SeekStart) {
		return 0, experimentalsys.EISDIR
	}
	// On a directory, os.File.Seek also drops its buffered entries, so the
	// next Readdir starts over and sees the directory as it is now.
	n, err := f.f.Seek(offset, whence)
	return n, f.fs.errno(err)
}

// Readdir implements the same method as documented on experimentalsys.File.
func (f *file) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.closed || !f.info.IsDir() {
		return nil, experimentalsys.EBADF
	}
	// os.File.Readdir stats each entry relative to the open directory
	// (fstatat), never by a path that could be redirected.
	infos, err := f.f.Readdir(n)
	if errno := f.fs.errno(err); errno != 0 {
		return nil, errno
	}
	dirents := make([]experimentalsys.Dirent, 0, len(infos))
	for _, info := range infos {
		dirents = append(dirents, experimentalsys.Dirent{
			Name: info.Name(),
			Ino:  sys.NewStat_t(info).Ino,
			Type: info.Mode().Type(),
		})
	}
	return dirents, 0
}

// Write implements the same method as documented on experimentalsys.File.
func (f *file) Write(buf []byte) (int, experimentalsys.Errno) {
	if errno := f.check(true); errno != 0 {
		return 0, errno
	}
	if len(buf) == 0 {
		return 0, 0
	}
	var gap int64
	if f.fs.budget != nil && !f.append {
		off, err := f.f.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, f.fs.errno(err)
		}
		g, errno := f.gap(off)
		if errno != 0 {
			return 0, errno
		}
		gap = g
	}
	if errno := f.fs.budget.chargeWrite(gap + int64(len(buf))); errno != 0 {
		return 0, errno
	}
	n, err := f.f.Write(buf)
	f.refundShort(n, len(buf), gap)
	return n, f.fs.errno(err)
}

// gap returns how far past the end of the file the offset off lies, as the
// budget charges it for a write at off: 0 within the file.
func (f *file) gap(off int64) (int64, experimentalsys.Errno) {
	info, err := f.f.Stat()
	if err != nil {
		return 0, f.fs.errno(err)
	}
	return max(off-info.Size(), 0), 0
}

// refundShort gives back to the budget what a write of want bytes after a
// gap charged but did not write: the bytes short, and the gap too when
// nothing was written, since the file did not grow.
func (f *file) refundShort(n, want int, gap int64) {
	if n >= want {
		return
	}
	refund := int64(want - max(n, 0))
	if n <= 0 {
		refund += gap
	}
	f.fs.budget.refundWrite(refund)
}

// Pwrite implements the same method as documented on experimentalsys.File.
// It returns ENOTSUP on a file in append mode.
func (f *file) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if errno := f.check(true); errno != 0 {
		return 0, errno
	}
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	if f.append {
		return 0, experimentalsys.ENOTSUP
	}
	if len(buf) == 0 {
		return 0, 0
	}
	var gap int64
	if f.fs.budget != nil {
		g, errno := f.gap(off)
		if errno != 0 {
			return 0, errno
		}
		gap = g
	}
	if errno := f.fs.budget.chargeWrite(gap + int64(len(buf))); errno != 0 {
		return 0, errno
	}
	n, err := f.f.WriteAt(buf, off)
	f.refundShort(n, len(buf), gap)
	return n, f.fs.errno(err)
}

// Truncate implements the same method as documented on experimentalsys.File.
func (f *file) Truncate(size int64) experimentalsys.Errno {
	if errno := f.check(true); errno != 0 {
		return errno
	}
	if size < 0 {
		return experimentalsys.EINVAL
	}
	var growth int64
	if f.fs.budget != nil {
		info, err := f.f.Stat()
		if err != nil {
			return f.fs.errno(err)
		}
		growth = max(size-info.Size(), 0)
	}
	if errno := f.fs.budget.chargeWrite(growth); errno != 0 {
		return errno
	}
	errno := f.fs.errno(f.f.Truncate(size))
	if errno != 0 {
		f.fs.budget.refundWrite(growth)
	}
	return errno
}

// Sync implements the same method as documented on experimentalsys.File.
func (f *file) Sync() experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	return f.fs.errno(f.f.Sync())
}

// Datasync implements the same method as documented on experimentalsys.File,
// with a full Sync.
func (f *file) Datasync() experimentalsys.Errno {
	return f.Sync()
}

// Utimens implements the same method as documented on experimentalsys.File.
// Go has no portable futimens, so the times are set by name through the
// root, after checking that the name still refers to this file.
func (f *file) Utimens(atim, mtim int64) experimentalsys.Errno {
	if f.closed || f.fs.readOnly {
		return experimentalsys.EBADF
	}
	info, err := f.fs.root.Stat(f.name)
	if err != nil {
		return f.fs.errno(err)
	}
	if !os.SameFile(f.info, info) {
		return experimentalsys.ENOENT // renamed or replaced since opened
	}
	return f.fs.errno(f.fs.root.Chtimes(f.name, toTime(atim), toTime(mtim)))
}

// Close implements the same method as documented on experimentalsys.File.
func (f *file) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	if f.counted {
		f.counted = false
		f.fs.budget.releaseOpen()
	}
	return f.fs.errno(f.f.Close())
}

// check returns the error for reading (write false) or writing a file that
// is closed, a directory, or not open for writing.
func (f *file) check(write bool) experimentalsys.Errno {
	switch {
	case f.closed:
		return experimentalsys.EBADF
	case f.info.IsDir():
		return experimentalsys.EISDIR
	case write && !f.writable:
		return experimentalsys.EBADF
	}
	return 0
}
