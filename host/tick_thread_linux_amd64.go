package host

// tickThreadSupported says whether the ticker runs on a thread of its own
// (tick_thread_linux.go) rather than a goroutine.
const tickThreadSupported = true

// cloneTicker is in tick_thread_linux_amd64.s.
//
//go:noescape
func cloneTicker(stack uintptr, fd int, flag *uint64, stop *uint32, ctid *uint32, gen uint64) (tid int, errno int)
