// Package host runs WebAssembly guest modules that follow the Extism
// conventions, on wazero, under capabilities and limits.
//
// A Host owns one wazero runtime and the compiled modules; Host.Load checks a
// module's imports (anything the host does not provide is refused, naming
// the import), verifies an optional sha256 pin and compiles it once per
// content hash, optionally through an on-disk compilation cache. A Module is
// safe for concurrent use; Module.Call runs one export from fresh state (an
// instance restored from a snapshot of the initialised guest, or a new one)
// under a Grant — filesystem mounts, HTTP hosts, env vars, config values,
// the tools and services it may call, and Limits (timeout, memory, output,
// log, var, kernel-memory, HTTP response, mount write and open-file caps).
// Nothing is allowed that the grant does not name. Pool keeps warm
// instances for trusted modules.
//
// Mounts are contained in their host folders (no escape by "..", absolute
// paths or symbolic links) and metered per instance, across all its mounts:
// one call may write at most Limits.MaxWriteBytes (bytes written, file
// growth by truncate or by writing past the end, and 4 KiB per file or
// folder created), and the guest may hold at most Limits.MaxOpenFiles files
// and folders open (the mount roots not counted). Past either the guest's
// WASI call fails, with EDQUOT ("quota exceeded") or EMFILE ("too many open
// files"), and nothing is written or opened; the call itself goes on, and a
// guest that ignores the errno may still succeed. The write count starts
// again with each call, also in a reused instance.
//
// HTTP goes through an egress guard: only Grant.AllowedHosts, every
// redirect checked again, and without AllowPrivateNetwork no loopback,
// private or metadata address, checked on the addresses actually dialed.
// "localhost" and names under it are never sent to DNS.
//
// Before it runs, a module is validated in full by wazero's own validator,
// then rewritten to count the instructions it runs: a budget check at every
// loop head and function entry calls the host when the budget runs out,
// where the deadline and Limits.MaxFuel are enforced, so a spinning guest
// is stopped at its deadline and cannot stall garbage collection. A module
// that cannot be metered (a valid module the rewriter cannot handle, or one
// whose rewrite does not compile; Module.Metered says why), and every
// module when Config.WithMetering is off, runs in a second runtime under
// wazero's close-on-context-done, which stops it at its deadline too, at
// the cost of a call out to Go at every loop head, and cannot count fuel.
// The deadline covers instantiation too: a start function and the
// guest's initialisers run under it. Guests blocked in a host call (sleep,
// HTTP, tool_call) are released by the host function when the deadline
// passes. Tables are bounded by Config.WithMaxTableElements.
// A failed call returns a *CallError matching one of the sentinel errors
// (ErrGuest, ErrTrap, ErrTimeout, ErrLimit, ErrDenied, ...), and the host
// keeps serving other calls.
//
// A call never sees what an earlier call left: kernel memory is zeroed,
// vars and HTTP state are reset, memory and globals are restored from a
// snapshot taken after initialisation (and LoadOptions.Warmup's calls, which
// prepare it from the module's own inputs, never a caller's), and an
// instance whose call changed
// its WASI descriptor table, tables or segments, or closed it, is
// discarded.
//
// Process isolation is the backstop in case interruption ever fails: a call
// under IsolationProcess (Grant.Isolation, or Config.WithIsolation for the
// grants that leave it empty) runs in a supervised worker process, the host
// program started again, which is killed when it has not answered by the
// deadline plus Config.WithWorkerGrace. Results, errors, logs (streamed to
// OnLog as they are written), tool_call and capability_call (served by the
// caller's dispatcher and provider) are those of an in-process call. A
// program that may run such calls must call ServeWorkerIfChild first thing
// in main, and a test binary in TestMain. Pools always run in-process.
//
// The host↔guest contract is described in the abi package and its README.
package host
