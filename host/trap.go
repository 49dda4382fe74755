package host

import (
	"errors"
	"fmt"
)

// limitError is raised inside a call when a cap is hit. It panics out of
// the host function, unwinds the guest and is reported as ErrLimit.
type limitError struct {
	what   string
	unit   string // "bytes" when empty
	limit  int64
	detail string
}

func (e *limitError) Error() string {
	unit := e.unit
	if unit == "" {
		unit = "bytes"
	}
	return fmt.Sprintf("%s limit of %d %s exceeded (%s)", e.what, e.limit, unit, e.detail)
}

func (e *limitError) Is(target error) bool { return target == ErrLimit }

// errBadPointer is raised when a guest hands the host an offset that does
// not address kernel memory it owns; the call traps.
var errBadPointer = errors.New("invalid kernel memory access")

// errInternal marks a host failure surfacing inside a call.
var errInternal = errors.New("internal host error")

// trap aborts the running guest with err. wazero recovers the panic at the
// call boundary and returns err (still matchable with errors.Is) from Call.
func trap(err error) {
	panic(err)
}

// trapf aborts the running guest with a formatted error wrapping base.
func trapf(base error, format string, args ...any) {
	panic(fmt.Errorf("%w: "+format, append([]any{base}, args...)...))
}
