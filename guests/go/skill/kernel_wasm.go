//go:build wasip1 || tinygo

package skill

import (
	"github.com/extism/go-pdk"

	"github.com/skillhost/skillhost/abi"
)

// The describe export: every module that imports this package reports its
// tools, so a manifest can be generated from the module itself.
//
//lint:ignore U1000 called by the host through go:wasmexport
//go:wasmexport describe
func describeExport() int32 { return runDescribe() }

func init() { env = wasmKernel{} }

// wasmKernel talks to the host through the Extism kernel (go-pdk) and the
// skillhost functions in extism:host/user. Every block it allocates for a
// call's arguments is freed after the call; output and error blocks are
// left to the host, which resets kernel memory between calls.
type wasmKernel struct{}

//go:wasmimport extism:host/env log_trace
func hostLogTrace(msg uint64)

//go:wasmimport extism:host/env log_debug
func hostLogDebug(msg uint64)

//go:wasmimport extism:host/env log_info
func hostLogInfo(msg uint64)

//go:wasmimport extism:host/env log_warn
func hostLogWarn(msg uint64)

//go:wasmimport extism:host/env log_error
func hostLogError(msg uint64)

//go:wasmimport extism:host/env get_log_level
func hostGetLogLevel() int32

//go:wasmimport extism:host/env error_set
func hostErrorSet(msg uint64)

//go:wasmimport extism:host/env http_request
func hostHTTPRequest(req, body uint64) uint64

//go:wasmimport extism:host/env http_status_code
func hostHTTPStatusCode() int32

//go:wasmimport extism:host/env http_headers
func hostHTTPHeaders() uint64

//go:wasmimport extism:host/user tool_call
func hostToolCall(name, args uint64) uint64

//go:wasmimport extism:host/user capability_call
func hostCapabilityCall(id, args uint64) uint64

func (wasmKernel) input() []byte   { return pdk.Input() }
func (wasmKernel) output(b []byte) { pdk.Output(b) }
func (wasmKernel) setError(b []byte) {
	m := pdk.AllocateBytes(b)
	hostErrorSet(m.Offset())
}

func (wasmKernel) config(key string) (string, bool) { return pdk.GetConfig(key) }

func (wasmKernel) getVar(key string) ([]byte, bool) {
	v := pdk.GetVar(key)
	return v, v != nil
}

func (wasmKernel) setVar(key string, value []byte) { pdk.SetVar(key, value) }
func (wasmKernel) deleteVar(key string)            { pdk.RemoveVar(key) }

func (wasmKernel) logLevel() abi.LogLevel { return abi.LogLevel(hostGetLogLevel()) }

func (wasmKernel) log(level abi.LogLevel, msg string) {
	m := pdk.AllocateString(msg)
	defer m.Free()
	switch level {
	case abi.LogTrace:
		hostLogTrace(m.Offset())
	case abi.LogDebug:
		hostLogDebug(m.Offset())
	case abi.LogInfo:
		hostLogInfo(m.Offset())
	case abi.LogWarn:
		hostLogWarn(m.Offset())
	default:
		hostLogError(m.Offset())
	}
}

func (wasmKernel) http(req, body []byte) (int, []byte, []byte) {
	r := pdk.AllocateBytes(req)
	defer r.Free()
	var bodyOffset uint64
	if len(body) > 0 {
		b := pdk.AllocateBytes(body)
		defer b.Free()
		bodyOffset = b.Offset()
	}
	respOffset := hostHTTPRequest(r.Offset(), bodyOffset)
	status := int(hostHTTPStatusCode())
	var headers []byte
	if h := hostHTTPHeaders(); h != 0 {
		headers = readAndFree(h)
	}
	var respBody []byte
	if respOffset != 0 {
		respBody = readAndFree(respOffset)
	}
	return status, headers, respBody
}

// toolCall and capabilityCall call their imports directly (not through a
// shared helper taking a flag or a func value) so that a module using one
// does not link the other: TinyGo cannot take a //go:wasmimport function as
// a value, and a host that lacks an import refuses the module.
func (wasmKernel) toolCall(name string, args []byte) []byte {
	n, a := pdk.AllocateString(name), pdk.AllocateBytes(args)
	defer n.Free()
	defer a.Free()
	return readResult(hostToolCall(n.Offset(), a.Offset()))
}

func (wasmKernel) capabilityCall(id string, args []byte) []byte {
	n, a := pdk.AllocateString(id), pdk.AllocateBytes(args)
	defer n.Free()
	defer a.Free()
	return readResult(hostCapabilityCall(n.Offset(), a.Offset()))
}

// readResult reads and frees the result block of tool_call or
// capability_call; offset 0 means the host returned nothing.
func readResult(offset uint64) []byte {
	if offset == 0 {
		return nil
	}
	return readAndFree(offset)
}

// readAndFree copies a host memory block into guest memory and frees it.
// An unknown block reads as empty.
func readAndFree(offset uint64) []byte {
	m := pdk.FindMemory(offset)
	b := m.ReadBytes()
	if m.Length() > 0 {
		m.Free()
	}
	if b == nil {
		b = []byte{}
	}
	return b
}
