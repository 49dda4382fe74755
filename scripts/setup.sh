#!/usr/bin/env bash
# setup.sh installs what skillhost's tests and guest builds need on a fresh
# Debian 12 machine: wabt (wat2wasm), Debian's Rust toolchain with the wasm32
# standard libraries and the crate sources the Rust guests use, TinyGo
# (scripts/install-tinygo.sh, about 2 minutes the first time), staticcheck,
# and the official MCP TypeScript SDK that the real-client test drives (Node
# and npm from Debian when there is no node on PATH). It is idempotent: a
# second run checks, prints one line per step and changes nothing.
#
# Needs root (or passwordless sudo) for apt. Safe with CI=true and no stdin.
# Measured on a 2-core machine: about 80 s the first time (apt ~15 s, compiling
# staticcheck ~63 s), 0.3 s after that.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

# STATICCHECK_VERSION is pinned so every machine reports the same findings.
# v0.8.2 (staticcheck 2026.2.2) requires and supports Go 1.26.
STATICCHECK_VERSION="${STATICCHECK_VERSION:-v0.8.2}"
# lld-14 is only a Recommends of libstd-rust-dev-wasm32, and we install
# without recommends: rustc links wasm32 through /usr/bin/rust-lld -> lld-14.
# The librust-*-dev packages are Debian's sources of the crates the Rust
# SDK's typed layer and the bundled Rust module use (serde, serde_json, syn,
# quote): cargo reads them through the source replacement written in step 3,
# as crates.io is not reachable from every machine.
APT_PACKAGES=(wabt rustc cargo libstd-rust-dev-wasm32 lld-14
	librust-serde-dev librust-serde-derive-dev librust-serde-json-dev
	librust-syn-dev librust-quote-dev librust-proc-macro2-dev)
# Node runs the MCP TypeScript SDK's client in cmd/skillhost's real-client
# test. A node already on PATH (Node 20 or later, from anywhere) is used as
# it is; without one, Debian's nodejs and npm are installed.
if ! command -v node >/dev/null 2>&1; then
	APT_PACKAGES+=(nodejs npm)
fi

step() { printf 'setup: %s\n' "$*"; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo -n"
	fi
fi

# 1. Debian packages.
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
	status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
	if [ "$status" != "install ok installed" ]; then
		missing+=("$pkg")
	fi
done
if [ "${#missing[@]}" -eq 0 ]; then
	step "apt packages present: ${APT_PACKAGES[*]}"
else
	if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
		step "missing apt packages ${missing[*]}: run this script as root" >&2
		exit 1
	fi
	step "apt-get update (missing: ${missing[*]})"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null
	step "apt-get install ${missing[*]}"
	$SUDO env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
fi

# 2. Check the guest toolchains answer. Debian's rustc is called by path: a
# rustup rustc earlier on PATH has no wasm32 targets.
step "wat2wasm $(wat2wasm --version)"
step "rustc $(/usr/bin/rustc --version | cut -d' ' -f2) (/usr/bin/rustc, cargo $(/usr/bin/cargo --version | cut -d' ' -f2))"
if [ ! -d "$(/usr/bin/rustc --print sysroot)/lib/rustlib/wasm32-wasi" ]; then
	step "rustc has no wasm32-wasi target: is libstd-rust-dev-wasm32 installed?" >&2
	exit 1
fi
if [ ! -x "$(readlink -f /usr/bin/rust-lld)" ]; then
	step "/usr/bin/rust-lld does not resolve to a linker: is lld-14 installed?" >&2
	exit 1
fi

# 3. Cargo reads crates from Debian's packaged sources for builds inside
# the repository (.cargo/config.toml at its root, not committed: a machine
# with crates.io and no Debian sources does without it).
root="$(cd "$(dirname "$0")/.." && pwd)"
cargo_config="$root/.cargo/config.toml"
if [ -f "$cargo_config" ]; then
	step "cargo source replacement present: $cargo_config"
else
	mkdir -p "$root/.cargo"
	cat >"$cargo_config" <<'TOML'
# Written by scripts/setup.sh: crates come from Debian's packaged sources.
[source.crates-io]
replace-with = "debian-packages"

[source.debian-packages]
directory = "/usr/share/cargo/registry"
TOML
	step "wrote $cargo_config (crates from /usr/share/cargo/registry)"
fi

# 4. TinyGo, for the TinyGo guest tests: built once per machine, then kept
# (scripts/install-tinygo.sh does nothing when it is installed).
bash "$root/scripts/install-tinygo.sh"

# 5. staticcheck, into $(go env GOPATH)/bin.
if ! command -v go >/dev/null 2>&1; then
	step "go is not on PATH" >&2
	exit 1
fi
gobin="$(go env GOPATH)/bin"
have=""
if [ -x "$gobin/staticcheck" ]; then
	# "staticcheck 2026.2.2 (0.8.2)" -> v0.8.2
	have="$("$gobin/staticcheck" -version 2>/dev/null | sed -n 's/.*(v\{0,1\}\([^)]*\)).*/v\1/p')"
fi
if [ "$have" = "$STATICCHECK_VERSION" ]; then
	step "staticcheck $have present in $gobin"
else
	step "go install honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION (had: ${have:-none})"
	GOBIN="$gobin" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" </dev/null
	step "staticcheck $("$gobin/staticcheck" -version) in $gobin"
fi
case ":$PATH:" in
*":$gobin:"*) ;;
*) step "note: add $gobin to PATH to run staticcheck" ;;
esac

# 6. The official MCP TypeScript SDK, at the version
# testdata/mcp-ts-client/package-lock.json pins, for the real-client test
# (cmd/skillhost/ts_client_test.go). npm ci installs it from that lock file
# into the user's cache, as Go's modules go to its module cache, and again
# only when the lock file changes. SKILLHOST_MCP_TS_CLIENT_DIR overrides
# the folder; the test reads the same variable.
ts_lock="$root/testdata/mcp-ts-client/package-lock.json"
ts_dir="${SKILLHOST_MCP_TS_CLIENT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skillhost/node-mcp-client}"
if ! command -v npm >/dev/null 2>&1; then
	step "node $(node --version) is on PATH without npm: install npm for it" >&2
	exit 1
fi
if cmp -s "$ts_lock" "$ts_dir/installed-package-lock.json" &&
	[ -f "$ts_dir/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
	step "MCP TypeScript SDK present in $ts_dir (node $(node --version))"
else
	step "npm ci (MCP TypeScript SDK) into $ts_dir"
	mkdir -p "$ts_dir"
	rm -f "$ts_dir/installed-package-lock.json"
	cp "$root/testdata/mcp-ts-client/package.json" "$ts_lock" "$ts_dir/"
	(cd "$ts_dir" && npm ci --no-audit --no-fund --loglevel=error </dev/null)
	cp "$ts_lock" "$ts_dir/installed-package-lock.json"
	step "MCP TypeScript SDK $(node -p 'require(process.argv[1]).version' "$ts_dir/node_modules/@modelcontextprotocol/sdk/package.json") in $ts_dir"
fi
step "done"
