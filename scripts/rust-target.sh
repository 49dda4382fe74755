#!/bin/sh
# rust-target.sh finds a Rust toolchain that builds WebAssembly for
# skillhost and prints, for eval, RUSTC, CARGO and RUST_TARGET:
#
#   eval "$(scripts/rust-target.sh)"
#   RUSTC="$RUSTC" RUSTDOC="$RUSTDOC" "$CARGO" build --release --target "$RUST_TARGET"
#
# RUSTDOC is the rustdoc beside that rustc (cargo test runs doctests with
# it). It prefers the rustc on PATH (a rustup toolchain) when it has a WASI
# standard library — wasm32-wasip1 (Rust 1.78 and later), else the older
# name wasm32-wasi — and falls back to Debian's /usr/bin/rustc with
# wasm32-wasi (apt-get install rustc cargo libstd-rust-dev-wasm32).
# RUST_TARGET set in the environment picks the target (wasm32-wasip1,
# wasm32-wasi, or wasm32-unknown-unknown for a tool that uses no WASI).
set -eu

has_target() { # rustc target
	sysroot=$("$1" --print sysroot 2>/dev/null) || return 1
	[ -d "$sysroot/lib/rustlib/$2/lib" ]
}

want=${RUST_TARGET:-}
for rustc in "$(command -v rustc 2>/dev/null || true)" /usr/bin/rustc; do
	[ -n "$rustc" ] && [ -x "$rustc" ] || continue
	cargo="$(dirname "$rustc")/cargo"
	[ -x "$cargo" ] || cargo=cargo
	for target in ${want:-wasm32-wasip1 wasm32-wasi}; do
		if has_target "$rustc" "$target"; then
			rustdoc="$(dirname "$rustc")/rustdoc"
			[ -x "$rustdoc" ] || rustdoc=rustdoc
			printf 'RUSTC=%s\nRUSTDOC=%s\nCARGO=%s\nRUST_TARGET=%s\n' "$rustc" "$rustdoc" "$cargo" "$target"
			exit 0
		fi
	done
done
echo "rust-target.sh: no Rust toolchain here builds ${want:-wasm32-wasip1 or wasm32-wasi}:" >&2
echo "  with rustup: rustup target add ${want:-wasm32-wasip1}" >&2
echo "  on Debian 12: apt-get install rustc cargo libstd-rust-dev-wasm32 lld-14 (wasm32-wasi)" >&2
exit 1
