package packs

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"testing/quick"

	"github.com/google/go-cmp/cmp"
)

func TestCanonicalJSON(t *testing.T) {
	type tagged struct {
		B     string `json:"b"`
		A     int    `json:"a"`
		Skip  string `json:"-"`
		Empty string `json:"empty,omitempty"`
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, `null`},
		{"bools", []any{true, false}, `[true,false]`},
		{"empty object", map[string]any{}, `{}`},
		{"empty array", []any{}, `[]`},
		{"nil slice", []string(nil), `[]`},
		{"sorted keys", map[string]any{"b": 1, "a": 2, "C": 3, "aa": 4}, `{"C":3,"a":2,"aa":4,"b":1}`},
		{"nested sorted", map[string]any{"z": map[string]any{"y": 1, "x": []any{map[string]any{"q": 1, "p": 2}}}},
			`{"z":{"x":[{"p":2,"q":1}],"y":1}}`},
		{"no html escaping", "<a href=\"x\">&amp;</a>", `"<a href=\"x\">&amp;</a>"`},
		{"utf8 kept raw", "héllo – 世界 \u2028", "\"héllo – 世界 \u2028\""},
		{"control escapes", "a\nb\tc\rd\be\ff\x00g\x1fh\\i", `"a\nb\tc\rd\be\ff\u0000g\u001fh\\i"`},
		{"invalid utf8 replaced", "a\xffb", "\"a\uFFFDb\""},
		{"ints", []any{0, -1, int64(math.MaxInt64), uint64(math.MaxUint64), int8(-8)},
			`[0,-1,9223372036854775807,18446744073709551615,-8]`},
		{"whole floats as ints", []any{1.0, -2.0, 100.0, 1e20, math.Copysign(0, -1)}, `[1,-2,100,100000000000000000000,0]`},
		{"fractions", []any{1.5, -0.25, 0.1, 1e-7, 1e21, 123456.789}, `[1.5,-0.25,0.1,1e-7,1e+21,123456.789]`},
		{"float32", float32(0.5), `0.5`},
		{"json numbers", []any{json.Number("1.0"), json.Number("1e2"), json.Number("-0"), json.Number("123456789012345678901234567890"), json.Number("2.50")},
			`[1,100,0,123456789012345678901234567890,2.5]`},
		{"map of strings", map[string]string{"b": "2", "a": "1"}, `{"a":"1","b":"2"}`},
		{"struct through encoding/json", tagged{B: "x", A: 1, Skip: "s"}, `{"a":1,"b":"x"}`},
		{"struct pointer", &tagged{B: "<y>"}, `{"a":0,"b":"<y>"}`},
		{"raw message re-sorted", json.RawMessage(`{ "b" : [1.0, 2], "a" : "x" }`), `{"a":"x","b":[1,2]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := canonicalJSON(tt.in)
			if err != nil {
				t.Fatalf("canonicalJSON: %v", err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("canonicalJSON (-want +got):\n%s", diff)
			}
			if !json.Valid(got) {
				t.Errorf("output is not valid JSON: %s", got)
			}
		})
	}
}

func TestCanonicalJSONErrors(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for name, v := range map[string]any{
		"NaN":          math.NaN(),
		"+Inf":         math.Inf(1),
		"-Inf in list": []any{1, math.Inf(-1)},
		"bad number":   json.Number("12abc"),
		"huge float":   json.Number("1e400"),
		"channel":      make(chan int),
		"cycle":        cyclic,
	} {
		t.Run(name, func(t *testing.T) {
			if b, err := canonicalJSON(v); err == nil {
				t.Fatalf("canonicalJSON = %s, want an error", b)
			}
			if h := contentHash(v); !hexRE.MatchString(h) {
				t.Errorf("contentHash = %q, want 64 hex digits even on error", h)
			}
		})
	}
}

// The hashes were computed outside Go (printf '%s' … | sha256sum), so a
// change of the canonical form shows up here.
func TestContentHashGolden(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{map[string]any{"c": map[string]any{"z": "<&>", "x": "y"}, "b": []any{true, false, nil}, "a": 1},
			"95b41eb77d19f07b471301fcaa835aa87be5c12cc3ee463ce15347cc306a3ac7"},
		{map[string]any{}, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},
		{map[string]any{"é": "ü", "steps": []string{"a", "b"}, "name": "pack.core.x"},
			"ba98ee16b8efab01e67c44404a84ef88b753b2ed36b3151dcce91023a40af421"},
	}
	for i, tt := range tests {
		if got := contentHash(tt.in); got != tt.want {
			t.Errorf("case %d: contentHash = %s, want %s", i, got, tt.want)
		}
	}
}

func TestCanonicalJSONKeyOrderIndependent(t *testing.T) {
	docs := []string{
		`{"a":1,"b":{"c":[1,2,{"e":1,"d":2}],"f":"g"},"h":null}`,
		`{"h":null,"b":{"f":"g","c":[1,2,{"d":2,"e":1}]},"a":1}`,
		"{\n  \"b\" : {\"f\": \"g\", \"c\": [1.0, 2e0, {\"d\": 2, \"e\": 1}]},\n  \"h\": null, \"a\": 1.00\n}",
	}
	var want []byte
	for i, d := range docs {
		var v any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			t.Fatal(err)
		}
		got, err := canonicalJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			want = got
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("doc %d: %s, want %s", i, got, want)
		}
	}
}

// randomJSON builds a random generic JSON value of bounded depth.
func randomJSON(r *rand.Rand, depth int) any {
	k := r.IntN(7)
	if depth <= 0 {
		k = r.IntN(4)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return randomString(r)
	case 3:
		if r.IntN(2) == 0 {
			return float64(r.IntN(2000) - 1000)
		}
		return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20))
	case 4, 5:
		m := map[string]any{}
		for range r.IntN(5) {
			m[randomString(r)] = randomJSON(r, depth-1)
		}
		return m
	default:
		a := make([]any, r.IntN(5))
		for i := range a {
			a[i] = randomJSON(r, depth-1)
		}
		return a
	}
}

func randomString(r *rand.Rand) string {
	alphabet := []rune("aZ0 _-\"\\\n\t<>&é世\u2028\U0001F600\x00\x7f")
	b := make([]rune, r.IntN(8))
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// Properties: the output is valid JSON; encoding the decoded output gives
// the same bytes (a fixed point); the generic path and the encoding/json
// fallback agree; the hash is 64 hex digits.
func TestCanonicalJSONProperties(t *testing.T) {
	prop := func(seed1, seed2 uint64) bool {
		r := rand.New(rand.NewPCG(seed1, seed2))
		v := randomJSON(r, 4)
		got, err := canonicalJSON(v)
		if err != nil {
			t.Logf("canonicalJSON(%#v): %v", v, err)
			return false
		}
		if !json.Valid(got) {
			t.Logf("invalid JSON %q", got)
			return false
		}
		dec := json.NewDecoder(bytes.NewReader(got))
		dec.UseNumber()
		var back any
		if err := dec.Decode(&back); err != nil {
			t.Logf("decode %q: %v", got, err)
			return false
		}
		again, err := canonicalJSON(back)
		if err != nil || !bytes.Equal(again, got) {
			t.Logf("not a fixed point:\n%s\n%s", got, again)
			return false
		}
		// The same value behind a type canonicalJSON does not know goes
		// through encoding/json and must come out the same.
		type wrapped struct {
			V any `json:"v"`
		}
		w, err := canonicalJSON(wrapped{v})
		if err != nil || string(w) != `{"v":`+string(got)+`}` {
			t.Logf("fallback differs:\n%s\n%s", w, got)
			return false
		}
		return hexRE.MatchString(contentHash(v))
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 2000}); err != nil {
		t.Error(err)
	}
}

// Floats print the shortest form that reads back to the same value.
func TestCanonicalFloatRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		b, err := canonicalJSON(f)
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		back, err := strconv.ParseFloat(string(b), 64)
		if err != nil || back != f && !(f == 0 && back == 0) {
			t.Fatalf("%v printed as %s reads back as %v (%v)", f, b, back, err)
		}
	}
}

func BenchmarkContentHash(b *testing.B) {
	v := map[string]any{
		"name":    "pack.core.api.cursor_pagination",
		"trigger": "Retrieve all items from a cursor-paginated API.",
		"steps":   []string{"Call the endpoint.", "Append results.", "Read the next cursor.", "Repeat until empty."},
		"tags":    []string{"api", "pagination"},
		"extra":   map[string]any{"cluster": "API", "tools": []any{map[string]any{"tool": "http_fetch"}}},
	}
	b.ReportAllocs()
	for b.Loop() {
		contentHash(v)
	}
}
