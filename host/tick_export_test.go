package host

// Test hooks for the tick check; compiled into tests only.

// WaitTickCheck waits until calls of m without a fuel limit can run the
// module with the tick check (see compiled.tickModule), which is made in
// the background after the first such call, and starts making it.
func WaitTickCheck(m *Module) { m.c.waitTick(m.h) }

// waitTick waits until the module with the tick check is made (or known
// not to be), for tests and benchmarks that need calls to use it.
func (c *compiled) waitTick(h *Host) {
	if c.tickModule(h) == nil && c.tickDone != nil {
		<-c.tickDone
	}
}
