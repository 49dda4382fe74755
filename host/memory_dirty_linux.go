//go:build linux && (amd64 || arm64)

package host

import (
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

// Dirty-page tracking: the kernel write-protects a bound memory's pages
// (userfaultfd in asynchronous write-protect mode, Linux 6.7 and later)
// and records which ones a call wrote; PAGEMAP_SCAN reports them, the
// restore copies the image's bytes over just those pages and protects them
// again. The pages stay mapped, so the next call that writes them takes a
// write-protect fault instead of a new page: on a machine where a page
// fault costs microseconds (a virtual machine), a restore that dropped the
// pages (madvise) made every call pay one full fault per page it wrote.
// Where the kernel lacks any of it, resets drop the pages instead.

const (
	uffdUserModeOnly       = 1
	uffdAPI                = 0xaa
	uffdioAPI              = 0xc018aa3f // _IOWR(0xaa, 0x3f, struct uffdio_api)
	uffdioRegister         = 0xc020aa00 // _IOWR(0xaa, 0x00, struct uffdio_register)
	uffdioWriteprotect     = 0xc018aa06 // _IOWR(0xaa, 0x06, struct uffdio_writeprotect)
	uffdRegisterModeWP     = 1 << 1
	uffdWriteprotectModeWP = 1 << 0
	uffdFeatureWPShmem     = 1 << 12 // UFFD_FEATURE_WP_HUGETLBFS_SHMEM
	uffdFeatureWPUnpop     = 1 << 13 // UFFD_FEATURE_WP_UNPOPULATED
	uffdFeatureWPAsync     = 1 << 15 // UFFD_FEATURE_WP_ASYNC

	pagemapScan        = 0xc0606610 // _IOWR('f', 16, struct pm_scan_arg)
	pmScanWPMatching   = 1 << 0
	pmScanCheckWPAsync = 1 << 1
	pageIsWritten      = 1 << 1

	scanRegions = 64
)

// pmScanArg is struct pm_scan_arg.
type pmScanArg struct {
	size, flags, start, end, walkEnd, vec, vecLen, maxPages       uint64
	categoryInverted, categoryMask, categoryAnyofMask, returnMask uint64
}

// pageRegion is struct page_region.
type pageRegion struct{ start, end, categories uint64 }

// tracker holds the process's userfaultfd and pagemap file, opened on first
// use; nil when the kernel cannot track dirty pages.
var tracker = sync.OnceValue(func() *dirtyTracker {
	fd, _, errno := syscall.Syscall(sysUserfaultfd, syscall.O_CLOEXEC|syscall.O_NONBLOCK|uffdUserModeOnly, 0, 0)
	if errno != 0 {
		return nil
	}
	want := uint64(uffdFeatureWPShmem | uffdFeatureWPUnpop | uffdFeatureWPAsync)
	api := [3]uint64{uffdAPI, want, 0}
	if ioctl(int(fd), uffdioAPI, unsafe.Pointer(&api)) != nil || api[1]&want != want {
		syscall.Close(int(fd))
		return nil
	}
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		syscall.Close(int(fd))
		return nil
	}
	return &dirtyTracker{uffd: int(fd), pagemap: pm}
})

type dirtyTracker struct {
	uffd    int
	pagemap *os.File
}

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// track registers b for write-protect tracking and protects it.
func (t *dirtyTracker) track(b []byte) error {
	start := uint64(uintptr(unsafe.Pointer(&b[0])))
	reg := [4]uint64{start, uint64(len(b)), uffdRegisterModeWP, 0}
	if err := ioctl(t.uffd, uffdioRegister, unsafe.Pointer(&reg)); err != nil {
		return err
	}
	return t.protect(start, start+uint64(len(b)))
}

func (t *dirtyTracker) protect(start, end uint64) error {
	wp := [3]uint64{start, end - start, uffdWriteprotectModeWP}
	return ioctl(t.uffd, uffdioWriteprotect, unsafe.Pointer(&wp))
}

// restore copies src over every page of dst written since it was last
// protected, and protects those pages again: one scan lists them, and once
// they are copied, one more protects them all (one flush of the other
// cores' address translations, not one per run of pages).
func (t *dirtyTracker) restore(dst, src []byte) error {
	base := uint64(uintptr(unsafe.Pointer(&dst[0])))
	end := base + uint64(len(dst))
	// On the heap, which does not move, as the kernel writes it.
	vec := new([scanRegions]pageRegion)
	defer runtime.KeepAlive(vec)
	first, last := end, base
	for start := base; start < end; {
		arg := pmScanArg{
			size: uint64(unsafe.Sizeof(pmScanArg{})), flags: pmScanCheckWPAsync, start: start, end: end,
			vec: uint64(uintptr(unsafe.Pointer(&vec[0]))), vecLen: scanRegions,
			categoryMask: pageIsWritten, returnMask: pageIsWritten,
		}
		n, err := t.scan(&arg)
		if err != nil {
			return err
		}
		for _, r := range vec[:n] {
			copy(dst[r.start-base:r.end-base], src[r.start-base:r.end-base])
			first, last = min(first, r.start), max(last, r.end)
		}
		if arg.walkEnd <= start {
			break
		}
		start = arg.walkEnd
	}
	if first >= last {
		return nil
	}
	// Protect what was written in [first, last), reporting nothing.
	arg := pmScanArg{
		size: uint64(unsafe.Sizeof(pmScanArg{})), flags: pmScanWPMatching | pmScanCheckWPAsync, start: first, end: last,
		categoryMask: pageIsWritten, returnMask: pageIsWritten,
	}
	_, err := t.scan(&arg)
	return err
}

func (t *dirtyTracker) scan(arg *pmScanArg) (int, error) {
	n, _, errno := syscall.Syscall(syscall.SYS_IOCTL, t.pagemap.Fd(), pagemapScan, uintptr(unsafe.Pointer(arg)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
