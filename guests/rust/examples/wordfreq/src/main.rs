//! wordfreq is an example skill script: a WASI command module that counts
//! the words of its stdin (or of `--text`) and prints the most frequent,
//! one "count word" a line. Flags: `--top N` (default 10), `--min-length N`
//! (default 1), `--text TEXT`. A bad flag exits with status 2 and says why
//! on stderr. It is the Rust twin of guests/go/examples/wordfreq.

use std::collections::HashMap;
use std::io::Read;
use std::process::exit;

fn fail(msg: &str) -> ! {
    eprintln!("wordfreq: {}", msg);
    exit(2)
}

fn number(flag: &str, value: Option<String>) -> usize {
    match value.as_deref().map(str::parse::<usize>) {
        Some(Ok(n)) => n,
        _ => fail(&format!("{} needs a whole number", flag)),
    }
}

fn main() {
    let mut top = 10;
    let mut min_len = 1;
    let mut text: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--top" => top = number("--top", args.next()),
            "--min-length" => min_len = number("--min-length", args.next()),
            "--text" => text = Some(args.next().unwrap_or_else(|| fail("--text needs a value"))),
            other => fail(&format!("unknown flag {}", other)),
        }
    }
    if top < 1 {
        fail("--top must be at least 1");
    }
    let input = match text {
        Some(t) if !t.is_empty() => t,
        _ => {
            let mut s = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut s) {
                eprintln!("wordfreq: reading stdin: {}", e);
                exit(1);
            }
            s
        }
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for w in input
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && w.chars().count() >= min_len)
    {
        *counts.entry(w.to_string()).or_insert(0) += 1;
    }
    let mut words: Vec<(String, usize)> = counts.into_iter().collect();
    words.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    for (w, n) in words.into_iter().take(top) {
        println!("{} {}", n, w);
    }
}
