package abi

import (
	"encoding/json"
	"strings"
)

// HTTPRequest is the JSON document a guest passes to http_request.
type HTTPRequest struct {
	URL     string            `json:"url"`
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Error is a tool's structured failure. A guest reports one by passing its
// JSON form to error_set; a plain-text error_set message is read as an Error
// with code CodeGuestError and the text as message.
type Error struct {
	Code    Code            `json:"code"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details,omitempty"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return string(e.Code) + ": " + e.Message
}

// ParseError reads what a guest passed to error_set: the JSON form of an
// Error when it is one with a known code, otherwise the text as a message
// with CodeGuestError.
func ParseError(raw []byte) *Error {
	trimmed := strings.TrimSpace(string(raw))
	if strings.HasPrefix(trimmed, "{") {
		var e Error
		if err := json.Unmarshal([]byte(trimmed), &e); err == nil && e.Code.Known() && e.Message != "" {
			return &e
		}
	}
	return &Error{Code: CodeGuestError, Message: string(raw)}
}

// ToolResult is what tool_call and capability_call return to a guest, and
// the shape the host reports a call in: exactly one of Output or Error.
type ToolResult struct {
	Output  json.RawMessage `json:"output,omitempty"`
	IsError bool            `json:"is_error"`
	Error   *Error          `json:"error,omitempty"`
}

// Description is what a module's describe export returns.
type Description struct {
	ABI   string           `json:"abi,omitempty"`
	Tools []ToolDescriptor `json:"tools"`
}

// ToolDescriptor describes one tool a module exports.
type ToolDescriptor struct {
	Name         string          `json:"name"`
	Export       string          `json:"export,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Tags         []string        `json:"tags,omitempty"`
	// Category groups the tool in listings.
	Category string `json:"category,omitempty"`
	// SideEffects, Idempotent, RequiresNetwork and RequiresFilesystem are
	// what the tool does beyond computing its output; the host derives the
	// tool's risk level from them. Absent means false.
	SideEffects        bool `json:"side_effects,omitempty"`
	Idempotent         bool `json:"idempotent,omitempty"`
	RequiresNetwork    bool `json:"requires_network,omitempty"`
	RequiresFilesystem bool `json:"requires_filesystem,omitempty"`
	// Examples are sample calls, each an arguments object valid against
	// InputSchema.
	Examples []ToolExample `json:"examples,omitempty"`
}

// ToolExample is one sample call of a described tool.
type ToolExample struct {
	Args        json.RawMessage `json:"args"`
	Description string          `json:"description,omitempty"`
}
