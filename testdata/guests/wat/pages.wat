;; pages.wat: dirties linear memory page by page, to show that a restore
;; brings back every byte however much of the memory a call wrote. Every
;; export first outputs a checksum of the whole memory, its size and the
;; global $calls, as the call found them (the same on every call in fresh
;; state), then writes:
;;   touch_one:  one byte in one 4 KiB page;
;;   touch_all:  a word in every 4 KiB page, the last one included;
;;   grow:       grows the memory by two pages, then writes as touch_all;
;;   random:     fills 8 KiB with WASI random_get, which the host writes
;;               into memory (on Linux the kernel may write it directly);
;;   touch_none: nothing but the global.
;; Every export also adds 1 to $calls.
;; Build: make -C testdata/guests (runs: wat2wasm wat/pages.wat -o wat/pages.wasm).
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (memory (export "memory") 16)
  (global $calls (mut i64) (i64.const 0))
  (data (i32.const 196608) "seed bytes that a restore must bring back")
  (data (i32.const 1048000) "near the end of the memory")

  ;; $output_u64 sets the call's output to v in decimal (digits built
  ;; backwards at 1024..1043, then copied to kernel memory).
  (func $output_u64 (param $v i64)
    (local $i i32) (local $off i64) (local $n i32) (local $j i32)
    (local.set $i (i32.const 1044))
    (loop $digit
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (local.get $i)
        (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (local.get $v) (i64.const 10)))))
      (local.set $v (i64.div_u (local.get $v) (i64.const 10)))
      (br_if $digit (i64.ne (local.get $v) (i64.const 0))))
    (local.set $n (i32.sub (i32.const 1044) (local.get $i)))
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $n))))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
        (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $j)))
          (i32.load8_u (i32.add (local.get $i) (local.get $j))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $copy)))
    (call $output_set (local.get $off) (i64.extend_i32_u (local.get $n))))

  ;; $checksum weighs every word of the memory by its address, and adds
  ;; the memory's size and $calls, then counts the call.
  (func $checksum (result i64)
    (local $p i32) (local $end i32) (local $sum i64)
    (local.set $end (i32.shl (memory.size) (i32.const 16)))
    (block $done
      (loop $word
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $sum (i64.add (local.get $sum)
          (i64.mul (i64.load (local.get $p)) (i64.extend_i32_u (i32.add (local.get $p) (i32.const 1))))))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $word)))
    (local.set $sum (i64.add (local.get $sum) (i64.mul (i64.extend_i32_u (memory.size)) (i64.const 1000003))))
    (local.set $sum (i64.add (local.get $sum) (i64.mul (global.get $calls) (i64.const 7919))))
    (global.set $calls (i64.add (global.get $calls) (i64.const 1)))
    (local.get $sum))

  ;; $scribble writes a word at every 4 KiB of the memory.
  (func $scribble
    (local $p i32) (local $end i32)
    (local.set $end (i32.shl (memory.size) (i32.const 16)))
    (block $done
      (loop $page
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (i64.store (i32.add (local.get $p) (i32.const 8)) (i64.const 0x5eed5eed5eed5eed))
        (local.set $p (i32.add (local.get $p) (i32.const 4096)))
        (br $page))))

  (func (export "touch_none") (result i32)
    (call $output_u64 (call $checksum))
    (i32.const 0))

  (func (export "touch_one") (result i32)
    (call $output_u64 (call $checksum))
    (i32.store8 (i32.const 200000) (i32.const 0x77))
    (i32.const 0))

  (func (export "touch_all") (result i32)
    (call $output_u64 (call $checksum))
    (call $scribble)
    (i32.const 0))

  (func (export "grow") (result i32)
    (call $output_u64 (call $checksum))
    (drop (memory.grow (i32.const 2)))
    (call $scribble)
    (i32.const 0))

  (func (export "random") (result i32)
    (call $output_u64 (call $checksum))
    (drop (call $random_get (i32.const 300000) (i32.const 8192)))
    (i32.const 0)))
