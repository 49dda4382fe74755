;; start_spin.wat: a module whose start function spins forever. A host must
;; stop it at the call's deadline (on the metered runtime and on the
;; close-on-context-done fallback alike) and keep serving other calls.
;; Build: make -C testdata/guests (runs: wat2wasm wat/start_spin.wat -o wat/start_spin.wasm).
(module
  (func $spin (loop $l (br $l)))
  (start $spin)
  (func (export "run") (result i32) (i32.const 0)))
