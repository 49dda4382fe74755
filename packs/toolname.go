package packs

// Tool names as model APIs carry them. A tool's name is what the
// registry, the index, events and the CLI know it by; the model APIs
// skillhost renders a catalog for accept fewer names than that:
//
//   - OpenAI Chat Completions: a function name "must be a-z, A-Z, 0-9, or
//     contain underscores and dashes, with a maximum length of 64"
//     (openai-go v3, shared.FunctionDefinitionParam.Name);
//   - OpenAI Responses: a function name of up to 128 characters of the
//     same set;
//   - Anthropic Messages: a custom tool name of 1 to 128 characters of
//     the same set;
//   - MCP: names of 1 to 128 characters of letters, digits, "_", "-" and
//     "." are what the 2025-11-25 revision's naming guidance recommends,
//     and clients pass them on to the APIs above.
//
// The strictest of these, Chat Completions', is the rule (APINameRule).
// A name that meets it is rendered as it is everywhere. Any other name a
// tool may have (CheckToolName) is rendered under APIToolName: a stable
// name that meets the rule, derived from the name alone, by which a call
// reaches the tool as it does by the name itself.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"unicode"
	"unicode/utf8"
)

// MaxToolNameLength is the longest tool name, in characters, skillhost
// registers: the most OpenAI Responses and Anthropic accept, and the MCP
// naming guidance's bound.
const MaxToolNameLength = 128

// MaxAPIToolNameLength is the longest name every model API accepts for a
// tool: OpenAI Chat Completions' 64.
const MaxAPIToolNameLength = 64

// APINameRule is the rule a name must meet to be rendered as it is: the
// pattern OpenAI Chat Completions holds function names to.
const APINameRule = `^[a-zA-Z0-9_-]{1,64}$`

var apiNameRE = regexp.MustCompile(APINameRule)

// ErrToolName is matched by a *ToolNameError: a tool name no API can
// carry, even mapped.
var ErrToolName = errors.New("packs: invalid tool name")

// ToolNameError is a tool name CheckToolName refuses. It matches
// ErrToolName.
type ToolNameError struct {
	// Name is the name refused.
	Name string
	// Rule says what a name must be.
	Rule string
}

func (e *ToolNameError) Error() string {
	return fmt.Sprintf("tool name %q: %s", e.Name, e.Rule)
}

// Is makes a *ToolNameError match ErrToolName.
func (e *ToolNameError) Is(target error) bool { return target == ErrToolName }

// toolNameRule is the rule of CheckToolName, in the words of a
// ToolNameError.
var toolNameRule = fmt.Sprintf("a tool name must be 1 to %d characters of valid UTF-8 without control, format or "+
	"white-space characters at its ends; a name that does not match %s (the rule of OpenAI Chat Completions, "+
	"the strictest model API) is shown to models under a name derived from it", MaxToolNameLength, APINameRule)

// CheckToolName returns nil for a name a tool may have: 1 to
// MaxToolNameLength characters of valid UTF-8, no control or format
// characters (which hide or reorder text in logs and listings), no white
// space at either end. Names that do not meet APINameRule are allowed:
// renderings show them as APIToolName gives them. Anything else is a
// *ToolNameError.
func CheckToolName(name string) error {
	bad := func() error { return &ToolNameError{Name: name, Rule: toolNameRule} }
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxToolNameLength {
		return bad()
	}
	first, _ := utf8.DecodeRuneInString(name)
	last, _ := utf8.DecodeLastRuneInString(name)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return bad()
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return bad()
		}
	}
	return nil
}

// IsAPIToolName reports whether name meets APINameRule, so that every
// model API carries it as it is.
func IsAPIToolName(name string) bool { return apiNameRE.MatchString(name) }

// apiHashLen is the number of hex digits of the hash APIToolName appends.
const apiHashLen = 8

// APIToolName returns the name renderings give a tool called name: name
// itself when it meets APINameRule, else a name that does, made of name's
// letters, digits, "_" and "-" (each run of other characters one "_"),
// cut to fit, then "_" and the first 8 hex digits of name's SHA-256:
// "weather.get" is "weather_get_" followed by those digits. It depends on
// name alone, so a tool keeps it across reloads and processes, and the
// hash keeps it apart from the names of other tools (the registry still
// refuses a tool whose rendered name is another tool's name).
func APIToolName(name string) string {
	if IsAPIToolName(name) {
		return name
	}
	slug := make([]byte, 0, len(name))
	for _, r := range name {
		switch {
		case r < utf8.RuneSelf && (r == '_' || r == '-' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'):
			slug = append(slug, byte(r))
		case len(slug) > 0 && slug[len(slug)-1] != '_':
			slug = append(slug, '_')
		}
	}
	for len(slug) > 0 && slug[len(slug)-1] == '_' {
		slug = slug[:len(slug)-1]
	}
	if len(slug) == 0 {
		slug = []byte("tool")
	}
	slug = slug[:min(len(slug), MaxAPIToolNameLength-1-apiHashLen)]
	sum := sha256.Sum256([]byte(name))
	return string(slug) + "_" + hex.EncodeToString(sum[:apiHashLen/2])
}
