;; state.wat: keeps state in a mutable global, in linear memory and in a
;; grown memory, to show whether a call sees what an earlier call wrote.
;;   bump: adds 1 to the global $count and to the i64 at address 2048,
;;         and outputs count*1000 + word in decimal: 1001 in a fresh
;;         instance, 2002 on the second call of a reused one.
;;   grow: grows memory by one page and outputs the new page count.
;; Build: make -C testdata/guests (runs: wat2wasm wat/state.wat -o wat/state.wasm).
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (global $count (mut i64) (i64.const 0))

  ;; $output_u64 sets the call's output to v in decimal (digits built
  ;; backwards at 1024..1043, then copied to kernel memory).
  (func $output_u64 (param $v i64)
    (local $i i32) (local $off i64) (local $n i32) (local $j i32)
    (local.set $i (i32.const 1044))
    (loop $digit
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (local.get $i)
        (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (local.get $v) (i64.const 10)))))
      (local.set $v (i64.div_u (local.get $v) (i64.const 10)))
      (br_if $digit (i64.ne (local.get $v) (i64.const 0))))
    (local.set $n (i32.sub (i32.const 1044) (local.get $i)))
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $n))))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
        (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $j)))
          (i32.load8_u (i32.add (local.get $i) (local.get $j))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $copy)))
    (call $output_set (local.get $off) (i64.extend_i32_u (local.get $n))))

  (func (export "bump") (result i32)
    (global.set $count (i64.add (global.get $count) (i64.const 1)))
    (i64.store (i32.const 2048) (i64.add (i64.load (i32.const 2048)) (i64.const 1)))
    (call $output_u64 (i64.add (i64.mul (global.get $count) (i64.const 1000)) (i64.load (i32.const 2048))))
    (i32.const 0))

  (func (export "grow") (result i32)
    (drop (memory.grow (i32.const 1)))
    (call $output_u64 (i64.extend_i32_u (memory.size)))
    (i32.const 0)))
