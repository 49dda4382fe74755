package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/skillhost/skillhost/abi"
)

// FuzzReadOutput feeds a provider's output whatever bytes it may write:
// nothing panics, each request in flight gets at most one answer, and an
// answer is a result that is valid JSON or an *abi.Error with a known code
// and a message.
func FuzzReadOutput(f *testing.F) {
	for _, seed := range []string{
		`{"id":1,"result":{"ok":true}}` + "\n",
		`{"id":2,"error":{"code":"permission_denied","message":"no"}}` + "\n",
		`{"id":1,"error":{"code":"quota"}}` + "\n" + `{"id":1,"result":1}` + "\n",
		"not json\n{\"id\":3}\n{\"result\":true}\n",
		`{"id":1,"result":"` + string(bytes.Repeat([]byte("x"), 300)) + `"}` + "\n",
		`{"id":18446744073709551615,"result":null}`,
		"\n\n\r\n{\"id\":2,\"result\":[1,2,3]}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		var events int
		p := &Process{opts: Options{Namespace: "t", MaxLineBytes: 256, OnEvent: func(string, map[string]any) { events++ }}}
		c := &child{p: p, pending: map[uint64]chan reply{}}
		chans := map[uint64]chan reply{}
		for _, id := range []uint64{1, 2, 3} {
			chans[id] = make(chan reply, 2) // room for a second, wrong, answer
			c.register(id, chans[id])
		}
		c.readOutput(bytes.NewReader(out))
		for id, ch := range chans {
			if len(ch) > 1 {
				t.Fatalf("request %d answered %d times", id, len(ch))
			}
			if len(ch) == 0 {
				continue
			}
			r := <-ch
			if r.err == nil {
				if !json.Valid(r.result) {
					t.Fatalf("request %d: result %q is not JSON", id, r.result)
				}
				continue
			}
			var ae *abi.Error
			if !errors.As(r.err, &ae) || !ae.Code.Known() || ae.Message == "" {
				t.Fatalf("request %d: error %#v", id, r.err)
			}
		}
	})
}
