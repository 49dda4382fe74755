;; start.wat: a module with a benign start function. The start function
;; logs "started" and sets the global $ready; run outputs "1" when it ran.
;; A host must run it under the call's deadline and its metering.
;; Build: make -C testdata/guests (runs: wat2wasm wat/start.wat -o wat/start.wasm).
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "log_info" (func $log_info (param i64)))
  (memory (export "memory") 1)
  (global $ready (mut i32) (i32.const 0))
  (data (i32.const 0) "started")

  (func $init
    (local $off i64) (local $i i32)
    ;; A loop, so that the start function meets a budget check or two.
    (local.set $off (call $alloc (i64.const 7)))
    (loop $copy
      (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
        (i32.load8_u (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $copy (i32.lt_u (local.get $i) (i32.const 7))))
    (call $log_info (local.get $off))
    (global.set $ready (i32.const 1)))
  (start $init)

  (func (export "run") (result i32)
    (local $off i64)
    (local.set $off (call $alloc (i64.const 1)))
    (call $store_u8 (local.get $off) (i32.add (i32.const 48) (global.get $ready)))
    (call $output_set (local.get $off) (i64.const 1))
    (i32.const 0)))
