package skillhost

import (
	"embed"
	"io/fs"
)

// guestSDK holds the sources of the guest SDKs: the Go SDK with the
// packages it imports, and the Rust crate.
//
//go:embed abi/*.go internal/goschema/*.go guests/go/skill/*.go guests/go/skill/skilltest/*.go
//go:embed guests/rust/Cargo.toml guests/rust/src/*.rs guests/rust/derive/Cargo.toml guests/rust/derive/src/*.rs
var guestSDK embed.FS

// GuestSDK returns the sources of the guest SDKs as this binary was built
// with them, paths as in the skillhost repository (test files included):
// abi, internal/goschema, guests/go/skill and guests/go/skill/skilltest
// for Go, guests/rust and guests/rust/derive for Rust. skillhost init copies them into a new
// project, so it builds without the SDKs being published.
func GuestSDK() fs.FS { return guestSDK }
