//go:build wasip1

// Command gobench is a standard-Go guest (a WASI reactor built with
// -buildmode=c-shared) for benchmarks: call overhead (noop, echo) and
// compute-bound work whose cost depends on how the host interrupts loops
// (intloop, sha256, sort). Numeric inputs are decimal text; an empty input
// means the default noted on each export.
//
// Build (from the repository root; see ../../Makefile):
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared \
//	    -o testdata/guests/go/gobench/gobench.wasm ./testdata/guests/go/gobench
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/extism/go-pdk"
)

func main() {}

// noop returns 0 at once, without reading input or writing output.
//
//go:wasmexport noop
func noop() int32 { return 0 }

// echo outputs its input.
//
//go:wasmexport echo
func echo() int32 {
	pdk.Output(pdk.Input())
	return 0
}

// inputN parses the input as a decimal count, def when empty. It reports
// an invalid_input error and false for anything else.
func inputN(def uint64) (uint64, bool) {
	in := strings.TrimSpace(pdk.InputString())
	if in == "" {
		return def, true
	}
	n, err := strconv.ParseUint(in, 10, 64)
	if err != nil {
		pdk.SetErrorString(`{"code":"invalid_input","message":"input must be a decimal count"}`)
		return 0, false
	}
	return n, true
}

// lcg is the step of the 64-bit linear congruential generator that intloop,
// sort and wat/loop_count.wat share.
func lcg(x uint64) uint64 { return x*6364136223846793005 + 1442695040888963407 }

// intloop steps the LCG N times from 0 (default N = 0) and outputs the final
// value in decimal, the same result as wat/loop_count.wat's count.
//
//go:wasmexport intloop
func intloop() int32 {
	n, ok := inputN(0)
	if !ok {
		return 1
	}
	var x uint64
	for i := uint64(0); i < n; i++ {
		x = lcg(x)
	}
	pdk.OutputString(strconv.FormatUint(x, 10))
	return 0
}

// sha256 hashes N copies (default 1) of a 1 KiB block whose byte i is
// byte(i) and outputs the digest in lowercase hex.
//
//go:wasmexport sha256
func sha256Export() int32 {
	n, ok := inputN(1)
	if !ok {
		return 1
	}
	var block [1024]byte
	for i := range block {
		block[i] = byte(i)
	}
	h := sha256.New()
	for i := uint64(0); i < n; i++ {
		h.Write(block[:])
	}
	pdk.OutputString(hex.EncodeToString(h.Sum(nil)))
	return 0
}

// sort fills a slice with N values (default 1000) v[i] = x>>1 where x steps
// the LCG from 42, sorts it ascending and outputs the checksum
// sum((i+1)*v[i]) mod 2^64 in decimal.
//
//go:wasmexport sort
func sortExport() int32 {
	n, ok := inputN(1000)
	if !ok {
		return 1
	}
	if n > 1<<26 {
		pdk.SetErrorString(`{"code":"invalid_input","message":"at most 67108864 values"}`)
		return 1
	}
	v := make([]uint64, n)
	x := uint64(42)
	for i := range v {
		x = lcg(x)
		v[i] = x >> 1
	}
	slices.Sort(v)
	var sum uint64
	for i, e := range v {
		sum += uint64(i+1) * e
	}
	pdk.OutputString(strconv.FormatUint(sum, 10))
	return 0
}
