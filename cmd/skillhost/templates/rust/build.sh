#!/bin/sh
# build.sh builds {% .Name %}.wasm (or, with "test", runs the unit tests
# natively) with the Rust toolchain rust-target.sh finds: a rustup one with
# wasm32-wasip1, else Debian's rustc with wasm32-wasi. Where Debian's
# packaged crate sources are installed (apt-get install librust-serde-dev
# librust-serde-json-dev librust-syn-dev librust-quote-dev), cargo reads
# them instead of crates.io.
set -eu
cd "$(dirname "$0")"
eval "$(sh ./rust-target.sh)"
offline=""
if ls -d /usr/share/cargo/registry/serde-1.* >/dev/null 2>&1; then
	mkdir -p .cargo
	[ -f .cargo/config.toml ] || printf '[source.crates-io]\nreplace-with = "debian-packages"\n\n[source.debian-packages]\ndirectory = "/usr/share/cargo/registry"\n' >.cargo/config.toml
	offline="--offline"
fi
if [ "${1:-}" = test ]; then
	RUSTC="$RUSTC" RUSTDOC="$RUSTDOC" "$CARGO" test $offline
	exit
fi
RUSTC="$RUSTC" "$CARGO" build $offline --release --target "$RUST_TARGET"
cp "${CARGO_TARGET_DIR:-target}/$RUST_TARGET/release/{% .Crate %}.wasm" {% .Name %}.wasm
echo "built {% .Name %}.wasm ($(wc -c <{% .Name %}.wasm) bytes, $RUST_TARGET)"
