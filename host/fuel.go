package host

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// fuelSlice is the budget handed to a metered guest at a time: about 10^5
// instructions, well under a millisecond of compute, so a guest reaches the
// host (a Go preemption point, where the deadline is checked) that often.
const fuelSlice = 100_000

// fuelFuncs is the skillhost:fuel module metered guests import.
var fuelFuncs = []hostFunc{
	{"refuel", none, []api.ValueType{i64}, func(ctx context.Context, in *instance, s []uint64) {
		s[0] = uint64(in.refuel(ctx))
	}},
}

// refuel is called by a metered guest whose budget ran out: it books the
// fuel used, stops the guest when its deadline passed or its fuel is
// spent, and hands out the next slice.
func (in *instance) refuel(ctx context.Context) int64 {
	in.bookFuel()
	if err := ctx.Err(); err != nil {
		trap(err)
	}
	// The clock is read here rather than waiting for the context's timer,
	// which fires only when the scheduler gets to it.
	if !in.deadline.IsZero() && time.Now().After(in.deadline) {
		trap(context.DeadlineExceeded)
	}
	if max := in.limits.MaxFuel; max > 0 && !in.initializing && in.fuelUsed > max {
		trap(&limitError{what: "fuel", unit: "instructions", limit: max, detail: fmt.Sprintf("%d used", in.fuelUsed)})
	}
	in.giveFuel()
	// Let other goroutines run: a spinning guest would otherwise hold its
	// thread for the scheduler's 10 ms time slice, and a short call queued
	// behind it would wait that long.
	runtime.Gosched()
	return in.fuelGiven
}

// giveFuel sets the budget to the next slice, or what is left of MaxFuel.
func (in *instance) giveFuel() {
	next := int64(fuelSlice)
	if max := in.limits.MaxFuel; max > 0 && !in.initializing {
		next = min(next, max-in.fuelUsed)
	}
	in.fuelGiven = next
	in.budget.Set(uint64(next))
}

// bookFuel adds what the guest used of the last slice to fuelUsed.
func (in *instance) bookFuel() {
	in.fuelUsed += in.fuelGiven - int64(in.budget.Get())
	in.fuelGiven = int64(in.budget.Get())
}
