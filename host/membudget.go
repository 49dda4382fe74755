package host

import (
	"sync"
	"sync/atomic"
)

// The memory budget (Config.WithMemoryBudget) bounds what the host holds
// between calls, across every module and pool: idle warm instances, and
// the snapshots fresh-state instances are restored from. Each of them is a
// heldNode in one list, least recently used first; when the total passes
// the budget, the oldest are released until it fits again: an idle
// instance is closed, a snapshot dropped together with the idle instances
// restored from it (the next call of its profile instantiates afresh and
// takes a new one). A snapshot is moved behind its instance each time an
// instance of its pool is put back, so a pool's idle instances go before
// its snapshot.
//
// An instance is charged its linear memory's size: the most it can hold
// privately, as the pages of a mapped memory it has not written are the
// snapshot's, shared and charged once. (wazero's own structures for an
// instance, tens of kilobytes for a Go guest, are not charged.)
// Memory of calls in flight is not held and not charged: each call is
// bounded by its own memory limit.
//
// Locks: a pool's lock is taken before the budget's (put and get change
// the pool's idle list and the node together); release runs with no lock
// held and takes the owner's lock itself, so an instance a get took in
// between is simply not found.

// memBudget is the host's budget of held memory; nil means none.
type memBudget struct {
	limit int64

	mu         sync.Mutex
	used       int64
	head, tail *heldNode // head: least recently used

	evictions atomic.Int64
}

// heldNode is one thing the budget charges: an idle instance or a
// snapshot.
type heldNode struct {
	prev, next *heldNode
	linked     bool
	bytes      int64
	owner      heldOwner
	in         *instance // nil for a snapshot
	snap       *snapshot // nil for an instance
}

// heldOwner is what holds a node's instance or snapshot: a fresh-state
// pool or a Pool. release drops the node's thing if the owner still holds
// it idle; it reports the nodes that went with it (a snapshot's idle
// instances), already unlinked.
type heldOwner interface {
	release(n *heldNode)
}

func newMemBudget(limit uint64) *memBudget {
	if limit == 0 {
		return nil
	}
	return &memBudget{limit: int64(min(limit, 1<<62))}
}

// hold charges nodes as most recently used, the last most recently
// (moving a node to the back if it is already charged), and returns the
// nodes that must be released to stay within the budget, possibly some of
// nodes. The caller holds its pool's lock and must call release on the
// victims after unlocking.
func (b *memBudget) hold(nodes ...*heldNode) []*heldNode {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range nodes {
		if n.linked {
			b.unlink(n)
		}
		b.link(n)
	}
	var victims []*heldNode
	for b.used > b.limit && b.head != nil {
		v := b.head
		b.unlink(v)
		victims = append(victims, v)
	}
	return victims
}

// drop stops charging n, if it was.
func (b *memBudget) drop(n *heldNode) {
	b.mu.Lock()
	if n.linked {
		b.unlink(n)
	}
	b.mu.Unlock()
}

// release hands each victim back to its owner to be closed or dropped.
// It is called with no lock held.
func (b *memBudget) release(victims []*heldNode) {
	for _, v := range victims {
		b.evictions.Add(1)
		v.owner.release(v)
	}
}

func (b *memBudget) link(n *heldNode) {
	n.prev, n.next = b.tail, nil
	if b.tail != nil {
		b.tail.next = n
	} else {
		b.head = n
	}
	b.tail = n
	n.linked = true
	b.used += n.bytes
}

func (b *memBudget) unlink(n *heldNode) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		b.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		b.tail = n.prev
	}
	n.prev, n.next, n.linked = nil, nil, false
	b.used -= n.bytes
}

// MemoryStats says what the host holds between calls.
type MemoryStats struct {
	// Budget is the configured budget in bytes, 0 when there is none.
	Budget uint64
	// Held is what idle instances and snapshots are charged now (counted
	// only under a budget).
	Held uint64
	// Evictions counts the instances and snapshots released to stay
	// within the budget.
	Evictions uint64
}

// MemoryStats returns what the host holds between calls against its
// memory budget.
func (h *Host) MemoryStats() MemoryStats {
	b := h.budget
	if b == nil {
		return MemoryStats{}
	}
	b.mu.Lock()
	used := b.used
	b.mu.Unlock()
	return MemoryStats{Budget: uint64(b.limit), Held: uint64(used), Evictions: uint64(b.evictions.Load())}
}

// heldNode returns the node that charges the idle instance to owner.
// The node's owner and instance are set once, before the node is first
// linked, and never change: release reads them with no lock held.
func (in *instance) heldNode(owner heldOwner) *heldNode {
	if in.held.owner == nil {
		in.held.owner, in.held.in = owner, in
	}
	in.held.bytes = in.heldBytes()
	return &in.held
}

// heldBytes is what an idle instance is charged: its linear memory.
func (in *instance) heldBytes() int64 {
	if mem := in.memory(); mem != nil {
		return int64(mem.Size())
	}
	return 0
}
