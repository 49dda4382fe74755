package abi

// Code classifies a tool failure. Codes are stable strings: a guest may
// report the guest-side ones, the host reports all of them.
type Code string

// Error codes.
const (
	// CodeInvalidInput: the arguments did not match what the tool expects.
	CodeInvalidInput Code = "invalid_input"
	// CodeNotFound: a named tool, export, file or resource does not exist
	// (or is not visible to the caller).
	CodeNotFound Code = "not_found"
	// CodePermissionDenied: the call needs a grant the module does not have.
	CodePermissionDenied Code = "permission_denied"
	// CodeTimeout: the call ran past its wall-clock limit.
	CodeTimeout Code = "timeout"
	// CodeLimitExceeded: memory, output, log, var or response-size cap hit.
	CodeLimitExceeded Code = "limit_exceeded"
	// CodeDepthExceeded: tool_call nesting went past the host's limit.
	CodeDepthExceeded Code = "depth_exceeded"
	// CodeTrap: the guest trapped (unreachable, out-of-bounds access, stack
	// overflow) or exited with a non-zero code.
	CodeTrap Code = "trap"
	// CodeUnavailable: a service or remote the tool needs did not answer.
	CodeUnavailable Code = "unavailable"
	// CodeGuestError: the guest reported a failure in plain text.
	CodeGuestError Code = "guest_error"
	// CodeInternal: the host failed; not the guest's fault.
	CodeInternal Code = "internal"
)

var knownCodes = map[Code]bool{
	CodeInvalidInput: true, CodeNotFound: true, CodePermissionDenied: true,
	CodeTimeout: true, CodeLimitExceeded: true, CodeDepthExceeded: true,
	CodeTrap: true, CodeUnavailable: true, CodeGuestError: true, CodeInternal: true,
}

// Known reports whether c is one of the codes defined here.
func (c Code) Known() bool { return knownCodes[c] }
