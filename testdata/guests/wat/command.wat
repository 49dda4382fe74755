;; command.wat: a WASI command module, as Go or TinyGo build one without
;; -buildmode=c-shared: it exports _start and a tool export, and no
;; _initialize. A pack listing its "run" export is refused by validate and
;; at load, with an error naming the flag.
;; Build: make -C testdata/guests (runs: wat2wasm wat/command.wat -o wat/command.wasm).
(module
  (memory (export "memory") 1)
  (func (export "_start"))
  ;; run traps as a Go export called before the runtime started does.
  (func (export "run") (result i32)
    unreachable)
)
