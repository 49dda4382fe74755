#!/usr/bin/env bash
# Builds the example skill's script guests/examples/skills/wordfreq/scripts/wordfreq.wasm
# (a WASI command: a Rust binary) with the Rust toolchain scripts/rust-target.sh
# finds. --offline: the crate has no dependencies; Cargo.lock is committed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
eval "$(../../scripts/rust-target.sh)"
RUSTFLAGS="--remap-path-prefix=$(pwd)=skillhost-guest" \
	RUSTC="$RUSTC" "$CARGO" build --release --target "$RUST_TARGET" --offline --locked -p wordfreq
out="$here/../../../examples/skills/wordfreq/scripts/wordfreq.wasm"
cp "target/$RUST_TARGET/release/wordfreq.wasm" "$out"
echo "built $out ($(wc -c <"$out") bytes)"
