#!/usr/bin/env bash
# Builds rusthostile.wasm beside this script with the Rust toolchain
# scripts/rust-target.sh finds. --offline: the only dependency is the
# skillhost-guest crate by path; Cargo.lock is committed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
eval "$(../../../../scripts/rust-target.sh)"
RUSTFLAGS="--remap-path-prefix=$(cd ../../../.. && pwd)=skillhost" \
	RUSTC="$RUSTC" "$CARGO" build --release --target "$RUST_TARGET" --offline
cp "target/$RUST_TARGET/release/rusthostile.wasm" rusthostile.wasm
echo "built $here/rusthostile.wasm ($(wc -c <rusthostile.wasm) bytes)"
