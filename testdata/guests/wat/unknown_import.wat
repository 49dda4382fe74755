;; unknown_import.wat: imports env.evil, a module no host provides. A host
;; must refuse it when loading, before any export runs.
;; Build: make -C testdata/guests (runs: wat2wasm wat/unknown_import.wat -o wat/unknown_import.wasm).
(module
  (import "env" "evil" (func $evil (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "run") (result i32)
    (call $evil (i32.const 0)))
)
