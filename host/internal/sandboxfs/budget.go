package sandboxfs

import (
	"math"
	"sync/atomic"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// CreateCharge is what a Budget charges, against the write quota, for each
// file or directory a guest creates: about one block of directory entry and
// inode, so that creating empty files in a loop is bounded like writing.
const CreateCharge = 4096

// Errnos a Budget refuses with. wazero's experimental/sys package has no
// EDQUOT or EMFILE, so these are values of its Errno type outside the ones it
// defines; its WASI layer reports any errno it does not know as EIO. A host
// that wants the guest to see WASI's dquot and mfile translates the EIO of
// the refused call, using Budget.TakeRefusal to tell it from other I/O
// errors (skillhost's host package does).
const (
	// EDQUOT: the write would pass the call's write quota.
	EDQUOT experimentalsys.Errno = 0x7e00 + iota
	// EMFILE: the guest holds as many files open as it may.
	EMFILE
)

// Budget meters what one module instance does through its mounts: the bytes
// it writes in the current call, against a write quota, and the files and
// directories it holds open, against a cap. Every FS of the instance shares
// one Budget (see NewWithBudget). It is safe for concurrent use.
//
// A cap of zero or less means no cap; the counts are kept all the same. A nil
// *Budget meters nothing and refuses nothing.
//
// What is charged against the write quota, and refused with EDQUOT when it
// would pass it (nothing is written then, not even the part that would fit):
//
//   - Write and Pwrite: the bytes written, plus the gap between the end of
//     the file and the offset when writing past the end (the gap is file
//     growth even if the file system stores it sparsely). The size is the
//     one seen just before the write. Bytes a short write did not write are
//     given back.
//   - Truncate (ftruncate, fd_allocate) to a size past the current one: the
//     growth. Shrinking gives nothing back.
//   - OpenFile with O_CREAT of a name that does not exist, and Mkdir:
//     CreateCharge each, given back when the creation fails. Rename creates
//     nothing and is not charged. Symlink and Link are always refused with
//     EPERM, before any charge.
//
// Deleting files or shrinking them gives nothing back: the quota bounds how
// much a call writes, not how much disk the mounts use.
//
// The open-file count covers every file and directory opened through the
// instance's mounts, read-only mounts included, except each mount's root as
// wazero opens it for the preopen (once, lazily, on the guest's first use of
// the mount, and held until the instance closes): wazero cannot report a
// failure of that open to the guest (it panics), and the roots are fixed by
// the grant, not chosen by the guest. An OpenFile past the cap fails with
// EMFILE and opens nothing; Close gives the slot back, once however often it
// is called.
//
// The write count is per call (StartCall resets it); the open-file count is
// not, since files a guest left open in an instance the host reuses stay
// open. A host reusing instances can read OpenFiles to decide.
type Budget struct {
	maxWrite atomic.Int64
	maxOpen  atomic.Int64
	written  atomic.Int64
	open     atomic.Int64
	hit      atomic.Bool
	// refusal is the errno of the latest refusal not yet taken.
	refusal atomic.Uint32
}

// NewBudget returns a Budget with the given caps, as StartCall sets them.
func NewBudget(maxWriteBytes, maxOpenFiles int64) *Budget {
	b := &Budget{}
	b.StartCall(maxWriteBytes, maxOpenFiles)
	return b
}

// StartCall begins a call: it sets the caps for it, and resets the bytes
// written, the quota-hit flag and any refusal not yet taken. The open-file
// count carries over. If the new open-file cap is below the files already
// open, those stay open and further opens are refused until enough close.
func (b *Budget) StartCall(maxWriteBytes, maxOpenFiles int64) {
	if b == nil {
		return
	}
	b.maxWrite.Store(maxWriteBytes)
	b.maxOpen.Store(maxOpenFiles)
	b.written.Store(0)
	b.hit.Store(false)
	b.refusal.Store(0)
}

// Written returns the bytes charged against the write quota since the last
// StartCall.
func (b *Budget) Written() int64 {
	if b == nil {
		return 0
	}
	return b.written.Load()
}

// QuotaHit reports whether a write was refused with EDQUOT since the last
// StartCall. A guest is free to ignore the errno and return success; nothing
// past the quota was written either way.
func (b *Budget) QuotaHit() bool {
	return b != nil && b.hit.Load()
}

// OpenFiles returns the files and directories open now through the mounts
// sharing b, the mount roots wazero holds for the preopens not included.
func (b *Budget) OpenFiles() int64 {
	if b == nil {
		return 0
	}
	return b.open.Load()
}

// TakeRefusal returns the errno (EDQUOT or EMFILE) of the latest refusal
// since StartCall or the last TakeRefusal, or 0 if there was none, and
// forgets it. A host calls it after a WASI function of one guest reported EIO
// to learn whether the budget refused, and so which errno to report instead.
func (b *Budget) TakeRefusal() experimentalsys.Errno {
	if b == nil {
		return 0
	}
	return experimentalsys.Errno(b.refusal.Swap(0))
}

func (b *Budget) refuse(errno experimentalsys.Errno) experimentalsys.Errno {
	b.refusal.Store(uint32(errno))
	return errno
}

// chargeWrite charges n bytes, or refuses with EDQUOT and charges nothing.
func (b *Budget) chargeWrite(n int64) experimentalsys.Errno {
	if b == nil || n <= 0 {
		return 0
	}
	limit := b.maxWrite.Load()
	for {
		cur := b.written.Load()
		next := cur + n
		if n > math.MaxInt64-cur {
			next = math.MaxInt64
		}
		if limit > 0 && next > limit {
			b.hit.Store(true)
			return b.refuse(EDQUOT)
		}
		if b.written.CompareAndSwap(cur, next) {
			return 0
		}
	}
}

// refundWrite gives back n bytes charged by chargeWrite in the same call.
func (b *Budget) refundWrite(n int64) {
	if b == nil || n <= 0 {
		return
	}
	for {
		cur := b.written.Load()
		if b.written.CompareAndSwap(cur, max(cur-n, 0)) {
			return
		}
	}
}

// acquireOpen takes an open-file slot, or refuses with EMFILE.
func (b *Budget) acquireOpen() experimentalsys.Errno {
	if b == nil {
		return 0
	}
	limit := b.maxOpen.Load()
	for {
		cur := b.open.Load()
		if limit > 0 && cur >= limit {
			return b.refuse(EMFILE)
		}
		if b.open.CompareAndSwap(cur, cur+1) {
			return 0
		}
	}
}

// releaseOpen gives back a slot taken by acquireOpen.
func (b *Budget) releaseOpen() {
	if b != nil {
		b.open.Add(-1)
	}
}
