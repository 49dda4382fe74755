//go:build linux && !amd64

package host

// tickThreadSupported says whether the ticker runs on a thread of its own;
// here it runs on a goroutine (see ticker.read).
const tickThreadSupported = false

func cloneTicker(stack uintptr, fd int, flag *uint64, stop *uint32, ctid *uint32, gen uint64) (tid int, errno int) {
	panic("unreachable")
}
