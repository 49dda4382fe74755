package skill

import (
	"encoding/json"
	"fmt"

	"github.com/skillhost/skillhost/abi"
)

// kernel is the boundary to the host: the Extism kernel and host functions
// when running as a Wasm guest (kernel_wasm.go), nothing when the package
// is compiled natively, and a fake in tests. Offsets never cross it, only
// bytes.
type kernel interface {
	input() []byte
	output(b []byte)
	setError(b []byte)
	config(key string) (string, bool)
	getVar(key string) ([]byte, bool)
	setVar(key string, value []byte)
	deleteVar(key string)
	log(level abi.LogLevel, msg string)
	logLevel() abi.LogLevel
	// http sends a request (abi.HTTPRequest JSON and an optional body) and
	// returns the status (0 when the host gave none), the response headers
	// as a JSON object (or nil) and the body.
	http(req, body []byte) (status int, headers, respBody []byte)
	// toolCall and capabilityCall return the abi.ToolResult JSON, or nil
	// when the host returned nothing.
	toolCall(name string, args []byte) []byte
	capabilityCall(id string, args []byte) []byte
}

// env is the kernel in use; kernel_wasm.go replaces it on Wasm.
var env kernel = noKernel{}

// ErrNoHost is returned by the host services when the package runs
// natively (in a unit test) rather than inside a Wasm host. It carries
// code unavailable.
var ErrNoHost = &Error{Code: abi.CodeUnavailable, Message: "not running inside a Wasm host"}

// noKernel is the kernel of a native build: no input, services unavailable.
type noKernel struct{}

func (noKernel) input() []byte                             { return nil }
func (noKernel) output([]byte)                             {}
func (noKernel) setError([]byte)                           {}
func (noKernel) config(string) (string, bool)              { return "", false }
func (noKernel) getVar(string) ([]byte, bool)              { return nil, false }
func (noKernel) setVar(string, []byte)                     {}
func (noKernel) deleteVar(string)                          {}
func (noKernel) log(abi.LogLevel, string)                  {}
func (noKernel) logLevel() abi.LogLevel                    { return abi.LogOff }
func (noKernel) http([]byte, []byte) (int, []byte, []byte) { return 0, nil, nil }
func (noKernel) toolCall(string, []byte) []byte            { return nil }
func (noKernel) capabilityCall(string, []byte) []byte      { return nil }

// Log levels for Log and Logf.
const (
	LevelTrace = abi.LogTrace
	LevelDebug = abi.LogDebug
	LevelInfo  = abi.LogInfo
	LevelWarn  = abi.LogWarn
	LevelError = abi.LogError
)

// Config returns the value of the config key the operator (or the
// manifest's defaults) set for this module, and whether it is set.
func Config(key string) (string, bool) { return env.config(key) }

// Var returns the value of the module variable key and whether it is set.
// Variables live on the host and survive between calls of the same
// instance or plugin, within the host's var size cap.
func Var(key string) ([]byte, bool) { return env.getVar(key) }

// SetVar sets the module variable key.
func SetVar(key string, value []byte) { env.setVar(key, value) }

// DeleteVar removes the module variable key.
func DeleteVar(key string) { env.deleteVar(key) }

// Log sends msg to the host's log at level. Messages below the host's
// level are dropped without a host call.
func Log(level abi.LogLevel, msg string) {
	if level < env.logLevel() {
		return
	}
	env.log(level, msg)
}

// Logf formats and logs a message at level; nothing is formatted when the
// host would drop it.
func Logf(level abi.LogLevel, format string, args ...any) {
	if level < env.logLevel() {
		return
	}
	env.log(level, fmt.Sprintf(format, args...))
}

// HTTPRequest is an HTTP request made through the host. The host decides
// whether the URL may be reached (the module's allowed_hosts grant).
type HTTPRequest struct {
	// Method defaults to GET.
	Method  string
	URL     string
	Headers map[string]string
	Body    []byte
}

// HTTPResponse is the host's answer to an HTTPRequest.
type HTTPResponse struct {
	Status  int
	Headers map[string]string
	Body    []byte
}

// HTTP sends req through the host's http_request function. Any status the
// remote sent is a response, not an error; an error (code unavailable)
// means no response arrived. A host that refuses the URL may instead end
// the call with a permission error the guest never sees.
func HTTP(req HTTPRequest) (*HTTPResponse, error) {
	if req.URL == "" {
		return nil, InvalidInput("HTTP request without a URL")
	}
	if _, ok := env.(noKernel); ok {
		return nil, ErrNoHost
	}
	method := req.Method
	if method == "" {
		method = "GET"
	}
	meta, err := json.Marshal(abi.HTTPRequest{URL: req.URL, Method: method, Headers: req.Headers})
	if err != nil {
		return nil, err
	}
	status, rawHeaders, body := env.http(meta, req.Body)
	if status == 0 {
		return nil, Unavailable(fmt.Sprintf("%s %s: no response from the host", method, req.URL))
	}
	resp := &HTTPResponse{Status: status, Body: body, Headers: map[string]string{}}
	if len(rawHeaders) > 0 {
		_ = json.Unmarshal(rawHeaders, &resp.Headers)
	}
	return resp, nil
}

// CallTool calls another tool through the caller's run: the host checks
// that the module may call it (its tools grant), validates args against the
// tool's schema and runs it. args is marshalled to JSON (a json.RawMessage
// is sent as is, nil as {}). A failure of the called tool is returned as an
// *Error with its code; returning it from your tool passes the code on.
func CallTool(name string, args any) (json.RawMessage, error) {
	b, err := marshalArgs(args)
	if err != nil {
		return nil, err
	}
	return decodeResult("tool "+name, env.toolCall(name, b))
}

// CallCapability asks the host-registered service id (a namespaced name
// such as "mail.send") with args, like CallTool. The module needs the
// capability in its grant.
func CallCapability(id string, args any) (json.RawMessage, error) {
	b, err := marshalArgs(args)
	if err != nil {
		return nil, err
	}
	return decodeResult("capability "+id, env.capabilityCall(id, b))
}

func marshalArgs(args any) ([]byte, error) {
	switch a := args.(type) {
	case nil:
		return []byte("{}"), nil
	case json.RawMessage:
		if len(a) == 0 {
			return []byte("{}"), nil
		}
		return a, nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, InvalidInput("encoding the arguments: " + err.Error())
	}
	return b, nil
}

// decodeResult reads an abi.ToolResult returned by tool_call or
// capability_call.
func decodeResult(what string, raw []byte) (json.RawMessage, error) {
	if raw == nil {
		if _, ok := env.(noKernel); ok {
			return nil, ErrNoHost
		}
		return nil, Unavailable(what + ": the host returned no result")
	}
	var res abi.ToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, Unavailable(what + ": the host returned a malformed result: " + err.Error())
	}
	if res.IsError {
		if res.Error == nil {
			return nil, &Error{Code: abi.CodeGuestError, Message: what + " failed"}
		}
		if !res.Error.Code.Known() {
			res.Error.Code = abi.CodeGuestError
		}
		return nil, res.Error
	}
	if res.Output == nil {
		return json.RawMessage("null"), nil
	}
	return res.Output, nil
}
