package host

// Test hooks for the tick check; compiled into tests only.

// WaitTickCheck waits until calls of m without a fuel limit can run the
// module with the tick check (see compiled.tickModule), which is made in
// the background after the first such call, and starts making it.
func WaitTickCheck(m *Module) { m.c.waitTick(m.h) }

// TickThread says whether the ticker runs on a thread of its own, so that
// calls run the tick check with one processor too.
const TickThread = tickThreadSupported
