//! The {% .Name %} tool pack: a WebAssembly module whose tools are Rust
//! functions over serde types. skillhost init wrote it; `make test` builds,
//! tests and checks it.

use serde::{Deserialize, Serialize};
use skillhost_guest::typed::{describe, tool, JsonSchema};
use skillhost_guest::Error;

/// The tool's input: its JSON Schema is derived from the type (doc
/// comments become descriptions).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountWordsIn {
    /// The text to count the words of.
    text: String,
    /// Skip words shorter than this.
    #[serde(default)]
    min_length: Option<usize>,
}

#[derive(Serialize, JsonSchema)]
pub struct CountWordsOut {
    words: usize,
    longest: String,
}

/// Count the words of a text and find its longest word.
#[tool(idempotent, category = "text", tags = "text, words")]
fn count_words(input: CountWordsIn) -> Result<CountWordsOut, Error> {
    let min = input.min_length.unwrap_or(0);
    let mut out = CountWordsOut { words: 0, longest: String::new() };
    for w in input.text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        if w.chars().count() < min {
            continue;
        }
        out.words += 1;
        if w.chars().count() > out.longest.chars().count() {
            out.longest = w.to_string();
        }
    }
    if out.words == 0 {
        return Err(Error::invalid_input("the text has no words"));
    }
    Ok(out)
}

// The describe export: the tools this module has.
describe!(count_words);

#[cfg(test)]
mod tests {
    use super::*;
    use skillhost_guest::typed::invoke;

    // The tool runs natively, as its export would: no module, no host.
    #[test]
    fn counts_words() {
        assert_eq!(invoke(count_words, r#"{"text":"Hello, wide world!"}"#).unwrap(), r#"{"words":3,"longest":"Hello"}"#);
        assert_eq!(invoke(count_words, r#"{"text":"..."}"#).unwrap_err().code, "invalid_input");
        assert!(invoke(count_words, r#"{"txt":"typo"}"#).unwrap_err().message.contains("unknown field"));
    }

    #[test]
    fn describes_the_tool() {
        let d: serde_json::Value = serde_json::from_str(&description()).unwrap();
        assert_eq!(d["tools"][0]["name"], "count_words");
        assert_eq!(d["tools"][0]["input_schema"]["required"], serde_json::json!(["text"]));
    }
}
