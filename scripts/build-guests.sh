#!/usr/bin/env bash
# Rebuilds every guest module from its source. The .wasm files are committed,
# so tests never need this; run it after changing a guest or the SDKs.
set -euo pipefail
cd "$(dirname "$0")/.."
make -C testdata/guests
for b in packs/bundled/modules/*/build.sh; do
  echo "building $(dirname "$b")"
  (cd "$(dirname "$b")" && bash ./build.sh)
done
