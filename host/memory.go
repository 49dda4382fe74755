package host

import "github.com/tetratelabs/wazero/experimental"

// capAllocator backs one instance's linear memory and refuses to grow it
// past limit, so each call can have its own memory cap while all instances
// share one wazero runtime. A refused grow makes memory.grow return -1; the
// guest usually traps next, and the call is reported as ErrLimit.
type capAllocator struct {
	limit  uint64
	denied bool
}

func (a *capAllocator) Allocate(capacity, maxBytes uint64) experimental.LinearMemory {
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
