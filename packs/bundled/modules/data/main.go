// Command data is the bundled "data" tool module: JSON querying and
// formatting, time zone conversion, encodings and hashes. It needs no
// capabilities; time zone data is compiled in (time/tzdata).
//
// The tools are ordinary Go and are tested natively; exports.go (wasip1
// only) holds the Wasm exports. Build with ./build.sh.
package main

func main() {}
