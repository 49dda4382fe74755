//! textconv: bundled tools written in Rust with skillhost-guest's typed
//! layer — markdown_to_text turns Markdown into plain text, csv_summary
//! describes the columns of a CSV table. The logic is plain functions, so
//! `cargo test` runs it natively.

use serde::{Deserialize, Serialize};
use skillhost_guest::typed::{describe, tool, JsonSchema};
use skillhost_guest::Error;

/// The largest text either tool reads, in bytes.
const MAX_INPUT: usize = 4 << 20;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkdownIn {
    /// The Markdown text.
    markdown: String,
    /// Keep link targets after the link text, as "text (url)" (default true).
    #[serde(default)]
    keep_urls: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
pub struct MarkdownOut {
    /// The text without Markdown syntax.
    text: String,
    /// Words in the text.
    words: usize,
}

/// Convert Markdown to plain text for reading or counting: headings, emphasis, code marks, block quotes, tables and HTML tags are dropped, list items keep a "- " bullet, links become their text (with the URL in parentheses unless keep_urls is false) and images their alt text; code blocks are kept as they are.
#[tool(idempotent, category = "text", tags = "markdown, text, convert")]
fn markdown_to_text(input: MarkdownIn) -> Result<MarkdownOut, Error> {
    if input.markdown.len() > MAX_INPUT {
        return Err(Error::new("limit_exceeded", format!("markdown is {} bytes; at most {} are read", input.markdown.len(), MAX_INPUT)));
    }
    let text = markdown_text(&input.markdown, input.keep_urls.unwrap_or(true));
    let words = text.split_whitespace().count();
    Ok(MarkdownOut { text, words })
}

/// markdown_text converts Markdown to plain text, line by line.
pub fn markdown_text(md: &str, keep_urls: bool) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut fence: Option<String> = None;
    for line in md.lines() {
        let trimmed = line.trim_start();
        if let Some(f) = &fence {
            if trimmed.starts_with(f.as_str()) {
                fence = None;
            } else {
                out.push(line.to_string());
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(trimmed[..3].to_string());
            continue;
        }
        let mut l = trimmed;
        // Thematic breaks and table separators carry no text.
        if !l.is_empty() && l.chars().all(|c| matches!(c, '-' | '*' | '_' | ' ' | '|' | ':' | '=')) && l.len() >= 3 {
            continue;
        }
        while let Some(rest) = l.strip_prefix('>') {
            l = rest.trim_start();
        }
        let hashes = l.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && l[hashes..].starts_with(' ') {
            l = l[hashes..].trim();
        }
        let mut bullet = "";
        if let Some(rest) = l.strip_prefix("- ").or_else(|| l.strip_prefix("* ")).or_else(|| l.strip_prefix("+ ")) {
            bullet = "- ";
            l = rest;
        } else {
            let digits = l.chars().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 && (l[digits..].starts_with(". ") || l[digits..].starts_with(") ")) {
                bullet = "- ";
                l = &l[digits + 2..];
            }
        }
        let mut text = inline_text(l, keep_urls);
        if text.contains('|') && trimmed.starts_with('|') {
            text = text.split('|').map(str::trim).filter(|c| !c.is_empty()).collect::<Vec<_>>().join("\t");
        }
        out.push(format!("{}{}", bullet, text.trim_end()));
    }
    // At most one blank line in a row, none at the ends.
    let mut text = String::new();
    let mut blank = true;
    for l in out {
        if l.trim().is_empty() {
            if !blank {
                text.push('\n');
            }
            blank = true;
            continue;
        }
        text.push_str(&l);
        text.push('\n');
        blank = false;
    }
    text.trim_end().to_string()
}

/// inline_text drops inline Markdown: emphasis and code marks, links and
/// images, HTML tags and backslash escapes.
fn inline_text(s: &str, keep_urls: bool) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() && chars[i + 1].is_ascii_punctuation() => {
                out.push(chars[i + 1]);
                i += 2;
            }
            '*' | '_' | '`' | '~' => i += 1,
            '!' if i + 1 < chars.len() && chars[i + 1] == '[' => i += 1,
            '[' => match link_end(&chars, i) {
                Some((text_end, url_start, url_end)) => {
                    let text: String = chars[i + 1..text_end].iter().collect();
                    let url: String = chars[url_start..url_end].iter().collect();
                    out.push_str(&inline_text(&text, keep_urls));
                    let url = url.split_whitespace().next().unwrap_or("");
                    if keep_urls && !url.is_empty() && url != text {
                        out.push_str(" (");
                        out.push_str(url);
                        out.push(')');
                    }
                    i = url_end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            },
            '<' => match chars[i..].iter().position(|&c| c == '>') {
                Some(n) if n > 1 && (chars[i + 1].is_ascii_alphabetic() || chars[i + 1] == '/') => {
                    let inner: String = chars[i + 1..i + n].iter().collect();
                    if inner.starts_with("http://") || inner.starts_with("https://") {
                        out.push_str(&inner);
                    }
                    i += n + 1;
                }
                _ => {
                    out.push(c);
                    i += 1;
                }
            },
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// link_end finds "[text](url)" starting at the '[' at i: the index of the
/// ']' and the URL's bounds.
fn link_end(chars: &[char], i: usize) -> Option<(usize, usize, usize)> {
    let mut depth = 0;
    let mut j = i;
    while j < chars.len() {
        match chars[j] {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        j += 1;
    }
    if j + 1 >= chars.len() || chars[j + 1] != '(' {
        return None;
    }
    let close = chars[j + 2..].iter().position(|&c| c == ')')? + j + 2;
    Some((j, j + 2, close))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CsvIn {
    /// The CSV text: fields separated by the delimiter, double-quoted when they hold it, a quote or a line break.
    csv: String,
    /// The field delimiter, one character (default ",").
    #[serde(default)]
    delimiter: Option<String>,
    /// Whether the first row names the columns (default true).
    #[serde(default)]
    header: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
pub struct CsvOut {
    /// Data rows, the header not counted.
    rows: usize,
    columns: Vec<Column>,
}

/// What one column holds.
#[derive(Serialize, JsonSchema)]
pub struct Column {
    name: String,
    /// "number" when every non-empty value is a number, else "text".
    kind: String,
    /// Rows where the column is empty or missing.
    empty: usize,
    /// Distinct non-empty values, counted up to 1000.
    distinct: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mean: Option<f64>,
    /// Up to three of the most frequent values.
    top: Vec<String>,
}

/// Summarise a CSV table: the row count and, for each column, its name, whether it holds numbers or text, empty and distinct counts, minimum, maximum and mean of numbers, and the most frequent values. Quoted fields (RFC 4180) are read; a row with a different number of fields is an error naming the row.
#[tool(idempotent, category = "data", tags = "csv, table, statistics")]
fn csv_summary(input: CsvIn) -> Result<CsvOut, Error> {
    if input.csv.len() > MAX_INPUT {
        return Err(Error::new("limit_exceeded", format!("csv is {} bytes; at most {} are read", input.csv.len(), MAX_INPUT)));
    }
    let delim = match input.delimiter.as_deref() {
        None | Some("") => ',',
        Some(d) if d.chars().count() == 1 && d != "\"" && d != "\n" => d.chars().next().unwrap(),
        Some(d) => return Err(Error::invalid_input(format!("delimiter {:?} must be one character other than a quote or a line break", d))),
    };
    let rows = parse_csv(&input.csv, delim)?;
    summarise(rows, input.header.unwrap_or(true))
}

/// parse_csv reads RFC 4180 CSV: quoted fields may hold the delimiter,
/// doubled quotes and line breaks.
pub fn parse_csv(s: &str, delim: char) -> Result<Vec<Vec<String>>, Error> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut line = 1;
    let mut chars = s.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                '"' => quoted = false,
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => quoted = true,
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
                line += 1;
                any = false;
            }
            c if c == delim => row.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    if quoted {
        return Err(Error::invalid_input(format!("a quoted field opened before line {} is never closed", line)));
    }
    if any {
        row.push(field);
        rows.push(row);
    }
    Ok(rows)
}

fn summarise(mut rows: Vec<Vec<String>>, header: bool) -> Result<CsvOut, Error> {
    rows.retain(|r| !(r.len() == 1 && r[0].trim().is_empty()));
    if rows.is_empty() {
        return Err(Error::invalid_input("the CSV has no rows"));
    }
    let width = rows[0].len();
    let names: Vec<String> = if header {
        rows.remove(0).into_iter().enumerate().map(|(i, n)| if n.trim().is_empty() { format!("column_{}", i + 1) } else { n.trim().to_string() }).collect()
    } else {
        (1..=width).map(|i| format!("column_{}", i)).collect()
    };
    for (i, r) in rows.iter().enumerate() {
        if r.len() != width {
            let n = i + 1 + usize::from(header);
            return Err(Error::invalid_input(format!("row {} has {} fields, the first row {}", n, r.len(), width)));
        }
    }
    let mut columns = Vec::with_capacity(width);
    for (c, name) in names.into_iter().enumerate() {
        let mut empty = 0;
        let mut nums = Vec::new();
        let mut text = false;
        let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        for r in &rows {
            let v = r[c].trim();
            if v.is_empty() {
                empty += 1;
                continue;
            }
            match v.parse::<f64>() {
                Ok(n) if n.is_finite() => nums.push(n),
                _ => text = true,
            }
            if counts.len() < 1000 || counts.contains_key(v) {
                *counts.entry(v).or_insert(0) += 1;
            }
        }
        let numeric = !text && !nums.is_empty();
        let mut top: Vec<(&str, usize)> = counts.iter().map(|(k, v)| (*k, *v)).collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        columns.push(Column {
            name,
            kind: if numeric { "number" } else { "text" }.to_string(),
            empty,
            distinct: counts.len(),
            min: if numeric { nums.iter().cloned().reduce(f64::min) } else { None },
            max: if numeric { nums.iter().cloned().reduce(f64::max) } else { None },
            mean: if numeric { Some(nums.iter().sum::<f64>() / nums.len() as f64) } else { None },
            top: top.into_iter().take(3).map(|(k, _)| k.to_string()).collect(),
        });
    }
    Ok(CsvOut { rows: rows.len(), columns })
}

describe!(markdown_to_text, csv_summary);

#[cfg(test)]
mod tests {
    use super::*;
    use skillhost_guest::typed::invoke;

    #[test]
    fn markdown() {
        let md = "# Title\n\nSome *bold* and `code` with a [link](https://x.org \"t\") and ![alt](i.png).\n\n- one\n2. two\n> quoted\n\n```\nlet x = *y;\n```\n---\n| a | b |\n|---|---|\n| 1 | 2 |\n<b>html</b> \\*lit\\*";
        assert_eq!(
            markdown_text(md, true),
            "Title\n\nSome bold and code with a link (https://x.org) and alt (i.png).\n\n- one\n- two\nquoted\n\nlet x = *y;\na\tb\n1\t2\nhtml *lit*"
        );
        assert!(markdown_text("[a](b)", false) == "a");
        let out = invoke(markdown_to_text, r#"{"markdown":"**Hello** world"}"#).unwrap();
        assert_eq!(out, r#"{"text":"Hello world","words":2}"#);
        assert_eq!(invoke(markdown_to_text, r#"{"md":"x"}"#).unwrap_err().code, "invalid_input");
    }

    #[test]
    fn csv() {
        let out = invoke(csv_summary, r#"{"csv":"name,age,city\nAda,36,\"London, UK\"\nBob,,Paris\n\"Cy \"\"C\"\"\",40,Paris\n"}"#).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["rows"], 3);
        assert_eq!(v["columns"][1]["kind"], "number");
        assert_eq!(v["columns"][1]["empty"], 1);
        assert_eq!(v["columns"][1]["mean"], 38.0);
        assert_eq!(v["columns"][2]["top"][0], "Paris");
        assert_eq!(v["columns"][0]["top"][0], "Ada");
        assert_eq!(v["columns"][0]["kind"], "text");
        let e = invoke(csv_summary, r#"{"csv":"a,b\n1\n"}"#).unwrap_err();
        assert!(e.message.contains("row 2 has 1 fields"), "{}", e.message);
        let e = invoke(csv_summary, r#"{"csv":"a\n\"open\n"}"#).unwrap_err();
        assert!(e.message.contains("never closed"), "{}", e.message);
        let e = invoke(csv_summary, r#"{"csv":"a;b","delimiter":";;"}"#).unwrap_err();
        assert!(e.message.contains("one character"), "{}", e.message);
        let out = invoke(csv_summary, r#"{"csv":"1;2\n3;4","delimiter":";","header":false}"#).unwrap();
        assert!(out.contains("\"name\":\"column_2\""), "{}", out);
    }
}
