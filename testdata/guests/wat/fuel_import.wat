;; fuel_import.wat: imports skillhost:fuel.refuel, the function the host adds
;; when it rewrites a module for metering. A guest importing it itself could
;; hand itself fuel; a host must refuse it when loading.
;; Build: make -C testdata/guests (runs: wat2wasm wat/fuel_import.wat -o wat/fuel_import.wasm).
(module
  (import "skillhost:fuel" "refuel" (func $refuel (result i64)))
  (func (export "run") (result i32)
    (drop (call $refuel))
    (i32.const 0)))
