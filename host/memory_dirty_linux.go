//go:build linux && (amd64 || arm64)

package host

import (
	"bytes"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Dirty-page tracking: the kernel write-protects a bound memory's pages
// (userfaultfd in asynchronous write-protect mode, Linux 6.7 and later)
// and records which ones a call wrote; PAGEMAP_SCAN reports them, and the
// restore copies the image's bytes over just those pages. The pages stay
// mapped, so the next call that writes them takes at most a write-protect
// fault instead of a new page: on a machine where a page fault costs
// microseconds (a virtual machine), a restore that dropped the pages
// (madvise) made every call pay one full fault per page it wrote. Pages
// the calls keep changing are left writable and copied back on every
// restore; they are protected again once most of them go unchanged (see
// restore). Where the kernel lacks any of it, resets drop the pages
// instead.

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
	return &dirtyTracker{uffd: int(fd), pagemap: pm, pm: pm.Fd()}
})

type dirtyTracker struct {
	uffd    int
	pagemap *os.File
	// pm is pagemap's descriptor.
	pm uintptr
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

// dirtyState is what a tracked memory keeps from one restore to the next.
type dirtyState struct {
	// vec receives the scan's regions; it is on the heap, which does not
	// move, as the kernel writes it.
	vec [scanRegions]pageRegion
	// loose counts the pages the last restore copied back and left
	// writable.
	loose int
}

// osPageSize is the size of the pages the kernel tracks and the scan
// reports.
var osPageSize = uint64(os.Getpagesize())

// minCold is how many pages a restore leaves writable however few the
// call changed (see restore).
const minCold = 16

// restore copies src over every page of dst that is not write-protected:
// the pages written since they were last protected, and those an earlier
// restore left writable. One scan lists them.
//
// Protecting pages again costs more than it saves when the next call
// writes them anyway: protecting makes the kernel flush the address
// translations of every core running a thread of the process (an
// interrupt to each, which waits for the answer; in a virtual machine
// tens of microseconds when another core is busy), and the next write to
// the page takes a fault. So a page is copied only when it differs from
// the image, and pages are left writable while those the call changed are
// at least as many as those it left as they were (cold: they cost a
// comparison per restore and nothing else), or while fewer than minCold
// are cold. Otherwise everything the scan listed is protected again, in
// one more scan (one flush per 2 MiB of memory that holds such pages).
func (t *dirtyTracker) restore(dst, src []byte, st *dirtyState) error {
	base := uint64(uintptr(unsafe.Pointer(&dst[0])))
	end := base + uint64(len(dst))
	vec := &st.vec
	first, last := end, base
	changed, cold := 0, 0
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
			for p := r.start - base; p < r.end-base; p += osPageSize {
				d, s := dst[p:p+osPageSize], src[p:p+osPageSize]
				if bytes.Equal(d, s) {
					cold++
					continue
				}
				copy(d, s)
				changed++
			}
			first, last = min(first, r.start), max(last, r.end)
		}
		if arg.walkEnd <= start {
			break
		}
		start = arg.walkEnd
	}
	if first >= last {
		st.loose = 0
		return nil
	}
	if !protectAlways.Load() && (cold < minCold || cold <= changed) {
		st.loose = changed + cold
		return nil
	}
	// Protect what was written in [first, last), reporting nothing.
	arg := pmScanArg{
		size: uint64(unsafe.Sizeof(pmScanArg{})), flags: pmScanWPMatching | pmScanCheckWPAsync, start: first, end: last,
		categoryMask: pageIsWritten, returnMask: pageIsWritten,
	}
	if _, err := t.scan(&arg); err != nil {
		return err
	}
	st.loose = 0
	return nil
}

// scan runs one PAGEMAP_SCAN. It is a raw system call, which the Go
// scheduler does not see: a scan takes microseconds and waits for nothing
// but the process's memory-map lock, and a call the scheduler saw would
// keep its monitor thread polling for processors to take back every 20 µs
// while calls restore, waking between two callers that hold every core
// (see RATIONALE.md, "Pools without a shared lock").
func (t *dirtyTracker) scan(arg *pmScanArg) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_IOCTL, t.pm, pagemapScan, uintptr(unsafe.Pointer(arg)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
