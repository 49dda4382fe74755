package sandboxfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// FS is a wazero filesystem contained in one host directory. It is safe for
// concurrent use; the files it opens are not (see the package documentation).
//
// Like file, it does not embed experimentalsys.UnimplementedFS, so that a
// method added to experimentalsys.FS by a wazero upgrade fails to compile here.
type FS struct {
	root     *os.Root
	readOnly bool
	budget   *Budget
	// preopen is set once wazero's open of the root for the preopen, which
	// the budget does not count, has been handed out.
	preopen atomic.Bool

	// escapeErr is the error os.Root wraps when a path would leave the root.
	// The os package does not export it, so New asks the root for it once.
	escapeErr error
}

var _ experimentalsys.FS = (*FS)(nil)

// New returns an FS rooted at the directory hostDir. With readOnly, every
// change to the directory tree or to file contents is refused. The caller must
// Close the FS once no module instance uses it any more.
func New(hostDir string, readOnly bool) (*FS, error) {
	return NewWithBudget(hostDir, readOnly, nil)
}

// NewWithBudget is New with the writes and open files metered by b, which
// the FS of every mount of one module instance share (see Budget). An FS with
// a budget serves that one instance. A nil b meters nothing.
func NewWithBudget(hostDir string, readOnly bool, b *Budget) (*FS, error) {
	root, err := os.OpenRoot(hostDir)
	if err != nil {
		return nil, fmt.Errorf("sandboxfs: opening mount directory %q: %w", hostDir, err)
	}
	s := &FS{root: root, readOnly: readOnly, budget: b}
	// ".." always escapes, and os.Root refuses it before any system call.
	var pe *os.PathError
	if _, err := root.Lstat(".."); errors.As(err, &pe) {
		if _, isErrno := pe.Err.(syscall.Errno); !isErrno {
			s.escapeErr = pe.Err
		}
	}
	return s, nil
}

// Close releases the directory handle. Files already open stay usable; path
// operations fail with EBADF. Close only after every module instance using the
// FS has been closed: wazero panics when its first, lazy open of a preopen
// fails with anything but ENOENT.
func (s *FS) Close() error {
	return s.root.Close()
}

// OpenFile implements the same method as documented on experimentalsys.FS.
func (s *FS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	name, errno := rootName(p)
	if errno != 0 {
		return nil, errno
	}
	access := flag & (experimentalsys.O_RDONLY | experimentalsys.O_WRONLY | experimentalsys.O_RDWR)
	if access == experimentalsys.O_WRONLY|experimentalsys.O_RDWR {
		return nil, experimentalsys.EINVAL
	}
	writes := access != experimentalsys.O_RDONLY
	if flag&experimentalsys.O_DIRECTORY != 0 && (writes || flag&(experimentalsys.O_CREAT|experimentalsys.O_TRUNC) != 0) {
		return nil, experimentalsys.EISDIR
	}
	if s.readOnly && (writes || flag&(experimentalsys.O_CREAT|experimentalsys.O_TRUNC|experimentalsys.O_APPEND) != 0) {
		return nil, experimentalsys.EROFS
	}

	// Look before opening: os.Root always follows a final symbolic link
	// (inside the root), so O_NOFOLLOW is checked here, and opening a device or
	// FIFO can have effects or block, so those are refused before the open.
	// Guests cannot create links or special files, so they cannot race these
	// checks into anything worse than following a link inside the mount; the
	// type is checked again on the open file.
	var (
		info fs.FileInfo
		err  error
	)
	createExcl := experimentalsys.O_CREAT | experimentalsys.O_EXCL
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		info, err = s.root.Lstat(name)
	} else {
		info, err = s.root.Stat(name)
	}
	switch {
	case err != nil: // the open reports it, or creates the file
	case info.Mode()&fs.ModeSymlink != 0:
		if flag&createExcl != createExcl { // that gets EEXIST from the open
			return nil, experimentalsys.ELOOP
		}
	case !info.Mode().IsRegular() && !info.IsDir():
		return nil, experimentalsys.EACCES
	}

	// The budget: a slot among the open files (not for wazero's own open of
	// the root for the preopen), and the creation charge when O_CREAT will
	// create. Both are given back if the open fails.
	counted := true
	if name == "." && flag == experimentalsys.O_RDONLY && perm == 0 && s.budget != nil && s.preopen.CompareAndSwap(false, true) {
		counted = false
	} else if errno := s.budget.acquireOpen(); errno != 0 {
		return nil, errno
	}
	var charged int64
	if flag&experimentalsys.O_CREAT != 0 && errors.Is(err, fs.ErrNotExist) {
		if errno := s.budget.chargeWrite(CreateCharge); errno != 0 {
			s.budget.releaseOpen()
			return nil, errno
		}
		charged = CreateCharge
	}
	fail := func(f *os.File, errno experimentalsys.Errno) (experimentalsys.File, experimentalsys.Errno) {
		if f != nil {
			_ = f.Close()
			// It was created all the same; the charge stays.
		} else {
			s.budget.refundWrite(charged)
		}
		if counted {
			s.budget.releaseOpen()
		} else {
			s.preopen.Store(false)
		}
		return nil, errno
	}

	osFlag := toOSFlag(flag)
	f, err := s.root.OpenFile(name, osFlag, perm&fs.ModePerm)
	if err != nil {
		return fail(nil, s.errno(err))
	}
	if info, err = f.Stat(); err != nil {
		return fail(f, s.errno(err))
	}
	if !info.Mode().IsRegular() && !info.IsDir() {
		return fail(f, experimentalsys.EACCES)
	}
	if flag&experimentalsys.O_DIRECTORY != 0 && !info.IsDir() {
		return fail(f, experimentalsys.ENOTDIR)
	}
	nf := newFile(s, name, flag, osFlag, f, info)
	nf.counted = counted
	return nf, 0
}

// Lstat implements the same method as documented on experimentalsys.FS.
func (s *FS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	name, errno := rootName(p)
	if errno != 0 {
		return sys.Stat_t{}, errno
	}
	info, err := s.root.Lstat(name)
	if err != nil {
		return sys.Stat_t{}, s.errno(err)
	}
	return sys.NewStat_t(info), 0
}

// Stat implements the same method as documented on experimentalsys.FS.
func (s *FS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	name, errno := rootName(p)
	if errno != 0 {
		return sys.Stat_t{}, errno
	}
	info, err := s.root.Stat(name)
	if err != nil {
		return sys.Stat_t{}, s.errno(err)
	}
	return sys.NewStat_t(info), 0
}

// Mkdir implements the same method as documented on experimentalsys.FS.
func (s *FS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	name, errno := s.mutable(p)
	if errno != 0 {
		return errno
	}
	if errno = s.budget.chargeWrite(CreateCharge); errno != 0 {
		return errno
	}
	errno = s.errno(s.root.Mkdir(name, perm&fs.ModePerm))
	if errno != 0 {
		s.budget.refundWrite(CreateCharge)
	}
	if errno == experimentalsys.ENOTDIR {
		errno = experimentalsys.ENOENT // as wazero's DirFS
	}
	return errno
}

// Chmod implements the same method as documented on experimentalsys.FS.
func (s *FS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	name, errno := s.mutable(p)
	if errno != 0 {
		return errno
	}
	return s.errno(s.root.Chmod(name, perm&fs.ModePerm))
}

// Rename implements the same method as documented on experimentalsys.FS.
func (s *FS) Rename(from, to string) experimentalsys.Errno {
	fromName, errno := s.mutable(from)
	if errno != 0 {
		return errno
	}
	toName, errno := s.mutable(to)
	if errno != 0 {
		return errno
	}
	if fromName == toName {
		return 0 // as wazero's DirFS
	}
	errno = s.errno(s.root.Rename(fromName, toName))
	// os.Root, like os.Rename, refuses to replace any directory with EEXIST,
	// where rename(2) says EISDIR for a file and replaces an empty directory.
	if errno == experimentalsys.EEXIST {
		if info, err := s.root.Lstat(fromName); err == nil && !info.IsDir() {
			errno = experimentalsys.EISDIR
		}
	}
	return errno
}

// Rmdir implements the same method as documented on experimentalsys.FS.
func (s *FS) Rmdir(p string) experimentalsys.Errno {
	name, errno := s.mutable(p)
	if errno != 0 {
		return errno
	}
	// os.Root.Remove removes files and directories alike.
	info, err := s.root.Lstat(name)
	if err != nil {
		return s.errno(err)
	}
	if !info.IsDir() {
		return experimentalsys.ENOTDIR
	}
	return s.errno(s.root.Remove(name))
}

// Unlink implements the same method as documented on experimentalsys.FS.
func (s *FS) Unlink(p string) experimentalsys.Errno {
	name, errno := s.mutable(p)
	if errno != 0 {
		return errno
	}
	// os.Root.Remove removes files and directories alike.
	info, err := s.root.Lstat(name)
	if err != nil {
		return s.errno(err)
	}
	if info.IsDir() {
		return experimentalsys.EISDIR
	}
	return s.errno(s.root.Remove(name))
}

// Link implements the same method as documented on experimentalsys.FS. It
// always returns EPERM.
func (s *FS) Link(_, _ string) experimentalsys.Errno {
	return experimentalsys.EPERM
}

// Symlink implements the same method as documented on experimentalsys.FS. It
// always returns EPERM.
func (s *FS) Symlink(_, _ string) experimentalsys.Errno {
	return experimentalsys.EPERM
}

// Readlink implements the same method as documented on experimentalsys.FS. It
// returns EPERM when the target is absolute or leaves the mount.
func (s *FS) Readlink(p string) (string, experimentalsys.Errno) {
	name, errno := rootName(p)
	if errno != 0 {
		return "", errno
	}
	target, err := s.root.Readlink(name)
	if err != nil {
		return "", s.errno(err)
	}
	target = filepath.ToSlash(target)
	if path.IsAbs(target) || filepath.IsAbs(target) || escapes(path.Join(path.Dir(name), target)) {
		return "", experimentalsys.EPERM
	}
	return target, 0
}

// Utimens implements the same method as documented on experimentalsys.FS.
func (s *FS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	name, errno := s.mutable(p)
	if errno != 0 {
		return errno
	}
	return s.errno(s.root.Chtimes(name, toTime(atim), toTime(mtim)))
}

// mutable is rootName for operations that change the tree.
func (s *FS) mutable(p string) (string, experimentalsys.Errno) {
	name, errno := rootName(p)
	if errno != 0 {
		return "", errno
	}
	if s.readOnly {
		return "", experimentalsys.EROFS
	}
	return name, 0
}

// errno maps an error from os.Root or os.File to what the guest sees.
func (s *FS) errno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	if s.escapeErr != nil && errors.Is(err, s.escapeErr) {
		return experimentalsys.EPERM
	}
	return experimentalsys.UnwrapOSError(err)
}

// rootName turns a path from wazero into a name for os.Root. The root itself
// arrives as "", "." or "/". Other absolute paths and paths climbing out with
// ".." are refused here so that they get EPERM without a system call; os.Root
// would refuse them too.
func rootName(p string) (string, experimentalsys.Errno) {
	switch p {
	case "", ".", "/":
		return ".", 0
	}
	if path.IsAbs(p) || filepath.IsAbs(p) || escapes(path.Clean(p)) {
		return "", experimentalsys.EPERM
	}
	return p, 0
}

// escapes reports whether a cleaned slash-separated relative path leaves its
// starting directory.
func escapes(cleaned string) bool {
	return cleaned == ".." || strings.HasPrefix(cleaned, "../")
}

// toOSFlag converts the flags os.Root understands. O_DIRECTORY, O_NOFOLLOW
// and O_NONBLOCK are handled by OpenFile and the file.
func toOSFlag(flag experimentalsys.Oflag) int {
	var f int
	switch flag & (experimentalsys.O_RDONLY | experimentalsys.O_WRONLY | experimentalsys.O_RDWR) {
	case experimentalsys.O_WRONLY:
		f = os.O_WRONLY
	case experimentalsys.O_RDWR:
		f = os.O_RDWR
	default:
		f = os.O_RDONLY
	}
	if flag&experimentalsys.O_APPEND != 0 {
		f |= os.O_APPEND
	}
	if flag&experimentalsys.O_CREAT != 0 {
		f |= os.O_CREATE
	}
	if flag&experimentalsys.O_EXCL != 0 {
		f |= os.O_EXCL
	}
	if flag&experimentalsys.O_TRUNC != 0 {
		f |= os.O_TRUNC
	}
	if flag&(experimentalsys.O_SYNC|experimentalsys.O_DSYNC|experimentalsys.O_RSYNC) != 0 {
		f |= os.O_SYNC
	}
	return f
}

// toTime converts nanoseconds since the epoch; UTIME_OMIT becomes the zero
// time, which os.Chtimes leaves unchanged.
func toTime(nanos int64) time.Time {
	if nanos == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, nanos)
}
