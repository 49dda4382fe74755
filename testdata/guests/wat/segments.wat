;; segments.wat: state outside linear memory and globals that a call can
;; change: a table and a passive data segment. The host must not hand such
;; a change to the next call.
;;   set_table: table.set 0 to $one (the table starts empty).
;;   call_table: call_indirect through slot 0; outputs its result, or
;;               traps when the slot is empty (as in a fresh instance).
;;   drop_data: data.drop of the passive segment.
;;   init_data: memory.init of the passive segment's 4 bytes to 256 and
;;              outputs them ("seg!"); traps once the segment was dropped.
;; Build: make -C testdata/guests (runs: wat2wasm wat/segments.wat -o wat/segments.wasm).
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (type $i32 (func (result i32)))
  (table $t 1 funcref)
  (elem declare func $one)
  (data $seg "seg!")

  (func $one (result i32) (i32.const 49))

  ;; $out sets the output to n bytes at p.
  (func $out (param $p i32) (param $n i32)
    (local $off i64) (local $i i32)
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $n))))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (local.get $p) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (call $output_set (local.get $off) (i64.extend_i32_u (local.get $n))))

  (func (export "set_table") (result i32)
    (table.set $t (i32.const 0) (ref.func $one))
    (i32.const 0))

  (func (export "call_table") (result i32)
    (i32.store8 (i32.const 0) (call_indirect $t (type $i32) (i32.const 0)))
    (call $out (i32.const 0) (i32.const 1))
    (i32.const 0))

  (func (export "drop_data") (result i32)
    (data.drop $seg)
    (i32.const 0))

  (func (export "init_data") (result i32)
    (memory.init $seg (i32.const 256) (i32.const 0) (i32.const 4))
    (call $out (i32.const 256) (i32.const 4))
    (i32.const 0)))
