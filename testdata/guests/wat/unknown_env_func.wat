;; unknown_env_func.wat: imports extism:host/env.not_a_function, a name the
;; Extism ABI does not define. A host must refuse it when loading.
;; Build: make -C testdata/guests (runs: wat2wasm wat/unknown_env_func.wat -o wat/unknown_env_func.wasm).
(module
  (import "extism:host/env" "not_a_function" (func $nope (param i64) (result i64)))
  (memory (export "memory") 1)
  (func (export "run") (result i32)
    (drop (call $nope (i64.const 0)))
    (i32.const 0))
)
