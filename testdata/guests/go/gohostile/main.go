//go:build wasip1

// Command gohostile is a hostile standard-Go guest (a WASI reactor built with
// -buildmode=c-shared) for the skillhost host's limit and capability tests.
// Every export follows the Extism convention: no parameters, an int32 result,
// input and output through the extism:host/env kernel.
//
// Build (from the repository root; see ../../Makefile):
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared \
//	    -o testdata/guests/go/gohostile/gohostile.wasm ./testdata/guests/go/gohostile
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/extism/go-pdk"
)

func main() {}

// counter is global so the compiler must keep every increment of spin.
var counter uint64

// spin loops forever on integer arithmetic without calling out: only an
// interrupting host can stop it.
//
//go:wasmexport spin
func spin() int32 {
	for {
		counter++
	}
}

var hoard [][]byte

// alloc_bomb appends 1 MiB slices forever, touching every 4 KiB page, until
// the Go runtime cannot grow the linear memory; it then throws "out of
// memory" and aborts with a wasm unreachable trap.
//
//go:wasmexport alloc_bomb
func allocBomb() int32 {
	for {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		hoard = append(hoard, b)
	}
}

// fs_escape reads the file named by the input with os.ReadFile and outputs
// its content, or "error: " and the error text; it returns 0 either way.
//
//go:wasmexport fs_escape
func fsEscape() int32 {
	data, err := os.ReadFile(pdk.InputString())
	if err != nil {
		pdk.OutputString("error: " + err.Error())
		return 0
	}
	pdk.Output(data)
	return 0
}

// sleep calls time.Sleep for the input duration: a Go duration ("60s",
// "150ms") or a plain number of milliseconds. It outputs "slept".
//
//go:wasmexport sleep
func sleep() int32 {
	in := strings.TrimSpace(pdk.InputString())
	d, err := time.ParseDuration(in)
	if err != nil {
		ms, err2 := strconv.ParseInt(in, 10, 64)
		if err2 != nil {
			pdk.SetErrorString(`{"code":"invalid_input","message":"input is not a duration"}`)
			return 1
		}
		d = time.Duration(ms) * time.Millisecond
	}
	time.Sleep(d)
	pdk.OutputString("slept")
	return 0
}

// http_get sends a GET to the input URL through the host's http_request and
// outputs the status code, a newline and the body.
//
//go:wasmexport http_get
func httpGet() int32 {
	resp := pdk.NewHTTPRequest(pdk.MethodGet, strings.TrimSpace(pdk.InputString())).Send()
	pdk.Output(append([]byte(strconv.Itoa(int(resp.Status()))+"\n"), resp.Body()...))
	return 0
}

// panic panics; the Go runtime prints the message to stderr and aborts
// with a wasm unreachable trap (not proc_exit).
//
//go:wasmexport panic
func panicExport() int32 {
	panic("gohostile: deliberate panic")
}

// stdout_flood writes 1 MiB lines to stdout forever.
//
//go:wasmexport stdout_flood
func stdoutFlood() int32 {
	line := []byte(strings.Repeat("x", 1<<20-1) + "\n")
	for {
		if _, err := os.Stdout.Write(line); err != nil {
			pdk.SetErrorString("stdout: " + err.Error())
			return 1
		}
	}
}

//go:wasmimport extism:host/user tool_call
func hostToolCall(name, args uint64) uint64

// tool_call calls the extism:host/user tool_call import with the input as
// the tool name and {"x":1} as the arguments, and outputs the returned
// ToolResult JSON verbatim (nothing when the host returns 0).
//
//go:wasmexport tool_call
func toolCall() int32 {
	name := pdk.AllocateBytes(pdk.Input())
	args := pdk.AllocateString(`{"x":1}`)
	off := hostToolCall(name.Offset(), args.Offset())
	if off != 0 {
		pdk.OutputMemory(pdk.FindMemory(off))
	}
	return 0
}

// fsArgs splits the input "PATH [N]" of the filesystem floods; N defaults
// to def.
func fsArgs(def int64) (string, int64, error) {
	path, n, ok := strings.Cut(strings.TrimSpace(pdk.InputString()), " ")
	if !ok {
		return path, def, nil
	}
	count, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
	return path, count, err
}

// fsResult outputs "<count> ok" or "<count> <error>".
func fsResult(count int64, err error) int32 {
	if err != nil {
		pdk.OutputString(fmt.Sprintf("%d %v", count, err))
	} else {
		pdk.OutputString(fmt.Sprintf("%d ok", count))
	}
	return 0
}

// write_flood creates (or truncates) the file PATH and writes 64 KiB
// chunks to it until a write fails or N bytes are written (N defaults to
// no bound: only the host stops it). It outputs the bytes written and the
// error, "<bytes> ok" when none.
//
//go:wasmexport write_flood
func writeFlood() int32 {
	path, limit, err := fsArgs(-1)
	if err != nil {
		return fsResult(0, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fsResult(0, err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	var written int64
	for limit < 0 || written < limit {
		b := chunk
		if limit >= 0 && limit-written < int64(len(b)) {
			b = b[:limit-written]
		}
		n, err := f.Write(b)
		written += int64(n)
		if err != nil {
			return fsResult(written, err)
		}
	}
	return fsResult(written, f.Close())
}

// truncate sets the size of the existing file PATH to N bytes with
// os.Truncate; it outputs "<N> ok" or "0 <error>".
//
//go:wasmexport truncate
func truncate() int32 {
	path, size, err := fsArgs(0)
	if err == nil {
		err = os.Truncate(path, size)
	}
	if err != nil {
		return fsResult(0, err)
	}
	return fsResult(size, nil)
}

// create_flood creates N empty files PATH/0, PATH/1, ... (PATH is a
// folder), closing each, and stops at the first error. It outputs the files
// created and the error.
//
//go:wasmexport create_flood
func createFlood() int32 {
	dir, n, err := fsArgs(100_000)
	if err != nil {
		return fsResult(0, err)
	}
	var created int64
	for ; created < n; created++ {
		f, err := os.Create(dir + "/" + strconv.FormatInt(created, 10))
		if err != nil {
			return fsResult(created, err)
		}
		if err := f.Close(); err != nil {
			return fsResult(created, err)
		}
	}
	return fsResult(created, nil)
}

// open_flood opens the file PATH read-only up to N times (default 100,000)
// without closing, and stops at the first error. It outputs the files
// opened and the error, then closes them all before returning.
//
//go:wasmexport open_flood
func openFlood() int32 {
	path, n, err := fsArgs(100_000)
	if err != nil {
		return fsResult(0, err)
	}
	var open []*os.File
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	for int64(len(open)) < n {
		f, err := os.Open(path)
		if err != nil {
			return fsResult(int64(len(open)), err)
		}
		open = append(open, f)
	}
	return fsResult(int64(len(open)), nil)
}
