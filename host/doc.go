// Package host runs WebAssembly guest modules that follow the Extism
// conventions, on wazero, under capabilities and limits.
//
// A Host owns one wazero runtime and the compiled modules; Host.Load checks a
// module's imports (anything the host does not provide is refused, naming
// the import), verifies an optional sha256 pin and compiles it once per
// content hash, optionally through an on-disk compilation cache. A Module is
// safe for concurrent use; Module.Call runs one export in a fresh instance
// under a Grant — filesystem mounts, HTTP hosts, env vars, config values,
// the tools and services it may call, and Limits (timeout, memory, output,
// log, var, kernel-memory and HTTP response caps). Nothing is allowed that
// the grant does not name. Pool keeps warm instances for trusted modules.
//
// Every guest runs with wazero's close-on-context-done, so a guest spinning
// in a loop is stopped at its deadline and cannot stall garbage collection;
// guests blocked in a host call (sleep, HTTP, tool_call) are released by the
// host function when the deadline passes. A failed call returns a *CallError
// matching one of the sentinel errors (ErrGuest, ErrTrap, ErrTimeout,
// ErrLimit, ErrDenied, ...), and the host keeps serving other calls.
//
// The host↔guest contract is described in the abi package and its README.
package host
