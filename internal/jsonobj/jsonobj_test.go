package jsonobj_test

import (
	"testing"

	"github.com/skillhost/skillhost/internal/jsonobj"
)

func TestMembers(t *testing.T) {
	doc := []byte(`{"a": 1, "b":{"c":[2]}, "a":"x"}`)
	ms, err := jsonobj.Members(doc)
	if err != nil || len(ms) != 3 {
		t.Fatalf("%+v, %v", ms, err)
	}
	for i, want := range []struct{ key, val string }{{"a", "1"}, {"b", `{"c":[2]}`}, {"a", `"x"`}} {
		if ms[i].Key != want.key || string(doc[ms[i].Start:ms[i].End]) != want.val {
			t.Errorf("member %d: %q = %q", i, ms[i].Key, doc[ms[i].Start:ms[i].End])
		}
	}
	for _, bad := range []string{`[1]`, `{"a":}`, `{"a" 1}`, ``} {
		if _, err := jsonobj.Members([]byte(bad)); err == nil {
			t.Errorf("%q read as an object", bad)
		}
	}
}
