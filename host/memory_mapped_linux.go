//go:build linux && (amd64 || arm64)

package host

import (
	"errors"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

// mappedSupported says whether linear memory can be backed by a mapping of
// a snapshot image (see mappedMemory).
const mappedSupported = true

const mfdCloexec = 0x1

// memImage is a snapshot of an instance's linear memory in an anonymous
// memory file. Instances restored from it map the file privately, so they
// share its pages until they write to them, and a restore only drops the
// pages the call wrote (see mappedMemory.reset).
type memImage struct {
	fd   int
	size int
	// src maps the file read-only and shared: what a restore copies from.
	src []byte
}

// newMemImage copies b into a new memory file.
func newMemImage(b []byte) (*memImage, error) {
	if len(b) == 0 || len(b)%pageSize != 0 {
		return nil, errors.New("memory image size is not a whole number of pages")
	}
	name := []byte("skillhost-snapshot\x00")
	fd, _, errno := syscall.Syscall(sysMemfdCreate, uintptr(unsafe.Pointer(&name[0])), mfdCloexec, 0)
	if errno != 0 {
		return nil, errno
	}
	img := &memImage{fd: int(fd), size: len(b)}
	if err := syscall.Ftruncate(img.fd, int64(len(b))); err != nil {
		syscall.Close(img.fd)
		return nil, err
	}
	for off := 0; off < len(b); {
		n, err := syscall.Pwrite(img.fd, b[off:], int64(off))
		if err != nil {
			syscall.Close(img.fd)
			return nil, err
		}
		off += n
	}
	src, err := syscall.Mmap(img.fd, 0, len(b), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		syscall.Close(img.fd)
		return nil, err
	}
	img.src = src
	runtime.AddCleanup(img, func(r imageResources) {
		syscall.Munmap(r.src)
		syscall.Close(r.fd)
	}, imageResources{img.fd, src})
	return img, nil
}

// imageResources is what a memImage releases when it is collected.
type imageResources struct {
	fd  int
	src []byte
}

// readInto copies the image into b, for memory that is not mapped.
func (img *memImage) readInto(b []byte) error {
	for off := 0; off < len(b); {
		n, err := syscall.Pread(img.fd, b[off:], int64(off))
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("memory image is shorter than the memory")
		}
		off += n
	}
	runtime.KeepAlive(img)
	return nil
}

// mappedMemory is linear memory in a range of address space reserved for
// the memory's largest size, so that it never moves. Until it is bound to
// a snapshot image it is anonymous memory; bound, its first image.size
// bytes are a private mapping of the image: reading a page the instance
// has not written reads the image's (shared) page, writing one copies it.
type mappedMemory struct {
	a      *capAllocator
	region []byte // the whole reservation
	size   uint64
	img    *memImage // the bound image, or nil
	// dirty is set when the kernel tracks the pages written (see
	// dirtyTracker).
	dirty *dirtyState
	// mu orders Free, which wazero calls when the instance's module is
	// closed (by Host.Close, from another goroutine than a call's), with
	// the call's bind and reset: a MAP_FIXED over a range Free had
	// already unmapped would map the image over whatever the process put
	// there since.
	mu sync.Mutex
}

// newMappedMemory reserves max bytes, or returns nil when it cannot.
func newMappedMemory(a *capAllocator, max uint64) *mappedMemory {
	max = (max + pageSize - 1) &^ (pageSize - 1)
	if max == 0 || max > 1<<33 {
		return nil
	}
	region, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	return &mappedMemory{a: a, region: region}
}

func (m *mappedMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if size > uint64(len(m.region)) {
		m.a.denied = true
		return nil
	}
	m.size = size
	return m.region[:size:size]
}

func (m *mappedMemory) Free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.free()
}

func (m *mappedMemory) free() {
	if m.region != nil {
		syscall.Munmap(m.region)
		m.region = nil
	}
}

// bind maps img over the start of the memory, whose size must be the
// image's: the memory then holds the image's bytes.
func (m *mappedMemory) bind(img *memImage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.region == nil || m.size != uint64(img.size) {
		return errGrown
	}
	_, _, errno := syscall.Syscall6(syscall.SYS_MMAP, uintptr(unsafe.Pointer(&m.region[0])), uintptr(img.size),
		syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_FIXED, uintptr(img.fd), 0)
	runtime.KeepAlive(img)
	if errno != 0 {
		// The range may be left unmapped: the memory is unusable.
		m.free()
		return errno
	}
	m.img = img
	m.dirty = nil
	if t := tracker(); t != nil && t.track(m.region[:img.size]) == nil {
		m.dirty = new(dirtyState)
	}
	return nil
}

// reset brings back the image's bytes in every page the instance wrote
// since it was bound or last reset: tracked, it copies them over those
// pages (see dirtyTracker.restore); otherwise it drops the pages, so that
// they read the image again. Its cost is mostly that of the pages written;
// tracked, the kernel's scan also reads one page-table entry per page of
// the memory (about 5 ns each).
func (m *mappedMemory) reset() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.img == nil || m.region == nil || m.size != uint64(m.img.size) {
		return errGrown
	}
	if m.dirty != nil {
		err := tracker().restore(m.region[:m.img.size], m.img.src, m.dirty)
		runtime.KeepAlive(m.img)
		return err
	}
	return syscall.Madvise(m.region[:m.img.size], syscall.MADV_DONTNEED)
}
