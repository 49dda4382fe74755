package host

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// idleSet holds a pool's idle instances in one stack per shard, with as
// many shards as processors, so that calls running at once on different
// processors take no common lock and do not hand instances back and
// forth: an instance a call ran in has its memory in that core's cache,
// and the next call on the same processor takes it again. A call uses
// the shard its processor prefers (home) and goes to the others only when
// that one is empty, to take, or full, to put.
//
// Locks: a shard's lock is taken before the memory budget's; get and put
// change a shard and the budget's node of the instance together.
type idleSet struct {
	shards []idleShard
	// perShard bounds each shard's instances; 0 leaves them unbounded.
	perShard int
	// b is the host's memory budget, nil when it has none.
	b *memBudget
}

type idleShard struct {
	idleStack
	// The padding keeps two shards off one cache line (and its
	// neighbour, which processors fetch in pairs).
	_ [128 - unsafe.Sizeof(idleStack{})%128]byte
}

type idleStack struct {
	mu   sync.Mutex
	list []*instance
	// n is len(list), read without the lock to skip empty and full
	// shards.
	n atomic.Int32
}

// newIdleSet returns a set holding at most limit instances (0: no bound)
// across its shards.
func newIdleSet(limit int, b *memBudget) *idleSet {
	n := min(runtime.GOMAXPROCS(0), maxShards)
	s := &idleSet{shards: make([]idleShard, n), b: b}
	if limit > 0 {
		// Each shard holds its part, rounded down, but at least one:
		// limit bounds the set whenever it is at least the shard count.
		s.perShard = max(limit/n, 1)
	}
	return s
}

// maxShards bounds the shards of a set: beyond it, processors share.
const maxShards = 64

// home returns the index of the shard the calling processor prefers.
func (s *idleSet) home() int { return int(processorHint() % uint32(len(s.shards))) }

// processorHints keeps one number per processor: a sync.Pool's items stay
// with the processor that put them (see RATIONALE.md, "Pools without a
// shared lock"). The collector may drop them at any time; nextHint numbers
// the new ones.
var (
	processorHints sync.Pool
	nextHint       atomic.Uint32
)

// processorHint returns the number of the processor the caller runs on,
// as far as the hints know it: mostly the same number on the same
// processor, and different numbers on different ones.
func processorHint() uint32 {
	h, _ := processorHints.Get().(*uint32)
	if h == nil {
		h = new(uint32)
		*h = nextHint.Add(1) - 1
	}
	n := *h
	processorHints.Put(h)
	return n
}

// get takes an idle instance, from the home shard if it has one, and
// stops charging it to the budget; it returns nil when none is idle.
func (s *idleSet) get() *instance {
	home := s.home()
	for k := range s.shards {
		sh := &s.shards[(home+k)%len(s.shards)]
		if sh.n.Load() == 0 {
			continue
		}
		sh.mu.Lock()
		if n := len(sh.list); n > 0 {
			in := sh.list[n-1]
			sh.list[n-1] = nil
			sh.list = sh.list[:n-1]
			sh.n.Store(int32(n - 1))
			if s.b != nil {
				s.b.drop(&in.held)
			}
			sh.mu.Unlock()
			return in
		}
		sh.mu.Unlock()
	}
	return nil
}

// put keeps in idle, in the home shard if it has room, charging the
// budget for node (in's) and then stamping after (its snapshot, or nil) as
// used, and releasing what that evicts. keep, when not nil, is asked with
// the shard locked; put reports false, keeping nothing, when it refuses or
// every shard is full.
func (s *idleSet) put(in *instance, keep func() bool, node, after *heldNode) bool {
	var bytes int64
	if s.b != nil {
		bytes = in.heldBytes()
	}
	home := s.home()
	for k := range s.shards {
		sh := &s.shards[(home+k)%len(s.shards)]
		if s.perShard > 0 && int(sh.n.Load()) >= s.perShard {
			continue
		}
		sh.mu.Lock()
		if s.perShard > 0 && len(sh.list) >= s.perShard {
			sh.mu.Unlock()
			continue
		}
		if keep != nil && !keep() {
			sh.mu.Unlock()
			return false
		}
		sh.list = append(sh.list, in)
		sh.n.Store(int32(len(sh.list)))
		var victims []*heldNode
		if s.b != nil {
			victims = s.b.charge(node, bytes, after)
		}
		sh.mu.Unlock()
		s.b.release(victims)
		return true
	}
	return false
}

// remove takes in out of the set if it is idle there, reporting whether
// it was. Its budget node is left as it is: the budget calls remove for a
// node it has already uncharged.
func (s *idleSet) remove(in *instance) bool {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for j, x := range sh.list {
			if x == in {
				last := len(sh.list) - 1
				copy(sh.list[j:], sh.list[j+1:])
				sh.list[last] = nil
				sh.list = sh.list[:last]
				sh.n.Store(int32(last))
				sh.mu.Unlock()
				return true
			}
		}
		sh.mu.Unlock()
	}
	return false
}

// drain empties the set, uncharging what it held, and returns the
// instances for the caller to close.
func (s *idleSet) drain() []*instance {
	var all []*instance
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for _, in := range sh.list {
			if s.b != nil {
				s.b.drop(&in.held)
			}
		}
		all = append(all, sh.list...)
		sh.list = nil
		sh.n.Store(0)
		sh.mu.Unlock()
	}
	return all
}

// all returns the idle instances, shard by shard.
func (s *idleSet) all() []*instance {
	var all []*instance
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		all = append(all, sh.list...)
		sh.mu.Unlock()
	}
	return all
}

// len returns how many instances are idle.
func (s *idleSet) len() int {
	n := 0
	for i := range s.shards {
		n += int(s.shards[i].n.Load())
	}
	return n
}
