//! Tests of the typed layer: the schemas derive(JsonSchema) writes, the
//! describe document (a golden file; UPDATE_GOLDEN=1 rewrites it) and the
//! decoding a typed export does.

use serde::{Deserialize, Serialize};
use skillhost_guest::typed::{describe, invoke, tool, JsonSchema};
use skillhost_guest::Error;

/// How loud to be.
#[derive(Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Volume {
    Quiet,
    VeryLoud,
    #[serde(rename = "max")]
    Maximum,
}

/// The input of greet.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GreetIn {
    /// Who to greet.
    name: String,
    /// How many times (default 1).
    times: Option<u32>,
    #[serde(default)]
    volume: Option<Volume>,
    #[serde(rename = "tags")]
    labels: Vec<String>,
    #[serde(default)]
    extra: std::collections::BTreeMap<String, f64>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GreetOut {
    greeting_text: String,
    count: usize,
}

/// Greet someone,
/// politely.
#[tool(idempotent, category = "text", tags = "demo, greeting")]
fn greet(input: GreetIn) -> Result<GreetOut, Error> {
    if input.name.is_empty() {
        return Err(Error::invalid_input("name is empty"));
    }
    let mut g = format!("hello {}", input.name);
    if input.volume == Some(Volume::VeryLoud) {
        g = g.to_uppercase();
    }
    let n = input.times.unwrap_or(1) as usize;
    Ok(GreetOut { greeting_text: vec![g; n].join(" "), count: n + input.labels.len() * 0 + input.extra.len() * 0 })
}

#[derive(Deserialize, JsonSchema)]
pub struct PostIn {
    url: String,
}

/// Post a message.
#[tool(side_effects, requires_network, requires_filesystem)]
fn post(input: PostIn) -> Result<(), Error> {
    Err(Error::unavailable(format!("no network to reach {}", input.url)))
}

describe!(greet, post);

fn pretty(doc: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(doc).expect("describe is JSON");
    serde_json::to_string_pretty(&v).unwrap() + "\n"
}

#[test]
fn describe_golden() {
    let got = pretty(&description());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/testdata/describe.golden.json");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &got).unwrap();
    }
    let want = std::fs::read_to_string(path).expect("golden file (UPDATE_GOLDEN=1 writes it)");
    assert_eq!(want, got, "describe differs from {} (UPDATE_GOLDEN=1 rewrites it)", path);
}

#[test]
fn schemas_follow_serde() {
    let s = GreetIn::json_schema();
    assert_eq!(s["required"], serde_json::json!(["name", "tags"]));
    assert_eq!(s["additionalProperties"], serde_json::json!(false));
    assert_eq!(s["properties"]["volume"]["enum"], serde_json::json!(["quiet", "very_loud", "max"]));
    assert_eq!(s["properties"]["times"], serde_json::json!({"type": "integer", "minimum": 0, "description": "How many times (default 1)."}));
    let o = GreetOut::json_schema();
    assert!(o["properties"].get("greetingText").is_some(), "{}", o);
    assert!(o.get("additionalProperties").is_none());
}

#[test]
fn invoke_decodes_and_reports() {
    assert_eq!(
        invoke(greet, r#"{"name":"Ada","times":2,"volume":"very_loud","tags":[]}"#).unwrap(),
        r#"{"greetingText":"HELLO ADA HELLO ADA","count":2}"#
    );
    let err = invoke(greet, r#"{"name":"Ada"}"#).unwrap_err();
    assert_eq!(err.code, "invalid_input");
    assert!(err.message.contains("missing field `tags`"), "{}", err.message);
    let err = invoke(greet, r#"{"name":"Ada","tags":[],"nick":"x"}"#).unwrap_err();
    assert!(err.message.contains("unknown field `nick`"), "{}", err.message);
    let err = invoke(greet, r#"{"name":"Ada","tags":[],"volume":"shout"}"#).unwrap_err();
    assert!(err.message.contains("unknown variant `shout`"), "{}", err.message);
    assert_eq!(invoke(greet, r#"{"name":"","tags":[]}"#), Err(Error::invalid_input("name is empty")));
    assert_eq!(invoke(post, "").unwrap_err().code, "invalid_input");
    assert_eq!(invoke(post, r#"{"url":"http://x"}"#).unwrap_err().code, "unavailable");
    // The table describe! builds runs the same.
    let t = tools();
    let g = t.iter().find(|t| t.name == "greet").unwrap();
    assert_eq!((g.invoke)(br#"{"name":"B","tags":[]}"#).unwrap(), br#"{"greetingText":"hello B","count":1}"#.to_vec());
}
