package host

import (
	"context"
	"fmt"
	"runtime"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/skillhost/skillhost/host/internal/rewrite"
)

// fuelSlice is the budget handed to a metered guest at a time: about 10^5
// instructions, well under a millisecond of compute, so a guest reaches the
// host (a Go preemption point, where the deadline is checked) that often.
const fuelSlice = 100_000

// instantiateFuelModule registers the skillhost:fuel module metered guests
// import: refuel, which gets the calling module so that it can find the
// budget global while a start function runs, before instantiation has
// returned the module; and tick, which guests rewritten with the tick check
// call when the tick flag is set.
func instantiateFuelModule(ctx context.Context, rt wazero.Runtime) (api.Module, error) {
	return rt.NewHostModuleBuilder(rewrite.DefaultImportModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, s []uint64) {
			in := instFrom(ctx)
			if in.budget == nil {
				g, ok := mod.ExportedGlobal(in.m.c.budget).(api.MutableGlobal)
				if !ok {
					trapf(errInternal, "metered module has no mutable budget global")
				}
				in.budget = g
			}
			s[0] = uint64(in.refuel(ctx))
		}), none, []api.ValueType{i64}).
		WithName(rewrite.DefaultImportName).
		Export(rewrite.DefaultImportName).
		NewFunctionBuilder().
		WithGoFunction(api.GoFunc(func(ctx context.Context, s []uint64) {
			s[0] = instFrom(ctx).tick(ctx)
		}), none, []api.ValueType{i64}).
		WithName(rewrite.DefaultTickImportName).
		Export(rewrite.DefaultTickImportName).
		Instantiate(ctx)
}

// refuel is called by a metered guest whose budget ran out: it books the
// fuel used, stops the guest when its deadline passed or its fuel is
// spent, and hands out the next slice.
func (in *instance) refuel(ctx context.Context) int64 {
	in.bookFuel()
	in.stopIfDue(ctx)
	if max := in.maxFuel(); max > 0 && in.fuelUsed > max {
		if in.initializing {
			trap(&limitError{what: "initialisation fuel", unit: "instructions", limit: max,
				detail: "the module's start function and initialisers ran past it"})
		}
		trap(&limitError{what: "fuel", unit: "instructions", limit: max, detail: fmt.Sprintf("%d used", in.fuelUsed)})
	}
	in.giveFuel()
	in.pause(ctx)
	return in.fuelGiven
}

// stopIfDue stops the guest (a trap) when its call's context ended, its
// deadline passed or the host closed. The clock is read here rather than
// waiting for the context's timer, which fires only when the scheduler
// gets to it.
func (in *instance) stopIfDue(ctx context.Context) {
	if err := ctx.Err(); err != nil {
		trap(err)
	}
	if in.m.h.closed.Load() {
		trap(ErrClosed)
	}
	if in.pastDeadline() {
		trap(context.DeadlineExceeded)
	}
}

// pause lets others run where a guest reaches the host on its own (a
// refuel or a tick): a guest whose group is past its share of the
// processors waits (see fairShare), and every guest yields to the
// scheduler, as a spinning guest would otherwise hold its thread for the
// scheduler's 10 ms time slice and a short call queued behind it would
// wait that long.
func (in *instance) pause(ctx context.Context) {
	if in.share != nil {
		if err := in.m.h.fair.yield(ctx, in.share); err != nil {
			trap(err)
		}
	}
	runtime.Gosched()
}

// giveFuel sets the budget to the next slice, or what is left of MaxFuel.
func (in *instance) giveFuel() {
	next := int64(fuelSlice)
	if max := in.maxFuel(); max > 0 {
		next = min(next, max-in.fuelUsed)
	}
	in.fuelGiven = next
	in.budget.Set(uint64(next))
}

// maxFuel is the fuel cap of what runs now: the host's initialisation cap
// while the start function and initialisers run, the call's max_fuel after.
func (in *instance) maxFuel() int64 {
	if in.initializing {
		return in.m.h.cfg.maxInitFuel
	}
	return in.limits.MaxFuel
}

// bookFuel adds what the guest used of the last slice to fuelUsed.
func (in *instance) bookFuel() {
	in.fuelUsed += in.fuelGiven - int64(in.budget.Get())
	in.fuelGiven = int64(in.budget.Get())
}
