;; capability.wat: calls capability_call in extism:host/user with a fixed
;; capability id and the tool's input (its JSON arguments) as the
;; arguments, and outputs the returned document (an abi.ToolResult JSON)
;; verbatim; nothing when it returns 0.
;;   send:   capability "mail.send".
;;   lookup: capability "ghost.lookup" (a namespace tests leave without a
;;           provider).
;;   bare:   capability "nodot" (an id without a namespace).
;; Build: make -C testdata/guests (runs: wat2wasm wat/capability.wat -o wat/capability.wasm).
(module
  (import "extism:host/user" "capability_call" (func $capability_call (param i64 i64) (result i64)))
  ;; ---- Extism kernel imports and helpers (identical in every fixture) ----
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "load_u64" (func $load_u64 (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "input_load_u64" (func $input_load_u64 (param i64) (result i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))

  ;; Guest memory: 0..1023 constants, 1024..1087 number scratch,
  ;; 4096.. a bump heap that every export resets on entry.
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 4096))

  ;; $malloc returns n bytes of guest memory, growing the memory when needed
  ;; and trapping when it cannot.
  (func $malloc (param $n i32) (result i32)
    (local $p i32) (local $end i64) (local $have i64)
    (local.set $p (global.get $heap))
    (local.set $end (i64.add (i64.extend_i32_u (local.get $p)) (i64.extend_i32_u (local.get $n))))
    (local.set $have (i64.shl (i64.extend_i32_u (memory.size)) (i64.const 16)))
    (if (i64.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq
              (memory.grow (i32.wrap_i64 (i64.shr_u
                (i64.add (i64.sub (local.get $end) (local.get $have)) (i64.const 65535))
                (i64.const 16))))
              (i32.const -1))
          (then unreachable))))
    (global.set $heap (i32.wrap_i64 (local.get $end)))
    (local.get $p))

  ;; $input_len is the input length; inputs past 2 GiB trap.
  (func $input_len (result i32)
    (local $n i64)
    (local.set $n (call $input_length))
    (if (i64.gt_u (local.get $n) (i64.const 0x7fffffff)) (then unreachable))
    (i32.wrap_i64 (local.get $n)))

  ;; $read_input copies len input bytes to dst: 8 at a time, then the tail.
  (func $read_input (param $dst i32) (param $len i32)
    (local $i i32)
    (block $done8
      (loop $copy8
        (br_if $done8 (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $len)))
        (i64.store (i32.add (local.get $dst) (local.get $i))
          (call $input_load_u64 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $copy8)))
    (block $done1
      (loop $copy1
        (br_if $done1 (i32.ge_u (local.get $i) (local.get $len)))
        (i32.store8 (i32.add (local.get $dst) (local.get $i))
          (call $input_load_u8 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy1))))

  ;; $load copies len bytes of the kernel block at off to dst.
  (func $load (param $off i64) (param $dst i32) (param $len i32)
    (local $i i32)
    (block $done8
      (loop $copy8
        (br_if $done8 (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $len)))
        (i64.store (i32.add (local.get $dst) (local.get $i))
          (call $load_u64 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $copy8)))
    (block $done1
      (loop $copy1
        (br_if $done1 (i32.ge_u (local.get $i) (local.get $len)))
        (i32.store8 (i32.add (local.get $dst) (local.get $i))
          (call $load_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy1))))

  ;; $store copies len bytes at src into a new kernel block and returns its
  ;; offset (0 for no bytes). It traps when alloc returns 0.
  (func $store (param $src i32) (param $len i32) (result i64)
    (local $off i64) (local $i i32)
    (if (i32.eqz (local.get $len)) (then (return (i64.const 0))))
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $len))))
    (if (i64.eqz (local.get $off)) (then unreachable))
    (block $done8
      (loop $copy8
        (br_if $done8 (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $len)))
        (call $store_u64 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i64.load (i32.add (local.get $src) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $copy8)))
    (block $done1
      (loop $copy1
        (br_if $done1 (i32.ge_u (local.get $i) (local.get $len)))
        (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (local.get $src) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy1)))
    (local.get $off))

  ;; $output sets the call's output to len bytes at src.
  (func $output (param $src i32) (param $len i32)
    (call $output_set (call $store (local.get $src) (local.get $len)) (i64.extend_i32_u (local.get $len))))

  ;; $error sets the call's error to len bytes at src.
  (func $error (param $src i32) (param $len i32)
    (call $error_set (call $store (local.get $src) (local.get $len))))

  ;; $fmt_u64 writes v in decimal at dst and returns the number of digits.
  (func $fmt_u64 (param $v i64) (param $dst i32) (result i32)
    (local $i i32) (local $n i32)
    (local.set $i (i32.const 1044))
    (loop $digit
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (local.get $i)
        (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (local.get $v) (i64.const 10)))))
      (local.set $v (i64.div_u (local.get $v) (i64.const 10)))
      (br_if $digit (i64.ne (local.get $v) (i64.const 0))))
    (local.set $n (i32.sub (i32.const 1044) (local.get $i)))
    (memory.copy (local.get $dst) (local.get $i) (local.get $n))
    (local.get $n))

  ;; $output_u64 sets the call's output to v in decimal.
  (func $output_u64 (param $v i64)
    (call $output (i32.const 1056) (call $fmt_u64 (local.get $v) (i32.const 1056))))

  ;; $parse_u64 reads the decimal digits at the start of len bytes at p
  ;; (stopping at the first non-digit; wraps on overflow).
  (func $parse_u64 (param $p i32) (param $len i32) (result i64)
    (local $v i64) (local $c i32) (local $end i32)
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (i32.sub (i32.load8_u (local.get $p)) (i32.const 48)))
        (br_if $done (i32.gt_u (local.get $c) (i32.const 9)))
        (local.set $v (i64.add (i64.mul (local.get $v) (i64.const 10)) (i64.extend_i32_u (local.get $c))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next)))
    (local.get $v))

  ;; $input_u64 parses the input as a decimal number, or returns def when the
  ;; input is empty.
  (func $input_u64 (param $def i64) (result i64)
    (local $len i32) (local $p i32)
    (local.set $len (call $input_len))
    (if (i32.eqz (local.get $len)) (then (return (local.get $def))))
    (local.set $p (call $malloc (local.get $len)))
    (call $read_input (local.get $p) (local.get $len))
    (call $parse_u64 (local.get $p) (local.get $len)))
  ;; ---- end of shared helpers ----
  (data (i32.const 0) "mail.send")
  (data (i32.const 16) "ghost.lookup")
  (data (i32.const 32) "nodot")

  ;; $input_block copies the input into a new kernel block.
  (func $input_block (result i64)
    (local $len i32) (local $p i32)
    (local.set $len (call $input_len))
    (local.set $p (call $malloc (local.get $len)))
    (call $read_input (local.get $p) (local.get $len))
    (call $store (local.get $p) (local.get $len)))

  ;; $call_cap calls capability id (len bytes at src) with the input and
  ;; outputs the returned block.
  (func $call_cap (param $src i32) (param $len i32)
    (local $off i64)
    (global.set $heap (i32.const 4096))
    (local.set $off
      (call $capability_call (call $store (local.get $src) (local.get $len)) (call $input_block)))
    (if (i64.ne (local.get $off) (i64.const 0))
      (then (call $output_set (local.get $off) (call $length (local.get $off))))))

  (func (export "send") (result i32)
    (call $call_cap (i32.const 0) (i32.const 9))
    (i32.const 0))

  (func (export "lookup") (result i32)
    (call $call_cap (i32.const 16) (i32.const 12))
    (i32.const 0))

  (func (export "bare") (result i32)
    (call $call_cap (i32.const 32) (i32.const 5))
    (i32.const 0))
)
