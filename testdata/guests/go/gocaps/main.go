//go:build wasip1

// Command gocaps is a standard-Go guest that exercises each WASI capability
// the host grants or denies, for the host's allowed/denied test pairs.
// Every export reads its argument from the input — raw text, or a JSON
// object {"arg": "..."} as a tool call passes it — and outputs a plain-text
// result; failures are reported in the output as "error: ..." so the tests
// can tell a refused capability from a trap.
//
//	getenv      input NAME; outputs the value, or "<unset>"
//	environ     outputs every variable the guest sees, one NAME=VALUE a line
//	read_file   input PATH; outputs the file's content
//	write_file  input PATH; writes "written" to it and outputs "ok"
//	mkdir       input PATH; creates the folder and outputs "ok"
//	remove      input PATH; removes it and outputs "ok"
//	symlink     input "TARGET NEWNAME"; creates a symlink and outputs "ok"
//	list_dir    input PATH; outputs the entry names, one a line
//	clock       outputs the wall clock as Unix seconds
//	call_tool   input {"name": TOOL, "args": {...}}; calls tool_call and
//	            outputs the ToolResult document it returns
//	counter     counts its calls and the distinct inputs it has seen, in
//	            package variables, and outputs "CALLS SEEN": "1 1" in a
//	            fresh instance
//	hoard       input N; keeps N MiB in a package variable (the memory grows)
//	            and outputs the MiB held
//
// Build (from the repository root):
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -buildmode=c-shared \
//	    -o testdata/guests/go/gocaps/gocaps.wasm ./testdata/guests/go/gocaps
package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/extism/go-pdk"
)

func main() {}

// arg returns the export's argument: the input, or its "arg" field when the
// input is a JSON object.
func arg() string {
	in := pdk.Input()
	if len(in) > 0 && in[0] == '{' {
		var v struct {
			Arg string `json:"arg"`
		}
		if json.Unmarshal(in, &v) == nil {
			return v.Arg
		}
	}
	return string(in)
}

//go:wasmimport extism:host/user tool_call
func hostToolCall(name, args uint64) uint64

//go:wasmexport call_tool
func callTool() int32 {
	var req struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(pdk.Input(), &req); err != nil {
		return result("", err)
	}
	name := pdk.AllocateString(req.Name)
	args := pdk.AllocateBytes(req.Args)
	off := hostToolCall(name.Offset(), args.Offset())
	mem := pdk.FindMemory(off)
	return result(string(mem.ReadBytes()), nil)
}

func result(out string, err error) int32 {
	if err != nil {
		pdk.OutputString("error: " + err.Error())
		return 0
	}
	pdk.OutputString(out)
	return 0
}

//go:wasmexport getenv
func getenv() int32 {
	v, ok := os.LookupEnv(arg())
	if !ok {
		v = "<unset>"
	}
	return result(v, nil)
}

//go:wasmexport environ
func environ() int32 {
	return result(strings.Join(os.Environ(), "\n"), nil)
}

//go:wasmexport read_file
func readFile() int32 {
	b, err := os.ReadFile(arg())
	return result(string(b), err)
}

//go:wasmexport write_file
func writeFile() int32 {
	return result("ok", os.WriteFile(arg(), []byte("written"), 0o644))
}

//go:wasmexport mkdir
func mkdir() int32 {
	return result("ok", os.Mkdir(arg(), 0o755))
}

//go:wasmexport remove
func remove() int32 {
	return result("ok", os.Remove(arg()))
}

//go:wasmexport symlink
func symlink() int32 {
	target, name, _ := strings.Cut(arg(), " ")
	return result("ok", os.Symlink(target, name))
}

//go:wasmexport list_dir
func listDir() int32 {
	entries, err := os.ReadDir(arg())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return result(strings.Join(names, "\n"), err)
}

var (
	calls int
	seen  = map[string]bool{}
	hoard [][]byte
)

//go:wasmexport counter
func counter() int32 {
	calls++
	seen[arg()] = true
	return result(strconv.Itoa(calls)+" "+strconv.Itoa(len(seen)), nil)
}

//go:wasmexport hoard
func hoardExport() int32 {
	n, err := strconv.Atoi(arg())
	if err != nil {
		return result("", err)
	}
	for i := 0; i < n; i++ {
		hoard = append(hoard, make([]byte, 1<<20))
	}
	return result(strconv.Itoa(len(hoard)), nil)
}

//go:wasmexport clock
func clock() int32 {
	return result(strconv.FormatInt(time.Now().Unix(), 10), nil)
}
