package skill

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type basic struct {
	S   string            `json:"s"`
	B   bool              `json:"b"`
	I   int               `json:"i"`
	I8  int8              `json:"i8"`
	U   uint32            `json:"u"`
	F   float64           `json:"f"`
	Opt string            `json:"opt,omitempty"`
	Zer int               `json:"zer,omitzero"`
	Ptr *int              `json:"ptr"`
	Raw json.RawMessage   `json:"raw"`
	Any any               `json:"any"`
	T   time.Time         `json:"t"`
	Bs  []byte            `json:"bs"`
	Arr [2]string         `json:"arr"`
	L   []int             `json:"l"`
	M   map[string]bool   `json:"m"`
	MI  map[int]string    `json:"mi"`
	Num json.Number       `json:"num"`
	Str int               `json:"str,string"`
	IP  netip.Addr        `json:"ip"`
	Nil map[string][]bool `json:"-"`
	//lint:ignore SA5008 "-," names a field "-", which encoding/json allows
	Dsh string `json:"-,"`
	No  string
	//lint:ignore U1000 an unexported field is what this case tests
	low string
}

type tagged struct {
	Mode   string   `json:"mode" jsonschema:"enum=fast|slow,default=fast" desc:"How to run"`
	Count  int      `json:"count,omitempty" jsonschema:"minimum=1,maximum=100,required,description=Number of items\\, at most 100"`
	Ratio  float64  `json:"ratio" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1.5,optional"`
	Name   string   `json:"name" jsonschema:"minLength=1,maxLength=64,pattern=^[a-z]+(\\,[a-z]+)*$,title=Name,example=alice|bob"`
	Kinds  []string `json:"kinds,omitempty" jsonschema:"enum=a|b|c,minItems=1,maxItems=3,uniqueItems" desc:"Kinds to include"`
	Levels []int    `json:"levels" jsonschema:"minimum=0,default=[1,2]"`
	On     bool     `json:"on" jsonschema:"default=true"`
	URL    string   `json:"url" jsonschema:"format=uri,deprecated"`
	When   *int     `json:"when" jsonschema:"required"`
}

type Base struct {
	ID   string `json:"id" desc:"base id"`
	Name string `json:"name"`
}

type embeds struct {
	Base
	Name  string `json:"name" desc:"outer name wins"`
	Extra int    `json:"extra"`
	*Inner
	Named Base `json:"named"`
}

type Inner struct {
	Deep bool `json:"deep"`
}

type Node struct {
	Value    string  `json:"value"`
	Children []*Node `json:"children,omitempty"`
}

type Tree struct {
	Root  *Node `json:"root"`
	Other Node  `json:"other" desc:"another tree"`
}

type Ping struct {
	Pong *Pong `json:"pong,omitempty"`
}

type Pong struct {
	Ping *Ping `json:"ping,omitempty"`
}

type custom struct{}

func (custom) JSONSchema() json.RawMessage {
	return json.RawMessage(`{"type":"string","enum":["x","y"]}`)
}

type withCustom struct {
	C custom `json:"c" desc:"custom one"`
	P *custom
}

type level string

type withNamed struct {
	L level `json:"l" jsonschema:"enum=low|high"`
}

func TestSchemaOf(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"string", reflect.TypeFor[string](), `{"type":"string"}`},
		{"pointer to slice of uint", reflect.TypeFor[*[]uint](), `{"type":"array","items":{"type":"integer","minimum":0}}`},
		{"empty struct", reflect.TypeFor[struct{}](), `{"type":"object","additionalProperties":false}`},
		{"basic", reflect.TypeFor[basic](), `{
			"type":"object",
			"properties":{
				"s":{"type":"string"},
				"b":{"type":"boolean"},
				"i":{"type":"integer"},
				"i8":{"type":"integer"},
				"u":{"type":"integer","minimum":0},
				"f":{"type":"number"},
				"opt":{"type":"string"},
				"zer":{"type":"integer"},
				"ptr":{"type":"integer"},
				"raw":{},
				"any":{},
				"t":{"type":"string","format":"date-time"},
				"bs":{"type":"string","contentEncoding":"base64"},
				"arr":{"type":"array","items":{"type":"string"},"minItems":2,"maxItems":2},
				"l":{"type":"array","items":{"type":"integer"}},
				"m":{"type":"object","additionalProperties":{"type":"boolean"}},
				"mi":{"type":"object","additionalProperties":{"type":"string"}},
				"num":{"type":"number"},
				"str":{"type":"string"},
				"ip":{"type":"string"},
				"-":{"type":"string"},
				"No":{"type":"string"}
			},
			"required":["s","b","i","i8","u","f","raw","any","t","bs","arr","l","m","mi","num","str","ip","-","No"],
			"additionalProperties":false}`},
		{"tags", reflect.TypeFor[tagged](), `{
			"type":"object",
			"properties":{
				"mode":{"type":"string","description":"How to run","enum":["fast","slow"],"default":"fast"},
				"count":{"type":"integer","description":"Number of items, at most 100","minimum":1,"maximum":100},
				"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1.5},
				"name":{"type":"string","title":"Name","examples":["alice","bob"],"minLength":1,"maxLength":64,"pattern":"^[a-z]+(,[a-z]+)*$"},
				"kinds":{"type":"array","description":"Kinds to include","items":{"type":"string","enum":["a","b","c"]},"minItems":1,"maxItems":3,"uniqueItems":true},
				"levels":{"type":"array","default":[1,2],"items":{"type":"integer","minimum":0}},
				"on":{"type":"boolean","default":true},
				"url":{"type":"string","format":"uri","deprecated":true},
				"when":{"type":"integer"}
			},
			"required":["count","name","url","when"],
			"additionalProperties":false}`},
		{"embedded", reflect.TypeFor[embeds](), `{
			"type":"object",
			"properties":{
				"name":{"type":"string","description":"outer name wins"},
				"extra":{"type":"integer"},
				"named":{"type":"object","properties":{"id":{"type":"string","description":"base id"},"name":{"type":"string"}},"required":["id","name"],"additionalProperties":false},
				"id":{"type":"string","description":"base id"},
				"deep":{"type":"boolean"}
			},
			"required":["name","extra","named","id","deep"],
			"additionalProperties":false}`},
		{"recursive root", reflect.TypeFor[Node](), `{
			"type":"object",
			"properties":{"value":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},
			"required":["value"],
			"additionalProperties":false}`},
		{"recursive inside", reflect.TypeFor[Tree](), `{
			"type":"object",
			"properties":{
				"root":{"$ref":"#/$defs/Node"},
				"other":{"$ref":"#/$defs/Node","description":"another tree"}
			},
			"required":["other"],
			"additionalProperties":false,
			"$defs":{"Node":{"type":"object","properties":{"value":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["value"],"additionalProperties":false}}}`},
		{"mutual recursion", reflect.TypeFor[Ping](), `{
			"type":"object",
			"properties":{"pong":{"type":"object","properties":{"ping":{"$ref":"#"}},"additionalProperties":false}},
			"additionalProperties":false}`},
		{"schemaer", reflect.TypeFor[withCustom](), `{
			"type":"object",
			"properties":{
				"c":{"description":"custom one","enum":["x","y"],"type":"string"},
				"P":{"type":"string","enum":["x","y"]}
			},
			"required":["c"],
			"additionalProperties":false}`},
		{"named string enum", reflect.TypeFor[withNamed](), `{"type":"object","properties":{"l":{"type":"string","enum":["low","high"]}},"required":["l"],"additionalProperties":false}`},
		{"map of any", reflect.TypeFor[map[string]any](), `{"type":"object","additionalProperties":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := deriveSchema(tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(compact(t, tt.want), string(got)); diff != "" {
				t.Errorf("schema mismatch (-want +got):\n%s", diff)
			}
			// Deterministic: a second derivation gives the same bytes.
			s2, _ := deriveSchema(tt.typ)
			again, _ := json.Marshal(s2)
			if !bytes.Equal(got, again) {
				t.Errorf("second derivation differs:\n%s\n%s", got, again)
			}
		})
	}
}

func TestSchemaOfGeneric(t *testing.T) {
	got, err := SchemaOf[struct {
		A string `json:"a"`
	}]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSchemaErrors(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string // substring of the error
	}{
		{"chan field", reflect.TypeFor[struct {
			C chan int `json:"c"`
		}](), "field c: type chan int cannot be represented"},
		{"func", reflect.TypeFor[func()](), "cannot be represented"},
		{"complex in slice", reflect.TypeFor[struct {
			Z []complex128 `json:"z"`
		}](), "field z[]: type complex128"},
		{"bad map key", reflect.TypeFor[map[float64]string](), "map key type float64"},
		{"unknown key", reflect.TypeFor[struct {
			A string `json:"a" jsonschema:"colour=red"`
		}](), `field a: unknown jsonschema key "colour"`},
		{"enum not int", reflect.TypeFor[struct {
			N int `json:"n" jsonschema:"enum=1|two"`
		}](), `field n: jsonschema enum value "two" is not an integer`},
		{"minimum not number", reflect.TypeFor[struct {
			N int `json:"n" jsonschema:"minimum=low"`
		}](), `minimum="low" is not a number`},
		{"missing value", reflect.TypeFor[struct {
			N int `json:"n" jsonschema:"maximum"`
		}](), `"maximum" needs a value`},
		{"bad default bool", reflect.TypeFor[struct {
			B bool `json:"b" jsonschema:"default=yes please"`
		}](), "not a boolean"},
		{"bad json default", reflect.TypeFor[struct {
			L []int `json:"l" jsonschema:"default=[1,"`
		}](), "must be JSON"},
		{"nested path", reflect.TypeFor[struct {
			Outer struct {
				Inner map[string]func() `json:"inner"`
			} `json:"outer"`
		}](), "field outer.inner{}: type func()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := deriveSchema(tt.typ)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("bad want JSON: %v\n%s", err, s)
	}
	return b.String()
}
