;; describe_schemas.wat: a module whose describe export reports tool
;; schemas MCP clients would refuse as written: boolean property schemas,
;; a boolean root, a root type list, a root that takes no object. Every
;; tool runs the export "run", which outputs {}. The registry's tests
;; (registry/mcp_schema_test.go) check what it makes of them.
;; Build: make -C testdata/guests (runs: wat2wasm wat/describe_schemas.wat -o wat/describe_schemas.wasm).
(module
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
  (data (i32.const 0) "{}")
  (data (i32.const 16) "{\"tools\":[{\"name\":\"loose\",\"export\":\"run\",\"description\":\"Takes loosely typed arguments.\",\"input_schema\":{\"type\":[\"object\",\"null\"],\"properties\":{\"any\":true,\"never\":false,\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]},\"output_schema\":{\"type\":\"object\",\"properties\":{\"result\":true}}},{\"name\":\"anything\",\"export\":\"run\",\"description\":\"Takes any arguments.\",\"input_schema\":true},{\"name\":\"list_output\",\"export\":\"run\",\"description\":\"Answers a list.\",\"output_schema\":{\"type\":\"array\",\"items\":true}},{\"name\":\"scalar\",\"export\":\"run\",\"description\":\"Takes a string, which MCP cannot send.\",\"input_schema\":{\"type\":\"string\"}},{\"name\":\"never\",\"export\":\"run\",\"description\":\"Takes nothing at all.\",\"input_schema\":false}]}")

  ;; describe: the tools above, as one JSON document.
  (func (export "describe") (result i32)
    (global.set $heap (i32.const 4096))
    (call $output (i32.const 16) (i32.const 700))
    (i32.const 0))

  ;; run: outputs {}.
  (func (export "run") (result i32)
    (global.set $heap (i32.const 4096))
    (call $output (i32.const 0) (i32.const 2))
    (i32.const 0))
)
