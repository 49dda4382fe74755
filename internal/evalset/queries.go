package evalset

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

const queryShape = `{"query": "...", "expected": ["tool_name", ...]}`

// LoadQueries reads a queries file: one {"query": "...", "expected":
// ["tool_name", ...]} object per line. The query must be non-empty text and
// expected a non-empty list of distinct, non-empty tool names. Other keys
// (a note, a domain) are allowed and ignored. Blank lines are skipped.
//
// The first bad line stops the read with a *LineError naming the line, the
// field and what was expected. A file with no queries is an error too.
func LoadQueries(r io.Reader) ([]Query, error) {
	var queries []Query
	err := readLines(r, fileQueries, func(n int, line []byte) error {
		q, err := parseQuery(n, line)
		if err != nil {
			return err
		}
		queries = append(queries, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(queries) == 0 {
		return nil, fmt.Errorf("%w: no queries; expected one %s per line", ErrBadQueries, queryShape)
	}
	return queries, nil
}

// parseQuery reads one queries line.
func parseQuery(n int, line []byte) (Query, error) {
	fail := func(field, format string, args ...any) (Query, error) {
		return Query{}, &LineError{File: fileQueries, Line: n, Field: field, Detail: fmt.Sprintf(format, args...)}
	}
	obj, err := decodeObject(line)
	if err != nil {
		return fail("", "expected a JSON object %s: %v", queryShape, err)
	}
	q := Query{Line: n}
	raw := obj.get("query")
	if raw == nil {
		return fail("query", "missing; expected %s", queryShape)
	}
	text, ok := stringValue(raw)
	if !ok {
		return fail("query", "expected a string, found %s", kind(raw))
	}
	if strings.TrimSpace(text) == "" {
		return fail("query", "expected non-empty request text")
	}
	q.Text = text

	raw = obj.get("expected")
	if raw == nil {
		return fail("expected", "missing; expected a list of the tool names that answer the query, such as [\"tool_name\"]")
	}
	var list []json.RawMessage
	if kind(raw) != "an array" || json.Unmarshal(raw, &list) != nil {
		return fail("expected", "expected an array of tool names such as [\"tool_name\"], found %s", kind(raw))
	}
	if len(list) == 0 {
		return fail("expected", "empty; expected at least one tool name that answers the query")
	}
	for i, item := range list {
		field := fmt.Sprintf("expected[%d]", i)
		name, ok := stringValue(item)
		if !ok {
			return fail(field, "expected a tool name string, found %s", kind(item))
		}
		if msg := checkName(name); msg != "" {
			return fail(field, "%s", msg)
		}
		for j, prev := range q.Expected {
			if prev == name {
				return fail(field, "%q is already listed at expected[%d]; expected distinct names", name, j)
			}
		}
		q.Expected = append(q.Expected, name)
	}
	return q, nil
}
