package skill

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/abi"
)

// fakeKernel records what the SDK sends to the host and answers with
// canned values.
type fakeKernel struct {
	in, out, err []byte
	cfg          map[string]string
	vars         map[string][]byte
	logs         []string
	level        abi.LogLevel

	httpReq, httpBody []byte
	httpStatus        int
	httpHeaders       []byte
	httpResp          []byte

	calls  []string // "tool:name:args" or "cap:id:args"
	result []byte
}

func useFake(t *testing.T) *fakeKernel {
	t.Helper()
	k := &fakeKernel{cfg: map[string]string{}, vars: map[string][]byte{}}
	old := env
	env = k
	t.Cleanup(func() { env = old })
	return k
}

func (k *fakeKernel) input() []byte                    { return k.in }
func (k *fakeKernel) output(b []byte)                  { k.out = b }
func (k *fakeKernel) setError(b []byte)                { k.err = b }
func (k *fakeKernel) config(key string) (string, bool) { v, ok := k.cfg[key]; return v, ok }
func (k *fakeKernel) getVar(key string) ([]byte, bool) { v, ok := k.vars[key]; return v, ok }
func (k *fakeKernel) setVar(key string, v []byte)      { k.vars[key] = v }
func (k *fakeKernel) deleteVar(key string)             { delete(k.vars, key) }
func (k *fakeKernel) logLevel() abi.LogLevel           { return k.level }
func (k *fakeKernel) log(l abi.LogLevel, msg string)   { k.logs = append(k.logs, l.String()+": "+msg) }
func (k *fakeKernel) http(req, body []byte) (int, []byte, []byte) {
	k.httpReq, k.httpBody = req, body
	return k.httpStatus, k.httpHeaders, k.httpResp
}
func (k *fakeKernel) toolCall(name string, args []byte) []byte {
	k.calls = append(k.calls, "tool:"+name+":"+string(args))
	return k.result
}
func (k *fakeKernel) capabilityCall(id string, args []byte) []byte {
	k.calls = append(k.calls, "cap:"+id+":"+string(args))
	return k.result
}

var _ kernel = (*fakeKernel)(nil)

func TestCallTool(t *testing.T) {
	tests := []struct {
		name     string
		args     any
		result   string
		wantArgs string
		want     string
		wantCode abi.Code
	}{
		{"output", map[string]int{"n": 1}, `{"output":{"ok":true},"is_error":false}`, `{"n":1}`, `{"ok":true}`, ""},
		{"nil args", nil, `{"output":"x","is_error":false}`, `{}`, `"x"`, ""},
		{"raw args", json.RawMessage(`{"a":[1]}`), `{"is_error":false}`, `{"a":[1]}`, `null`, ""},
		{"tool error keeps code", struct{}{}, `{"is_error":true,"error":{"code":"permission_denied","message":"not granted"}}`, `{}`, "", abi.CodePermissionDenied},
		{"error without envelope", struct{}{}, `{"is_error":true}`, `{}`, "", abi.CodeGuestError},
		{"unknown code", struct{}{}, `{"is_error":true,"error":{"code":"weird","message":"m"}}`, `{}`, "", abi.CodeGuestError},
		{"malformed result", struct{}{}, `{"output":`, `{}`, "", abi.CodeUnavailable},
		{"no result", struct{}{}, "", `{}`, "", abi.CodeUnavailable},
		{"unencodable args", map[string]any{"f": func() {}}, "", "", "", abi.CodeInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := useFake(t)
			if tt.result != "" {
				k.result = []byte(tt.result)
			}
			out, err := CallTool("other", tt.args)
			if tt.wantArgs != "" {
				if diff := cmp.Diff([]string{"tool:other:" + tt.wantArgs}, k.calls); diff != "" {
					t.Errorf("host call (-want +got):\n%s", diff)
				}
			}
			if tt.wantCode != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != tt.wantCode {
					t.Fatalf("error = %v, want code %s", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(out)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCallCapability(t *testing.T) {
	k := useFake(t)
	k.result = []byte(`{"output":{"sent":true},"is_error":false}`)
	out, err := CallCapability("mail.send", map[string]string{"to": "a@b"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`cap:mail.send:{"to":"a@b"}`}, k.calls); diff != "" {
		t.Errorf("host call (-want +got):\n%s", diff)
	}
	if string(out) != `{"sent":true}` {
		t.Errorf("output = %s", out)
	}
}

func TestNoHost(t *testing.T) {
	if _, err := CallTool("x", nil); !errors.Is(err, ErrNoHost) {
		t.Errorf("CallTool error = %v, want ErrNoHost", err)
	}
	if _, err := HTTP(HTTPRequest{URL: "http://example.com"}); !errors.Is(err, ErrNoHost) {
		t.Errorf("HTTP error = %v, want ErrNoHost", err)
	}
	if _, ok := Config("k"); ok {
		t.Error("Config found a value without a host")
	}
}

func TestHTTP(t *testing.T) {
	k := useFake(t)
	k.httpStatus = 201
	k.httpHeaders = []byte(`{"content-type":"text/plain"}`)
	k.httpResp = []byte("made")
	resp, err := HTTP(HTTPRequest{Method: "POST", URL: "https://api.example.com/x", Headers: map[string]string{"A": "b"}, Body: []byte("hi")})
	if err != nil {
		t.Fatal(err)
	}
	want := &HTTPResponse{Status: 201, Headers: map[string]string{"content-type": "text/plain"}, Body: []byte("made")}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(`{"url":"https://api.example.com/x","method":"POST","headers":{"A":"b"}}`, string(k.httpReq)); diff != "" {
		t.Errorf("request JSON (-want +got):\n%s", diff)
	}
	if string(k.httpBody) != "hi" {
		t.Errorf("body = %q", k.httpBody)
	}

	k.httpStatus = 0
	if _, err := HTTP(HTTPRequest{URL: "https://api.example.com/"}); err == nil || err.(*Error).Code != abi.CodeUnavailable {
		t.Errorf("status 0: error = %v, want unavailable", err)
	}
	if diff := cmp.Diff(`{"url":"https://api.example.com/","method":"GET"}`, string(k.httpReq)); diff != "" {
		t.Errorf("default method (-want +got):\n%s", diff)
	}
	if _, err := HTTP(HTTPRequest{}); err == nil || err.(*Error).Code != abi.CodeInvalidInput {
		t.Errorf("no URL: error = %v, want invalid_input", err)
	}
}

func TestLogConfigVars(t *testing.T) {
	k := useFake(t)
	k.level = abi.LogInfo
	Log(LevelDebug, "dropped")
	Logf(LevelInfo, "kept %d", 1)
	Log(LevelError, "bad")
	if diff := cmp.Diff([]string{"info: kept 1", "error: bad"}, k.logs); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}

	k.cfg["user_agent"] = "ua/1"
	if v, ok := Config("user_agent"); !ok || v != "ua/1" {
		t.Errorf("Config = %q, %v", v, ok)
	}

	SetVar("n", []byte("1"))
	if v, ok := Var("n"); !ok || string(v) != "1" {
		t.Errorf("Var = %q, %v", v, ok)
	}
	DeleteVar("n")
	if _, ok := Var("n"); ok {
		t.Error("Var found after DeleteVar")
	}
}
