package fastschema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillhost/skillhost/packs"
)

// Each case gives a schema and documents with the verdict the fast path
// must reach; every document is also checked against the full validator.
var keywordCases = []struct {
	name   string
	schema string
	docs   map[string]verdict
}{
	{"true", `true`, map[string]verdict{`{}`: valid, `[1,{"a":[null]}]`: valid, `"x"`: valid, `{`: invalid, ``: invalid}},
	{"false", `false`, map[string]verdict{`{}`: invalid, `null`: invalid}},
	{"empty", `{}`, map[string]verdict{`{"a":1}`: valid, `1`: valid}},
	{"annotations", `{"title":"t","description":"d","default":{"a":1},"examples":[1],"$comment":"c","deprecated":true,"readOnly":false,"writeOnly":false,"contentEncoding":"base64","contentMediaType":"application/json","$schema":"https://json-schema.org/draft/2020-12/schema"}`,
		map[string]verdict{`"not base64 !"`: valid, `{}`: valid}},
	{"type object", `{"type":"object"}`, map[string]verdict{`{}`: valid, `[]`: invalid, `null`: invalid, `"{}"`: invalid}},
	{"type list", `{"type":["string","null"]}`, map[string]verdict{`"a"`: valid, `null`: valid, `1`: invalid, `false`: invalid}},
	{"type boolean", `{"type":"boolean"}`, map[string]verdict{`true`: valid, `false`: valid, `0`: invalid, `tru`: invalid, `truee`: invalid}},
	{"type null", `{"type":"null"}`, map[string]verdict{`null`: valid, `nul`: invalid, `"null"`: invalid}},
	{"type array", `{"type":"array"}`, map[string]verdict{`[]`: valid, `[1,"a",[{}]]`: valid, `[1,]`: invalid, `[,1]`: invalid, `{}`: invalid}},
	{"integer", `{"type":"integer"}`, map[string]verdict{
		`1`: valid, `-0`: valid, `1.0`: valid, `1.50e1`: valid, `1e2`: valid, `1E+2`: valid, `10e-1`: valid, `0.1e1`: valid,
		`1.5`: invalid, `1e-1`: invalid, `"1"`: invalid, `0.000001`: invalid,
		`123456789012345678901234567890`:    valid,
		`1e999`:                             valid,
		`1e1001`:                            unsure,
		`1e1000001`:                         unsure,
		`1` + strings.Repeat("0", 200):      unsure,
		`01`:                                invalid,
		`1.`:                                invalid,
		`.5`:                                invalid,
		`+1`:                                invalid,
		`-`:                                 invalid,
		`1e`:                                invalid,
		`NaN`:                               invalid,
		`0x10`:                              invalid,
		`1.0e+0000000000000000000000000001`: valid,
	}},
	{"number", `{"type":"number"}`, map[string]verdict{`1.5`: valid, `-0.0`: valid, `1e1000001`: valid, `1e-1000001`: valid, `[1]`: invalid}},
	{"minimum", `{"minimum":0,"maximum":10}`, map[string]verdict{
		`0`: valid, `-0`: valid, `10`: valid, `10.0`: valid, `1e1`: valid, `-0.0000001`: invalid, `10.000000000000000000001`: invalid,
		`1e400`: invalid, `"20"`: valid, `null`: valid,
		`1e1000001`: unsure, // the validator panics on it
	}},
	{"exclusive", `{"exclusiveMinimum":-1.5,"exclusiveMaximum":2.5e0}`, map[string]verdict{
		`-1.5`: invalid, `-1.4999`: valid, `2.5`: invalid, `2.4999999`: valid, `-15e-1`: invalid, `0`: valid,
	}},
	{"decimals", `{"minimum":0.1,"maximum":0.30000000000000004}`, map[string]verdict{
		`0.1`: valid, `0.09999999999999999999999`: invalid, `0.30000000000000004`: valid, `0.30000000000000005`: invalid, `3e-1`: valid,
	}},
	{"minLength", `{"minLength":2,"maxLength":3}`, map[string]verdict{
		`"ab"`: valid, `"abc"`: valid, `"a"`: invalid, `"abcd"`: invalid,
		`"éé"`: valid, `"😀😀😀"`: valid, `"😀"`: invalid, `"😀😀😀😀"`: invalid,
		`"\u00e9\u00e9"`: valid, `"\ud83d\ude00\ud83d\ude00"`: valid, `"\ud83d\ude00"`: invalid, `"\n\t"`: valid,
		`"\ud83d"`:   unsure, // a lone surrogate: U+FFFD to the validator
		"\"a\xffb\"": unsure, // invalid UTF-8
		`"\x"`:       invalid,
		"\"a\nb\"":   invalid, // a raw control character
		`"abc`:       invalid,
		`1`:          valid,
	}},
	{"minLength 2.0", `{"minLength":2.0}`, map[string]verdict{`"ab"`: valid, `"a"`: invalid}},
	{"enum", `{"enum":["a","é",1,null,true]}`, map[string]verdict{
		`"a"`: valid, `"\u0061"`: valid, `"é"`: valid, `"\u00e9"`: valid, `"e\u0301"`: invalid, `1`: valid, `1.0`: valid, `10e-1`: valid,
		`null`: valid, `true`: valid, `false`: invalid, `"b"`: invalid, `2`: invalid, `{}`: invalid, `[]`: invalid, `"1"`: invalid,
		"\"\xff\"": unsure,
	}},
	{"enum strings only", `{"enum":["a"]}`, map[string]verdict{`1`: invalid, `"a"`: valid}},
	{"const", `{"const":0}`, map[string]verdict{`0`: valid, `-0`: valid, `0.0e10`: valid, `0.1`: invalid, `"0"`: invalid, `false`: invalid}},
	{"const and enum", `{"const":"a","enum":["a","b"]}`, map[string]verdict{`"a"`: valid, `"b"`: invalid}},
	{"const null", `{"const":null}`, map[string]verdict{`null`: valid, `0`: invalid}},
	{"pattern", `{"pattern":"^[a-z]+\\d$"}`, map[string]verdict{
		`"abc1"`: valid, `"ab"`: invalid, `"\u0061b1"`: valid, `"ABC1"`: invalid, `3`: valid,
	}},
	{"pattern unanchored", `{"pattern":"é"}`, map[string]verdict{`"caf\u00e9!"`: valid, `"cafe"`: invalid}},
	{"items", `{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":2}`, map[string]verdict{
		`[1]`: valid, `[1,2]`: valid, `[]`: invalid, `[1,2,3]`: invalid, `[1.5]`: invalid, `[ 1 , 2 ]`: valid, `[1 2]`: invalid,
	}},
	{"items false", `{"items":false}`, map[string]verdict{`[]`: valid, `[1]`: invalid}},
	{"object", `{"type":"object","properties":{"text":{"type":"string","minLength":1},"n":{"type":"integer","minimum":0}},"required":["text"],"additionalProperties":false}`,
		map[string]verdict{
			`{"text":"hi","n":2}`:        valid,
			`{"text":"hi"}`:              valid,
			` { "text" : "hi" } `:        valid,
			"\t{\n\"text\":\r\"hi\"}":    valid,
			`{"\u0074ext":"hi"}`:         valid,
			`{"n":2}`:                    invalid,
			`{"text":""}`:                invalid,
			`{"text":"hi","m":1}`:        invalid,
			`{"text":"hi","n":-1}`:       invalid,
			`{"text":"hi","n":1.0}`:      valid,
			`{"text":"hi",}`:             invalid,
			`{"text":"hi"}x`:             invalid,
			`{"text":"hi"}{}`:            invalid,
			`{"text":"hi"} 1`:            invalid,
			`{text:"hi"}`:                invalid,
			`{"text" "hi"}`:              invalid,
			`{"text":"hi"`:               invalid,
			`{"text":"hi","n":-1,"n":2}`: invalid, // the validator keeps the last: the fast path says no, the slow path decides
			`{"text":"hi","n":2,"n":3}`:  valid,
			"{\"te\xffxt\":\"hi\"}":      unsure,
			`{"te\ud800xt":"hi"}`:        unsure,
		}},
	{"required only", `{"required":["a","b"]}`, map[string]verdict{`{"a":1,"b":[]}`: valid, `{"a":1}`: invalid, `{"b":1,"a":{"x":[1,2,{}]}}`: valid, `[]`: valid}},
	{"additionalProperties schema", `{"additionalProperties":{"type":"string"},"properties":{"n":{"type":"integer"}}}`, map[string]verdict{
		`{"n":1,"a":"x","b":"y"}`: valid, `{"a":1}`: invalid, `{"n":"1"}`: invalid, `{}`: valid,
	}},
	{"property false", `{"properties":{"secret":false}}`, map[string]verdict{`{"a":1}`: valid, `{"secret":null}`: invalid}},
	{"many properties", `{"properties":{"p0":{"type":"integer"},"p1":{},"p2":{},"p3":{},"p4":{},"p5":{},"p6":{},"p7":{},"p8":{},"p9":{"type":"string"}},"additionalProperties":false,"required":["p9"]}`,
		map[string]verdict{`{"p9":"x","p0":1}`: valid, `{"p0":1}`: invalid, `{"p9":"x","p10":1}`: invalid, `{"p\u0039":"x"}`: valid, `{"p9":1}`: invalid}},
	{"nested", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"enum":[1,2]}},"required":["b"]}}}}`,
		map[string]verdict{`{"a":[{"b":1},{"b":2.0}]}`: valid, `{"a":[{"b":3}]}`: invalid, `{"a":[{}]}`: invalid, `{"a":[]}`: valid}},
	{"deep any", `{"properties":{"data":{}}}`, map[string]verdict{
		`{"data":` + strings.Repeat("[", 400) + strings.Repeat("]", 400) + `}`:           valid,
		`{"data":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`:           unsure,
		`{"data":` + strings.Repeat(`{"a":`, 300) + `1` + strings.Repeat("}", 300) + `}`: valid,
		`{"data":[1,2}`:                     invalid,
		`{"data":{"a":1]}`:                  invalid,
		`{"data":{"a" 1}}`:                  invalid,
		`{"data":{1:1}}`:                    invalid,
		`{"data":[[],{},"x\u0041",-1.5e3]}`: valid,
		"{\"data\":\"\xff\xfe\"}":           valid, // unconstrained: the validator reads it too
		`{"data":"\ud800"}`:                 valid,
	}},
	{"unknown format", `{"format":"int64"}`, map[string]verdict{`"x"`: valid, `1`: valid}},
}

func TestKeywords(t *testing.T) {
	for _, tc := range keywordCases {
		t.Run(tc.name, func(t *testing.T) {
			full, plan := compileBoth(t, tc.schema)
			for doc, want := range tc.docs {
				if got := agree(t, tc.schema, full, plan, []byte(doc)); got != want {
					t.Errorf("%.60q: got %v, want %v", doc, got, want)
				}
			}
		})
	}
}

// Schemas outside the subset have no plan.
func TestRefused(t *testing.T) {
	for _, schema := range []string{
		``, `nul`, `1`, `"x"`, `[]`, `{} {}`,
		`{"$ref":"#"}`, `{"$defs":{}}`, `{"anyOf":[{}]}`, `{"allOf":[{}]}`, `{"oneOf":[{}]}`, `{"not":{}}`,
		`{"if":{},"then":{}}`, `{"multipleOf":2}`, `{"uniqueItems":true}`, `{"prefixItems":[{}]}`, `{"contains":{}}`,
		`{"patternProperties":{"a":{}}}`, `{"propertyNames":{}}`, `{"minProperties":1}`, `{"maxProperties":1}`,
		`{"dependentRequired":{}}`, `{"dependencies":{}}`, `{"unevaluatedProperties":false}`, `{"$id":"x"}`,
		`{"format":"ipv6"}`, `{"format":"regex"}`, `{"format":"uri-reference"}`, `{"format":"duration"}`, `{"format":1}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#"}`, `{"properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`,
		`{"type":"integer2"}`, `{"type":[]}`, `{"type":["string","string"]}`, `{"type":1}`,
		`{"enum":[]}`, `{"enum":[[1]]}`, `{"enum":[{}]}`, `{"const":[]}`, `{"enum":"a"}`,
		`{"minimum":"1"}`, `{"minimum":1e1001}`, `{"minLength":-1}`, `{"minLength":1.5}`, `{"minLength":1e20}`, `{"minLength":"1"}`,
		`{"pattern":"("}`, `{"pattern":1}`, `{"required":["a","a"]}`, `{"required":"a"}`, `{"required":[1]}`,
		`{"items":[{}]}`, `{"items":1}`, `{"additionalProperties":1}`, `{"properties":[]}`, `{"properties":{"a":1}}`,
		`{"title":1}`, `{"deprecated":"yes"}`, `{"examples":{}}`, `{"nullable":true}`, `{"x-extra":1}`,
	} {
		if _, ok := Compile(json.RawMessage(schema)); ok {
			t.Errorf("%s: compiled", schema)
		}
	}
	var deep strings.Builder
	for range maxSchemaDepth + 2 {
		deep.WriteString(`{"items":`)
	}
	deep.WriteString(`true`)
	for range maxSchemaDepth + 2 {
		deep.WriteString(`}`)
	}
	if _, ok := Compile(json.RawMessage(deep.String())); ok {
		t.Error("a schema nested too deep compiled")
	}
	req := make([]string, maxRequired+1)
	for i := range req {
		req[i] = `"p` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `"`
	}
	if _, ok := Compile(json.RawMessage(`{"required":[` + strings.Join(req, ",") + `]}`)); ok {
		t.Error("65 required names compiled")
	}
}

// Every schema of the bundled pack has a plan, and its examples and
// typical arguments are decided by the fast path.
func TestBundledSchemas(t *testing.T) {
	schemas, examples := bundledSchemas(t)
	for name, schema := range schemas {
		full, plan := compileBoth(t, schema)
		for _, ex := range examples[name] {
			if got := agree(t, schema, full, plan, []byte(ex)); got != valid {
				t.Errorf("%s: example %s: %v", name, ex, got)
			}
		}
	}
	for name, docs := range map[string]map[string]verdict{
		"http_fetch.input": {
			`{"url":"https://example.com/a?b=c#d"}`:                             valid,
			`{"url":"http://localhost:8080/api/v1/items?id=3&x=%20"}`:           valid,
			`{"url":"https:\/\/example.com\/"}`:                                 valid,
			`{"url":"example.com"}`:                                             invalid,
			`{"url":"/relative"}`:                                               invalid,
			`{"url":""}`:                                                        invalid,
			`{"url":"http://[::1]:80/"}`:                                        unsure,
			`{"url":"http://user@host/"}`:                                       unsure,
			`{"url":"http://a b/"}`:                                             unsure,
			`{"url":"https://x.y","method":"POST","json":{"a":[1,{"b":null}]}}`: valid,
			`{"url":"https://x.y","method":"post"}`:                             invalid,
			`{"url":"https://x.y","headers":{"Accept":"text/html"}}`:            valid,
			`{"url":"https://x.y","headers":{"Accept":1}}`:                      invalid,
			`{"url":"https://x.y","max_bytes":2000001}`:                         invalid,
			`{"url":"https://x.y","max_bytes":1e3}`:                             valid,
		},
		"regex_extract.input": {
			`{"pattern":"a+","text":"aaa","max_matches":5,"case_insensitive":true}`: valid,
			`{"pattern":"","text":"aaa"}`:                                           invalid,
			`{"pattern":"a","text":"a","max_matches":0}`:                            invalid,
			`{"pattern":"a","text":"a","max_matches":1e1000001}`:                    unsure,
		},
		"case_convert.input": {
			`{"text":"fooBar","to":"snake"}`: valid,
			`{"text":"fooBar","to":"Snake"}`: invalid,
			`{"text":"fooBar"}`:              invalid,
		},
	} {
		schema := schemas[name]
		full, plan := compileBoth(t, schema)
		for doc, want := range docs {
			if got := agree(t, schema, full, plan, []byte(doc)); got != want {
				t.Errorf("%s: %s: got %v, want %v", name, doc, got, want)
			}
		}
	}
}

// Valid does not allocate on the valid path.
func TestValidDoesNotAllocate(t *testing.T) {
	schemas, _ := bundledSchemas(t)
	for _, tc := range []struct{ schema, doc string }{
		{`{"type":"object","required":["text"],"additionalProperties":false,"properties":{"text":{"type":"string","minLength":1},"n":{"type":"integer","minimum":0}}}`, `{"text":"hello","n":3}`},
		{schemas["http_fetch.input"], `{"url":"https://example.com/a?b=c","method":"GET","headers":{"Accept":"application/json"},"json":{"a":[1,2,{"b":null}]},"max_bytes":1000}`},
		{schemas["http_fetch.input"], `{"url":"https:\/\/example.com\/"}`},
		{schemas["regex_extract.input"], `{"pattern":"\\d+","text":"a1 b22 c333","max_matches":10}`},
		{schemas["case_convert.input"], `{"text":"parse\u0048TTP","to":"snake"}`},
		{`{"properties":{"when":{"type":"string","format":"date-time"},"id":{"format":"uuid"},"to":{"format":"email"},"p":{"pattern":"^[a-z]+$"}}}`,
			`{"when":"2024-05-01T14:30:00.123+02:00","id":"123e4567-e89b-12d3-a456-426614174000","to":"a.b@example.org","p":"abc"}`},
		{`{"properties":{"a":{"type":"array","items":{"enum":[1.5,"x",null]}}}}`, `{"a":[1.50,"x",null,15e-1]}`},
	} {
		_, plan := compileBoth(t, tc.schema)
		doc := []byte(tc.doc)
		if !plan.Valid(doc) {
			t.Errorf("%s: not valid", tc.doc)
			continue
		}
		if n := testing.AllocsPerRun(100, func() { plan.Valid(doc) }); n != 0 {
			t.Errorf("%s: %v allocations", tc.doc, n)
		}
	}
}

// The formats the fast path knows are those the validator asserts; every
// other name is an annotation to both.
func TestAssertedFormatsMatchTheValidator(t *testing.T) {
	names := []string{"int32", "int64", "float", "double", "byte", "binary", "password", "color", "phone", "URI", "Date", ""}
	for name := range assertedFormats {
		names = append(names, name)
	}
	for _, name := range names {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		c.DefaultDraft(jsonschema.Draft2020)
		if err := c.AddResource("f.json", map[string]any{"format": name}); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile("f.json")
		if err != nil {
			t.Fatal(err)
		}
		_, known := assertedFormats[name]
		if asserted := s.Format != nil; asserted != known {
			t.Errorf("format %q: asserted by the validator %v, known to the fast path %v", name, asserted, known)
		}
	}
}

// The format checks agree with the validator's.
func TestFormats(t *testing.T) {
	cases := map[string]map[string]verdict{
		"date": {
			"2024-02-29": valid, "2023-02-29": invalid, "1900-02-29": invalid, "2000-02-29": valid, "0000-01-01": valid,
			"2024-13-01": invalid, "2024-00-10": invalid, "2024-04-31": invalid, "2024-4-01": invalid, "2024-04-01T": invalid,
			"+024-04-01": invalid, "２０２４-04-01": invalid, "": invalid,
		},
		"time": {
			"12:00:00Z": valid, "23:59:60Z": valid, "12:00:60Z": invalid, "23:59:60+00:00": valid, "00:59:60+01:00": valid,
			"12:00:00.5z": valid, "12:00:00.Z": invalid, "12:00:00": invalid, "12:00:00+0100": invalid, "24:00:00Z": invalid,
			"12:60:00Z": invalid, "12:00:00+24:00": invalid, "+1:00:00Z": unsure, "12:00:00+1a:00": unsure, "1:00:00Z": invalid, "+1:+0:00Z": unsure,
		},
		"date-time": {
			"2024-05-01T14:30:00Z": valid, "2024-05-01t14:30:00.123456789-07:00": valid, "2024-05-01 14:30:00Z": invalid,
			"2024-05-01T14:30Z": invalid, "2024-02-30T00:00:00Z": invalid, "2016-12-31T23:59:60Z": valid,
		},
		"uuid": {
			"123e4567-e89b-12d3-a456-426614174000": valid, "123E4567-E89B-12D3-A456-426614174000": valid,
			"123e4567e89b12d3a456426614174000": invalid, "123e4567-e89b-12d3-a456-42661417400g": invalid, "{123e4567-e89b-12d3-a456-426614174000}": invalid,
		},
		"email": {
			"a@b.c": valid, "a.b+c@example.com": valid, `"a b"@x.y`: valid, "a..b@x.y": invalid, ".a@x.y": invalid, "a@": invalid,
			"ab": invalid, "a@[127.0.0.1]": unsure, "é@x.y": invalid, "a@-x.y": invalid, "@x.y": valid, `"a\"@x`: invalid,
		},
		"hostname": {
			"example.com": valid, "example.com.": valid, "a-b.c": valid, "-a.b": invalid, "a..b": invalid, "": invalid,
			strings.Repeat("a", 63): valid, strings.Repeat("a", 64): invalid, "a_b": invalid, "xn--nxasmq6b": valid,
		},
		"ipv4": {
			"127.0.0.1": valid, "255.255.255.255": valid, "256.0.0.1": invalid, "01.0.0.1": invalid, "1.2.3": invalid,
			"1.2.3.4.5": invalid, "1.2.3.": invalid, "+1.2.3.4": unsure, "a.b.c.d": invalid, "1.2.3.0004": invalid,
		},
		"uri": {
			"https://example.com": valid, "http://a.b:8080/p/q?x=1&y=%20#frag": valid, "mailto:a@b.c": valid, "urn:isbn:0451450523": valid,
			"file:///etc/hosts": valid, "http://": valid, "http://:80": valid, "a:": valid, "HTTP://EXAMPLE.COM": valid,
			"//example.com": invalid, "/a/b": invalid, "example.com": invalid, "1http://x": invalid, ":x": invalid, "": invalid,
			"http://a b": unsure, "http://a%zz": unsure, "http://[::1]/": unsure, "http://u:p@h/": unsure, "http://é.fr": unsure,
			"http://x/%": unsure, "http://h:port": unsure,
		},
	}
	for name, docs := range cases {
		schema := `{"format":"` + name + `"}`
		full, plan := compileBoth(t, schema)
		for s, want := range docs {
			doc, _ := json.Marshal(s)
			if got := agree(t, schema, full, plan, doc); got != want {
				t.Errorf("%s %q: got %v, want %v", name, s, got, want)
			}
		}
		// A format applies to strings only.
		for _, doc := range []string{`1`, `null`, `{}`, `[]`} {
			if got := agree(t, schema, full, plan, []byte(doc)); got != valid {
				t.Errorf("%s %s: got %v", name, doc, got)
			}
		}
	}
}

// The registry compiles schemas with packs.CompileSchema: a sanity check
// that the oracle is that.
func TestOracleIsTheRegistrysValidator(t *testing.T) {
	s, err := packs.CompileSchema(json.RawMessage(`{"format":"email"}`))
	if err != nil {
		t.Fatal(err)
	}
	if fullValidate(s, []byte(`"nope"`)).valid {
		t.Fatal("formats are not asserted")
	}
}
