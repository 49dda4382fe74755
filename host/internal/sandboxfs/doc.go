// Package sandboxfs is a wazero filesystem for one WASI preopen that an
// untrusted guest cannot leave.
//
// wazero's own experimental/sysfs.DirFS joins guest paths onto a host
// directory and calls the path-based os functions, which follow any symbolic
// link they meet: a link "data/etc -> /etc" placed in a mount lets a guest read
// /etc/passwd. This package resolves every path through an [os.Root], which
// walks the path one component at a time with openat and refuses any ".."
// component, absolute path or symbolic link that would leave the directory.
//
// Mount an [FS] with
//
//	fsc := wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(fs, "/data")
//
// and close it once every module instance using the mount has been closed.
//
// # What the guest sees
//
// Every method reports failure as an Errno of wazero's experimental/sys
// package, which wazero hands to the guest unchanged:
//
//   - EPERM: the path is absolute, climbs out with "..", or follows a
//     symbolic link whose target is absolute or outside the mount. It is the
//     same answer for every kind of escape, and os.Root gives it before
//     touching anything outside, so a guest cannot tell an existing outside
//     file from a missing one.
//   - EPERM: Symlink and Link, always, in read-write mounts too. A symbolic
//     link is the classic way out of a directory. A hard link cannot escape
//     os.Root, but once made no path check tells it from the original: a name
//     the host later moves out of the mount would stay writable by the guest
//     through the other.
//   - Readlink returns the target of a link that stays inside the mount (so
//     realpath and friends work) and EPERM for an absolute or escaping
//     target, so that host paths are not disclosed.
//   - EACCES: opening anything but a regular file or a directory (device,
//     FIFO, socket), checked before the open so that it neither blocks nor
//     triggers a device, and again after. Stat and Lstat of such files work.
//   - EROFS, on a read-only mount: OpenFile asking for write access or with
//     O_CREAT, O_TRUNC or O_APPEND, Mkdir, Rmdir, Unlink, Rename, Chmod and
//     Utimens. On files opened from a read-only mount (which are always open
//     read-only) Write, Pwrite, Truncate and Utimens return EBADF (EISDIR for
//     directories), as wazero's sysfs.ReadFS does. Sync and Datasync succeed.
//   - ENOTSUP: Pwrite on a file opened with O_APPEND. Go's os.File refuses
//     it, and Linux would silently append instead of writing at the offset.
//   - ELOOP: OpenFile with O_NOFOLLOW of a path whose last component is a
//     symbolic link. Without O_NOFOLLOW, links inside the mount are followed.
//   - EISDIR: OpenFile with O_DIRECTORY and write access, O_CREAT or O_TRUNC,
//     checked before anything is opened so nothing is truncated.
//   - Anything else is the operating system's error mapped with wazero's
//     UnwrapOSError, with the adjustments wazero's DirFS makes: Mkdir turns
//     ENOTDIR into ENOENT, Unlink of a directory is EISDIR and Rmdir of a
//     non-directory is ENOTDIR. Rename onto an existing directory fails, as
//     os.Rename does: EISDIR for a file, EEXIST for a directory, even an empty
//     one that rename(2) would replace.
//
// Permission bits passed to OpenFile (with O_CREAT), Mkdir and Chmod are masked
// to 0o777: a guest cannot create or mark setuid, setgid or sticky files.
//
// # Budgets
//
// An FS made with [NewWithBudget] also answers, when its [Budget] (shared by
// every mount of one module instance) says so:
//
//   - EDQUOT: a Write, Pwrite, Truncate, creating OpenFile or Mkdir that
//     would pass the write quota of the current call. Nothing is written or
//     created, not even the part that would fit. Bytes written, growth past
//     the end of a file (by truncate, or by writing past the end) and
//     [CreateCharge] per file or directory created count; deleting gives
//     nothing back.
//   - EMFILE: an OpenFile while the guest holds as many files and
//     directories open as it may. The mount roots wazero opens for the
//     preopens are not counted.
//
// Both are this package's own Errno values: wazero's WASI layer reports
// them as EIO unless the host translates them (see [Budget.TakeRefusal]).
//
// # What the operator must still ensure
//
// Path checks cannot see through hard links or mount points. A hard link
// inside the mount to a file outside it, or a bind mount placed inside the
// mount directory, is reachable by the guest like any other file. Guests
// cannot create either, but the host must not leave them there: mount
// directories created for the guest, not shared or system directories.
//
// # Concurrency
//
// An [FS] is safe for concurrent use by many module instances, and a
// [Budget] by many goroutines. An FS with a budget serves the one instance
// the budget belongs to. A file it returns belongs to one module instance,
// like every wazero file: its methods must not be called concurrently.
package sandboxfs
