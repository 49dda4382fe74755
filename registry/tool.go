package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/fastschema"
	"github.com/skillhost/skillhost/packs"
)

// Kind says how a tool is implemented.
type Kind string

// Kinds of tools.
const (
	// KindWasm is a tool exported by a Wasm module of a pack.
	KindWasm Kind = "wasm"
	// KindNative is a Go tool the embedder registered (Func, or a Native).
	KindNative Kind = "native"
	// KindBuiltin is one of skillhost's own tools (tool_search, skill_get…).
	KindBuiltin Kind = "builtin"
)

// Tool is one tool of the execution registry: its description, where it
// comes from, what it runs with, and how it is run. The description is
// the canonical packs.Tool, the one type the index, the renderings and the
// CLI read; the registry fills in what a manifest may leave out (display
// name, category, loading mode, version) before it is shared, and never
// changes it after.
//
// A Tool is immutable once the registry is built and safe for concurrent
// use.
type Tool struct {
	// Tool is the description: name, description, schemas, examples,
	// flags, risk inputs, category, tags, loading mode, config params.
	*packs.ToolSpec
	// Kind says how the tool is implemented.
	Kind Kind
	// APIName is the name the renderings give the tool: Name when every
	// model API accepts it (packs.IsAPIToolName), else
	// packs.APIToolName(Name). A call by either name reaches the tool.
	APIName string
	// RunsCode says the tool runs code its arguments choose, as
	// run_skill_script runs a skill's script: no rendering may present it
	// as read-only, idempotent or closed to the outside world, whatever
	// its description says (see MCPTools).
	RunsCode bool
	// Pack and PackVersion name the pack of a Wasm tool ("" otherwise),
	// and PackDescription is the pack's description (the description of
	// its OpenAI Responses namespace).
	Pack            string
	PackVersion     string
	PackDescription string
	// Source is the pack source (bundled, installed, user, workspace) of a
	// Wasm tool, "native" or "builtin" otherwise.
	Source string
	// IconURI is the tool's icon as a data: URI, when its icon is an
	// image file of its pack (packs.IconFile), read when the tool was
	// registered; "" otherwise.
	IconURI string
	// Path is the manifest that declares a Wasm tool, with its source root.
	Path string
	// Module is the name of a Wasm tool's module in its pack.
	Module string

	// Requested is what a Wasm tool's module asks for, Operator what the
	// operator grants its pack (limits resolved to ceilings), and Effective
	// their intersection: what it runs with. Zero for other kinds.
	Requested host.Grant
	Operator  host.Grant
	Effective host.Grant
	// GrantFrom says where Operator comes from: GrantFromConfig,
	// GrantFromEmbedder or GrantFromNone.
	GrantFrom string
	// LimitFrom says which side set each limit of Effective, by the name
	// host.Limits gives it in JSON ("timeout", "max_memory_bytes", …).
	LimitFrom map[string]Origin
	// Isolation is where a Wasm tool's calls run: Effective.Isolation, or
	// the host's default when that is empty. IsolationFrom says who chose
	// it: OriginOperator (the pack's section or its embedder grant),
	// OriginOperatorDefault (the config's [sandbox] section) or
	// OriginDefault. A manifest has no say.
	Isolation     host.Isolation
	IsolationFrom Origin

	// input and output are the compiled schemas (nil: none declared).
	input, output *jsonschema.Schema
	// fast and fastOut are input's and output's zero-allocation checks,
	// nil when a schema is outside the subset internal/fastschema covers.
	fast, fastOut *fastschema.Plan
	impl          impl
}

// impl runs a tool once its arguments are validated.
type impl interface {
	call(ctx context.Context, c *call) (*Result, error)
}

// Native is a tool implemented in Go: the class form of a tool, for tools
// written by hand. Func builds one from a typed function, with its schemas
// inferred from the Go types.
type Native interface {
	// Describe returns the tool's description. Name and Description are
	// required; InputSchema defaults to an object with any properties.
	// The registry completes the description (category, loading mode,
	// display name) and does not keep the returned pointer's later
	// changes: describe once, at registration.
	Describe() packs.ToolSpec
	// Execute runs the tool. args is a JSON object already validated
	// against the input schema. The result is JSON (see Result.Output);
	// a returned error is a tool error shown to the model: a *ToolError
	// keeps its code, any other error becomes code guest_error with its
	// message.
	Execute(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// ToolError is an error a tool reports with an abi code, shown to the
// model as the result of the call.
type ToolError struct {
	Code    abi.Code
	Message string
}

func (e *ToolError) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Origin says which side set one of a tool's effective limits.
type Origin string

// The sides a limit may come from.
const (
	// OriginPack is the pack's manifest: its value is at or below the
	// operator's ceiling.
	OriginPack Origin = "pack"
	// OriginOperator is the operator's grant for the pack: the limits of
	// its [packs.<name>] section or of its Config.Grants entry.
	OriginOperator Origin = "operator"
	// OriginOperatorDefault is the operator's default for every pack:
	// the config's [limits] section or Config.DefaultLimits.
	OriginOperatorDefault Origin = "operator default"
	// OriginDefault is the built-in default (host.DefaultTimeout and the
	// rest).
	OriginDefault Origin = "default"
)

// Where the operator's grant for a pack comes from (Tool.GrantFrom).
const (
	// GrantFromConfig is the pack's [packs.<name>] section of the
	// operator config.
	GrantFromConfig = "config"
	// GrantFromEmbedder is the pack's entry in Config.Grants.
	GrantFromEmbedder = "embedder"
	// GrantFromNone says neither names the pack: it is granted nothing,
	// and the default limits hold.
	GrantFromNone = "none"
)

// Result is a tool call's outcome, as the model is shown it: Output on
// success, Error when the tool failed. A failure is a result, not a Go
// error; Run.Call returns a Go error only for a request it could not
// make at all.
type Result struct {
	// Output is JSON: the tool's JSON output, or its text output as a
	// JSON string. Nil when IsError.
	Output  json.RawMessage `json:"output,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	Error   *abi.Error      `json:"error,omitempty"`
	// Logs are the guest's log entries (Wasm tools).
	Logs []host.LogEntry `json:"logs,omitempty"`
	// Fuel is the instructions a metered Wasm tool ran, when FuelCounted
	// is set: a call without a fuel limit checks its deadline instead of
	// counting, unless the run counts fuel (RunOptions.CountFuel; see
	// host.Result.Fuel).
	Fuel        int64 `json:"fuel,omitempty"`
	FuelCounted bool  `json:"fuel_counted,omitempty"`
	// Instantiate and Execute split a Wasm tool's time: giving the call
	// its instance (instantiation, initialisers, or a snapshot restore)
	// and running the export.
	Instantiate time.Duration `json:"-"`
	Execute     time.Duration `json:"-"`
}

// errorResult returns a tool error result.
func errorResult(code abi.Code, format string, args ...any) *Result {
	return &Result{IsError: true, Error: &abi.Error{Code: code, Message: fmt.Sprintf(format, args...)}}
}
