package skill

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type flatMode string

// flatIn is an input the argument plan reads: every kind it takes, named
// types, pointers, and each check validate makes on a value.
type flatIn struct {
	Text     string   `json:"text" jsonschema:"minLength=1,maxLength=8"`
	Sep      string   `json:"sep,omitempty" jsonschema:"enum=-|_|."`
	Mode     flatMode `json:"mode,omitempty" jsonschema:"enum=a|b"`
	N        int      `json:"n,omitempty" jsonschema:"minimum=0,maximum=500"`
	I8       int8     `json:"i8,omitempty"`
	U        uint16   `json:"u,omitempty" jsonschema:"exclusiveMaximum=1000"`
	F        float64  `json:"f,omitempty" jsonschema:"exclusiveMinimum=0"`
	F32      float32  `json:"f32,omitempty"`
	B        bool     `json:"b,omitempty"`
	P        *int     `json:"p,omitempty" jsonschema:"minimum=1"`
	PS       *string  `json:"ps,omitempty"`
	Untagged string
	//lint:ignore U1000 an unexported field, which encoding/json and the plan skip
	hidden string
	Skip   string `json:"-"`
}

func flatPlan(t *testing.T) (*argPlan, *schema) {
	t.Helper()
	s, err := deriveSchema(reflect.TypeFor[flatIn]())
	if err != nil {
		t.Fatal(err)
	}
	p := newArgPlan(reflect.TypeFor[flatIn](), s)
	if p == nil {
		t.Fatal("no plan for flatIn")
	}
	return p, s
}

// checkPlan decodes input with the plan and with decodeInput: when the
// plan takes the input, decodeInput must accept it too and give the same
// value. It reports whether the plan took it.
func checkPlan(t *testing.T, p *argPlan, s *schema, input string) bool {
	t.Helper()
	var fast flatIn
	if !p.read([]byte(input), &fast) {
		return false
	}
	var want flatIn
	if e := decodeInput([]byte(input), &want, s); e != nil {
		t.Fatalf("%s: the plan took it, decodeInput says %s", input, e.Message)
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("%s: the plan read %+v, decodeInput %+v", input, fast, want)
	}
	return true
}

var planInputs = []struct {
	in   string
	fast bool // the plan reads it itself
}{
	{`{"text":"abc","Untagged":""}`, true},
	{` {"text" : "héllo" , "Untagged":"x"}  `, true},
	{"\t{\n\"text\":\"a\",\r\"Untagged\":\"\"}\n", true},
	{`{"text":"a","Untagged":"","sep":"_","mode":"b","n":500,"i8":-128,"u":999,"f":1e-3,"f32":3.5,"b":true,"p":7,"ps":"s"}`, true},
	{`{"text":"a","Untagged":"","n":0,"b":false,"f":0.5E+2,"i8":127,"n":1}`, false}, // duplicate key
	{`{"text":"a","Untagged":"","f":-0.0}`, false},                                  // not more than 0
	{`{"text":"a","Untagged":"","n":-0}`, true},
	{`{"text":"a","Untagged":"","u":0}`, true},
	{`{"text":"ab","Untagged":"","n":1.0}`, false},
	{`{"text":"ab","Untagged":"","n":1e2}`, false},
	{`{"text":"ab","Untagged":"","n":01}`, false},
	{`{"text":"ab","Untagged":"","n":-}`, false},
	{`{"text":"ab","Untagged":"","n":501}`, false},
	{`{"text":"ab","Untagged":"","i8":128}`, false},
	{`{"text":"ab","Untagged":"","u":-1}`, false},
	{`{"text":"ab","Untagged":"","u":1000}`, false},
	{`{"text":"ab","Untagged":"","f32":1e39}`, false},
	{`{"text":"ab","Untagged":"","p":0}`, false},
	{`{"text":"ab","Untagged":"","p":null}`, false},
	{`{"text":"ab","Untagged":"","ps":null}`, false},
	{`{"text":"ab","Untagged":"","b":"true"}`, false},
	{`{"text":"ab","Untagged":"","b":truex}`, false},
	{`{"text":"ab","Untagged":"","sep":"/"}`, false},
	{`{"text":"ab","Untagged":"","mode":"c"}`, false},
	{`{"text":"","Untagged":""}`, false},
	{`{"text":"123456789","Untagged":""}`, false},
	{`{"text":"日本語日本語日本","Untagged":""}`, true},
	{`{"text":"a\"b","Untagged":""}`, true},
	{`{"text":"a\u00e9","Untagged":""}`, true},
	{`{"text":"\\\/\b\f\n\r\t","Untagged":""}`, true},
	{`{"text":"\ud83d\ude00!","Untagged":""}`, true},
	{`{"text":"\ud83d!","Untagged":""}`, true},
	{`{"text":"\ude00\ud83d","Untagged":""}`, true},
	{`{"text":"\ud83d\u0041","Untagged":""}`, true},
	{`{"text":"\ud83d\u12","Untagged":""}`, false},
	{`{"text":"\u00E9\u00e9","Untagged":"\u0000"}`, true},
	{`{"text":"a\'b","Untagged":""}`, false},
	{`{"text":"a\xb","Untagged":""}`, false},
	{`{"text":"a\u12g4","Untagged":""}`, false},
	{`{"text":"a\","Untagged":""}`, false},
	{"{\"text\":\"\\n\xff\",\"Untagged\":\"\"}", false},
	{"{\"text\":\"\\n\t\",\"Untagged\":\"\"}", false},
	{`{"te\u0078t":"ab","Untagged":""}`, false},
	{"{\"text\":\"a\xffb\",\"Untagged\":\"\"}", false},
	{"{\"text\":\"a\tb\",\"Untagged\":\"\"}", false},
	{`{"Text":"ab","Untagged":""}`, false},
	{`{"text":"ab","untagged":""}`, false},
	{`{"text":"ab","Untagged":"","hidden":"x"}`, false},
	{`{"text":"ab","Untagged":"","Skip":"x"}`, false},
	{`{"text":"ab","Untagged":"","extra":1}`, false},
	{`{"text":"ab"}`, false},
	{`{"text":"ab","Untagged":""} x`, false},
	{`{"text":"ab","Untagged":""}}`, false},
	{`{"text":"ab","Untagged":"",}`, false},
	{`{"text":"ab" "Untagged":""}`, false},
	{`{"text":"ab","Untagged":""`, false},
	{`{"text"`, false},
	{`{`, false},
	{`{}`, false},
	{``, false},
	{`[]`, false},
	{`null`, false},
	{`"text"`, false},
}

func TestArgPlanMatchesDecodeInput(t *testing.T) {
	p, s := flatPlan(t)
	for _, tt := range planInputs {
		if got := checkPlan(t, p, s, tt.in); got != tt.fast {
			t.Errorf("%s: plan read it: %v, want %v", tt.in, got, tt.fast)
		}
	}
}

// readArgs, the tools' way in, answers as decodeInput does, errors and
// their messages included, whether the plan reads the input or not.
func TestReadArgs(t *testing.T) {
	p, s := flatPlan(t)
	for _, tt := range planInputs {
		var want, got flatIn
		wantErr := decodeInput([]byte(tt.in), &want, s)
		gotErr := readArgs([]byte(tt.in), &got, s, p)
		if !reflect.DeepEqual(gotErr, wantErr) {
			t.Errorf("%s: error %+v, want %+v", tt.in, gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read %+v, want %+v", tt.in, got, want)
		}
	}
}

type unmarshalsItself struct{ V string }

func (u *unmarshalsItself) UnmarshalJSON(b []byte) error { u.V = string(b); return nil }

type textItself string

func (t *textItself) UnmarshalText(b []byte) error {
	*t = textItself(strings.ToUpper(string(b)))
	return nil
}

type embedded struct{ A string }

// The plan leaves every input type but a flat struct of plain fields to
// decodeInput.
func TestArgPlanRefuses(t *testing.T) {
	for name, typ := range map[string]reflect.Type{
		"slice":    reflect.TypeFor[struct{ A []string }](),
		"nested":   reflect.TypeFor[struct{ A struct{ B int } }](),
		"map":      reflect.TypeFor[map[string]any](),
		"any":      reflect.TypeFor[any](),
		"raw":      reflect.TypeFor[json.RawMessage](),
		"embedded": reflect.TypeFor[struct{ embedded }](),
		"number":   reflect.TypeFor[struct{ N json.Number }](),
		"string opt": reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](),
		"unmarshaler": reflect.TypeFor[struct{ U unmarshalsItself }](),
		"text":        reflect.TypeFor[struct{ T textItself }](),
		"time":        reflect.TypeFor[struct{ T time.Time }](),
		"pointer ptr": reflect.TypeFor[struct{ P **int }](),
		"interface":   reflect.TypeFor[struct{ I any }](),
		"odd name": reflect.TypeFor[struct {
			A int `json:"a b"`
		}](),
		"same name": reflect.StructOf([]reflect.StructField{
			{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"a"`},
			{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"a"`}}),
	} {
		s, err := deriveSchema(typ)
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue // refused at registration anyway
		}
		if p := newArgPlan(typ, s); p != nil {
			t.Errorf("%s: got a plan", name)
		}
	}
}

// FuzzArgPlan checks that whatever input the plan reads, decodeInput
// reads the same way.
func FuzzArgPlan(f *testing.F) {
	for _, tt := range planInputs {
		f.Add([]byte(tt.in))
	}
	p, s := flatPlan(&testing.T{})
	f.Fuzz(func(t *testing.T, in []byte) {
		checkPlan(t, p, s, string(in))
	})
}

func BenchmarkReadArgs(b *testing.B) {
	p, s := flatPlan(&testing.T{})
	in := []byte(`{"text":"héllo","Untagged":"","sep":"_","n":12,"b":true}`)
	b.Run("plan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v flatIn
			if e := readArgs(in, &v, s, p); e != nil {
				b.Fatal(e)
			}
		}
	})
	b.Run("decodeInput", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v flatIn
			if e := readArgs(in, &v, s, nil); e != nil {
				b.Fatal(e)
			}
		}
	})
}
