//! The typed layer (feature `typed`): tools as functions over serde types,
//! with their JSON Schemas derived from the types and a `describe` export,
//! so a pack's `pack.yaml` needs no hand-written `tools:` entry.
//!
//! ```ignore
//! use serde::{Deserialize, Serialize};
//! use skillhost_guest::typed::{describe, tool, JsonSchema};
//! use skillhost_guest::Error;
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! pub struct ShoutIn {
//!     /// The text to shout.
//!     text: String,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! pub struct ShoutOut {
//!     text: String,
//! }
//!
//! /// Upper-case a text.
//! #[tool(idempotent, category = "text")]
//! fn shout(input: ShoutIn) -> Result<ShoutOut, Error> {
//!     Ok(ShoutOut { text: input.text.to_uppercase() })
//! }
//!
//! describe!(shout);
//! ```
//!
//! Why schemas are derived from the types rather than declared beside the
//! function: the types are what serde reads, so a derived schema cannot
//! drift from the decoding (see RATIONALE.md).

use std::collections::{BTreeMap, HashMap};

use serde::de::DeserializeOwned;
use serde::Serialize;
pub use serde_json;
pub use skillhost_guest_derive::{tool, JsonSchema};

use crate::{input, output, Error, ABI_VERSION};

/// JsonSchema is a type's JSON Schema, as serde_json encodes and decodes
/// it. `#[derive(JsonSchema)]` writes it for structs and unit enums.
pub trait JsonSchema {
    fn json_schema() -> serde_json::Value;
}

fn typed(t: &str) -> serde_json::Value {
    serde_json::json!({ "type": t })
}

macro_rules! schema_of {
    ($t:expr; $($ty:ty),*) => {
        $(impl JsonSchema for $ty {
            fn json_schema() -> serde_json::Value { typed($t) }
        })*
    };
}
schema_of!("string"; String, str, char);
schema_of!("boolean"; bool);
schema_of!("integer"; i8, i16, i32, i64, isize);
schema_of!("number"; f32, f64);

macro_rules! unsigned {
    ($($ty:ty),*) => {
        $(impl JsonSchema for $ty {
            fn json_schema() -> serde_json::Value { serde_json::json!({"type": "integer", "minimum": 0}) }
        })*
    };
}
unsigned!(u8, u16, u32, u64, usize);

impl<T: JsonSchema + ?Sized> JsonSchema for &T {
    fn json_schema() -> serde_json::Value {
        T::json_schema()
    }
}

impl<T: JsonSchema> JsonSchema for Option<T> {
    /// An Option is its element's schema: the field is left out of
    /// required, and null is not offered to a model.
    fn json_schema() -> serde_json::Value {
        T::json_schema()
    }
}

impl<T: JsonSchema> JsonSchema for Vec<T> {
    fn json_schema() -> serde_json::Value {
        serde_json::json!({ "type": "array", "items": T::json_schema() })
    }
}

impl<T: JsonSchema> JsonSchema for [T] {
    fn json_schema() -> serde_json::Value {
        Vec::<T>::json_schema()
    }
}

impl<T: JsonSchema> JsonSchema for HashMap<String, T> {
    fn json_schema() -> serde_json::Value {
        serde_json::json!({ "type": "object", "additionalProperties": T::json_schema() })
    }
}

impl<T: JsonSchema> JsonSchema for BTreeMap<String, T> {
    fn json_schema() -> serde_json::Value {
        HashMap::<String, T>::json_schema()
    }
}

impl JsonSchema for serde_json::Value {
    /// Any JSON value.
    fn json_schema() -> serde_json::Value {
        serde_json::json!({})
    }
}

impl JsonSchema for () {
    /// No output: null.
    fn json_schema() -> serde_json::Value {
        typed("null")
    }
}

/// ToolInfo is what `describe` reports of one tool, and how to run it
/// natively. `#[tool]` writes it.
pub struct ToolInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: serde_json::Value,
    pub output_schema: serde_json::Value,
    pub category: &'static str,
    pub tags: &'static [&'static str],
    pub idempotent: bool,
    pub side_effects: bool,
    pub requires_network: bool,
    pub requires_filesystem: bool,
    /// invoke runs the tool on JSON arguments, as its export does.
    pub invoke: fn(&[u8]) -> Result<Vec<u8>, Error>,
}

/// description is the JSON document the `describe` export returns for
/// tools: the ABI version and each tool, sorted by name.
pub fn description(tools: &[ToolInfo]) -> String {
    let mut list: Vec<&ToolInfo> = tools.iter().collect();
    list.sort_by_key(|t| t.name);
    let tools: Vec<serde_json::Value> = list
        .iter()
        .map(|t| {
            let mut o = serde_json::Map::new();
            o.insert("name".into(), t.name.into());
            o.insert("export".into(), t.name.into());
            if !t.description.is_empty() {
                o.insert("description".into(), t.description.into());
            }
            o.insert("input_schema".into(), t.input_schema.clone());
            o.insert("output_schema".into(), t.output_schema.clone());
            if !t.tags.is_empty() {
                o.insert("tags".into(), t.tags.iter().map(|s| serde_json::Value::from(*s)).collect());
            }
            if !t.category.is_empty() {
                o.insert("category".into(), t.category.into());
            }
            for (k, v) in [
                ("side_effects", t.side_effects),
                ("idempotent", t.idempotent),
                ("requires_network", t.requires_network),
                ("requires_filesystem", t.requires_filesystem),
            ] {
                if v {
                    o.insert(k.into(), true.into());
                }
            }
            serde_json::Value::Object(o)
        })
        .collect();
    serde_json::json!({ "abi": ABI_VERSION, "tools": tools }).to_string()
}

/// invoke_bytes runs f on JSON arguments as a tool's export does: empty
/// input reads as `{}`, input that does not decode into I is an
/// `invalid_input` error saying why (serde names the field), and the
/// output is O encoded as JSON.
pub fn invoke_bytes<I, O, F>(f: F, input: &[u8]) -> Result<Vec<u8>, Error>
where
    I: DeserializeOwned,
    O: Serialize,
    F: FnOnce(I) -> Result<O, Error>,
{
    let trimmed = match input.iter().position(|b| !b.is_ascii_whitespace()) {
        Some(_) => input,
        None => b"{}",
    };
    let args: I = serde_json::from_slice(trimmed).map_err(|e| Error::invalid_input(format!("invalid arguments: {}", e)))?;
    let out = f(args)?;
    serde_json::to_vec(&out).map_err(|e| Error::guest(format!("encoding the output: {}", e)))
}

/// invoke runs a tool on JSON arguments natively, as its export would,
/// without a host: the typed layer's test helper (the Go SDK's
/// skill.Invoke). Host services are not available in a native test.
pub fn invoke<I, O, F>(f: F, args: &str) -> Result<String, Error>
where
    I: DeserializeOwned,
    O: Serialize,
    F: FnOnce(I) -> Result<O, Error>,
{
    invoke_bytes(f, args.as_bytes()).map(|b| String::from_utf8(b).expect("serde_json writes UTF-8"))
}

/// run is the body of a typed tool's export: it reads the call's input,
/// runs f and sets the output or the error; it returns 0 or 1.
pub fn run<I, O, F>(f: F) -> i32
where
    I: DeserializeOwned,
    O: Serialize,
    F: FnOnce(I) -> Result<O, Error>,
{
    match invoke_bytes(f, &input()) {
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

/// run_describe is the body of the `describe` export `describe!` writes.
pub fn run_describe(tools: &[ToolInfo]) -> i32 {
    output(description(tools).as_bytes());
    0
}

/// call_tool calls another tool of the run through the host with typed
/// arguments and result; the module's manifest must request it
/// (`request.tools`).
pub fn call_tool<A: Serialize, R: DeserializeOwned>(name: &str, args: &A) -> Result<R, Error> {
    let args = serde_json::to_string(args).map_err(|e| Error::invalid_input(format!("encoding the arguments: {}", e)))?;
    let out = crate::tool_call(name, &args)?;
    serde_json::from_str(&out).map_err(|e| Error::guest(format!("the result of {}: {}", name, e)))
}

/// call_capability calls a host service (`request.services`) with typed
/// arguments and result.
pub fn call_capability<A: Serialize, R: DeserializeOwned>(id: &str, args: &A) -> Result<R, Error> {
    let args = serde_json::to_string(args).map_err(|e| Error::invalid_input(format!("encoding the arguments: {}", e)))?;
    let out = crate::capability_call(id, &args)?;
    serde_json::from_str(&out).map_err(|e| Error::guest(format!("the result of {}: {}", id, e)))
}

/// var_get_json reads a var written by var_set_json; None when unset or
/// not a T.
pub fn var_get_json<T: DeserializeOwned>(key: &str) -> Option<T> {
    crate::var_get(key).and_then(|b| serde_json::from_slice(&b).ok())
}

/// var_set_json stores value as JSON in the var key.
pub fn var_set_json<T: Serialize>(key: &str, value: &T) -> Result<(), Error> {
    let b = serde_json::to_vec(value).map_err(|e| Error::guest(format!("encoding var {}: {}", key, e)))?;
    crate::var_set(key, &b);
    Ok(())
}

/// describe!(tool, ...) writes the module's `describe` export, listing the
/// `#[tool]` functions named, and a native function `description()` that
/// returns the same document (for tests).
#[macro_export]
macro_rules! describe {
    ($($tool:ident),* $(,)?) => {
        /// The tools `describe` reports.
        pub fn tools() -> ::std::vec::Vec<$crate::typed::ToolInfo> {
            vec![$($tool::__skillhost_info()),*]
        }

        /// The document the `describe` export returns.
        pub fn description() -> ::std::string::String {
            $crate::typed::description(&tools())
        }

        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn describe() -> i32 {
            $crate::typed::run_describe(&tools())
        }
    };
}
pub use crate::describe;
