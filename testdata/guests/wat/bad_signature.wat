;; bad_signature.wat: imports extism:host/env.alloc with the wrong type
;; (i32) -> i32 instead of (i64) -> i64. A host must refuse it when loading.
;; Build: make -C testdata/guests (runs: wat2wasm wat/bad_signature.wat -o wat/bad_signature.wasm).
(module
  (import "extism:host/env" "alloc" (func $alloc (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "run") (result i32)
    (drop (call $alloc (i32.const 16)))
    (i32.const 0))
)
