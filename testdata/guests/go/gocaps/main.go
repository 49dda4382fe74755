//go:build wasip1

// Command gocaps is a standard-Go guest that exercises each WASI capability
// the host grants or denies, for the host's allowed/denied test pairs.
// Every export reads its argument from the input and outputs a plain-text
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
//
// Build (from the repository root):
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -buildmode=c-shared \
//	    -o testdata/guests/go/gocaps/gocaps.wasm ./testdata/guests/go/gocaps
package main

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/extism/go-pdk"
)

func main() {}

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
	v, ok := os.LookupEnv(pdk.InputString())
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
	b, err := os.ReadFile(pdk.InputString())
	return result(string(b), err)
}

//go:wasmexport write_file
func writeFile() int32 {
	return result("ok", os.WriteFile(pdk.InputString(), []byte("written"), 0o644))
}

//go:wasmexport mkdir
func mkdir() int32 {
	return result("ok", os.Mkdir(pdk.InputString(), 0o755))
}

//go:wasmexport remove
func remove() int32 {
	return result("ok", os.Remove(pdk.InputString()))
}

//go:wasmexport symlink
func symlink() int32 {
	target, name, _ := strings.Cut(pdk.InputString(), " ")
	return result("ok", os.Symlink(target, name))
}

//go:wasmexport list_dir
func listDir() int32 {
	entries, err := os.ReadDir(pdk.InputString())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return result(strings.Join(names, "\n"), err)
}

//go:wasmexport clock
func clock() int32 {
	return result(strconv.FormatInt(time.Now().Unix(), 10), nil)
}
