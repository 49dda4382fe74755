#!/usr/bin/env bash
# install-tinygo.sh installs TinyGo v0.42.0 on Debian 12 (bookworm), built
# from the Go module proxy against Debian's LLVM 19, into
# /usr/local/lib/tinygo with the command linked at /usr/local/bin/tinygo.
#
# Usage: scripts/install-tinygo.sh        (as root, or with passwordless sudo)
#        FORCE=1 scripts/install-tinygo.sh   rebuild even if installed
#        PREFIX=/opt/tinygo-prefix ...        install elsewhere
#
# It is idempotent: when $PREFIX/bin/tinygo already reports v0.42.0 it
# prints one line and changes nothing. A first run takes about 2 minutes on
# 2 cores (apt ~30 s, compiling TinyGo ~1 min).
#
# Why it is built this way:
#   - `go install github.com/tinygo-org/tinygo@v0.42.0` fails, so the module
#     is fetched with `go mod download` and a writable copy is built.
#   - tinygo.org/x/espflasher is refused by the proxy; its only import is in
#     main.go, for flashing ESP32 boards, so that function is stubbed out.
#   - The module zip has no git submodules: src/net (an empty folder serves:
#     TinyGo merges it with GOROOT's net, so net/url and friends work; only
#     guests importing package net itself fail) and the wasi-libc and
#     compiler-rt sources. Instead of building those, the wasip1 target file
#     links Debian's prebuilt wasi-libc and libclang-rt-19-dev-wasm32.
#   - Debian 12 ships LLVM 19 in bookworm main (1:19.1.7-3~deb12u1); no
#     backports are needed. TinyGo is built with the llvm19 tag and links
#     LLVM dynamically.
#
# Build guests with:
#   tinygo build -target=wasip1 -buildmode=c-shared -scheduler=none -o x.wasm .
# (-scheduler=none: the default asyncify scheduler adds ~0.5 ms per call.)
set -euo pipefail

VERSION=0.42.0
LLVM=19
PREFIX=${PREFIX:-/usr/local}
TINYGOROOT=$PREFIX/lib/tinygo
BIN=$PREFIX/bin/tinygo

log() { printf 'install-tinygo: %s\n' "$*" >&2; }

if [[ -z "${FORCE:-}" && -x "$BIN" ]] && "$BIN" version 2>/dev/null | grep -q "tinygo version $VERSION "; then
	log "present: $("$BIN" version)"
	exit 0
fi

SUDO=""
if [[ "$(id -u)" -ne 0 ]] && command -v sudo >/dev/null 2>&1; then
	SUDO="sudo -n"
fi
command -v go >/dev/null 2>&1 || { log "go is not on PATH"; exit 1; }

# 1. Debian packages: LLVM/Clang/LLD 19 to link against, clang and wasm-ld
#    binaries TinyGo runs, wasm-opt (binaryen), wasi-libc, compiler-rt.
PKGS=(
	"llvm-$LLVM-dev" "libclang-$LLVM-dev" "liblld-$LLVM-dev" "clang-$LLVM" "lld-$LLVM"
	binaryen wasi-libc "libclang-rt-$LLVM-dev-wasm32"
)
missing=()
for p in "${PKGS[@]}"; do
	[[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
	if [[ "$(id -u)" -ne 0 && -z "$SUDO" ]]; then
		log "missing apt packages ${missing[*]}: run this script as root"
		exit 1
	fi
	log "apt-get install ${missing[*]}"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null
	$SUDO env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
fi

WASI_LIBC=/usr/lib/wasm32-wasi/libc.a
WASI_INCLUDE=/usr/include/wasm32-wasi
RTLIB=/usr/lib/llvm-$LLVM/lib/clang/$LLVM/lib/wasi/libclang_rt.builtins-wasm32.a
for f in "$WASI_LIBC" "$WASI_INCLUDE/stdlib.h" "$RTLIB" "/usr/bin/llvm-config-$LLVM"; do
	[[ -e "$f" ]] || { log "missing $f after installing packages"; exit 1; }
done

# 2. The TinyGo sources from the Go module proxy, copied somewhere writable.
SRC=$(go mod download -json "github.com/tinygo-org/tinygo@v$VERSION" </dev/null |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d "$SRC" ]] || { log "go mod download gave no source directory"; exit 1; }
WORK=$(mktemp -d /tmp/tinygo-build.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp -r "$SRC" "$WORK/tinygo"
chmod -R u+w "$WORK/tinygo"
cd "$WORK/tinygo"

# 3. Stub out the ESP32 flasher: drop the import and replace the one
#    function using it (main.go already imports "errors"; progressFunc stays
#    as an unused package-level variable, which Go allows).
sed -i '/"tinygo.org\/x\/espflasher\/pkg\/espflasher"/d' main.go
sed -i '/^func flashBinUsingEsp32(/,/^}/c\
func flashBinUsingEsp32(port, resetMode, tmppath string, options *compileopts.Options) error {\
	return errors.New("ESP32 flashing is not available in this build (tinygo.org/x/espflasher was left out)")\
}' main.go
if grep -q -e "espflasher\.\|espflasher/pkg" main.go; then
	log "could not patch espflasher out of main.go"
	exit 1
fi
go mod edit -droprequire tinygo.org/x/espflasher

# 4. Folders the module zip lacks.
mkdir -p src/net

# 5. Build against Debian's LLVM 19 (found through llvm-config-19).
log "building TinyGo $VERSION (about a minute)"
PATH="/usr/lib/llvm-$LLVM/bin:$PATH" CGO_ENABLED=1 GOFLAGS=-mod=mod \
	go build -buildvcs=false -tags "llvm$LLVM" -o build/tinygo . </dev/null

# 6. The wasip1 target, linking Debian's prebuilt wasi-libc and compiler-rt
#    instead of building them from the missing sources ("libc" and "rtlib"
#    empty). TinyGo supplies malloc and free itself, so its copy of libc.a
#    leaves dlmalloc.o out: otherwise any libc call that allocates (readdir,
#    used by os.ReadDir) pulls it in and wasm-ld reports duplicate
#    malloc/free/calloc/realloc.
mkdir -p lib/wasi-libc-debian
cp "$WASI_LIBC" lib/wasi-libc-debian/libc.a
"llvm-ar-$LLVM" d lib/wasi-libc-debian/libc.a dlmalloc.o
cat >targets/wasip1.json <<JSON
{
	"llvm-target":   "wasm32-unknown-wasi",
	"cpu":           "generic",
	"features":      "+bulk-memory,+bulk-memory-opt,+call-indirect-overlong,+mutable-globals,+nontrapping-fptoint,+sign-ext,-multivalue,-reference-types",
	"build-tags":    ["tinygo.wasm"],
	"goos":          "wasip1",
	"goarch":        "wasm",
	"linker":        "wasm-ld",
	"libc":          "",
	"rtlib":         "",
	"gc":            "precise",
	"scheduler":     "asyncify",
	"default-stack-size": 65536,
	"cflags": [
		"-mbulk-memory",
		"-mnontrapping-fptoint",
		"-mno-multivalue",
		"-mno-reference-types",
		"-msign-ext",
		"-isystem", "$WASI_INCLUDE"
	],
	"ldflags": [
		"--stack-first",
		"--no-demangle",
		"$TINYGOROOT/lib/wasi-libc-debian/libc.a",
		"$RTLIB"
	],
	"extra-files": [
		"src/runtime/asm_tinygowasm.S",
		"src/runtime/gc_boehm.c"
	],
	"emulator":      "wasmtime run --dir={tmpDir}::/tmp {}"
}
JSON

# 7. Install the binary and what it reads at run time. TinyGo finds its
#    root from the real path of the binary ($TINYGOROOT/bin/tinygo).
$SUDO rm -rf "$TINYGOROOT.new"
$SUDO mkdir -p "$TINYGOROOT.new/bin" "$PREFIX/bin"
$SUDO cp build/tinygo "$TINYGOROOT.new/bin/tinygo"
$SUDO cp -r src targets lib "$TINYGOROOT.new/"
$SUDO rm -rf "$TINYGOROOT"
$SUDO mv "$TINYGOROOT.new" "$TINYGOROOT"
$SUDO ln -sf "$TINYGOROOT/bin/tinygo" "$BIN"

# 8. Smoke test: a reactor module with an export that reads a directory
#    (which exercises libc's allocating readdir path).
SMOKE=$WORK/smoke
mkdir -p "$SMOKE"
printf 'module smoke\n\ngo 1.22\n' >"$SMOKE/go.mod"
cat >"$SMOKE/main.go" <<'GO'
package main

import "os"

//go:wasmexport probe
func probe() int32 {
	if _, err := os.ReadDir("/"); err != nil {
		return 1
	}
	return 0
}

func main() {}
GO
(cd "$SMOKE" && "$BIN" build -target=wasip1 -buildmode=c-shared -scheduler=none -o smoke.wasm . </dev/null)
log "installed: $("$BIN" version)"
