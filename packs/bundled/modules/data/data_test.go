package main

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/guests/go/skill"
	"github.com/skillhost/skillhost/guests/go/skill/skilltest"
)

// call runs a tool through the SDK, as its export would, and returns the
// output as generic JSON.
func call(t *testing.T, tool string, in any) (map[string]any, *skill.Error) {
	t.Helper()
	b, _ := json.Marshal(in)
	raw, err := skill.Invoke(tool, b)
	if err != nil {
		var e *skill.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v is not a *skill.Error", tool, err)
		}
		return nil, e
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %s: %v", tool, raw, err)
	}
	return out, nil
}

const doc = `{"items":[{"name":"a","price":1.5,"id":1},{"name":"b","price":2,"id":2,"tags":{"id":9}},{"name":"c","id":12345678901234567890}],"first name":"Ann","meta":{"n":3}}`

func TestJSONQuery(t *testing.T) {
	tests := []struct {
		path     string
		want     string // result JSON
		multiple bool
	}{
		{"", doc, false},
		{".", doc, false},
		{"$", doc, false},
		{".items[0].name", `"a"`, false},
		{"items[1].price", `2`, false},
		{"$.items[-1].id", `12345678901234567890`, false},
		{`."first name"`, `"Ann"`, false},
		{`["first name"]`, `"Ann"`, false},
		{`['meta'].n`, `3`, false},
		{".items[].price", `[1.5,2]`, true},
		{".items[*].name", `["a","b","c"]`, true},
		{".items[1:].name", `["b","c"]`, true},
		{".items[:1].name", `["a"]`, true},
		{".meta.*", `[3]`, true},
		{"..id", `[1,2,9,12345678901234567890]`, true},
		{".items[].missing", `[]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			out, err := call(t, "json_query", map[string]any{"json": doc, "path": tt.path})
			if err != nil {
				t.Fatal(err)
			}
			var want any
			d := json.NewDecoder(stringsReader(tt.want))
			_ = d.Decode(&want)
			if diff := cmp.Diff(want, out["result"]); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if out["multiple"] != tt.multiple {
				t.Errorf("multiple = %v", out["multiple"])
			}
		})
	}
	// data as a JSON value keeps big integers exact.
	in, _ := json.Marshal(map[string]any{"data": json.RawMessage(doc), "path": ".items[2].id"})
	raw, err := skill.Invoke("json_query", in)
	if err != nil || !contains(string(raw), `"result":12345678901234567890,`) {
		t.Errorf("big integer: %s, %v", raw, err)
	}

	errs := []struct {
		in   map[string]any
		code abi.Code
		msg  string
	}{
		{map[string]any{"json": doc, "path": ".items[5]"}, abi.CodeNotFound, "index 5 out of range (length 3) at .items"},
		{map[string]any{"json": doc, "path": ".meta.x"}, abi.CodeNotFound, `no member "x" at .meta`},
		{map[string]any{"json": doc, "path": ".items.name"}, abi.CodeNotFound, `cannot read member "name" of an array at .items`},
		{map[string]any{"json": doc, "path": ".items[x]"}, abi.CodeInvalidInput, "expected an index"},
		{map[string]any{"json": doc, "path": ".items[0"}, abi.CodeInvalidInput, "missing ]"},
		{map[string]any{"json": "{bad", "path": "."}, abi.CodeInvalidInput, "line 1, column 2"},
		{map[string]any{"path": "."}, abi.CodeInvalidInput, "give the document"},
		{map[string]any{"json": "1", "data": 1, "path": "."}, abi.CodeInvalidInput, "not both"},
	}
	for _, e := range errs {
		_, err := call(t, "json_query", e.in)
		if err == nil || err.Code != e.code || !contains(err.Message, e.msg) {
			t.Errorf("%v: error = %v, want %s with %q", e.in, err, e.code, e.msg)
		}
	}
}

func TestJSONFormat(t *testing.T) {
	out, err := call(t, "json_format", map[string]any{"json": `{"b":1,"a":[1,2]}`})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("{\n  \"b\": 1,\n  \"a\": [\n    1,\n    2\n  ]\n}", out["json"]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	out, _ = call(t, "json_format", map[string]any{"json": "{\"b\": 1, \"a\": 2.50}", "indent": 0, "sort_keys": true})
	if out["json"] != `{"a":2.50,"b":1}` || out["type"] != "object" {
		t.Errorf("compact sorted = %v", out)
	}
	_, e := call(t, "json_format", map[string]any{"json": "{\n  \"a\": 1,\n}"})
	if e == nil || e.Code != abi.CodeInvalidInput || !contains(e.Message, "line 3, column 1") {
		t.Errorf("bad JSON: %v", e)
	}
}

func TestTZConvert(t *testing.T) {
	tests := []struct {
		in   map[string]any
		want map[string]any
	}{
		{map[string]any{"time": "2024-07-01T12:00:00Z", "to_zone": "America/New_York"},
			map[string]any{"time": "2024-07-01T08:00:00-04:00", "abbreviation": "EDT", "utc_offset": "-04:00", "dst": true, "weekday": "Monday"}},
		{map[string]any{"time": "2024-01-15 09:30", "from_zone": "Europe/Paris", "to_zone": "Asia/Kolkata"},
			map[string]any{"time": "2024-01-15T14:00:00+05:30", "abbreviation": "IST", "utc_offset": "+05:30", "dst": false, "weekday": "Monday"}},
		{map[string]any{"time": "0", "to_zone": "UTC"},
			map[string]any{"time": "1970-01-01T00:00:00Z", "abbreviation": "UTC", "utc_offset": "+00:00", "dst": false, "weekday": "Thursday"}},
		{map[string]any{"time": "2024-03-10", "from_zone": "America/Los_Angeles", "to_zone": "Australia/Sydney"},
			map[string]any{"time": "2024-03-10T19:00:00+11:00", "abbreviation": "AEDT", "utc_offset": "+11:00", "dst": true, "weekday": "Sunday"}},
	}
	for _, tt := range tests {
		out, err := call(t, "tz_convert", tt.in)
		if err != nil {
			t.Fatalf("%v: %v", tt.in, err)
		}
		for k, v := range tt.want {
			if out[k] != v {
				t.Errorf("%v: %s = %v, want %v", tt.in, k, out[k], v)
			}
		}
	}
	for _, in := range []map[string]any{
		{"time": "yesterday", "to_zone": "UTC"},
		{"time": "2024-01-01", "to_zone": "Mars/Olympus"},
		{"time": "2024-01-01", "from_zone": "Local", "to_zone": "UTC"},
	} {
		if _, err := call(t, "tz_convert", in); err == nil || err.Code != abi.CodeInvalidInput {
			t.Errorf("%v: error = %v, want invalid_input", in, err)
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	text := "héllo wörld/?&<>"
	for _, enc := range []string{"base64", "base64url", "base64raw", "hex", "url", "url_path", "html"} {
		out, err := call(t, "encode", map[string]any{"text": text, "encoding": enc})
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		back, err := call(t, "decode", map[string]any{"text": out["result"], "encoding": enc})
		if err != nil {
			t.Fatalf("%s decode: %v", enc, err)
		}
		if back["result"] != text {
			t.Errorf("%s round trip = %q via %q", enc, back["result"], out["result"])
		}
	}
	out, _ := call(t, "encode", map[string]any{"text": "a b", "encoding": "url"})
	if out["result"] != "a+b" {
		t.Errorf("url = %v", out["result"])
	}
	out, _ = call(t, "decode", map[string]any{"text": "aGk", "encoding": "base64"})
	if out["result"] != "hi" {
		t.Errorf("unpadded base64 = %v", out["result"])
	}
	out, _ = call(t, "decode", map[string]any{"text": "/w==", "encoding": "base64", "output": "hex"})
	if out["result"] != "ff" || out["bytes"] != 1.0 {
		t.Errorf("hex output = %v", out)
	}
	if _, err := call(t, "decode", map[string]any{"text": "/w==", "encoding": "base64"}); err == nil || !contains(err.Message, "not UTF-8") {
		t.Errorf("binary as text: %v", err)
	}
	if _, err := call(t, "decode", map[string]any{"text": "zz", "encoding": "hex"}); err == nil || err.Code != abi.CodeInvalidInput {
		t.Errorf("bad hex: %v", err)
	}
}

func TestHash(t *testing.T) {
	tests := []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"text": "abc"}, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{map[string]any{"text": "abc", "algorithm": "md5"}, "900150983cd24fb0d6963f7d28e17f72"},
		{map[string]any{"text": "abc", "algorithm": "sha1", "encoding": "base64"}, "qZk+NkcGgWq6PiVxeFDCbJzQ2J0="},
		{map[string]any{"text": "The quick brown fox jumps over the lazy dog", "hmac_key": "key"}, "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
	}
	for _, tt := range tests {
		out, err := call(t, "hash", tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if out["digest"] != tt.want {
			t.Errorf("%v: digest = %v, want %s", tt.in, out["digest"], tt.want)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{".a[0].b", "..id", `["x"]`, ".a[1:-1]", "$.a.*", `."q\"x"`, "[", ".a[", "'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		steps, err := parsePath(p)
		if err != nil {
			return
		}
		var doc any
		_ = json.Unmarshal([]byte(`{"a":[{"b":1,"id":[2]}],"x":{"id":3}}`), &doc)
		_, _, _ = evaluate(doc, steps, !isMulti(steps), 100)
	})
}

// TestDescribe checks that describe lists exactly the tools exports.go
// exports, each with a description and schemas.
func TestDescribe(t *testing.T) {
	skilltest.CheckDescription(t, decodeTool, encodeTool, hashTool, jsonFormatTool, jsonQueryTool, tzConvertTool)
}
