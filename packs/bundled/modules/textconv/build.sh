#!/usr/bin/env bash
# Builds textconv.wasm beside this script (a reactor module: a Rust
# cdylib) with the Rust toolchain scripts/rust-target.sh finds; serde and
# serde_json come from crates.io, or from Debian's packaged sources through
# the source replacement scripts/setup.sh writes (.cargo/config.toml).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
eval "$(../../../../scripts/rust-target.sh)"
RUSTFLAGS="--remap-path-prefix=$(cd ../../../.. && pwd)=skillhost" \
	RUSTC="$RUSTC" "$CARGO" build --release --target "$RUST_TARGET" --offline --locked
cp "target/$RUST_TARGET/release/textconv.wasm" textconv.wasm
echo "built $here/textconv.wasm ($(wc -c <textconv.wasm) bytes)"
