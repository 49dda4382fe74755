package rewrite

import (
	"errors"
	"fmt"
)

// Errors returned by Instrument. Test for them with errors.Is; a host that
// gets ErrUnsupported (or ErrMalformed from a module wazero nevertheless
// accepts) falls back to wazero's close-on-context-done.
var (
	// ErrMalformed is returned when the input is not a well-formed
	// WebAssembly binary: bad magic or version, a truncated or overlong
	// section, an over-long or overflowing LEB128 number, sections out of
	// order, a function section and code section of different lengths, a
	// vector or name longer than the bytes left, a function with more than
	// MaxLocals locals. Do not hand such a module to wazero either: wazero
	// v1.12.0 allocates by the counts it reads before checking them against
	// the input, so a module of 20 bytes can make it allocate 40 GB and
	// crash the process.
	ErrMalformed = errors.New("rewrite: malformed wasm module")

	// ErrUnsupported is returned for input that may be valid WebAssembly but
	// uses an encoding Instrument does not know: an unknown opcode (see
	// *OpcodeError), GC type definitions, 64-bit memories or tables,
	// unknown import or export kinds. A host can fall back to wazero's
	// close-on-context-done for such a module.
	ErrUnsupported = errors.New("rewrite: unsupported wasm feature")

	// ErrAlreadyInstrumented is returned when the module already imports the
	// function Options.ImportModule/ImportName, for instance because it went
	// through Instrument before. Its own calls to that import would
	// otherwise reach the host's refuel function.
	ErrAlreadyInstrumented = errors.New("rewrite: module already imports the refuel function")

	// ErrUnchecked is matched, together with ErrUnsupported, by an error
	// for an encoding met before every section was checked for counts and
	// lengths that claim more than the bytes behind them (a GC type, a
	// 64-bit memory, an unknown import kind): the rest of such a module
	// was not checked, so it must not be handed to wazero either.
	ErrUnchecked = errors.New("rewrite: module not fully checked")

	// ErrInvalidOptions is returned when an Options field cannot be encoded
	// (an import name that is not valid UTF-8).
	ErrInvalidOptions = errors.New("rewrite: invalid options")
)

// OpcodeError reports an instruction Instrument cannot decode. It matches
// ErrUnsupported with errors.Is.
type OpcodeError struct {
	// Func is the index of the function, in the input module's function
	// index space (imports first), whose body holds the instruction.
	Func uint32
	// Offset is the byte offset of the instruction in the input.
	Offset int
	// Opcode is the opcode in hex: "0xd3", or with its prefix "0xfd 0x100".
	Opcode string
}

func (e *OpcodeError) Error() string {
	return fmt.Sprintf("rewrite: function %d: unknown opcode %s at offset %#x", e.Func, e.Opcode, e.Offset)
}

// Is reports whether target is ErrUnsupported.
func (e *OpcodeError) Is(target error) bool { return target == ErrUnsupported }

// uncheckedError is an ErrUnsupported error met while scanning the
// sections, before all of them were checked: it also matches ErrUnchecked.
type uncheckedError struct{ err error }

func (e uncheckedError) Error() string {
	return e.err.Error() + " (the sections after it were not checked)"
}
func (e uncheckedError) Unwrap() error { return e.err }

// Is reports whether target is ErrUnchecked.
func (e uncheckedError) Is(target error) bool { return target == ErrUnchecked }

// errOversized marks the ErrMalformed errors of lengths and counts that
// the input cannot back, which would make wazero allocate by them.
var errOversized = errors.New("rewrite: length larger than the input")

// formatError is an ErrMalformed with where and what.
type formatError struct {
	off       int
	detail    string
	oversized bool
}

func (e *formatError) Error() string {
	return fmt.Sprintf("%v: at offset %#x: %s", ErrMalformed, e.off, e.detail)
}

func (e *formatError) Is(target error) bool {
	return target == ErrMalformed || (e.oversized && target == errOversized)
}

// malformed returns an ErrMalformed saying where and what.
func malformed(off int, format string, args ...any) error {
	return &formatError{off: off, detail: fmt.Sprintf(format, args...)}
}

// oversized returns an ErrMalformed for a length or count the input does
// not back.
func oversized(off int, format string, args ...any) error {
	return &formatError{off: off, detail: fmt.Sprintf(format, args...), oversized: true}
}

// unsupported wraps ErrUnsupported with where and what.
func unsupported(off int, format string, args ...any) error {
	return fmt.Errorf("%w: at offset %#x: %s", ErrUnsupported, off, fmt.Sprintf(format, args...))
}
