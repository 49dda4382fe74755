package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/registry"
)

// Exit codes.
const (
	exitOK = 0
	// exitToolError: a tool was called and failed (the guest's error, a
	// trap, a timeout, a limit, a refused capability), or its arguments
	// were refused; also validate finding problems.
	exitToolError = 1
	// exitUsage: the command could not be carried out as given: a bad
	// verb, flag, value or name, or a config, pack or module that does
	// not load.
	exitUsage = 2
)

// Error codes of the failures that are not a tool's own, in the JSON
// error object of call --json; a tool's failures carry its abi code
// (invalid_input, not_found, timeout…).
const (
	codeUsage       = "usage"       // the command line is wrong
	codeUnavailable = "unavailable" // a config, pack or module did not load
)

// exitError is a failure the CLI reports and the exit code it ends with.
// A call's failure names its tool and a code, printed as
// "skillhost: TOOL: CODE: message"; any other as "skillhost: message".
type exitError struct {
	code int
	err  error
	// tool and kind, when set, are the tool (or export) and the error
	// code of a call's failure.
	tool string
	kind string
	// printed is set when the failure was already reported.
	printed bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// callErr is a failure of a call of tool: exit code, error code and message.
func callErr(exit int, tool, kind string, format string, args ...any) error {
	return &exitError{code: exit, tool: tool, kind: kind, err: fmt.Errorf(format, args...)}
}

// asExit returns err as an *exitError, a usage error unless it is one.
func asExit(err error) *exitError {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee
	}
	return &exitError{code: exitUsage, err: err}
}

// message is the text of a failure as the CLI prints it: one line, with
// the package prefixes of the library's sentinel errors ("registry: tool
// not found: …") and any "skillhost: " of a wrapped message taken out.
func message(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	// Sentinels whose text the detail that follows says again.
	for _, e := range []error{host.ErrExportNotFound, host.ErrUnknownImport, registry.ErrToolNotFound} {
		s = strings.ReplaceAll(s, e.Error()+": ", "")
	}
	for t := ""; t != s; {
		t, s = s, pkgPrefix.ReplaceAllString(s, "$1")
	}
	return strings.TrimSpace(s)
}

// pkgPrefix matches a package's name before an error's text, at the
// start or after another error's text ("index: tool search: index: …").
var pkgPrefix = regexp.MustCompile(`(^|: |; )(?:skillhost|registry|host|index|packs): `)

// noArgs refuses arguments to a command that takes none.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr("%s takes no arguments; got %q (see %s --help)", cmd.CommandPath(), args[0], cmd.CommandPath())
	}
	return nil
}

// unknownCommand rephrases cobra's unknown-command error as one line with
// the closest commands.
func unknownCommand(root *cobra.Command, err error) error {
	m := regexp.MustCompile(`^unknown command "(.*)" for "(.*)"`).FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	sugg := ""
	if s := root.SuggestionsFor(m[1]); len(s) > 0 {
		sugg = "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usageErr("unknown command %q%s (%s --help lists the commands)", m[1], sugg, m[2])
}

// report prints a failure: as "skillhost: [TOOL: CODE: ]message" on
// stderr, or, for a call with --json, as a JSON error object on stdout.
func report(ee *exitError, asJSON bool, stdout, stderr io.Writer) {
	if ee.printed {
		return
	}
	msg := message(ee.err)
	if asJSON {
		kind := ee.kind
		if kind == "" {
			kind = codeUsage
			if ee.code == exitToolError {
				kind = "error"
			}
		}
		writeJSONResult(stdout, callJSON{IsError: true, Error: &abi.Error{Code: abi.Code(kind), Message: msg}})
		return
	}
	if msg == "" {
		return
	}
	if ee.tool != "" && ee.kind != "" {
		msg = ee.tool + ": " + ee.kind + ": " + msg
	}
	fmt.Fprintln(stderr, "skillhost: "+msg)
}

// callJSON is what call --json prints: the result, or the error.
type callJSON struct {
	Output json.RawMessage `json:"output,omitempty"`
	// OutputText is a module's output (call --module --json) when it is
	// not JSON; OutputBase64 when it is not UTF-8 text either.
	OutputText   *string    `json:"output_text,omitempty"`
	OutputBase64 []byte     `json:"output_base64,omitempty"`
	IsError      bool       `json:"is_error"`
	Error        *abi.Error `json:"error,omitempty"`
}

func writeJSONResult(w io.Writer, v callJSON) {
	b, _ := json.Marshal(v)
	fmt.Fprintln(w, string(b))
}

// moduleOutputJSON puts a module's output bytes into v: as JSON when they
// are JSON, as text when they are UTF-8, else in base64.
func moduleOutputJSON(v *callJSON, out []byte) {
	switch {
	case len(out) > 0 && json.Valid(out):
		v.Output = json.RawMessage(out)
	case utf8.Valid(out):
		s := string(out)
		v.OutputText = &s
	default:
		v.OutputBase64 = out
	}
}

// hostErrKind maps a host error met while loading or calling a module to
// the exit code and error code the CLI reports.
func hostErrKind(err error) (exit int, kind string) {
	var ce *host.CallError
	switch {
	case errors.As(err, &ce):
		return exitToolError, string(ce.ABIError().Code)
	case errors.Is(err, host.ErrExportNotFound), errors.Is(err, registry.ErrToolNotFound):
		return exitUsage, "not_found"
	}
	return exitUsage, codeUnavailable
}

// searchFlagErr rephrases a refused search in terms of the search flags.
func searchFlagErr(err error, limit int, searchType, taskType string) error {
	switch {
	case errors.Is(err, index.ErrEmptyQuery):
		return usageErr("the search QUERY is empty; give the words, tool name (--type exact) or pattern (--type regex) to look for")
	case errors.Is(err, index.ErrBadSearchType):
		return usageErr("--type %q must be fts, regex or exact", searchType)
	case errors.Is(err, index.ErrBadLimit):
		return usageErr("--limit %d is out of range: give 1 to %d", limit, index.MaxLimit)
	case errors.Is(err, index.ErrPatternTooLong):
		return usageErr("the --type regex pattern is longer than %d characters", index.MaxPatternLength)
	case errors.Is(err, index.ErrBadPattern):
		return usageErr("the --type regex pattern is not valid: %s", strings.TrimPrefix(message(err), "regex pattern is not valid: "))
	case errors.Is(err, index.ErrBadTaskType):
		return usageErr("--task-type %q must be one of %s", taskType, strings.Join(index.TaskTypes, ", "))
	}
	return err
}

// suggest returns the names closest to name, best first: those within a
// few edits of it, or holding it (or held by it) whole.
func suggest(name string, names []string) []string {
	type cand struct {
		name string
		dist int
	}
	low := strings.ToLower(name)
	far := 2
	if n := utf8.RuneCountInString(name); n > 8 {
		far = n / 4
	}
	seen := map[string]bool{}
	var cs []cand
	for _, n := range names {
		if seen[n] || n == name {
			continue
		}
		seen[n] = true
		ln := strings.ToLower(n)
		d := editDistance(low, ln)
		if d > far && len(low) >= 3 && (strings.Contains(ln, low) || strings.Contains(low, ln) && len(ln) >= 3) {
			d = far
		}
		if d <= far {
			cs = append(cs, cand{n, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].dist != cs[j].dist {
			return cs[i].dist < cs[j].dist
		}
		return cs[i].name < cs[j].name
	})
	out := make([]string, 0, 3)
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// didYouMean is "; did you mean X?" (or "X or Y"), or "" without
// suggestions.
func didYouMean(name string, names []string) string {
	s := suggest(name, names)
	switch len(s) {
	case 0:
		return ""
	case 1:
		return "; did you mean " + s[0] + "?"
	}
	return "; did you mean " + strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1] + "?"
}

// editDistance is the Damerau-Levenshtein distance (adjacent
// transpositions count one) between a and b, by runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
