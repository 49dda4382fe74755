package host

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Instance states in the idle-set hammer.
const (
	stateHeld int32 = iota
	stateIdle
	stateGone
)

// Many callers taking, returning and evicting instances at once: no
// instance is handed to two callers, none is lost, and the set never holds
// more than its bound.
func TestIdleSetHammer(t *testing.T) {
	s := newIdleSet(6, nil)
	bound := len(s.shards) * s.perShard
	var (
		mu      sync.Mutex
		made    []*instance
		states  = map[*instance]*atomic.Int32{}
		gone    atomic.Int64
		removed atomic.Int64
		handout = func(in *instance) {
			mu.Lock()
			st := states[in]
			mu.Unlock()
			if !st.CompareAndSwap(stateIdle, stateHeld) {
				t.Errorf("an instance in state %d was taken from the set", st.Load())
			}
		}
	)
	newInstance := func() *instance {
		in := &instance{}
		mu.Lock()
		made = append(made, in)
		states[in] = new(atomic.Int32)
		mu.Unlock()
		return in
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 3000 {
				in := s.get()
				if in == nil {
					in = newInstance()
				} else {
					handout(in)
				}
				mu.Lock()
				st := states[in]
				mu.Unlock()
				st.Store(stateIdle)
				if !s.put(in, nil, nil, nil) {
					st.Store(stateGone)
					gone.Add(1)
				}
				if n := s.len(); n > bound {
					t.Errorf("%d instances idle, bound %d", n, bound)
					return
				}
				if r.IntN(8) == 0 {
					// Evicted, as the memory budget does.
					mu.Lock()
					victim := made[r.IntN(len(made))]
					st := states[victim]
					mu.Unlock()
					if s.remove(victim) {
						if !st.CompareAndSwap(stateIdle, stateGone) {
							t.Errorf("remove took an instance in state %d", st.Load())
						}
						gone.Add(1)
						removed.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	left := s.drain()
	seen := map[*instance]bool{}
	for _, in := range left {
		if seen[in] {
			t.Fatal("drain returned an instance twice")
		}
		seen[in] = true
		if st := states[in].Load(); st != stateIdle {
			t.Errorf("drain returned an instance in state %d", st)
		}
	}
	if int64(len(made)) != gone.Load()+int64(len(left)) {
		t.Errorf("made %d instances; %d discarded and %d drained: some were lost", len(made), gone.Load(), len(left))
	}
	if s.len() != 0 || s.get() != nil {
		t.Error("the set holds instances after drain")
	}
	if removed.Load() == 0 {
		t.Error("no eviction found its instance idle")
	}
}

// put fills the home shard, then the others, then refuses; keep is asked
// with the shard locked and can refuse too; get finds an instance in any
// shard.
func TestIdleSetBounds(t *testing.T) {
	s := newIdleSet(4, nil)
	bound := len(s.shards) * s.perShard
	if bound > 4 && s.perShard != 1 {
		t.Fatalf("%d shards of %d: more than the limit", len(s.shards), s.perShard)
	}
	var kept []*instance
	for range bound {
		in := &instance{}
		if !s.put(in, nil, nil, nil) {
			t.Fatalf("put %d of %d refused", len(kept)+1, bound)
		}
		kept = append(kept, in)
	}
	if s.put(&instance{}, nil, nil, nil) {
		t.Errorf("a put past %d instances was kept", bound)
	}
	if got := s.all(); len(got) != bound {
		t.Errorf("all returned %d instances, want %d", len(got), bound)
	}
	for range bound {
		if s.get() == nil {
			t.Fatal("get found no instance in a set that holds some")
		}
	}
	if s.get() != nil {
		t.Error("get found an instance in an empty set")
	}
	if s.put(&instance{}, func() bool { return false }, nil, nil) || s.len() != 0 {
		t.Error("an instance keep refused was kept")
	}
	in := &instance{}
	s.put(in, nil, nil, nil)
	if !s.remove(in) || s.remove(in) || s.len() != 0 {
		t.Error("remove did not take out the idle instance exactly once")
	}
	unbounded := newIdleSet(0, nil)
	for range 100 {
		if !unbounded.put(&instance{}, nil, nil, nil) {
			t.Fatal("an unbounded set refused an instance")
		}
	}
}

// At most size holders at once, however acquires, releases and canceled
// waits interleave; every slot is given back at the end.
func TestSlotsHammer(t *testing.T) {
	const size = 3
	s := newSlots(size)
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if (g+i)%5 == 0 {
					// Some give up at once, some after a wait.
					ctx, cancel = context.WithTimeout(ctx, time.Duration(i%3)*time.Microsecond)
				}
				err := s.acquire(ctx)
				cancel()
				if err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("acquire: %v", err)
					}
					continue
				}
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				if n > size {
					t.Errorf("%d holders of %d slots", n, size)
				}
				running.Add(-1)
				s.release()
			}
		}()
	}
	wg.Wait()
	if u, w := s.used.Load(), s.waiting.Load(); u != 0 || w != 0 {
		t.Errorf("after the hammer: %d slots used, %d waiting; want none", u, w)
	}
	t.Logf("at most %d holders at once", most.Load())
}

// A waiter takes the slot given back; one whose context ends gives up,
// and takes nothing.
func TestSlotsWait(t *testing.T) {
	s := newSlots(1)
	if err := s.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- s.acquire(ctx) }()
	got := make(chan error, 1)
	go func() { got <- s.acquire(context.Background()) }()
	waitUntil(t, "two waiters", func() bool { return s.waiting.Load() == 2 })
	cancel()
	select {
	case err := <-gaveUp:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("canceled waiter: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a canceled waiter still waits")
	}
	s.release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter did not take the slot given back")
	}
	if u := s.used.Load(); u != 1 {
		t.Errorf("%d slots used, want the waiter's one", u)
	}
	s.release()
}

// A pool runs at most size calls: a call that finds them all running
// waits, and gives up when its context ends.
func TestPoolBoundsCalls(t *testing.T) {
	_, m := internalModule(t, NewConfig(), "wat/loop.wasm")
	p, err := m.NewPool(CallOptions{Grant: Grant{Limits: Limits{Timeout: 30 * time.Second}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, stop := context.WithCancel(context.Background())
	spun := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, "spin", nil)
		spun <- err
	}()
	waitUntil(t, "the spinning call", func() bool { return p.slots.used.Load() == 1 })
	wait, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Call(wait, "spin", nil); !errors.Is(err, ErrCanceled) {
		t.Errorf("a second call to a pool of one: %v, want ErrCanceled", err)
	}
	stop()
	select {
	case err := <-spun:
		if !errors.Is(err, ErrCanceled) && !errors.Is(err, ErrTimeout) {
			t.Errorf("stopped spin: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the spinning call did not stop")
	}
	if u := p.slots.used.Load(); u != 0 {
		t.Errorf("%d slots used after the calls", u)
	}
}

// waitUntil polls cond for up to 30 seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
	}
}
