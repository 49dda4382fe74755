package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Pool keeps warm instances of one module for trusted code: a call reuses
// an instance that earlier calls ran in, skipping instantiation and the
// guest's initialisation (milliseconds for a Go guest).
//
// What a pool does not isolate: linear memory, globals and vars persist from
// one call to the next in the same instance, so one caller can see what
// another left behind. Use pools only for modules you trust with all their
// callers' data; Module.Call gives every call a fresh instance. What a pool
// still isolates: kernel memory (input, output, error) is reset and zeroed
// per call, the WASI descriptor table is as the instance began (an instance
// whose call closed a preopen or left a file open is discarded),
// limits and deadlines apply per call, and an instance that trapped, timed
// out or hit a limit is discarded, never reused.
//
// A Pool is safe for concurrent use; at most size calls run at once.
type Pool struct {
	m    *Module
	opts CallOptions
	sem  chan struct{}
	b    *memBudget // the host's, nil when it has none

	mu     sync.Mutex
	idle   []*instance
	closed bool
}

// NewPool returns a pool of up to size warm instances running under opts.
func (m *Module) NewPool(opts CallOptions, size int) (*Pool, error) {
	if size <= 0 {
		return nil, fmt.Errorf("%w: pool size %d must be positive", ErrBadConfig, size)
	}
	return &Pool{m: m, opts: opts, sem: make(chan struct{}, size), b: m.h.budget}, nil
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
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return res, fmt.Errorf("%w: waiting for a pooled instance: %v", ErrCanceled, ctx.Err())
	}
	defer func() { <-p.sem }()

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
	p.mu.Lock()
	if p.closed || p.m.h.closed.Load() {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	if n := len(p.idle); n > 0 {
		in := p.idle[n-1]
		p.idle = p.idle[:n-1]
		if p.b != nil {
			p.b.drop(&in.held)
		}
		p.mu.Unlock()
		return in, nil
	}
	p.mu.Unlock()
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
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		in.close()
		return
	}
	p.idle = append(p.idle, in)
	var victims []*heldNode
	if p.b != nil {
		victims = p.b.hold(in.heldNode(p))
	}
	p.mu.Unlock()
	p.b.release(victims)
}

// release closes an idle instance the memory budget evicted.
func (p *Pool) release(n *heldNode) {
	p.mu.Lock()
	var found bool
	for i, in := range p.idle {
		if in == n.in {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			found = true
			break
		}
	}
	p.mu.Unlock()
	if found {
		n.in.close()
	}
}

// Close discards the idle instances; calls in flight finish first and
// their instances are then discarded too.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, in := range p.idle {
		if p.b != nil {
			p.b.drop(&in.held)
		}
		in.close()
	}
	p.idle = nil
}
