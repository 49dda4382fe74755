// goscript is a WASI command fixture for skill scripts (built without
// -buildmode=c-shared: it has _start). What it does is chosen by its
// flags:
//
//	(none)             prints {"args": [...], "stdin": "..."} as JSON
//	--exit N           writes "failing with N" to stderr and exits with N
//	--spin             loops until stopped
//	--flood N          writes N bytes to stdout and N to stderr
//	--read PATH        prints the file at PATH
//	--env NAME         prints the variable NAME, or exits 3 when unset
//
// Build: make -C testdata/guests go
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	args := os.Args[1:]
	if len(args) >= 1 {
		switch args[0] {
		case "--exit":
			n, _ := strconv.Atoi(args[1])
			fmt.Fprintf(os.Stderr, "some noise\nfailing with %d\n", n)
			os.Exit(n)
		case "--spin":
			x := 0
			for {
				x++
			}
		case "--flood":
			n, _ := strconv.Atoi(args[1])
			os.Stdout.WriteString(strings.Repeat("o", n))
			os.Stderr.WriteString(strings.Repeat("e", n))
			return
		case "--read":
			b, err := os.ReadFile(args[1])
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			os.Stdout.Write(b)
			return
		case "--env":
			v, ok := os.LookupEnv(args[1])
			if !ok {
				fmt.Fprintf(os.Stderr, "%s is not set\n", args[1])
				os.Exit(3)
			}
			fmt.Print(v)
			return
		}
	}
	in, _ := io.ReadAll(os.Stdin)
	json.NewEncoder(os.Stdout).Encode(map[string]any{"args": args, "stdin": string(in)})
}
