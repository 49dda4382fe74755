package host

import (
	"context"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// The WASI descriptor table lives inside wazero's module instance, where
// neither a memory-and-globals snapshot nor the host can reach it. A call
// that closed a preopened folder (fd_close(3)) or stdout, or that left a
// file open, would hand the next call on a restored instance a broken
// mount, or the previous caller's open file. So the host watches the WASI
// functions that change the table — fd_close, fd_renumber, path_open and
// sock_accept — with wazero function listeners on its WASI host module
// (listeners on host functions cost only when those functions are called),
// and an instance whose table a call changed is discarded instead of
// restored.

// fdState is what the listeners learned about one instance's descriptor
// table.
type fdState struct {
	// first is the lowest descriptor a guest opens itself: after stdin,
	// stdout, stderr and one preopen per mount.
	first int32
	// open counts descriptors the guest opened and has not closed.
	open int
	// disturbed is set when a call closed or moved a descriptor the
	// instance started with, or renumbered one.
	disturbed bool
	// closing is the descriptor of the fd_close in progress.
	closing int32
	// noSnapshot is set when the initialisers changed the table.
	noSnapshot bool
}

// changed reports whether the table differs from the one the instance was
// created with.
func (s *fdState) changed() bool { return s.open != 0 || s.disturbed }

// fdWatch is the listener factory of the WASI host module.
type fdWatch struct{}

func (fdWatch) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	switch def.Name() {
	case "fd_close", "fd_renumber", "path_open", "sock_accept":
		return fdListener{}
	}
	return nil
}

type fdListener struct{}

// stateOf returns the fd state of the instance a WASI function runs for,
// or nil outside a skillhost call.
func stateOf(ctx context.Context) *fdState {
	in, ok := ctx.Value(instKey{}).(*instance)
	if !ok {
		return nil
	}
	return &in.fds
}

func (fdListener) Before(ctx context.Context, _ api.Module, def api.FunctionDefinition, params []uint64, _ experimental.StackIterator) {
	s := stateOf(ctx)
	if s == nil {
		return
	}
	switch def.Name() {
	case "fd_close":
		s.closing = int32(uint32(params[0]))
		if s.closing < s.first {
			s.disturbed = true
		}
	case "fd_renumber":
		// The target, if open, is closed without an fd_close; the
		// renumbered descriptor may land on one the instance started
		// with. Rare enough to give the instance up.
		s.disturbed = true
	}
}

func (fdListener) After(ctx context.Context, _ api.Module, def api.FunctionDefinition, results []uint64) {
	s := stateOf(ctx)
	if s == nil || len(results) == 0 || results[0] != 0 { // errno
		return
	}
	switch def.Name() {
	case "fd_close":
		if s.closing >= s.first {
			s.open--
		}
	case "path_open", "sock_accept":
		s.open++
	}
}

func (fdListener) Abort(ctx context.Context, _ api.Module, _ api.FunctionDefinition, _ error) {
	if s := stateOf(ctx); s != nil {
		// A WASI function that did not return may have changed the table.
		s.disturbed = true
	}
}
