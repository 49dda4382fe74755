package host

import (
	"errors"
	"fmt"

	"github.com/skillhost/skillhost/abi"

	"github.com/skillhost/skillhost/internal/confwalk"
)

// Errors returned by the host. Call failures arrive wrapped in *CallError,
// which also matches these with errors.Is.
var (
	// ErrClosed is returned for calls on a closed Host, Module or Pool.
	ErrClosed = errors.New("host: closed")
	// ErrInvalidModule is returned when a module's bytes are not a valid
	// WebAssembly binary or fail to compile.
	ErrInvalidModule = errors.New("host: invalid module")
	// ErrUnknownImport is returned when a module imports something the host
	// does not provide. The message names the import.
	ErrUnknownImport = errors.New("host: module imports something the host does not provide")
	// ErrHashMismatch is returned when a module's sha256 differs from its pin.
	ErrHashMismatch = errors.New("host: module sha256 does not match its pin")
	// ErrExportNotFound is returned when a call names an export the module
	// does not have, or one whose signature is not () -> i32 or () -> ().
	ErrExportNotFound = errors.New("host: export not found")
	// ErrTimeout is matched by calls that ran past their deadline.
	ErrTimeout = errors.New("host: call timed out")
	// ErrCanceled is matched by calls whose context was canceled.
	ErrCanceled = errors.New("host: call canceled")
	// ErrLimit is matched by calls that hit a memory, output, log, var,
	// kernel-memory or HTTP response cap.
	ErrLimit = errors.New("host: limit exceeded")
	// ErrTrap is matched by calls in which the guest trapped or exited with a
	// non-zero code.
	ErrTrap = errors.New("host: guest trapped")
	// ErrGuest is matched by calls in which the guest reported an error
	// through error_set or returned a non-zero code.
	ErrGuest = errors.New("host: guest reported an error")
	// ErrDenied is matched by calls that used a capability the grant does
	// not allow; the *CapabilityError in the chain says which.
	ErrDenied = errors.New("host: capability denied")
	// ErrBadConfig is returned by New and Load for an invalid Config,
	// LoadOptions or Grant; the message names the field. It is the one
	// configuration sentinel of every layer: registry.ErrBadConfig,
	// skillhost.ErrBadConfig and packs.ErrInvalidConfig are this value, so
	// a bad setting matches each whichever layer found it.
	ErrBadConfig = confwalk.ErrBadConfig
)

// CapabilityError says which capability a guest used without a grant.
type CapabilityError struct {
	// Capability is "filesystem", "network", "env", "tool", "service" or
	// "var".
	Capability string
	// Detail names what was asked for, e.g. the URL or tool name.
	Detail string
}

func (e *CapabilityError) Error() string {
	return fmt.Sprintf("%s capability denied: %s", e.Capability, e.Detail)
}

// Is makes a *CapabilityError match ErrDenied.
func (e *CapabilityError) Is(target error) bool { return target == ErrDenied }

// CallError is the error of a call that did not succeed. Kind is one of the
// sentinels above (ErrGuest, ErrTrap, ErrTimeout, ...); Guest holds the
// guest's structured error when it reported one.
type CallError struct {
	Export string
	Kind   error
	// Code is the abi code the failure maps to.
	Code abi.Code
	// Message is a one-line description safe to show a model.
	Message string
	// Guest is set when the guest reported the error itself.
	Guest *abi.Error
	// ReturnCode is the export's return value, when it returned.
	ReturnCode int32
	// Cause is the underlying error, if any.
	Cause error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("calling %q: %s", e.Export, e.Message)
}

// Is matches the sentinel in Kind.
func (e *CallError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Cause }

// ABIError returns the failure as the abi envelope shown to a model.
func (e *CallError) ABIError() *abi.Error {
	if e.Guest != nil {
		return e.Guest
	}
	return &abi.Error{Code: e.Code, Message: e.Message}
}
