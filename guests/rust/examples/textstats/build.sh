#!/usr/bin/env bash
# Builds textstats.wasm beside this script with Debian's Rust toolchain
# (scripts/setup.sh installs it). --offline: the crate has no dependencies
# and crates.io may be unreachable; Cargo.lock is committed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
# Remap the checkout path so the module does not depend on where it was built.
RUSTFLAGS="--remap-path-prefix=$(pwd)=skillhost-guest" \
	RUSTC=/usr/bin/rustc /usr/bin/cargo build --release --target wasm32-wasi --offline --locked -p textstats
cp target/wasm32-wasi/release/textstats.wasm "$here/textstats.wasm"
echo "built $here/textstats.wasm ($(wc -c <"$here/textstats.wasm") bytes)"
