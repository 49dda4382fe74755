#!/usr/bin/env bash
# Builds textstats.wasm beside this script with the Rust toolchain
# scripts/rust-target.sh finds (a rustup one with wasm32-wasip1, else
# Debian's with wasm32-wasi; scripts/setup.sh installs Debian's).
# --offline: the crate has no dependencies and crates.io may be
# unreachable; Cargo.lock is committed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
eval "$(../../scripts/rust-target.sh)"
# Remap the checkout path so the module does not depend on where it was built.
RUSTFLAGS="--remap-path-prefix=$(pwd)=skillhost-guest" \
	RUSTC="$RUSTC" "$CARGO" build --release --target "$RUST_TARGET" --offline --locked -p textstats
cp "target/$RUST_TARGET/release/textstats.wasm" "$here/textstats.wasm"
echo "built $here/textstats.wasm ($(wc -c <"$here/textstats.wasm") bytes)"
