#!/bin/sh
# Builds web.wasm beside this script with standard Go (a WASI reactor
# module; the skill SDK supplies the describe export).
set -eu
cd "$(dirname "$0")"
GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -buildmode=c-shared -ldflags=-s -o web.wasm .
