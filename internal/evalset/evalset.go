// Package evalset measures how well a tool search finds the right tool.
//
// An evaluation set is two JSON Lines files: a catalog of tool definitions
// (LoadCatalog) and a list of requests, each with the tools that would truly
// satisfy it (LoadQueries). Evaluate runs every request through a search
// function and reports recall at 1, 5 and 10 and the mean reciprocal rank
// within the top 10. Validate checks that every expected tool is in the
// catalog before a run, so a typo in the data is not mistaken for a miss.
//
// The package knows nothing about how the search works: the caller passes a
// function, so the same set measures the SQLite index, a plain BM25 ranking
// or anything else.
package evalset

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Errors returned by the package. A *LineError matches ErrBadCatalog or
// ErrBadQueries; an *UnknownToolsError matches ErrUnknownTools.
var (
	// ErrBadCatalog is matched by every problem found while reading a
	// catalog file.
	ErrBadCatalog = errors.New("evalset: invalid catalog")
	// ErrBadQueries is matched by every problem found while reading a
	// queries file.
	ErrBadQueries = errors.New("evalset: invalid queries")
	// ErrUnknownTools is returned by Validate when queries expect tools the
	// catalog does not define.
	ErrUnknownTools = errors.New("evalset: queries expect tools absent from the catalog")
	// ErrNoQueries is returned by Evaluate when it is given no queries.
	ErrNoQueries = errors.New("evalset: no queries to evaluate")
	// ErrNilSearch is returned by Evaluate when the search function is nil.
	ErrNilSearch = errors.New("evalset: nil search function")
)

// Tool is one tool definition from a catalog.
type Tool struct {
	// Name is the tool's name as the model would call it.
	Name string
	// Description is the tool's description; it may be empty.
	Description string
	// Parameters is the tool's input JSON Schema exactly as written, or nil
	// when the definition has none.
	Parameters json.RawMessage
	// Params lists the parameters found in Parameters, in the order they
	// are written: top-level properties by name, nested object properties
	// and the properties of array items as dotted names ("filter.status").
	// Nesting deeper than MaxParamDepth levels is not walked.
	Params []Param
	// Line is the catalog line the tool was read from (1-based), or 0 when
	// the tool was built in code.
	Line int
}

// Param is one parameter of a tool: its dotted name and its description.
type Param struct {
	Name        string
	Description string
}

// Query is one request of an evaluation set and the tools that answer it.
type Query struct {
	// Text is the request as a user would put it to an agent.
	Text string `json:"query"`
	// Expected names the tools that would truly satisfy the request; any
	// one of them counts as a hit.
	Expected []string `json:"expected"`
	// Line is the queries line the query was read from (1-based), or 0 when
	// the query was built in code.
	Line int `json:"-"`
}

// LineError is a problem with one line of a catalog or queries file. It
// matches ErrBadCatalog or ErrBadQueries.
type LineError struct {
	// File is "catalog" or "queries".
	File string
	// Line is the 1-based line number.
	Line int
	// Field is the JSON path of the offending value ("function.name"), or
	// empty when the problem is the line as a whole.
	Field string
	// Detail says what was wrong and what was expected.
	Detail string
	// FirstLine is, for a tool name defined twice, the line that defined
	// it first; 0 otherwise.
	FirstLine int
}

func (e *LineError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s line %d: %s", e.File, e.Line, e.Detail)
	}
	return fmt.Sprintf("%s line %d: %s: %s", e.File, e.Line, e.Field, e.Detail)
}

// Is reports whether target is the sentinel for the error's file.
func (e *LineError) Is(target error) bool {
	switch e.File {
	case fileCatalog:
		return target == ErrBadCatalog
	case fileQueries:
		return target == ErrBadQueries
	}
	return false
}

// UnknownToolsError lists the queries whose expected tools are not in the
// catalog. It matches ErrUnknownTools.
type UnknownToolsError struct {
	Missing []MissingTools
}

// MissingTools is one query with the expected names the catalog lacks.
type MissingTools struct {
	// Line is the query's line (0 when built in code); Index is its
	// 0-based position in the slice given to Validate.
	Line, Index int
	Query       string
	Names       []string
}

func (e *UnknownToolsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "evalset: %d quer", len(e.Missing))
	if len(e.Missing) == 1 {
		b.WriteString("y expects")
	} else {
		b.WriteString("ies expect")
	}
	b.WriteString(" tools absent from the catalog:")
	for _, m := range e.Missing {
		if m.Line > 0 {
			fmt.Fprintf(&b, "\n  line %d", m.Line)
		} else {
			fmt.Fprintf(&b, "\n  query %d", m.Index+1)
		}
		fmt.Fprintf(&b, " %q: %s", m.Query, strings.Join(m.Names, ", "))
	}
	return b.String()
}

// Is reports whether target is ErrUnknownTools.
func (e *UnknownToolsError) Is(target error) bool { return target == ErrUnknownTools }

// Validate reports, as an *UnknownToolsError, every query that expects a
// tool the catalog does not define. It returns nil when all are present.
func Validate(catalog []Tool, queries []Query) error {
	names := make(map[string]bool, len(catalog))
	for _, t := range catalog {
		names[t.Name] = true
	}
	var missing []MissingTools
	for i, q := range queries {
		var absent []string
		for _, name := range q.Expected {
			if !names[name] {
				absent = append(absent, name)
			}
		}
		if len(absent) > 0 {
			missing = append(missing, MissingTools{Line: q.Line, Index: i, Query: q.Text, Names: absent})
		}
	}
	if len(missing) > 0 {
		return &UnknownToolsError{Missing: missing}
	}
	return nil
}
