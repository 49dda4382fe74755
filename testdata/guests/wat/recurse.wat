;; recurse.wat: recurse calls itself without end; the wasm call stack
;; overflows and the call traps. The host must survive it.
;; Build: make -C testdata/guests (runs: wat2wasm wat/recurse.wat -o wat/recurse.wasm).
(module
  (memory (export "memory") 1)
  (func $deeper (param $depth i64) (result i64)
    (i64.add (call $deeper (i64.add (local.get $depth) (i64.const 1))) (i64.const 1)))
  (func (export "recurse") (result i32)
    (drop (call $deeper (i64.const 0)))
    (i32.const 0))
)
