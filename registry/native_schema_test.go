package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// The schemas Func infers are kept as golden files under
// testdata/registry/schema, rewritten with -update. The flag is defined
// here only when no other test file of the package defines it.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata")
	}
}

func nativeUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const nativeSchemaDir = "../testdata/registry/schema"

// Every type form the inference supports, one case per golden file.

type SchemaScalars struct {
	S   string      `json:"s"`
	B   bool        `json:"b"`
	I   int         `json:"i"`
	I8  int8        `json:"i8"`
	I64 int64       `json:"i64"`
	U   uint        `json:"u"`
	U16 uint16      `json:"u16"`
	F32 float32     `json:"f32"`
	F64 float64     `json:"f64"`
	Num json.Number `json:"num"`
	Str int         `json:"str,string"`
	//lint:ignore SA5008 "-," names a field "-", which encoding/json allows
	Dash    string `json:"-,"`
	NoTag   string
	Skipped string `json:"-"`
	//lint:ignore U1000 an unexported field is what this case tests
	unexport string
}

type SchemaOptional struct {
	Plain     string  `json:"plain"`
	OmitEmpty string  `json:"omit_empty,omitempty"`
	OmitZero  int     `json:"omit_zero,omitzero"`
	Pointer   *string `json:"pointer"`
	// A pointer can be made required, omitempty too.
	PointerRequired *int   `json:"pointer_required" jsonschema:"required"`
	OmitRequired    string `json:"omit_required,omitempty" jsonschema:"required"`
	// optional and default make a field optional without omitempty.
	Optional    bool   `json:"optional" jsonschema:"optional"`
	WithDefault string `json:"with_default" jsonschema:"default=x"`
}

type SchemaCollections struct {
	Strings  []string            `json:"strings"`
	Nested   [][]int             `json:"nested"`
	Array    [3]float64          `json:"array"`
	Bytes    []byte              `json:"bytes" desc:"Raw bytes, base64 in JSON"`
	ByteArr  [4]byte             `json:"byte_arr"`
	Map      map[string]int      `json:"map"`
	IntKeys  map[int]string      `json:"int_keys"`
	MapSlice map[string][]bool   `json:"map_slice"`
	Structs  []SchemaPoint       `json:"structs"`
	PtrItems []*SchemaPoint      `json:"ptr_items,omitempty"`
	MapOfPts map[string]*float64 `json:"map_of_pts,omitempty"`
}

type SchemaPoint struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// SchemaLevel is a named string type: its enum comes from the field's tag.
type SchemaLevel string

// schemaOwn supplies its own schema (goschema.Schemaer).
type schemaOwn struct{}

func (schemaOwn) JSONSchema() json.RawMessage {
	return json.RawMessage(`{"type":"string","format":"uuid"}`)
}

// schemaCustom has a custom JSON encoding and no schema: unconstrained.
type schemaCustom struct{}

func (schemaCustom) MarshalJSON() ([]byte, error) { return []byte(`0`), nil }

type SchemaSpecial struct {
	When     time.Time       `json:"when"`
	Maybe    *time.Time      `json:"maybe"`
	Raw      json.RawMessage `json:"raw"`
	Any      any             `json:"any"`
	Addr     netip.Addr      `json:"addr" desc:"An IP address (a TextMarshaler)"`
	Own      schemaOwn       `json:"own" desc:"Supplied by the type"`
	Custom   schemaCustom    `json:"custom"`
	Duration time.Duration   `json:"duration" desc:"Nanoseconds: a Duration is an int64 in JSON"`
}

type SchemaNested struct {
	Point  SchemaPoint  `json:"point" desc:"Where"`
	Ptr    *SchemaPoint `json:"ptr,omitempty"`
	Inline struct {
		A string `json:"a"`
		B struct {
			C int `json:"c,omitempty"`
		} `json:"b"`
	} `json:"inline"`
}

type SchemaBase struct {
	ID   string `json:"id" desc:"From the embedded struct"`
	Name string `json:"name" desc:"Shadowed by the outer field"`
}

type SchemaExtra struct {
	Deep bool `json:"deep"`
}

type SchemaTagged struct {
	Tag string `json:"tag"`
}

type SchemaEmbedded struct {
	SchemaBase
	*SchemaExtra
	SchemaTagged `json:"tagged"`
	SchemaLevel
	Name string `json:"name" desc:"The outer name wins"`
}

type SchemaTags struct {
	Mode    string        `json:"mode" desc:"How to run" jsonschema:"enum=fast|slow,default=fast"`
	Level   SchemaLevel   `json:"level" jsonschema:"enum=low|high"`
	Count   int           `json:"count,omitempty" jsonschema:"minimum=1,maximum=100,required,description=Number of items\\, at most 100"`
	Ratio   float64       `json:"ratio" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1.5,optional"`
	Name    string        `json:"name" jsonschema:"minLength=1,maxLength=64,pattern=^[a-z]+(\\,[a-z]+)*$,title=Name,example=alice|bob"`
	Kinds   []string      `json:"kinds,omitempty" desc:"Kinds to include" jsonschema:"enum=a|b|c,minItems=1,maxItems=3,uniqueItems"`
	Levels  []int         `json:"levels" jsonschema:"minimum=0,default=[1,2]"`
	Codes   []int         `json:"codes,omitempty" jsonschema:"enum=200|404"`
	On      bool          `json:"on" jsonschema:"default=true"`
	URL     string        `json:"url" jsonschema:"format=uri,deprecated"`
	Nearest []SchemaLevel `json:"nearest,omitempty" jsonschema:"enum=low|high"`
}

// SchemaNode is recursive: as the root type it refers to itself as "#".
type SchemaNode struct {
	Value    string        `json:"value"`
	Children []*SchemaNode `json:"children,omitempty"`
}

// SchemaTree holds recursive nodes: they are defined once in $defs.
type SchemaTree struct {
	Root  *SchemaNode `json:"root"`
	Other SchemaNode  `json:"other" desc:"Another tree"`
}

// SchemaPing and SchemaPong refer to each other.
type SchemaPing struct {
	Pong *SchemaPong `json:"pong,omitempty"`
}

type SchemaPong struct {
	Ping *SchemaPing `json:"ping,omitempty"`
}

// SchemaBox is generic; each instantiation has its own definition.
type SchemaBox[T any] struct {
	Value T             `json:"value"`
	Next  *SchemaBox[T] `json:"next,omitempty"`
}

type SchemaBoxes struct {
	Ints    SchemaBox[int]    `json:"ints"`
	Strings SchemaBox[string] `json:"strings"`
}

// describeFunc builds a Func tool and returns its description.
func describeFunc[In, Out any](t *testing.T, opts *registry.FuncOptions) packs.ToolSpec {
	t.Helper()
	if opts == nil {
		opts = &registry.FuncOptions{}
	}
	if opts.Description == "" {
		opts.Description = "A test tool."
	}
	tool, err := registry.Func("schema_case", func(context.Context, In) (Out, error) {
		var zero Out
		return zero, nil
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Describe()
}

func TestFuncSchemaGolden(t *testing.T) {
	cases := []struct {
		name string
		desc func(t *testing.T) packs.ToolSpec
	}{
		{"scalars", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaScalars, SchemaScalars](t, nil) }},
		{"optional", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaOptional, struct{}](t, nil) }},
		{"collections", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaCollections, []SchemaPoint](t, nil) }},
		{"special", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaSpecial, time.Time](t, nil) }},
		{"nested", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaNested, *SchemaPoint](t, nil) }},
		{"embedded", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaEmbedded, map[string]SchemaPoint](t, nil) }},
		{"tags", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaTags, []byte](t, nil) }},
		{"recursive_root", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaNode, []SchemaNode](t, nil) }},
		{"recursive_inside", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaTree, SchemaTree](t, nil) }},
		{"mutual_recursion", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaPing, SchemaPong](t, nil) }},
		{"generic", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaBoxes, SchemaBox[bool]](t, nil) }},
		{"pointer_input", func(t *testing.T) packs.ToolSpec { return describeFunc[*SchemaPoint, float64](t, nil) }},
		{"map_input", func(t *testing.T) packs.ToolSpec { return describeFunc[map[string]any, map[string]any](t, nil) }},
		{"string_map_input", func(t *testing.T) packs.ToolSpec { return describeFunc[map[string]string, string](t, nil) }},
		{"empty_input", func(t *testing.T) packs.ToolSpec { return describeFunc[struct{}, int](t, nil) }},
		{"custom_input", func(t *testing.T) packs.ToolSpec { return describeFunc[schemaCustom, bool](t, nil) }},
		{"raw_output", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaPoint, json.RawMessage](t, nil) }},
		{"any_output", func(t *testing.T) packs.ToolSpec { return describeFunc[SchemaPoint, any](t, nil) }},
		{"overrides", func(t *testing.T) packs.ToolSpec {
			return describeFunc[map[string]any, json.RawMessage](t, &registry.FuncOptions{
				Description:  "Schemas written by hand.",
				InputSchema:  json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
				OutputSchema: json.RawMessage(`{"type":"array","items":{"type":"string"}}`),
			})
		}},
		{"options", func(t *testing.T) packs.ToolSpec {
			return describeFunc[SchemaPoint, SchemaPoint](t, &registry.FuncOptions{
				Description:        "Every option set.",
				Examples:           []packs.Example{{Args: json.RawMessage(`{"x":1,"y":2}`), Description: "A point", Tags: []string{"demo"}}},
				Tags:               []string{"geometry", "demo"},
				Category:           "maths",
				DisplayName:        "Point echo",
				Icon:               "📐",
				Version:            "1.2.3",
				SideEffects:        true,
				Idempotent:         true,
				RequiresNetwork:    true,
				RequiresFilesystem: true,
				RiskLevel:          "CRITICAL",
				Hidden:             true,
				Loading:            packs.LoadingAlways,
				ConfigParams:       []packs.ConfigParam{{Name: "scale", Type: packs.ParamNumber, Default: json.RawMessage(`1`)}},
			})
		}},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.desc(t)
			for what, doc := range map[string]json.RawMessage{"input": d.InputSchema, "output": d.OutputSchema} {
				if len(doc) == 0 {
					continue
				}
				// Each schema compiles as the registry will compile it.
				if _, err := packs.CompileSchema(doc); err != nil {
					t.Errorf("%s schema does not compile: %v", what, err)
				}
			}
			// The same types give the same bytes every time.
			if again := tc.desc(t); !bytes.Equal(again.InputSchema, d.InputSchema) || !bytes.Equal(again.OutputSchema, d.OutputSchema) {
				t.Error("a second Func gives other schemas")
			}
			got, err := json.MarshalIndent(d, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			seen[tc.name+".json"] = true
			testenv.Golden(t, filepath.Join(nativeSchemaDir, tc.name+".json"), append(got, '\n'), nativeUpdate())
		})
	}
	// No golden file is left over from a case that no longer exists.
	files, _ := filepath.Glob(filepath.Join(nativeSchemaDir, "*.json"))
	for _, f := range files {
		if !seen[filepath.Base(f)] && !nativeUpdate() {
			t.Errorf("%s has no test case", f)
		}
	}
}

// Func refuses input types that are not objects, types JSON cannot carry,
// malformed tags and unusable options, naming the type or field.
func TestFuncRefuses(t *testing.T) {
	noop := func(_ context.Context, _ struct{}) (struct{}, error) { return struct{}{}, nil }
	desc := &registry.FuncOptions{Description: "d"}
	tests := []struct {
		name string
		make func() (registry.Native, error)
		want string
	}{
		{"string input", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, string) (int, error) { return 0, nil }, desc)
		}, "input type string must be a struct, a pointer to a struct, or a map with string keys"},
		{"int input", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, int) (int, error) { return 0, nil }, desc)
		}, "input type int must be"},
		{"slice input", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, []SchemaPoint) (int, error) { return 0, nil }, desc)
		}, "input type []registry_test.SchemaPoint must be"},
		{"pointer to slice input", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, *[]string) (int, error) { return 0, nil }, desc)
		}, "input type *[]string must be"},
		{"double pointer input", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, **SchemaPoint) (int, error) { return 0, nil }, desc)
		}, "input type **registry_test.SchemaPoint must be"},
		{"int-keyed map input", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, map[int]string) (int, error) { return 0, nil }, desc)
		}, "input type map[int]string must be"},
		{"raw input", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, json.RawMessage) (int, error) { return 0, nil }, desc)
		}, "input type json.RawMessage must be"},
		{"any input", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, any) (int, error) { return 0, nil }, desc)
		}, "input type interface {} must be"},
		{"time input", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, time.Time) (int, error) { return 0, nil }, desc)
		}, `input type time.Time does not encode as a JSON object: the arguments are a JSON object, but the schema's type is "string"`},
		{"chan field", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, struct {
				C chan int `json:"c"`
			}) (int, error) {
				return 0, nil
			}, desc)
		}, "field c: type chan int cannot be represented in JSON"},
		{"func in nested map", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, struct {
				Outer struct {
					Inner map[string]func() `json:"inner"`
				} `json:"outer"`
			}) (int, error) {
				return 0, nil
			}, desc)
		}, "field outer.inner{}: type func()"},
		{"bad output", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, struct{}) (complex128, error) { return 0, nil }, desc)
		}, "output type complex128: type complex128 cannot be represented in JSON"},
		{"unknown tag key", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, struct {
				A string `json:"a" jsonschema:"colour=red"`
			}) (int, error) {
				return 0, nil
			}, desc)
		}, `field a: unknown jsonschema key "colour"`},
		{"enum not an integer", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, struct {
				N int `json:"n" jsonschema:"enum=1|two"`
			}) (int, error) {
				return 0, nil
			}, desc)
		}, `field n: jsonschema enum value "two" is not an integer`},
		{"bad pattern", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, struct {
				S string `json:"s" jsonschema:"pattern=(["`
			}) (int, error) {
				return 0, nil
			}, desc)
		}, "input schema:"},
		{"no name", func() (registry.Native, error) { return registry.Func("", noop, desc) }, "a native tool needs a name"},
		{"nil func", func() (registry.Native, error) {
			return registry.Func[struct{}, struct{}]("x", nil, desc)
		}, "nil function"},
		{"nil options", func() (registry.Native, error) { return registry.Func("x", noop, nil) }, "a description is required"},
		{"blank description", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: " \n"})
		}, "a description is required"},
		{"bad loading", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: "d", Loading: "lazy"})
		}, `loading "lazy" is not "always" or "deferred"`},
		{"bad risk", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: "d", RiskLevel: "LOW"})
		}, `risk level "LOW"`},
		{"input schema not JSON", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: "d", InputSchema: json.RawMessage(`{`)})
		}, "input schema: not a JSON object"},
		{"input schema not an object", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: "d", InputSchema: json.RawMessage(`{"type":"array"}`)})
		}, `input schema: the arguments are a JSON object, but the schema's type is "array"`},
		{"input schema does not compile", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: "d", InputSchema: json.RawMessage(`{"type":"object","required":"a"}`)})
		}, "input schema:"},
		{"output schema does not compile", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: "d", OutputSchema: json.RawMessage(`{"type":7}`)})
		}, "output schema:"},
		{"example breaks the schema", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, SchemaPoint) (int, error) { return 0, nil },
				&registry.FuncOptions{Description: "d", Examples: []packs.Example{
					{Args: json.RawMessage(`{"x":1,"y":2}`)},
					{Args: json.RawMessage(`{"x":"one"}`)},
				}})
		}, "example 2: args do not match the input schema: $: missing required field \"y\"; $.x: must be a number, got string"},
		{"example without args", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: "d", Examples: []packs.Example{{Description: "none"}}})
		}, "example 1: no args"},
		{"example the type cannot take", func() (registry.Native, error) {
			return registry.Func("x", func(context.Context, SchemaPoint) (int, error) { return 0, nil },
				&registry.FuncOptions{Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`),
					Examples: []packs.Example{{Args: json.RawMessage(`{"x":"one"}`)}}})
		}, `example 1: args do not decode into registry_test.SchemaPoint: invalid arguments: field "x": expected a number, got JSON string`},
		{"config param without a name", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: "d", ConfigParams: []packs.ConfigParam{{Type: packs.ParamString}}})
		}, "a config param needs a name"},
		{"config param twice", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: "d", ConfigParams: []packs.ConfigParam{
				{Name: "a", Type: packs.ParamString}, {Name: "a", Type: packs.ParamNumber}}})
		}, `config param "a" is declared twice`},
		{"config param type", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: "d", ConfigParams: []packs.ConfigParam{{Name: "a", Type: "colour"}}})
		}, `config param "a" has an unknown type "colour"`},
		{"secret with a default", func() (registry.Native, error) {
			return registry.Func("x", noop, &registry.FuncOptions{Description: "d", ConfigParams: []packs.ConfigParam{
				{Name: "key", Type: packs.ParamSecret, Default: json.RawMessage(`"s3cr3t"`)}}})
		}, `config param "key" is a secret and cannot have a default`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := tt.make()
			if err == nil {
				t.Fatalf("no error; described as %+v", n.Describe())
			}
			if !errors.Is(err, registry.ErrInvalidTool) {
				t.Errorf("%v does not wrap ErrInvalidTool", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n\t%v\ndoes not contain\n\t%s", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %v shows a secret's default", err)
			}
		})
	}
}
