package fastschema

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// BenchmarkValidate compares the fast path with what the registry ran
// before it: jsonschema.UnmarshalJSON and Validate, for the test pack's
// echo_args arguments and a bundled http_fetch call.
func BenchmarkValidate(b *testing.B) {
	schemas, _ := bundledSchemas(b)
	for _, tc := range []struct{ name, schema, doc string }{
		{"echo_args", `{"type":"object","required":["text"],"additionalProperties":false,"properties":{"text":{"type":"string","minLength":1},"n":{"type":"integer","minimum":0}}}`,
			`{"text":"hello","n":3}`},
		{"http_fetch", schemas["http_fetch.input"],
			`{"url":"https://api.example.com/v1/items?limit=10","method":"POST","headers":{"Accept":"application/json","Authorization":"Bearer abc"},"json":{"name":"x","tags":["a","b"],"n":1.5},"max_bytes":100000,"format":"raw"}`},
	} {
		full, plan := compileBoth(b, tc.schema)
		doc := []byte(tc.doc)
		b.Run(tc.name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if !plan.Valid(doc) {
					b.Fatal("not valid")
				}
			}
		})
		b.Run(tc.name+"/full", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
				if err != nil || full.Validate(v) != nil {
					b.Fatal("not valid")
				}
			}
		})
	}
}
