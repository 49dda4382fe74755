;; fresh.wat: probes of the state one call could leave to the next in a
;; restored instance. Every export is snapshot-safe (no table or segment
;; writes), so the host reuses instances of this module; each probe writes
;; or disturbs one piece of state, and a second probe looks for it.
;;   echo:        outputs its input (a secret now sits in kernel memory).
;;   scan_kernel: reads all of kernel memory with load_u8 (bounded by
;;                memory_bytes) before allocating anything, and outputs how
;;                many non-zero bytes it saw: 0 in a fresh instance.
;;   close_fd:    fd_close(N) (N the decimal input); outputs the errno.
;;   prestat:     fd_prestat_get(N); outputs the errno (0: N is a preopen).
;;   open_leak:   path_open(3, "leak.txt") read-only and never closes it;
;;                outputs the new descriptor, or 1000 + the errno.
;;   read_fd:     fd_read(N) of 1 byte; outputs the errno (8: EBADF).
;;   renumber:    opens leak.txt and renumbers it onto descriptor 1
;;                (stdout); outputs the errno.
;;   say:         writes "hello\n" to stdout (fd 1); outputs the errno.
;;   exit0:       proc_exit(0).
;;   set_var:     var_set("k", input). get_var: outputs var "k" or "none".
;;   fetch:       http_request GET of the URL in its input; outputs status.
;;   http_status: outputs http_status_code() of the last request.
;;   log_many:    N (decimal input, default 2000000) log_info calls of one
;;                byte each; outputs N.
;;   alloc_many:  N (default 2000000) alloc(1) calls, never freed; outputs N.
;; Build: make -C testdata/guests (runs: wat2wasm wat/fresh.wat -o wat/fresh.wasm).
(module
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_renumber" (func $fd_renumber (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "extism:host/env" "memory_bytes" (func $memory_bytes (result i64)))
  (import "extism:host/env" "var_set" (func $var_set (param i64 i64)))
  (import "extism:host/env" "var_get" (func $var_get (param i64) (result i64)))
  (import "extism:host/env" "http_request" (func $http_request (param i64 i64) (result i64)))
  (import "extism:host/env" "http_status_code" (func $http_status_code (result i32)))
  (import "extism:host/env" "log_info" (func $log_info (param i64)))
  ;; ---- Extism kernel imports and helpers (identical in every fixture) ----
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "load_u64" (func $load_u64 (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "input_load_u64" (func $input_load_u64 (param i64) (result i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))

  ;; Guest memory: 0..1023 constants, 1024..1087 number scratch,
  ;; 4096.. a bump heap that every export resets on entry.
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 4096))

  ;; $malloc returns n bytes of guest memory, growing the memory when needed
  ;; and trapping when it cannot.
  (func $malloc (param $n i32) (result i32)
    (local $p i32) (local $end i64) (local $have i64)
    (local.set $p (global.get $heap))
    (local.set $end (i64.add (i64.extend_i32_u (local.get $p)) (i64.extend_i32_u (local.get $n))))
    (local.set $have (i64.shl (i64.extend_i32_u (memory.size)) (i64.const 16)))
    (if (i64.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq
              (memory.grow (i32.wrap_i64 (i64.shr_u
                (i64.add (i64.sub (local.get $end) (local.get $have)) (i64.const 65535))
                (i64.const 16))))
              (i32.const -1))
          (then unreachable))))
    (global.set $heap (i32.wrap_i64 (local.get $end)))
    (local.get $p))

  ;; $input_len is the input length; inputs past 2 GiB trap.
  (func $input_len (result i32)
    (local $n i64)
    (local.set $n (call $input_length))
    (if (i64.gt_u (local.get $n) (i64.const 0x7fffffff)) (then unreachable))
    (i32.wrap_i64 (local.get $n)))

  ;; $read_input copies len input bytes to dst: 8 at a time, then the tail.
  (func $read_input (param $dst i32) (param $len i32)
    (local $i i32)
    (block $done8
      (loop $copy8
        (br_if $done8 (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $len)))
        (i64.store (i32.add (local.get $dst) (local.get $i))
          (call $input_load_u64 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $copy8)))
    (block $done1
      (loop $copy1
        (br_if $done1 (i32.ge_u (local.get $i) (local.get $len)))
        (i32.store8 (i32.add (local.get $dst) (local.get $i))
          (call $input_load_u8 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy1))))

  ;; $load copies len bytes of the kernel block at off to dst.
  (func $load (param $off i64) (param $dst i32) (param $len i32)
    (local $i i32)
    (block $done8
      (loop $copy8
        (br_if $done8 (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $len)))
        (i64.store (i32.add (local.get $dst) (local.get $i))
          (call $load_u64 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $copy8)))
    (block $done1
      (loop $copy1
        (br_if $done1 (i32.ge_u (local.get $i) (local.get $len)))
        (i32.store8 (i32.add (local.get $dst) (local.get $i))
          (call $load_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy1))))

  ;; $store copies len bytes at src into a new kernel block and returns its
  ;; offset (0 for no bytes). It traps when alloc returns 0.
  (func $store (param $src i32) (param $len i32) (result i64)
    (local $off i64) (local $i i32)
    (if (i32.eqz (local.get $len)) (then (return (i64.const 0))))
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $len))))
    (if (i64.eqz (local.get $off)) (then unreachable))
    (block $done8
      (loop $copy8
        (br_if $done8 (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $len)))
        (call $store_u64 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i64.load (i32.add (local.get $src) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $copy8)))
    (block $done1
      (loop $copy1
        (br_if $done1 (i32.ge_u (local.get $i) (local.get $len)))
        (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (local.get $src) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy1)))
    (local.get $off))

  ;; $output sets the call's output to len bytes at src.
  (func $output (param $src i32) (param $len i32)
    (call $output_set (call $store (local.get $src) (local.get $len)) (i64.extend_i32_u (local.get $len))))

  ;; $error sets the call's error to len bytes at src.
  (func $error (param $src i32) (param $len i32)
    (call $error_set (call $store (local.get $src) (local.get $len))))

  ;; $fmt_u64 writes v in decimal at dst and returns the number of digits.
  (func $fmt_u64 (param $v i64) (param $dst i32) (result i32)
    (local $i i32) (local $n i32)
    (local.set $i (i32.const 1044))
    (loop $digit
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (local.get $i)
        (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (local.get $v) (i64.const 10)))))
      (local.set $v (i64.div_u (local.get $v) (i64.const 10)))
      (br_if $digit (i64.ne (local.get $v) (i64.const 0))))
    (local.set $n (i32.sub (i32.const 1044) (local.get $i)))
    (memory.copy (local.get $dst) (local.get $i) (local.get $n))
    (local.get $n))

  ;; $output_u64 sets the call's output to v in decimal.
  (func $output_u64 (param $v i64)
    (call $output (i32.const 1056) (call $fmt_u64 (local.get $v) (i32.const 1056))))

  ;; $parse_u64 reads the decimal digits at the start of len bytes at p
  ;; (stopping at the first non-digit; wraps on overflow).
  (func $parse_u64 (param $p i32) (param $len i32) (result i64)
    (local $v i64) (local $c i32) (local $end i32)
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (i32.sub (i32.load8_u (local.get $p)) (i32.const 48)))
        (br_if $done (i32.gt_u (local.get $c) (i32.const 9)))
        (local.set $v (i64.add (i64.mul (local.get $v) (i64.const 10)) (i64.extend_i32_u (local.get $c))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next)))
    (local.get $v))

  ;; $input_u64 parses the input as a decimal number, or returns def when the
  ;; input is empty.
  (func $input_u64 (param $def i64) (result i64)
    (local $len i32) (local $p i32)
    (local.set $len (call $input_len))
    (if (i32.eqz (local.get $len)) (then (return (local.get $def))))
    (local.set $p (call $malloc (local.get $len)))
    (call $read_input (local.get $p) (local.get $len))
    (call $parse_u64 (local.get $p) (local.get $len)))
  ;; ---- end of shared helpers ----
  (data (i32.const 0) "leak.txt")
  (data (i32.const 16) "hello\n")
  (data (i32.const 32) "k")
  (data (i32.const 40) "none")
  (data (i32.const 48) "{\"method\":\"GET\",\"url\":\"")
  ;; iovec for fd_read/fd_write at 512: {buf, len}; results at 528.

  (func (export "echo") (result i32)
    (local $len i32) (local $p i32)
    (global.set $heap (i32.const 4096))
    (local.set $len (call $input_len))
    (local.set $p (call $malloc (local.get $len)))
    (call $read_input (local.get $p) (local.get $len))
    (call $output (local.get $p) (local.get $len))
    (i32.const 0))

  (func (export "scan_kernel") (result i32)
    (local $i i64) (local $n i64) (local $count i64)
    (global.set $heap (i32.const 4096))
    (local.set $n (call $memory_bytes))
    (block $done
      (loop $next
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (if (call $load_u8 (local.get $i))
          (then (local.set $count (i64.add (local.get $count) (i64.const 1)))))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $next)))
    (call $output_u64 (local.get $count))
    (i32.const 0))

  (func (export "close_fd") (result i32)
    (global.set $heap (i32.const 4096))
    (call $output_u64 (i64.extend_i32_u
      (call $fd_close (i32.wrap_i64 (call $input_u64 (i64.const 3))))))
    (i32.const 0))

  (func (export "prestat") (result i32)
    (global.set $heap (i32.const 4096))
    (call $output_u64 (i64.extend_i32_u
      (call $fd_prestat_get (i32.wrap_i64 (call $input_u64 (i64.const 3))) (i32.const 528))))
    (i32.const 0))

  (func $open (result i32)
    (local $errno i32)
    (local.set $errno (call $path_open (i32.const 3) (i32.const 0) (i32.const 0) (i32.const 8)
      (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 528)))
    (if (local.get $errno) (then (return (i32.sub (i32.const -1000) (local.get $errno)))))
    (i32.load (i32.const 528)))

  (func (export "open_leak") (result i32)
    (local $fd i32)
    (global.set $heap (i32.const 4096))
    (local.set $fd (call $open))
    (if (i32.lt_s (local.get $fd) (i32.const 0))
      (then (local.set $fd (i32.sub (i32.const 0) (local.get $fd)))))
    (call $output_u64 (i64.extend_i32_u (local.get $fd)))
    (i32.const 0))

  (func (export "read_fd") (result i32)
    (global.set $heap (i32.const 4096))
    (i32.store (i32.const 512) (i32.const 600))
    (i32.store (i32.const 516) (i32.const 1))
    (call $output_u64 (i64.extend_i32_u
      (call $fd_read (i32.wrap_i64 (call $input_u64 (i64.const 4))) (i32.const 512) (i32.const 1) (i32.const 528))))
    (i32.const 0))

  (func (export "renumber") (result i32)
    (global.set $heap (i32.const 4096))
    (call $output_u64 (i64.extend_i32_u (call $fd_renumber (call $open) (i32.const 1))))
    (i32.const 0))

  (func (export "say") (result i32)
    (global.set $heap (i32.const 4096))
    (i32.store (i32.const 512) (i32.const 16))
    (i32.store (i32.const 516) (i32.const 6))
    (call $output_u64 (i64.extend_i32_u
      (call $fd_write (i32.const 1) (i32.const 512) (i32.const 1) (i32.const 528))))
    (i32.const 0))

  (func (export "exit0") (result i32)
    (call $proc_exit (i32.const 0))
    (i32.const 0))

  (func (export "set_var") (result i32)
    (local $len i32) (local $p i32)
    (global.set $heap (i32.const 4096))
    (local.set $len (call $input_len))
    (local.set $p (call $malloc (local.get $len)))
    (call $read_input (local.get $p) (local.get $len))
    (call $var_set (call $store (i32.const 32) (i32.const 1)) (call $store (local.get $p) (local.get $len)))
    (i32.const 0))

  (func (export "get_var") (result i32)
    (local $off i64) (local $len i32) (local $p i32)
    (global.set $heap (i32.const 4096))
    (local.set $off (call $var_get (call $store (i32.const 32) (i32.const 1))))
    (if (i64.eqz (local.get $off))
      (then (call $output (i32.const 40) (i32.const 4)) (return (i32.const 0))))
    (local.set $len (i32.wrap_i64 (call $length (local.get $off))))
    (local.set $p (call $malloc (local.get $len)))
    (call $load (local.get $off) (local.get $p) (local.get $len))
    (call $output (local.get $p) (local.get $len))
    (i32.const 0))

  (func (export "fetch") (result i32)
    (local $len i32) (local $p i32)
    (global.set $heap (i32.const 4096))
    (local.set $len (call $input_len))
    ;; {"method":"GET","url":"<input>"}
    (local.set $p (call $malloc (i32.add (local.get $len) (i32.const 25))))
    (memory.copy (local.get $p) (i32.const 48) (i32.const 23))
    (call $read_input (i32.add (local.get $p) (i32.const 23)) (local.get $len))
    (i32.store8 (i32.add (local.get $p) (i32.add (local.get $len) (i32.const 23))) (i32.const 34))
    (i32.store8 (i32.add (local.get $p) (i32.add (local.get $len) (i32.const 24))) (i32.const 125))
    (drop (call $http_request (call $store (local.get $p) (i32.add (local.get $len) (i32.const 25))) (i64.const 0)))
    (call $output_u64 (i64.extend_i32_u (call $http_status_code)))
    (i32.const 0))

  (func (export "http_status") (result i32)
    (global.set $heap (i32.const 4096))
    (call $output_u64 (i64.extend_i32_u (call $http_status_code)))
    (i32.const 0))

  (func (export "log_many") (result i32)
    (local $n i64) (local $i i64) (local $off i64)
    (global.set $heap (i32.const 4096))
    (local.set $n (call $input_u64 (i64.const 2000000)))
    (block $done
      (loop $next
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (local.set $off (call $alloc (i64.const 1)))
        (call $store_u8 (local.get $off) (i32.const 76))
        (call $log_info (local.get $off))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $next)))
    (call $output_u64 (local.get $n))
    (i32.const 0))

  (func (export "alloc_many") (result i32)
    (local $n i64) (local $i i64)
    (global.set $heap (i32.const 4096))
    (local.set $n (call $input_u64 (i64.const 2000000)))
    (block $done
      (loop $next
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (drop (call $alloc (i64.const 1)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $next)))
    (call $output_u64 (local.get $n))
    (i32.const 0)))
