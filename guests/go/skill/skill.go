package skill

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/skillhost/skillhost/abi"
)

// Option configures a tool at registration.
type Option func(*toolOptions)

type toolOptions struct {
	description string
	tags        []string
	export      string
	category    string
	flags       toolFlags
	examples    []example
}

// toolFlags are what a tool declares it does beyond computing its output.
type toolFlags struct {
	sideEffects, idempotent, network, filesystem bool
}

type example struct {
	description string
	args        any
}

// SideEffects declares that the tool changes something outside its output:
// it writes a file, sends a message, changes a record. With network or
// filesystem use it makes the tool DANGEROUS.
func SideEffects() Option {
	return func(o *toolOptions) { o.flags.sideEffects = true }
}

// Idempotent declares that calling the tool again with the same arguments
// gives the same result and changes nothing more. A tool that is
// idempotent and has no side effects is SAFE; a tool that declares
// neither is MODERATE.
func Idempotent() Option {
	return func(o *toolOptions) { o.flags.idempotent = true }
}

// RequiresNetwork declares that the tool makes HTTP requests.
func RequiresNetwork() Option {
	return func(o *toolOptions) { o.flags.network = true }
}

// RequiresFilesystem declares that the tool reads or writes mounted
// folders.
func RequiresFilesystem() Option {
	return func(o *toolOptions) { o.flags.filesystem = true }
}

// Category sets the group the tool is listed under ("text", "data", ...).
func Category(name string) Option {
	return func(o *toolOptions) { o.category = name }
}

// Example adds a sample call: args is the arguments object (a value of the
// tool's input type, a map, or json.RawMessage), checked against the
// input schema when the tool is registered; description says what it
// shows.
func Example(description string, args any) Option {
	return func(o *toolOptions) { o.examples = append(o.examples, example{description, args}) }
}

// Describe sets the tool's description: what it does and when a model
// should use it. It is the text a model reads to choose the tool.
func Describe(text string) Option {
	return func(o *toolOptions) { o.description = text }
}

// Tags adds search tags to the tool.
func Tags(tags ...string) Option {
	return func(o *toolOptions) { o.tags = append(o.tags, tags...) }
}

// Export sets the name of the Wasm export that runs the tool. It defaults
// to the tool name.
func Export(name string) Option {
	return func(o *toolOptions) { o.export = name }
}

// Handle is a registered tool. Its Run method is what the tool's Wasm
// export calls.
type Handle struct {
	name string
}

// Name returns the tool name.
func (h *Handle) Name() string { return h.name }

// Run runs the tool on the call's input and sets the call's output or
// error; it returns the value the export must return (0 on success, 1 on
// failure). See the package documentation for the export pattern.
func (h *Handle) Run() int32 { return Run(h.name) }

// tool is one registry entry.
type tool struct {
	desc   abi.ToolDescriptor
	invoke func(input []byte) ([]byte, *abi.Error)
}

var registry = struct {
	sync.Mutex
	tools   map[string]*tool
	exports map[string]string
}{tools: map[string]*tool{}, exports: map[string]string{}}

// Tool registers a tool named name, implemented by fn. The input and
// output JSON Schemas are derived from In and Out (see the package
// documentation); In must encode as a JSON object: a struct, a map with
// string keys, or json.RawMessage / any.
//
// Register tools from package-level variables or init functions: a
// reactor module (-buildmode=c-shared) runs package initialisation when it
// is instantiated, but never runs main.
//
// Tool panics on an empty or duplicate name or export, a nil fn, or types
// the schema derivation refuses; these are programming errors that show at
// the module's first load (and in a unit test calling Invoke).
func Tool[In, Out any](name string, fn func(In) (Out, error), opts ...Option) *Handle {
	if name == "" {
		panic("skill: Tool with an empty name")
	}
	if fn == nil {
		panic(fmt.Sprintf("skill: Tool %q with a nil function", name))
	}
	var o toolOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.export == "" {
		o.export = name
	}
	inType, outType := reflect.TypeFor[In](), reflect.TypeFor[Out]()
	in, err := deriveSchema(inType)
	if err != nil {
		panic(fmt.Sprintf("skill: tool %q input: %v", name, err))
	}
	if in.Raw == nil && in.Type != "object" && in.Type != "" {
		panic(fmt.Sprintf("skill: tool %q input type %s must encode as a JSON object", name, inType))
	}
	if in.Type == "" && in.Raw == nil && in.Ref == "" {
		in = &schema{Type: "object"} // any or json.RawMessage
	}
	out, err := deriveSchema(outType)
	if err != nil {
		panic(fmt.Sprintf("skill: tool %q output: %v", name, err))
	}
	inJSON, err := json.Marshal(in)
	if err != nil {
		panic(fmt.Sprintf("skill: tool %q input schema: %v", name, err))
	}
	outJSON, err := json.Marshal(out)
	if err != nil {
		panic(fmt.Sprintf("skill: tool %q output schema: %v", name, err))
	}

	t := &tool{
		desc: abi.ToolDescriptor{
			Name:         name,
			Export:       o.export,
			Description:  o.description,
			InputSchema:  inJSON,
			OutputSchema: outJSON,
			Tags:         o.tags,
			Category:     o.category,

			SideEffects:        o.flags.sideEffects,
			Idempotent:         o.flags.idempotent,
			RequiresNetwork:    o.flags.network,
			RequiresFilesystem: o.flags.filesystem,
		},
	}
	for i, ex := range o.examples {
		args, err := json.Marshal(ex.args)
		if err != nil {
			panic(fmt.Sprintf("skill: tool %q example %d: %v", name, i, err))
		}
		var v In
		if e := decodeInput(args, &v, in); e != nil {
			panic(fmt.Sprintf("skill: tool %q example %d does not fit the input schema: %s", name, i, e.Message))
		}
		t.desc.Examples = append(t.desc.Examples, abi.ToolExample{Args: args, Description: ex.description})
	}
	plan := newArgPlan(inType, in)
	t.invoke = func(input []byte) ([]byte, *abi.Error) {
		var v In
		if e := readArgs(input, &v, in, plan); e != nil {
			return nil, e
		}
		res, err := fn(v)
		if err != nil {
			return nil, toABIError(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			return nil, &abi.Error{Code: abi.CodeGuestError, Message: "encoding the output: " + err.Error()}
		}
		return b, nil
	}

	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.tools[name]; dup {
		panic(fmt.Sprintf("skill: tool %q registered twice", name))
	}
	if other, dup := registry.exports[o.export]; dup {
		panic(fmt.Sprintf("skill: tools %q and %q share the export %q", other, name, o.export))
	}
	if o.export == abi.ExportDescribe || strings.HasPrefix(o.export, "_") {
		panic(fmt.Sprintf("skill: tool %q cannot use the reserved export name %q", name, o.export))
	}
	registry.tools[name] = t
	registry.exports[o.export] = name
	return &Handle{name: name}
}

// Description returns what the module's describe export reports: the ABI
// version and every registered tool, sorted by name.
func Description() abi.Description {
	registry.Lock()
	defer registry.Unlock()
	d := abi.Description{ABI: abi.Version, Tools: []abi.ToolDescriptor{}}
	for _, t := range registry.tools {
		d.Tools = append(d.Tools, t.desc)
	}
	sort.Slice(d.Tools, func(i, j int) bool { return d.Tools[i].Name < d.Tools[j].Name })
	return d
}

func lookup(name string) *tool {
	registry.Lock()
	defer registry.Unlock()
	return registry.tools[name]
}
