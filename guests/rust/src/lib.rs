//! `skillhost-guest` writes skillhost (and Extism) tools in Rust without any
//! dependency: the Extism host functions are declared here by hand, and the
//! little JSON the contract needs is written and read here too.
//!
//! A tool is an exported function with no parameters that returns an `i32`
//! (0 for success). The [`tool!`] and [`tool_bytes!`] macros write that
//! function for you:
//!
//! ```ignore
//! use skillhost_guest::{tool, Error};
//!
//! tool!(shout, |input: &str| -> Result<String, Error> {
//!     if input.is_empty() {
//!         return Err(Error::invalid_input("nothing to shout"));
//!     }
//!     Ok(input.to_uppercase())
//! });
//! ```
//!
//! Build a tool crate as a `cdylib` for `wasm32-wasi`; see README.md.
//!
//! Offsets passed to and returned by the host address the host's "kernel"
//! memory, not the guest's own linear memory; this crate copies bytes across
//! eight at a time with the `load`/`store` host functions.

use std::fmt;

#[cfg(feature = "typed")]
pub mod typed;

/// The ABI version of the skillhost contract this crate speaks.
pub const ABI_VERSION: &str = "1.0";

/// Raw imports. They are `unsafe` only because they are foreign functions:
/// the host checks every offset it is given.
pub mod sys {
    #[link(wasm_import_module = "extism:host/env")]
    extern "C" {
        pub fn alloc(len: u64) -> u64;
        pub fn free(offset: u64);
        pub fn length(offset: u64) -> u64;
        pub fn load_u8(offset: u64) -> u8;
        pub fn load_u64(offset: u64) -> u64;
        pub fn store_u8(offset: u64, value: u8);
        pub fn store_u64(offset: u64, value: u64);
        pub fn input_length() -> u64;
        pub fn input_load_u8(index: u64) -> u8;
        pub fn input_load_u64(index: u64) -> u64;
        pub fn output_set(offset: u64, len: u64);
        pub fn error_set(offset: u64);
        pub fn config_get(key: u64) -> u64;
        pub fn var_get(key: u64) -> u64;
        pub fn var_set(key: u64, value: u64);
        pub fn http_request(request: u64, body: u64) -> u64;
        pub fn http_status_code() -> i32;
        pub fn log_trace(message: u64);
        pub fn log_debug(message: u64);
        pub fn log_info(message: u64);
        pub fn log_warn(message: u64);
        pub fn log_error(message: u64);
        pub fn get_log_level() -> i32;
    }
    // This crate never calls `free`: hosts disagree on which host functions
    // free the blocks passed to them (go-sdk frees log, var and HTTP
    // arguments itself), and every host reclaims kernel memory after a call.

    #[link(wasm_import_module = "extism:host/user")]
    extern "C" {
        pub fn tool_call(name: u64, args: u64) -> u64;
        pub fn capability_call(id: u64, args: u64) -> u64;
    }
}

// ---- kernel memory ----

/// Copies `data` into a new kernel block and returns its offset.
/// An empty slice gets a zero-length block, whatever offset alloc gives.
pub fn store(data: &[u8]) -> u64 {
    let off = unsafe { sys::alloc(data.len() as u64) };
    let mut chunks = data.chunks_exact(8);
    let mut i = 0u64;
    for c in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(c);
        unsafe { sys::store_u64(off + i, u64::from_le_bytes(word)) };
        i += 8;
    }
    for &b in chunks.remainder() {
        unsafe { sys::store_u8(off + i, b) };
        i += 1;
    }
    off
}

/// Copies the kernel block at `offset` into a vector; 0 gives an empty one.
pub fn load(offset: u64) -> Vec<u8> {
    if offset == 0 {
        return Vec::new();
    }
    let len = unsafe { sys::length(offset) } as usize;
    let mut out = Vec::with_capacity(len);
    let mut i = 0usize;
    while i + 8 <= len {
        let word = unsafe { sys::load_u64(offset + i as u64) };
        out.extend_from_slice(&word.to_le_bytes());
        i += 8;
    }
    while i < len {
        out.push(unsafe { sys::load_u8(offset + i as u64) });
        i += 1;
    }
    out
}

// ---- input, output, errors ----

/// Returns the call's input bytes.
pub fn input() -> Vec<u8> {
    let len = unsafe { sys::input_length() } as usize;
    let mut out = Vec::with_capacity(len);
    let mut i = 0usize;
    while i + 8 <= len {
        let word = unsafe { sys::input_load_u64(i as u64) };
        out.extend_from_slice(&word.to_le_bytes());
        i += 8;
    }
    while i < len {
        out.push(unsafe { sys::input_load_u8(i as u64) });
        i += 1;
    }
    out
}

/// Returns the call's input as text, or an `invalid_input` error when it is
/// not UTF-8.
pub fn input_str() -> Result<String, Error> {
    String::from_utf8(input()).map_err(|_| Error::invalid_input("input is not valid UTF-8"))
}

/// Sets the call's output. A later call replaces it.
pub fn output(data: &[u8]) {
    let off = store(data);
    unsafe { sys::output_set(off, data.len() as u64) };
}

/// Reports a structured failure: error_set with `{"code":...,"message":...}`.
/// Return a non-zero value from the export afterwards (the macros do).
pub fn set_error(code: &str, message: &str) {
    let mut json = String::with_capacity(code.len() + message.len() + 24);
    json.push_str("{\"code\":");
    write_json_string(&mut json, code);
    json.push_str(",\"message\":");
    write_json_string(&mut json, message);
    json.push('}');
    let off = store(json.as_bytes());
    unsafe { sys::error_set(off) };
}

/// A tool failure: one of the codes of the skillhost contract and a message
/// for the model. The host reads the JSON form [`Error::to_json`] writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub code: String,
    pub message: String,
}

impl Error {
    /// Makes an error with any code; prefer the named constructors.
    pub fn new(code: &str, message: impl Into<String>) -> Error {
        Error { code: code.to_string(), message: message.into() }
    }
    /// The arguments did not match what the tool expects.
    pub fn invalid_input(message: impl Into<String>) -> Error {
        Error::new("invalid_input", message)
    }
    /// A named thing does not exist.
    pub fn not_found(message: impl Into<String>) -> Error {
        Error::new("not_found", message)
    }
    /// A service or remote did not answer.
    pub fn unavailable(message: impl Into<String>) -> Error {
        Error::new("unavailable", message)
    }
    /// Any other failure of the guest.
    pub fn guest(message: impl Into<String>) -> Error {
        Error::new("guest_error", message)
    }
    /// Returns `{"code":"...","message":"..."}`.
    pub fn to_json(&self) -> String {
        let mut json = String::new();
        json.push_str("{\"code\":");
        write_json_string(&mut json, &self.code);
        json.push_str(",\"message\":");
        write_json_string(&mut json, &self.message);
        json.push('}');
        json
    }
    /// Reports this error to the host (see [`set_error`]).
    pub fn set(&self) {
        set_error(&self.code, &self.message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

// ---- config, vars, logging ----

/// Returns the operator-configured value of `key`, if any.
pub fn config(key: &str) -> Option<String> {
    let off = unsafe { sys::config_get(store(key.as_bytes())) };
    if off == 0 {
        return None;
    }
    Some(String::from_utf8_lossy(&load(off)).into_owned())
}

/// Returns the value of the var `key`, if set. Vars live as long as the
/// host keeps the instance; a host may start every call with none.
pub fn var_get(key: &str) -> Option<Vec<u8>> {
    let off = unsafe { sys::var_get(store(key.as_bytes())) };
    if off == 0 {
        return None;
    }
    Some(load(off))
}

/// Sets the var `key` to `value`.
pub fn var_set(key: &str, value: &[u8]) {
    let k = store(key.as_bytes());
    let v = store(value);
    unsafe { sys::var_set(k, v) };
}

/// Deletes the var `key`.
pub fn var_remove(key: &str) {
    unsafe { sys::var_set(store(key.as_bytes()), 0) };
}

/// Log levels, in the numbering `get_log_level` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Trace = 0,
    Debug = 1,
    Info = 2,
    Warn = 3,
    Error = 4,
}

/// Logs `msg` at `level`, unless the host drops that level anyway.
pub fn log(level: LogLevel, msg: &str) {
    if (level as i32) < unsafe { sys::get_log_level() } {
        return;
    }
    let off = store(msg.as_bytes());
    unsafe {
        match level {
            LogLevel::Trace => sys::log_trace(off),
            LogLevel::Debug => sys::log_debug(off),
            LogLevel::Info => sys::log_info(off),
            LogLevel::Warn => sys::log_warn(off),
            LogLevel::Error => sys::log_error(off),
        }
    }
}

/// Logs `msg` at info level.
pub fn log_info(msg: &str) {
    log(LogLevel::Info, msg)
}

/// Logs `msg` at debug level.
pub fn log_debug(msg: &str) {
    log(LogLevel::Debug, msg)
}

/// Logs `msg` at warn level.
pub fn log_warn(msg: &str) {
    log(LogLevel::Warn, msg)
}

/// Logs `msg` at error level.
pub fn log_error(msg: &str) {
    log(LogLevel::Error, msg)
}

// ---- HTTP ----

/// An HTTP request for [`http_request`]. The host allows only the hosts the
/// tool's grant names.
#[derive(Clone, Debug, Default)]
pub struct HttpRequest {
    pub url: String,
    /// Empty means GET.
    pub method: String,
    pub headers: Vec<(String, String)>,
}

impl HttpRequest {
    /// A GET request for `url`.
    pub fn get(url: &str) -> HttpRequest {
        HttpRequest { url: url.to_string(), method: "GET".to_string(), headers: Vec::new() }
    }
    /// A request with another method.
    pub fn new(method: &str, url: &str) -> HttpRequest {
        HttpRequest { url: url.to_string(), method: method.to_string(), headers: Vec::new() }
    }
    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> HttpRequest {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
    /// Returns the JSON document http_request expects.
    pub fn to_json(&self) -> String {
        let mut json = String::from("{\"url\":");
        write_json_string(&mut json, &self.url);
        if !self.method.is_empty() {
            json.push_str(",\"method\":");
            write_json_string(&mut json, &self.method);
        }
        if !self.headers.is_empty() {
            json.push_str(",\"headers\":{");
            for (i, (k, v)) in self.headers.iter().enumerate() {
                if i > 0 {
                    json.push(',');
                }
                write_json_string(&mut json, k);
                json.push(':');
                write_json_string(&mut json, v);
            }
            json.push('}');
        }
        json.push('}');
        json
    }
}

/// What [`http_request`] returns.
#[derive(Clone, Debug)]
pub struct HttpResponse {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Sends `req` with an optional body through the host. A refused or failed
/// request usually ends the call with a host error instead of returning.
pub fn http_request(req: &HttpRequest, body: Option<&[u8]>) -> HttpResponse {
    let r = store(req.to_json().as_bytes());
    let b = match body {
        Some(b) => store(b),
        None => 0,
    };
    let off = unsafe { sys::http_request(r, b) };
    let status = unsafe { sys::http_status_code() };
    HttpResponse { status: status.max(0) as u16, body: load(off) }
}

// ---- tool and capability calls ----

/// Calls another tool through the caller's run. `args_json` is the tool's
/// arguments as a JSON value. Returns the tool's output as JSON text, or its
/// error.
pub fn tool_call(name: &str, args_json: &str) -> Result<String, Error> {
    let off = unsafe { sys::tool_call(store(name.as_bytes()), store(args_json.as_bytes())) };
    parse_tool_result(&load(off))
}

/// Asks a host-registered service: like [`tool_call`], with a capability id
/// such as `"kv.get"`.
pub fn capability_call(id: &str, args_json: &str) -> Result<String, Error> {
    let off = unsafe { sys::capability_call(store(id.as_bytes()), store(args_json.as_bytes())) };
    parse_tool_result(&load(off))
}

/// Reads a ToolResult document: `{"output":...,"is_error":false}` or
/// `{"is_error":true,"error":{"code":...,"message":...}}`. The output is
/// returned as raw JSON text ("null" when absent).
pub fn parse_tool_result(doc: &[u8]) -> Result<String, Error> {
    let bad = || Error::new("internal", "malformed tool result from host");
    if doc.is_empty() {
        return Err(Error::new("internal", "empty tool result from host"));
    }
    let mut p = json::Parser::new(doc);
    let mut output: Option<&[u8]> = None;
    let mut is_error = false;
    let mut error: Option<Error> = None;
    p.object(|p, key| {
        match key.as_str() {
            "output" => output = Some(p.raw_value()?),
            "is_error" => is_error = p.boolean()?,
            "error" => {
                let mut e = Error::new("guest_error", "");
                p.object(|p, k| {
                    match k.as_str() {
                        "code" => e.code = p.string()?,
                        "message" => e.message = p.string()?,
                        _ => {
                            p.raw_value()?;
                        }
                    }
                    Some(())
                })?;
                error = Some(e);
            }
            _ => {
                p.raw_value()?;
            }
        }
        Some(())
    })
    .ok_or_else(bad)?;
    if !p.at_end() {
        return Err(bad());
    }
    if is_error {
        return Err(error.unwrap_or_else(|| Error::guest("tool failed")));
    }
    Ok(match output {
        Some(raw) => String::from_utf8_lossy(raw).into_owned(),
        None => "null".to_string(),
    })
}

// ---- JSON ----

/// Appends `s` to `out` as a JSON string literal, escaping quotes,
/// backslashes and control characters.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Returns `s` as a JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_json_string(&mut out, s);
    out
}

/// A minimal JSON reader: enough to take a tool result apart.
pub mod json {
    /// Parser walks a JSON document; every method returns None on bad input.
    pub struct Parser<'a> {
        doc: &'a [u8],
        pos: usize,
    }

    impl<'a> Parser<'a> {
        pub fn new(doc: &'a [u8]) -> Parser<'a> {
            Parser { doc, pos: 0 }
        }

        fn ws(&mut self) {
            while self.pos < self.doc.len() && matches!(self.doc[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            }
        }

        fn peek(&mut self) -> Option<u8> {
            self.ws();
            self.doc.get(self.pos).copied()
        }

        fn eat(&mut self, b: u8) -> Option<()> {
            if self.peek()? == b {
                self.pos += 1;
                Some(())
            } else {
                None
            }
        }

        fn literal(&mut self, word: &[u8]) -> Option<()> {
            self.ws();
            if self.doc[self.pos..].starts_with(word) {
                self.pos += word.len();
                Some(())
            } else {
                None
            }
        }

        /// Reports whether only whitespace is left.
        pub fn at_end(&mut self) -> bool {
            self.ws();
            self.pos == self.doc.len()
        }

        /// Reads `true` or `false`.
        pub fn boolean(&mut self) -> Option<bool> {
            match self.peek()? {
                b't' => self.literal(b"true").map(|_| true),
                b'f' => self.literal(b"false").map(|_| false),
                _ => None,
            }
        }

        fn hex4(&mut self) -> Option<u32> {
            let digits = self.doc.get(self.pos..self.pos + 4)?;
            let s = std::str::from_utf8(digits).ok()?;
            let v = u32::from_str_radix(s, 16).ok()?;
            self.pos += 4;
            Some(v)
        }

        /// Reads a string literal, decoding escapes (surrogate pairs too).
        pub fn string(&mut self) -> Option<String> {
            self.eat(b'"')?;
            let mut out: Vec<u8> = Vec::new();
            loop {
                let b = *self.doc.get(self.pos)?;
                self.pos += 1;
                match b {
                    b'"' => return String::from_utf8(out).ok(),
                    b'\\' => {
                        let e = *self.doc.get(self.pos)?;
                        self.pos += 1;
                        let c = match e {
                            b'"' => '"',
                            b'\\' => '\\',
                            b'/' => '/',
                            b'b' => '\u{8}',
                            b'f' => '\u{c}',
                            b'n' => '\n',
                            b'r' => '\r',
                            b't' => '\t',
                            b'u' => {
                                let hi = self.hex4()?;
                                let code = if (0xd800..0xdc00).contains(&hi) {
                                    if self.doc.get(self.pos..self.pos + 2)? != b"\\u" {
                                        return None;
                                    }
                                    self.pos += 2;
                                    let lo = self.hex4()?;
                                    if !(0xdc00..0xe000).contains(&lo) {
                                        return None;
                                    }
                                    0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                                } else {
                                    hi
                                };
                                char::from_u32(code)?
                            }
                            _ => return None,
                        };
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    b if b < 0x20 => return None,
                    b => out.push(b),
                }
            }
        }

        /// Reads an object, calling `field` with each key; `field` must
        /// consume the value.
        pub fn object<F>(&mut self, mut field: F) -> Option<()>
        where
            F: FnMut(&mut Parser<'a>, String) -> Option<()>,
        {
            self.eat(b'{')?;
            if self.peek()? == b'}' {
                self.pos += 1;
                return Some(());
            }
            loop {
                let key = self.string()?;
                self.eat(b':')?;
                field(self, key)?;
                match self.peek()? {
                    b',' => self.pos += 1,
                    b'}' => {
                        self.pos += 1;
                        return Some(());
                    }
                    _ => return None,
                }
            }
        }

        /// Skips one value of any kind and returns its text.
        pub fn raw_value(&mut self) -> Option<&'a [u8]> {
            self.skip_value(0)
        }

        fn skip_value(&mut self, depth: usize) -> Option<&'a [u8]> {
            if depth > 128 {
                return None;
            }
            let start = {
                self.ws();
                self.pos
            };
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' => {
                    self.object(|p, _| p.skip_value(depth + 1).map(|_| ()))?;
                }
                b'[' => {
                    self.pos += 1;
                    if self.peek()? == b']' {
                        self.pos += 1;
                    } else {
                        loop {
                            self.skip_value(depth + 1)?;
                            match self.peek()? {
                                b',' => self.pos += 1,
                                b']' => {
                                    self.pos += 1;
                                    break;
                                }
                                _ => return None,
                            }
                        }
                    }
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                b'-' | b'0'..=b'9' => {
                    let begin = self.pos;
                    while self.pos < self.doc.len()
                        && matches!(self.doc[self.pos], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                    {
                        self.pos += 1;
                    }
                    std::str::from_utf8(&self.doc[begin..self.pos]).ok()?.parse::<f64>().ok()?;
                }
                _ => return None,
            }
            Some(&self.doc[start..self.pos])
        }
    }
}

// ---- exports ----

/// Runs a text tool body: reads the input as UTF-8, calls `f`, and sets the
/// output or the error. Returns the export's result (0 or 1).
pub fn run_tool<F>(f: F) -> i32
where
    F: FnOnce(&str) -> Result<String, Error>,
{
    let input = match input_str() {
        Ok(s) => s,
        Err(e) => {
            e.set();
            return 1;
        }
    };
    match f(&input) {
        Ok(out) => {
            output(out.as_bytes());
            0
        }
        Err(e) => {
            e.set();
            1
        }
    }
}

/// Runs a bytes tool body: like [`run_tool`] without the UTF-8 check.
pub fn run_tool_bytes<F>(f: F) -> i32
where
    F: FnOnce(&[u8]) -> Result<Vec<u8>, Error>,
{
    let input = input();
    match f(&input) {
        Ok(out) => {
            output(&out);
            0
        }
        Err(e) => {
            e.set();
            1
        }
    }
}

/// Defines an exported tool `name` whose body takes the input as `&str` and
/// returns `Result<String, Error>`: the output text or a reported error.
///
/// ```ignore
/// skillhost_guest::tool!(greet, |name: &str| -> Result<String, Error> {
///     Ok(format!("hello, {}", name))
/// });
/// ```
#[macro_export]
macro_rules! tool {
    ($name:ident, $body:expr) => {
        #[no_mangle]
        pub extern "C" fn $name() -> i32 {
            $crate::run_tool($body)
        }
    };
}

/// Defines an exported tool `name` whose body takes the input as `&[u8]` and
/// returns `Result<Vec<u8>, Error>`.
#[macro_export]
macro_rules! tool_bytes {
    ($name:ident, $body:expr) => {
        #[no_mangle]
        pub extern "C" fn $name() -> i32 {
            $crate::run_tool_bytes($body)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_json_strings() {
        assert_eq!(json_string("a\"b\\c\nd\u{1}é"), "\"a\\\"b\\\\c\\nd\\u0001é\"");
    }

    #[test]
    fn error_json() {
        assert_eq!(
            Error::invalid_input("bad \"arg\"").to_json(),
            "{\"code\":\"invalid_input\",\"message\":\"bad \\\"arg\\\"\"}"
        );
    }

    #[test]
    fn tool_results() {
        assert_eq!(parse_tool_result(b"{\"output\":{\"a\":[1,2,\"x\"]},\"is_error\":false}"), Ok("{\"a\":[1,2,\"x\"]}".to_string()));
        assert_eq!(parse_tool_result(b" {\"is_error\":false} "), Ok("null".to_string()));
        assert_eq!(
            parse_tool_result(b"{\"is_error\":true,\"error\":{\"code\":\"not_found\",\"message\":\"no \\u00e9 \\ud83d\\ude00\"}}"),
            Err(Error::not_found("no é 😀"))
        );
        assert!(parse_tool_result(b"{\"output\":1,").is_err());
        assert!(parse_tool_result(b"{\"output\":1} x").is_err());
        assert!(parse_tool_result(b"").is_err());
    }

    #[test]
    fn http_request_json() {
        let r = HttpRequest::get("http://x/\"q").header("A", "b");
        assert_eq!(r.to_json(), "{\"url\":\"http://x/\\\"q\",\"method\":\"GET\",\"headers\":{\"A\":\"b\"}}");
    }
}
