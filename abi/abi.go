// Package abi is the contract between the skillhost host and a guest module:
// the ABI version, the names a guest imports and exports, the JSON envelopes
// that cross the boundary, and the error codes a tool may report.
//
// It is a leaf package: it imports only the standard library, so guest SDKs,
// the host and embedding applications can all depend on it. The contract is
// described for guest authors in any language in README.md beside this file.
package abi

// Version is the ABI version spoken by this host. A guest's describe output
// may name the version it was built for; the host refuses a higher major.
const Version = "1.0"

// Import modules a guest may import from. Anything else is refused at load.
const (
	// ModuleEnv holds the Extism kernel and host functions
	// (memory, input/output, config, vars, logging, HTTP).
	ModuleEnv = "extism:host/env"
	// ModuleUser holds the skillhost host functions beyond Extism's
	// (tool_call, capability_call), in the namespace Extism reserves for
	// host-supplied functions, so the same module can run under any Extism
	// host that registers them.
	ModuleUser = "extism:host/user"
	// ModuleWASI is WASI preview 1, served with deny-by-default settings.
	ModuleWASI = "wasi_snapshot_preview1"
)

// Functions in ModuleEnv. Offsets and lengths are i64 values that address
// host-owned memory (the Extism "kernel" memory), never the guest's own
// linear memory; a guest copies bytes across with the load and store calls.
const (
	FuncAlloc          = "alloc"            // (len i64) -> offset i64; 0 when len is 0
	FuncFree           = "free"             // (offset i64)
	FuncLength         = "length"           // (offset i64) -> len i64; 0 for an unknown block
	FuncLengthUnsafe   = "length_unsafe"    // (offset i64) -> len i64
	FuncLoadU8         = "load_u8"          // (offset i64) -> i32
	FuncLoadU64        = "load_u64"         // (offset i64) -> i64
	FuncStoreU8        = "store_u8"         // (offset i64, value i32)
	FuncStoreU64       = "store_u64"        // (offset i64, value i64)
	FuncInputLength    = "input_length"     // () -> i64
	FuncInputOffset    = "input_offset"     // () -> i64
	FuncInputLoadU8    = "input_load_u8"    // (index i64) -> i32
	FuncInputLoadU64   = "input_load_u64"   // (index i64) -> i64
	FuncInputSet       = "input_set"        // (offset i64, len i64)
	FuncOutputSet      = "output_set"       // (offset i64, len i64)
	FuncOutputLength   = "output_length"    // () -> i64
	FuncOutputOffset   = "output_offset"    // () -> i64
	FuncErrorSet       = "error_set"        // (offset i64)
	FuncErrorGet       = "error_get"        // () -> offset i64
	FuncReset          = "reset"            // ()
	FuncMemoryBytes    = "memory_bytes"     // () -> i64
	FuncConfigGet      = "config_get"       // (key offset) -> value offset or 0
	FuncVarGet         = "var_get"          // (key offset) -> value offset or 0
	FuncVarSet         = "var_set"          // (key offset, value offset or 0 to delete)
	FuncHTTPRequest    = "http_request"     // (request JSON offset, body offset or 0) -> body offset or 0
	FuncHTTPStatusCode = "http_status_code" // () -> i32
	FuncHTTPHeaders    = "http_headers"     // () -> offset of a JSON object, or 0
	FuncLogTrace       = "log_trace"        // (message offset)
	FuncLogDebug       = "log_debug"        // (message offset)
	FuncLogInfo        = "log_info"         // (message offset)
	FuncLogWarn        = "log_warn"         // (message offset)
	FuncLogError       = "log_error"        // (message offset)
	FuncGetLogLevel    = "get_log_level"    // () -> i32, see LogLevel
)

// Functions in ModuleUser.
const (
	// FuncToolCall calls another tool through the caller's run:
	// (name offset, CallRequest.Args JSON offset) -> ToolResult JSON offset.
	FuncToolCall = "tool_call"
	// FuncCapabilityCall asks a host-registered service provider:
	// (capability id offset, args JSON offset) -> ToolResult JSON offset.
	FuncCapabilityCall = "capability_call"
)

// Exports a guest may define beyond its tools.
const (
	// ExportDescribe, when present, returns the module's tools as a
	// Description JSON document in its output.
	ExportDescribe = "describe"
	// ExportInitialize is the WASI reactor initialiser; the host runs it once
	// per instance before any other export.
	ExportInitialize = "_initialize"
	// ExportStart is the WASI command entry point, used for scripts.
	ExportStart = "_start"
)

// LogLevel is the value get_log_level returns: messages below it are
// dropped by the host, so a guest may skip formatting them.
type LogLevel int32

// Log levels in the numbering Extism guests expect from get_log_level.
const (
	LogTrace LogLevel = 0
	LogDebug LogLevel = 1
	LogInfo  LogLevel = 2
	LogWarn  LogLevel = 3
	LogError LogLevel = 4
	LogOff   LogLevel = 0x7fffffff
)

// String returns the lowercase level name.
func (l LogLevel) String() string {
	switch l {
	case LogTrace:
		return "trace"
	case LogDebug:
		return "debug"
	case LogInfo:
		return "info"
	case LogWarn:
		return "warn"
	case LogError:
		return "error"
	case LogOff:
		return "off"
	}
	return "unknown"
}
