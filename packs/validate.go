package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// CompileSchema compiles a tool's JSON Schema (input or output), as the
// pack loader does: JSON Schema 2020-12 by default, formats asserted,
// references outside the document refused.
func CompileSchema(doc json.RawMessage) (*jsonschema.Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	return compileSchema(v)
}

// Violation is one way a JSON document breaks a schema.
type Violation struct {
	// Path locates the value in the document, as a JSON path: "$" for the
	// document itself, "$.items[0].name" below it.
	Path string `json:"path"`
	// Message says what is wrong, in the words manifest errors use:
	// `must be a string, got number`, `missing required field "text"`.
	Message string `json:"message"`
}

func (v Violation) String() string { return v.Path + ": " + v.Message }

// ErrNotJSON is returned by ValidateJSON for a document that is not JSON.
// A document the validator cannot check (a number too large for it) is
// reported as a violation, not an error.
var ErrNotJSON = errors.New("not a JSON document")

// ValidateJSON checks doc against s and returns every violation, sorted
// by path, or none. A document that is not JSON is an error wrapping
// ErrNotJSON. It is safe for concurrent use.
func ValidateJSON(s *jsonschema.Schema, doc []byte) ([]Violation, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	return ValidateValue(s, v, doc)
}

// ValidateValue is ValidateJSON for a document already decoded by
// jsonschema.UnmarshalJSON; doc is its text, read again only to locate
// violations when there are some.
func ValidateValue(s *jsonschema.Schema, v any, doc []byte) (vs []Violation, err error) {
	defer func() {
		// The validator panics on numbers math/big cannot hold (an
		// exponent of a million digits); such a document is refused,
		// never allowed to take the process down.
		if p := recover(); p != nil {
			vs, err = []Violation{{Path: "$", Message: "holds a number too large to check; use a number within ±1e1000"}}, nil
		}
	}()
	err = s.Validate(v)
	if err == nil {
		return nil, nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []Violation{{Path: "$", Message: err.Error()}}, nil
	}
	// JSON is YAML: the YAML node tree of the document lets the manifest
	// reporter locate each violation and phrase it.
	var node yaml.Node
	if err := yaml.Unmarshal(doc, &node); err != nil {
		node = yaml.Node{}
	}
	r := reporter{root: &node, seen: map[string]bool{}}
	r.walk(verr)
	out := make([]Violation, 0, len(r.errs))
	for _, e := range r.errs {
		path := "$"
		if e.Field != "" {
			if e.Field[0] == '[' {
				path += e.Field
			} else {
				path += "." + e.Field
			}
		}
		out = append(out, Violation{Path: path, Message: strings.TrimPrefix(e.Msg, "the document ")})
	}
	slices.SortStableFunc(out, func(a, b Violation) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
