package host

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// The memory budget (Config.WithMemoryBudget) bounds what the host holds
// between calls, across every module and pool: idle warm instances, and
// the snapshots fresh-state instances are restored from. Each of them is a
// heldNode, stamped from one clock each time it is used; when the total
// charged passes the budget, the least recently used are released until
// it fits again: an idle instance is closed, a snapshot dropped together
// with the idle instances restored from it (the next call of its profile
// instantiates afresh and takes a new one). A snapshot is stamped after
// its instance each time an instance of its pool is put back, so a pool's
// idle instances go before its snapshot.
//
// An instance is charged its linear memory's size: the most it can hold
// privately, as the pages of a mapped memory it has not written are the
// snapshot's, shared and charged once. (wazero's own structures for an
// instance, tens of kilobytes for a Go guest, are not charged.)
// Memory of calls in flight is not held and not charged: each call is
// bounded by its own memory limit.
//
// Calls take no lock of the budget: charging, uncharging and stamping are
// atomic operations, so that calls on different processors do not queue
// on one lock (see RATIONALE.md, "Pools without a shared lock"). The
// budget's lock is taken to register a node, the first time it is
// charged, to forget it when its instance is closed or its snapshot
// dropped, and to choose victims once the total is past the budget, from
// the nodes charged then, oldest first.
//
// Locks: a pool's lock is taken before the budget's (put and get change
// the pool's idle list and the node's charge together); release runs with
// no lock held and takes the owner's lock itself, so an instance a get
// took in between is simply not found, and goes on uncharged until it is
// put back.

// memBudget is the host's budget of held memory; nil means none.
type memBudget struct {
	limit int64
	used  atomic.Int64
	// clock stamps the nodes as they are used.
	clock atomic.Uint64

	mu    sync.Mutex
	nodes map[*heldNode]struct{} // every node that may be charged
	// queue holds, oldest first, the charged nodes that were the oldest
	// when the nodes were last scanned, with their stamps then. Stamps
	// only grow, so while a queued node keeps its stamp no node charged
	// now is older: evictions take from the queue, and scan the nodes
	// again only once it is used up.
	queue []agedNode

	evictions atomic.Int64
}

// agedNode is a node with its stamp when it was queued.
type agedNode struct {
	n     *heldNode
	stamp uint64
}

// queueLen is how many of the oldest nodes one scan queues.
const queueLen = 64

// heldNode is one thing the budget charges: an idle instance or a
// snapshot.
type heldNode struct {
	// charge is what the node is charged now, 0 when it is not.
	charge atomic.Int64
	// stamp orders the nodes by last use.
	stamp atomic.Uint64
	// registered is set while the node is in the budget's nodes.
	registered atomic.Bool

	owner heldOwner
	in    *instance // nil for a snapshot
	snap  *snapshot // nil for an instance
}

// heldOwner is what holds a node's instance or snapshot: a fresh-state
// pool or a Pool. release drops the node's thing if the owner still holds
// it idle, uncharging what goes with it.
type heldOwner interface {
	release(n *heldNode)
}

func newMemBudget(limit uint64) *memBudget {
	if limit == 0 {
		return nil
	}
	return &memBudget{limit: int64(min(limit, 1<<62)), nodes: map[*heldNode]struct{}{}}
}

// charge charges n bytes as most recently used, registering it the first
// time, and stamps after (a snapshot, or nil) as used just after it, if it
// is charged. It returns the nodes that must be released to make room,
// least recently used first, already uncharged (n itself when it cannot
// fit); the caller holds the lock of n's owner and calls release on them
// once it has let go. The total never passes the budget: a charge that
// does not fit makes room first, under the budget's lock.
func (b *memBudget) charge(n *heldNode, bytes int64, after *heldNode) []*heldNode {
	if !n.registered.Load() {
		b.mu.Lock()
		b.nodes[n] = struct{}{}
		n.registered.Store(true)
		b.mu.Unlock()
	}
	t := b.clock.Add(2)
	n.stamp.Store(t - 1)
	if after != nil && after.charge.Load() > 0 {
		after.stamp.Store(t)
	}
	b.drop(n)
	if b.fit(bytes) {
		n.charge.Store(bytes)
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var victims []*heldNode
	for !b.fit(bytes) {
		v := b.oldest()
		if v == nil {
			// Nothing else is charged: n alone is past the budget.
			return append(victims, n)
		}
		victims = append(victims, v)
	}
	n.charge.Store(bytes)
	return victims
}

// fit adds bytes to the total if it stays within the budget.
func (b *memBudget) fit(bytes int64) bool {
	for {
		u := b.used.Load()
		if u+bytes > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+bytes) {
			return true
		}
	}
}

// oldest uncharges and returns the least recently used charged node, or
// nil when none is. The caller holds the budget's lock.
func (b *memBudget) oldest() *heldNode {
	for {
		for len(b.queue) > 0 {
			a := b.queue[0]
			b.queue[0] = agedNode{}
			b.queue = b.queue[1:]
			// Used since it was queued: it is no longer among the
			// oldest. A get may also have taken the instance: then it
			// is not charged, and not a victim.
			if a.n.stamp.Load() != a.stamp {
				continue
			}
			if c := a.n.charge.Swap(0); c != 0 {
				b.used.Add(-c)
				return a.n
			}
		}
		if !b.scan() {
			return nil
		}
	}
}

// scan queues the oldest charged nodes, reporting false when none is.
func (b *memBudget) scan() bool {
	q := b.queue[:0]
	for n := range b.nodes {
		if n.charge.Load() == 0 {
			continue
		}
		a := agedNode{n, n.stamp.Load()}
		if len(q) == queueLen {
			if a.stamp >= q[len(q)-1].stamp {
				continue
			}
			q = q[:len(q)-1]
		}
		// Insertion keeps q sorted: it holds at most queueLen.
		i, _ := slices.BinarySearchFunc(q, a.stamp, func(x agedNode, t uint64) int { return cmp.Compare(x.stamp, t) })
		q = slices.Insert(q, i, a)
	}
	b.queue = q
	return len(q) > 0
}

// drop stops charging n, if it was.
func (b *memBudget) drop(n *heldNode) {
	if c := n.charge.Swap(0); c != 0 {
		b.used.Add(-c)
	}
}

// forget stops charging n and unregisters it: its instance is closed or
// its snapshot dropped.
func (b *memBudget) forget(n *heldNode) {
	b.drop(n)
	if n.registered.Load() {
		b.mu.Lock()
		delete(b.nodes, n)
		n.registered.Store(false)
		// The queue must not hold a closed instance alive.
		b.queue = slices.DeleteFunc(b.queue, func(a agedNode) bool { return a.n == n })
		b.mu.Unlock()
	}
}

// release hands each victim back to its owner to be closed or dropped.
// It is called with no lock held.
func (b *memBudget) release(victims []*heldNode) {
	for _, v := range victims {
		b.evictions.Add(1)
		v.owner.release(v)
	}
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
	return MemoryStats{Budget: uint64(b.limit), Held: uint64(b.used.Load()), Evictions: uint64(b.evictions.Load())}
}

// heldNode returns the node that charges the idle instance to owner.
// The node's owner and instance are set once, before the node is first
// charged, and never change: release reads them with no lock held.
func (in *instance) heldNode(owner heldOwner) *heldNode {
	if in.held.owner == nil {
		in.held.owner, in.held.in = owner, in
	}
	return &in.held
}

// heldBytes is what an idle instance is charged: its linear memory.
func (in *instance) heldBytes() int64 {
	if mem := in.memory(); mem != nil {
		return int64(mem.Size())
	}
	return 0
}
