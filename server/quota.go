package server

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/tenancy"
)

// window is the period of the per-minute quotas.
const window = time.Minute

// quota enforces one tenant's quotas. Calls per minute are a token bucket
// of one minute's calls refilled continuously; fuel and guest time are
// spent after each call from budgets refilled the same way, so a call
// that overspends delays the next ones rather than being cut short.
type quota struct {
	q   tenancy.Quotas
	now func() time.Time

	mu       sync.Mutex
	inFlight int
	memory   uint64
	calls    bucket
	fuel     bucket
	cpu      bucket
}

// bucket is a continuously refilled budget of size per window.
type bucket struct {
	size  float64
	level float64
	at    time.Time
}

func (b *bucket) refill(now time.Time) {
	if b.at.IsZero() {
		b.level, b.at = b.size, now
		return
	}
	b.level = math.Min(b.size, b.level+b.size*now.Sub(b.at).Seconds()/window.Seconds())
	b.at = now
}

// wait is how long until the bucket holds need.
func (b *bucket) wait(need float64) time.Duration {
	if b.level >= need {
		return 0
	}
	return time.Duration((need - b.level) / b.size * float64(window))
}

// QuotaError is a call refused by a tenant's quota: RetryAfter says when
// a call may succeed again (0 when it depends on calls in flight ending).
type QuotaError struct {
	Quota      string
	Limit      string
	RetryAfter time.Duration
}

func (e *QuotaError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("over the tenant's %s quota (%s); retry in %s", e.Quota, e.Limit, e.RetryAfter.Round(time.Second))
	}
	return fmt.Sprintf("over the tenant's %s quota (%s); retry when a call in flight ends", e.Quota, e.Limit)
}

func newQuota(q tenancy.Quotas) *quota {
	qt := &quota{q: q, now: time.Now}
	qt.calls.size = float64(q.CallsPerMinute)
	qt.fuel.size = float64(q.FuelPerMinute)
	qt.cpu.size = float64(q.GuestTimePerMinute)
	return qt
}

// admit takes a call of t into the tenant's quotas, or says which one
// refuses it. The call must release what it took when it ends.
func (q *quota) admit(t *registry.Tool) (release func(), refusal *QuotaError) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	if n := q.q.ConcurrentCalls; n > 0 && q.inFlight >= n {
		return nil, &QuotaError{Quota: "concurrent calls", Limit: fmt.Sprintf("%d at once", n)}
	}
	mem := toolMemory(t)
	if m := q.q.Memory; m > 0 && q.memory+mem > m {
		if mem > m {
			return nil, &QuotaError{Quota: "guest memory", Limit: fmt.Sprintf("%d MiB; the tool may use %d MiB", m>>20, mem>>20)}
		}
		return nil, &QuotaError{Quota: "guest memory", Limit: fmt.Sprintf("%d MiB", m>>20)}
	}
	if q.fuel.size > 0 {
		q.fuel.refill(now)
		if q.fuel.level <= 0 {
			return nil, &QuotaError{Quota: "fuel", Limit: fmt.Sprintf("%d instructions a minute", q.q.FuelPerMinute), RetryAfter: atLeastASecond(q.fuel.wait(1))}
		}
	}
	if q.cpu.size > 0 {
		q.cpu.refill(now)
		if q.cpu.level <= 0 {
			return nil, &QuotaError{Quota: "guest time", Limit: fmt.Sprintf("%s a minute", q.q.GuestTimePerMinute), RetryAfter: atLeastASecond(q.cpu.wait(1))}
		}
	}
	if q.calls.size > 0 {
		q.calls.refill(now)
		if q.calls.level < 1 {
			return nil, &QuotaError{Quota: "calls", Limit: fmt.Sprintf("%d a minute", q.q.CallsPerMinute), RetryAfter: atLeastASecond(q.calls.wait(1))}
		}
		q.calls.level--
	}
	q.inFlight++
	q.memory += mem
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			q.inFlight--
			q.memory -= mem
			q.mu.Unlock()
		})
	}, nil
}

// spend charges a finished call's fuel and guest time.
func (q *quota) spend(fuel int64, guest time.Duration) {
	if q.fuel.size == 0 && q.cpu.size == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	if q.fuel.size > 0 {
		q.fuel.refill(now)
		q.fuel.level -= float64(fuel)
	}
	if q.cpu.size > 0 {
		q.cpu.refill(now)
		q.cpu.level -= float64(guest)
	}
}

// toolMemory is what a call of t may hold of guest memory: its memory
// limit for a Wasm tool, nothing for a tool that runs in the host.
func toolMemory(t *registry.Tool) uint64 {
	if t == nil || t.Kind != registry.KindWasm {
		return 0
	}
	return t.Effective.Limits.MaxMemoryBytes
}

// atLeastASecond rounds a wait up to whole seconds, as Retry-After has.
func atLeastASecond(d time.Duration) time.Duration {
	return max(time.Second, d.Truncate(time.Second)+time.Second)
}
