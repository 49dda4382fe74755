package skill

import (
	"errors"
	"reflect"
	"testing"
)

func BenchmarkInvoke(b *testing.B) {
	in := []byte(`{"name":"ann","times":2,"style":"loud","tags":["a"]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Invoke("test_greet", in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInvokeInvalid(b *testing.B) {
	in := []byte(`{"name":"ann","times":9}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Invoke("test_greet", in); err == nil {
			b.Fatal("no error")
		}
	}
}

func BenchmarkDeriveSchema(b *testing.B) {
	t := reflect.TypeFor[tagged]()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := deriveSchema(t); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzInvoke checks that any input gives either JSON output or an *Error
// with a known code, never a panic or an untyped error.
func FuzzInvoke(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"name":"a"}`, `{"name":"a","times":"x"}`, `[1]`, `{"name":"a"} x`,
		`{"name":"a","inner":{"note":1}}`, `{"name":"\u00e9","tags":[]}`, `null`, `{"name":"panic"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Invoke("test_greet", in)
		if err == nil {
			if len(out) == 0 {
				t.Fatal("no output and no error")
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || !e.Code.Known() || e.Message == "" {
			t.Fatalf("error %#v is not a complete *Error", err)
		}
	})
}
