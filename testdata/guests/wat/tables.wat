;; tables.wat: grows a table in a loop, to see whether the host bounds the
;; host memory a table can take.
;;   grow: table.grow by the decimal input's count of elements per step
;;         (default 1048576) until a grow fails or 4096 steps are done;
;;         outputs the final table size in decimal.
;; Build: make -C testdata/guests (runs: wat2wasm wat/tables.wat -o wat/tables.wasm).
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (memory (export "memory") 1)
  (table $t 0 externref)

  (func $input_u32 (param $def i32) (result i32)
    (local $i i64) (local $n i64) (local $v i32) (local $c i32)
    (local.set $n (call $input_length))
    (if (i64.eqz (local.get $n)) (then (return (local.get $def))))
    (block $done
      (loop $next
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (local.set $c (i32.sub (call $input_load_u8 (local.get $i)) (i32.const 48)))
        (br_if $done (i32.gt_u (local.get $c) (i32.const 9)))
        (local.set $v (i32.add (i32.mul (local.get $v) (i32.const 10)) (local.get $c)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $next)))
    (local.get $v))

  (func $output_u32 (param $v i32)
    (local $p i32) (local $n i32) (local $off i64) (local $i i32)
    (local.set $p (i32.const 64))
    (loop $digit
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $digit (local.get $v)))
    (local.set $n (i32.sub (i32.const 64) (local.get $p)))
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $n))))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (local.get $p) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (call $output_set (local.get $off) (i64.extend_i32_u (local.get $n))))

  (func (export "grow") (result i32)
    (local $step i32) (local $k i32)
    (local.set $step (call $input_u32 (i32.const 1048576)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (i32.const 4096)))
        (br_if $done (i32.eq (table.grow $t (ref.null extern) (local.get $step)) (i32.const -1)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next)))
    (call $output_u32 (table.size $t))
    (i32.const 0)))
