;; loop.wat: spin never returns and never calls the host: a bare wasm loop
;; that only an interrupting host (close-on-context-done or a killed process)
;; can stop.
;; Build: make -C testdata/guests (runs: wat2wasm wat/loop.wat -o wat/loop.wasm).
(module
  (memory (export "memory") 1)
  (func (export "spin") (result i32)
    (loop $forever (br $forever))
    (i32.const 0))
)
