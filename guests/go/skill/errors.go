package skill

import (
	"errors"
	"fmt"

	"github.com/skillhost/skillhost/abi"
)

// Error is a tool failure with an abi error code. A tool function that
// returns one (directly or wrapped) reports its code and message to the
// host; any other error is reported with code abi.CodeGuestError. Errors
// returned by CallTool and CallCapability are *Error values carrying the
// callee's code, so returning them unchanged passes the code on.
type Error = abi.Error

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code abi.Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidInput reports arguments the tool cannot work with.
func InvalidInput(msg string) *Error { return &Error{Code: abi.CodeInvalidInput, Message: msg} }

// NotFound reports that a named file, record or resource does not exist.
func NotFound(msg string) *Error { return &Error{Code: abi.CodeNotFound, Message: msg} }

// PermissionDenied reports that the call needs a grant the module lacks.
func PermissionDenied(msg string) *Error {
	return &Error{Code: abi.CodePermissionDenied, Message: msg}
}

// Unavailable reports that a service or remote the tool needs did not
// answer.
func Unavailable(msg string) *Error { return &Error{Code: abi.CodeUnavailable, Message: msg} }

// LimitExceeded reports that a size or count cap was hit.
func LimitExceeded(msg string) *Error { return &Error{Code: abi.CodeLimitExceeded, Message: msg} }

// toABIError turns what a tool function returned into the envelope sent to
// error_set: an *Error in the chain keeps its code (an unknown or empty one
// becomes guest_error), anything else is a guest_error with err's text.
func toABIError(err error) *abi.Error {
	var e *abi.Error
	if errors.As(err, &e) && e != nil {
		out := *e
		if !out.Code.Known() {
			out.Code = abi.CodeGuestError
		}
		// Keep the context a wrapper added: fmt.Errorf("reading %s: %w", ...).
		if msg := err.Error(); err != error(e) && msg != e.Error() {
			out.Message = trimCodePrefix(msg, e)
		}
		if out.Message == "" {
			out.Message = string(out.Code)
		}
		return &out
	}
	msg := err.Error()
	if msg == "" {
		msg = "tool failed"
	}
	return &abi.Error{Code: abi.CodeGuestError, Message: msg}
}

// trimCodePrefix removes the "code: " that (*abi.Error).Error adds, from the
// text of a wrapper around e, so the message does not repeat the code.
func trimCodePrefix(msg string, e *abi.Error) string {
	inner := e.Error()
	if i := len(msg) - len(inner); i >= 0 && msg[i:] == inner {
		return msg[:i] + e.Message
	}
	return msg
}
