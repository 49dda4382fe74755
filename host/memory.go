package host

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// capAllocator backs one instance's linear memory and refuses to grow it
// past limit, so each call can have its own memory cap while all instances
// share one wazero runtime. A refused grow makes memory.grow return -1; the
// guest usually traps next, and the call is reported as ErrLimit.
//
// With mapped set (a module whose instances are restored from snapshots,
// on a platform that supports it), the memory is a mappedMemory, which a
// restore resets page by page instead of copying.
type capAllocator struct {
	limit  uint64
	denied bool
	mapped bool
	// mem is the memory Allocate returned when it is mapped.
	mem *mappedMemory
}

// pageSize is the size of a WebAssembly page.
const pageSize = 65536

func (a *capAllocator) Allocate(capacity, maxBytes uint64) experimental.LinearMemory {
	if a.mapped && a.mem == nil {
		if m := newMappedMemory(a, min(maxBytes, a.limit)); m != nil {
			a.mem = m
			return m
		}
	}
	return &capMemory{a: a, max: min(maxBytes, a.limit), initialCap: min(capacity, a.limit)}
}

type capMemory struct {
	a          *capAllocator
	buf        []byte
	max        uint64
	initialCap uint64
}

func (m *capMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		m.a.denied = true
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	newCap := max(size, min(2*uint64(cap(m.buf)), m.max), m.initialCap)
	grown := make([]byte, size, newCap)
	copy(grown, m.buf)
	m.buf = grown
	return m.buf
}

func (m *capMemory) Free() { m.buf = nil }

// protectAlways, set by tests and benchmarks, makes every restore of a
// tracked memory protect what it copied back, as restores did before they
// left pages writable (see dirtyTracker.restore).
var protectAlways atomic.Bool
