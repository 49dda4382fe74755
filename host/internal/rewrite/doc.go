// Package rewrite instruments WebAssembly modules so that a host can stop a
// running guest at almost no cost.
//
// # Why
//
// Native code compiled by wazero has no Go preemption point. A guest
// spinning in a loop cannot be stopped, and it freezes the whole process at
// the next garbage collection, which waits for every goroutine to stop.
// wazero's answer, RuntimeConfig.WithCloseOnContextDone, makes its compiler
// call out to Go at every loop head; measured on wazero v1.12.0 that costs
// 3.5-5 times on Go guests doing sha256 or sort, 10-19 times on integer
// loops and 24-32 times on a bare WAT loop (see BenchmarkGuests).
// Instrument instead inserts a cheap budget
// check into the code and lets the guest call the host only when its
// budget runs out: with slices of 100,000 the same Go guests run within
// 0-10% of their uninterruptible speed, and the bare WAT loop at 2.3 times.
//
// # The transformation
//
// Instrument adds:
//
//   - a function import Options.ImportModule/ImportName ("skillhost:fuel"
//     "refuel" by default) of type () -> i64, after the existing imports.
//     Its type is an existing standalone () -> i64 type, or one appended to
//     the type section: appending never moves a type index;
//   - a mutable i64 global, the budget, initialised to 0 and appended to
//     the global index space (so no global index moves), exported as
//     "__skillhost_budget" ("__skillhost_budget_1"... if the module already
//     uses that name; Info.BudgetExport has it);
//   - with Options.ExportGlobals, an export "__skillhost_global_<index>" of
//     every mutable global the module defines, so that the host can
//     snapshot and restore them between calls (Info.Globals);
//   - at every function entry and right after every loop instruction, a
//     check (Info.Checks counts them).
//
// The check is
//
//	global.get $budget; i64.const C; i64.sub; global.set $budget
//	global.get $budget; i64.const 0; i64.ge_s
//	if (blocktype empty) else call $refuel; global.set $budget end
//
// with the call in the else branch: wazero's register allocator starts
// the code after the if from the registers of its first branch, and a
// call spills them all, so a call in the first branch made every value
// live across the check go through the stack on the hot path too.
//
// At the head of a loop that takes no parameters (its block type is empty
// or one value type, not a type index) the call's branch goes back to the
// loop instead of on into its body:
//
//	global.get $budget; i64.const C; i64.sub; global.set $budget
//	global.get $budget; i64.const 0; i64.lt_s
//	if (blocktype empty) call $refuel; i64.const C; i64.add
//	global.set $budget; br 1 end
//
// so that the body is reached from the not-taken branch alone and wazero
// need not merge its values with the call's. Back at the loop, the check
// takes C again, which the call's branch added back: the budget is what
// refuel returned, as at a function entry, and the fuel counted is the
// same.
//
// Its if ... end is self-contained and leaves the operand stack as it
// found it, so the branch depths and stack types of the original code hold
// unchanged, including inside loops with parameters and unreachable code.
// C, the check's cost, is the number of instructions from the check to the
// first branch, call, block boundary or loop that follows it, that one
// included (at least 1): a cheap static count of the basic block the check
// heads, so that the budget approximates the number of instructions
// executed and deterministic fuel comes for free. It undercounts: a loop
// whose body starts with a conditional exit is charged for that test only.
//
// # The tick check
//
// With Options.Tick the check counts nothing: it compares a flag the host
// changes when a deadline may have passed with the value the module last
// saw,
//
//	global.get $flag; global.get $seen; i64.ne
//	if (blocktype empty) call $tick; global.set $seen end
//
// two loads and a branch, with no store but in the call. At the head of a
// loop that takes no parameters (its block type is empty or one value
// type, not a type index) the call's branch ends with br 1, back to the
// loop, which checks again:
//
//	global.get $flag; global.get $seen; i64.ne
//	if (blocktype empty) call $tick; global.set $seen; br 1 end
//
// so the loop's body is reached from the check's not-taken branch alone,
// and wazero keeps the values live across the check in registers there
// instead of merging them with the call's branch through the stack. A
// loop head is left only once the module has seen the flag. The flag is a
// mutable i64 imported as TickModule/TickGlobal ("skillhost:tick"
// "flag"), seen a mutable i64 global added after the module's own
// (Info.SeenGlobal, initialised to 0, not exported), and the function
// ImportModule/DefaultTickImportName ("skillhost:fuel" "tick", of the
// refuel type); no budget global is added or exported. The host decides,
// by what tick returns, whether the module calls again at its next check
// (0, which the flag never is; at a loop head that is at once) or not
// until the flag changes (the flag).
// The flag import comes after the module's own imports, so it gets the
// global index Info.TickGlobal = the number of imported globals, and every
// global the module defines moves up by one. Instrument renumbers every
// global index: global.get and global.set in code, global.get in constant
// expressions (global, table and element initialisers, element and data
// offsets), global exports, the name section's global names and the
// exports Options.ExportGlobals adds (which keep the input's index in
// their name, GlobalExport.Index).
//
// # Why function entries and loop heads suffice
//
// Without a loop, control inside a function only moves forward: block, if,
// br to a block or if, br_table, return, and exception handling all jump to
// a point later in the body. The only backward jumps are branches to a loop
// label, and they land on the loop head, where a check sits. A call enters
// a function at its entry, where a check sits, including call_indirect,
// call_ref and the tail calls. So between two checks a guest can only run
// forward through the rest of its current function and, returning, through
// the rest of each caller on the stack: at most the size of the bodies on
// the call stack, which wazero bounds. Recursion goes through function
// entries; every infinite execution passes checks infinitely often.
//
// What a check does not cover: time spent in host functions (which must
// watch their context themselves), memory.atomic.wait, and single
// instructions whose cost grows with their operands (memory.fill,
// memory.copy, memory.init, table.fill, table.copy, table.grow,
// memory.grow), bounded by the memory and table limits the host sets.
//
// # Function indices
//
// The function index space lists imports before the functions a module
// defines. The refuel import is added after the existing imports, so it
// gets index Info.RefuelFunc = the number of imported functions, and every
// defined function moves up by one. Instrument renumbers every function
// index: call and return_call, ref.func in code and in constant
// expressions (global and table initialisers, element segment expressions,
// data and element offsets), the function index vectors of element
// segments (all eight encodings), function exports and the start section.
// call_indirect, call_ref and return_call_indirect name types and tables,
// which do not move.
//
// Custom sections: the "name" section's function names, local names and
// label names are renumbered, so that stack traces keep their function
// names; a name section that does not parse is dropped, since names only
// label traces. DWARF sections (".debug_*") are dropped: they locate code by
// its offset in the code section, which the inserted checks move, and
// wazero would print wrong source lines in stack traces. Every other custom
// section is copied unchanged.
//
// # The host's side
//
// The host provides refuel and sets the budget through the exported
// global. At a check that drives the budget below zero, the guest calls
// refuel, whose result becomes the budget: the host checks its deadline or
// fuel account there and returns the next slice (100,000 is a good size),
// or stops the guest by panicking, for instance with sys.NewExitError or
// its context's error, which wazero turns into the error of the call. A
// host call is a Go preemption point, so a spinning guest lets the
// scheduler and garbage collector run at least once per slice. When refuel
// runs, the budget global holds the (negative) overshoot: a host keeping
// exact accounts computes the fuel used as the last slice granted minus
// the budget. A guest stopped this way may have left its memory and globals
// half-updated: discard the instance, or restore a snapshot.
//
// # Supported input
//
// Instrument decodes every instruction of the WebAssembly 2.0 core
// (sign extension, non-trapping conversions, bulk memory, reference types,
// multi-value, SIMD) and of the proposals wazero v1.12.0 implements: tail
// calls, threads (atomics), extended constant expressions, exception
// handling (legacy try/catch and try_table), typed function references;
// and the multi-memory memarg flag. It refuses (ErrUnsupported) relaxed
// SIMD, GC types and instructions, memory64 and components, and SIMD or
// atomic sub-opcodes in a padded encoding, which wazero reads differently
// (as one byte); the host can fall back to close-on-context-done.
//
// It refuses as malformed (ErrMalformed) input whose LEB128 numbers are
// over-long or overflow, and every count or length larger than the bytes
// that back it, checking sections in the order wazero decodes them; also
// functions with more than MaxLocals locals and function types out of
// range. A host must not hand such a module to wazero v1.12.0 either: it
// allocates by such counts before checking them (a 20-byte module asked
// it for 40 GB and crashed the process; a name map count made it allocate
// 6 GB) and panics on a function whose type index is out of range when
// another function calls it. No input makes Instrument panic
// (FuzzInstrument).
//
// Instrument is a pure function of its input: it is safe for concurrent
// use and does not modify or retain wasm. It runs at 150-250 MB/s: a 3.6 MB
// Go guest takes about 22 ms, which wazero needs 1-1.5 s to compile.
package rewrite
