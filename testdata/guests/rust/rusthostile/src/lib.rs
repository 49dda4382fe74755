//! rusthostile is a hostile Rust guest (a cdylib for WASI) for skillhost's
//! limit and capability tests, the twin of testdata/guests/go/gohostile:
//! every export follows the Extism convention (no parameters, an i32
//! result, input and output through the host's kernel).
//!
//! Build: make -C testdata/guests rust (rust/rusthostile/build.sh).

use skillhost_guest::{http_request, input_str, output, HttpRequest};
use std::io::Write;

static mut COUNTER: u64 = 0;

/// spin loops forever on integer arithmetic without calling out: only an
/// interrupting host can stop it.
#[no_mangle]
pub extern "C" fn spin() -> i32 {
    loop {
        // Volatile, so the loop is neither removed nor assumed to end.
        unsafe {
            let c = std::ptr::read_volatile(std::ptr::addr_of!(COUNTER));
            std::ptr::write_volatile(std::ptr::addr_of_mut!(COUNTER), c.wrapping_add(1));
        }
    }
}

/// alloc_bomb keeps 1 MiB blocks, touching every 4 KiB page, until the
/// allocator cannot grow the memory; Rust then aborts (unreachable).
#[no_mangle]
pub extern "C" fn alloc_bomb() -> i32 {
    let mut keep: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut b = vec![0u8; 1 << 20];
        for i in (0..b.len()).step_by(4096) {
            b[i] = 1;
        }
        keep.push(b);
    }
}

/// fs_escape reads the file named by the input and outputs its content,
/// or "error: " and the error; it returns 0 either way.
#[no_mangle]
pub extern "C" fn fs_escape() -> i32 {
    let path = input_str().unwrap_or_default();
    match std::fs::read(&path) {
        Ok(b) => output(&b),
        Err(e) => output(format!("error: {}", e).as_bytes()),
    }
    0
}

/// sleep sleeps for the input number of milliseconds and outputs "slept".
#[no_mangle]
pub extern "C" fn sleep() -> i32 {
    let ms: u64 = input_str().ok().and_then(|s| s.trim().parse().ok()).unwrap_or(1000);
    std::thread::sleep(std::time::Duration::from_millis(ms));
    output(b"slept");
    0
}

/// http_get sends a GET to the input URL through the host and outputs the
/// status code.
#[no_mangle]
pub extern "C" fn http_get() -> i32 {
    let url = input_str().unwrap_or_default();
    let res = http_request(&HttpRequest::get(&url), None);
    output(format!("{}", res.status).as_bytes());
    0
}

/// panic panics; with panic = "abort" that is a wasm unreachable trap.
#[no_mangle]
pub extern "C" fn panic() -> i32 {
    let v: Vec<u8> = Vec::new();
    let i = input_str().map(|s| s.len()).unwrap_or(0) + 3;
    v[i] as i32
}

/// stdout_flood writes 1 MiB lines to stdout forever.
#[no_mangle]
pub extern "C" fn stdout_flood() -> i32 {
    let line = "x".repeat(1 << 20);
    let mut out = std::io::stdout();
    loop {
        let _ = writeln!(out, "{}", line);
    }
}
