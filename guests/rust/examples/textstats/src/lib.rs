//! textstats is the small Rust guest skillhost uses for benchmarks and for
//! comparing its host with the Extism go-sdk:
//!
//! - `noop` returns 0 at once, without touching input or output;
//! - `echo` outputs its input bytes unchanged;
//! - `count_vowels` counts the vowels in its UTF-8 input, like the Extism
//!   demo, and outputs `{"count":N,"total":M,"vowels":"aeiouAEIOU"}`, where
//!   `vowels` is the config value "vowels" (default "aeiouAEIOU") and
//!   `total` adds N to the var "total" (8 little-endian bytes), so it grows
//!   across calls while the host keeps the instance's vars.

use skillhost_guest::{config, json_string, tool, tool_bytes, var_get, var_set, Error};

const VOWELS: &str = "aeiouAEIOU";

/// noop is the cheapest possible export: no host calls at all.
#[no_mangle]
pub extern "C" fn noop() -> i32 {
    0
}

tool_bytes!(echo, |input: &[u8]| -> Result<Vec<u8>, Error> { Ok(input.to_vec()) });

tool!(count_vowels, |input: &str| -> Result<String, Error> {
    let vowels = config("vowels").unwrap_or_else(|| VOWELS.to_string());
    let count = input.chars().filter(|c| vowels.contains(*c)).count() as u64;

    let mut total = 0u64;
    if let Some(v) = var_get("total") {
        if v.len() == 8 {
            let mut word = [0u8; 8];
            word.copy_from_slice(&v);
            total = u64::from_le_bytes(word);
        }
    }
    total += count;
    var_set("total", &total.to_le_bytes());

    Ok(format!("{{\"count\":{},\"total\":{},\"vowels\":{}}}", count, total, json_string(&vowels)))
});
