package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// Pool keeps warm instances of one module for trusted code: a call reuses
// an instance that earlier calls ran in, skipping instantiation and the
// guest's initialisation (milliseconds for a Go guest).
//
// What a pool does not isolate: linear memory, globals and vars persist from
// one call to the next in the same instance, so one caller can see what
// another left behind. Use pools only for modules you trust with all their
// callers' data; Module.Call gives every call fresh state. What a pool
// still isolates: kernel memory (input, output, error) is reset and zeroed
// per call, the WASI descriptor table is as the instance began (an instance
// whose call closed a preopen or left a file open is discarded),
// limits and deadlines apply per call, and an instance that trapped, timed
// out or hit a limit is discarded, never reused.
//
// A Pool is safe for concurrent use; at most size calls run at once.
type Pool struct {
	m     *Module
	opts  CallOptions
	slots *slots
	idle  *idleSet

	closed atomic.Bool
}

// NewPool returns a pool of up to size warm instances running under opts.
func (m *Module) NewPool(opts CallOptions, size int) (*Pool, error) {
	if size <= 0 {
		return nil, fmt.Errorf("%w: pool size %d must be positive", ErrBadConfig, size)
	}
	if size > math.MaxInt32 {
		return nil, fmt.Errorf("%w: pool size %d is above %d", ErrBadConfig, size, math.MaxInt32)
	}
	return &Pool{m: m, opts: opts, slots: newSlots(int32(size)), idle: newIdleSet(0, m.h.budget)}, nil
}

// Call runs export in a warm instance, creating one when none is idle.
func (p *Pool) Call(ctx context.Context, export string, input []byte) (*Result, error) {
	start := time.Now()
	res := &Result{}
	if err := p.m.callable(export); err != nil {
		return res, err
	}
	if !p.m.h.enter() {
		return res, ErrClosed
	}
	defer p.m.h.leave()
	if err := p.slots.acquire(ctx); err != nil {
		return res, fmt.Errorf("%w: waiting for a pooled instance: %v", ErrCanceled, err)
	}
	defer p.slots.release()

	ctx, cancel := context.WithTimeout(ctx, p.m.h.cfg.resolve(p.opts.Grant.Limits).Timeout)
	defer cancel()
	in, err := p.get(ctx)
	if err != nil {
		return res, err
	}
	err = in.call(ctx, export, input, res)
	p.m.c.noteFuel(p.m.h, res, countsFuel(in.limits, &p.opts))
	res.Duration = time.Since(start)
	if (err == nil || errors.Is(err, ErrGuest)) && in.reusable() {
		p.put(in)
	} else {
		in.close()
	}
	return res, err
}

func (p *Pool) get(ctx context.Context) (*instance, error) {
	if p.closed.Load() || p.m.h.closed.Load() {
		return nil, ErrClosed
	}
	if in := p.idle.get(); in != nil {
		return in, nil
	}
	// Trusted code: its instances run the tick check from the start, and
	// only the deadline bounds their initialisers.
	return p.m.newInstance(ctx, p.opts.Grant, &p.opts, true)
}

func (p *Pool) put(in *instance) {
	if in.retires(countsFuel(in.limits, &p.opts)) {
		// Made before the module with the tick check was: the pool's
		// calls count no fuel, and the next instance runs the check.
		in.close()
		return
	}
	// Checked under the shard's lock, which Close takes after closing:
	// an instance put back once Close drained the set is closed here.
	if !p.idle.put(in, p.open, in.heldNode(p), nil) {
		in.close()
	}
}

// open reports whether the pool is not closed.
func (p *Pool) open() bool { return !p.closed.Load() }

// release closes an idle instance the memory budget evicted.
func (p *Pool) release(n *heldNode) {
	if p.idle.remove(n.in) {
		n.in.close()
	}
}

// Close discards the idle instances; calls in flight finish first and
// their instances are then discarded too.
func (p *Pool) Close() {
	p.closed.Store(true)
	for _, in := range p.idle.drain() {
		in.close()
	}
}

// slots bounds how many calls of a pool run at once. While there is room
// a call takes and gives back its slot with one atomic operation each; a
// call that finds none waits for a slot to be given back.
type slots struct {
	size    int32
	used    atomic.Int32
	waiting atomic.Int32
	// freed wakes the waiting calls when a slot is given back.
	freed signal
}

func newSlots(size int32) *slots { return &slots{size: size} }

func (s *slots) tryAcquire() bool {
	for {
		u := s.used.Load()
		if u >= s.size {
			return false
		}
		if s.used.CompareAndSwap(u, u+1) {
			return true
		}
	}
}

// acquire takes a slot, waiting until one is free or ctx is done.
func (s *slots) acquire(ctx context.Context) error {
	if s.tryAcquire() {
		return nil
	}
	// A waiter counts itself before it looks again: a slot given back
	// after that look sees it waiting and closes the channel it holds.
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	for {
		wake := s.freed.wait()
		if s.tryAcquire() {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release gives a slot back.
func (s *slots) release() {
	s.used.Add(-1)
	if s.waiting.Load() > 0 {
		s.freed.wake()
	}
}
