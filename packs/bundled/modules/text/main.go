// Command text is the bundled "text" tool module: pure text utilities that
// need no capabilities (slugify, word_count, case_convert, text_diff,
// regex_extract, regex_replace).
//
// The tools are ordinary Go and are tested natively; exports.go (wasip1
// only) holds the Wasm exports. Build with ./build.sh.
package main

func main() {}
