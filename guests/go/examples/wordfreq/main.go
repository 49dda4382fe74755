// Command wordfreq is an example skill script: a WASI command module that
// counts the words of its stdin (or of --text) and prints the most
// frequent, one "count word" a line. Flags: --top N (default 10),
// --min-length N (default 1), --text TEXT.
//
// A script is a program, not a reactor: build it without -buildmode=c-shared
//
//	GOOS=wasip1 GOARCH=wasm go build -o wordfreq-go.wasm .
//
// A bad flag exits with status 2 and says why on stderr.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode"
)

func main() {
	fs := flag.NewFlagSet("wordfreq", flag.ContinueOnError)
	top := fs.Int("top", 10, "how many words to print")
	minLen := fs.Int("min-length", 1, "skip words shorter than this")
	text := fs.String("text", "", "the text (default: stdin)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *top < 1 {
		fmt.Fprintf(os.Stderr, "wordfreq: --top must be at least 1, got %d\n", *top)
		os.Exit(2)
	}
	in := *text
	if in == "" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "wordfreq: reading stdin: %v\n", err)
			os.Exit(1)
		}
		in = string(b)
	}
	counts := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(in), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) >= *minLen {
			counts[w]++
		}
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if counts[words[i]] != counts[words[j]] {
			return counts[words[i]] > counts[words[j]]
		}
		return words[i] < words[j]
	})
	if len(words) > *top {
		words = words[:*top]
	}
	for _, w := range words {
		fmt.Printf("%d %s\n", counts[w], w)
	}
}
