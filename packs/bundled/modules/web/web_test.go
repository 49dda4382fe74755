package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/guests/go/skill"
	"github.com/skillhost/skillhost/guests/go/skill/skilltest"
)

// fakeHost replaces the host services for one test.
func fakeHost(t *testing.T, resp *skill.HTTPResponse, err error, cfg map[string]string) *skill.HTTPRequest {
	t.Helper()
	var got skill.HTTPRequest
	oldHTTP, oldCfg := doHTTP, getConfig
	doHTTP = func(r skill.HTTPRequest) (*skill.HTTPResponse, error) {
		got = r
		return resp, err
	}
	getConfig = func(k string) (string, bool) { v, ok := cfg[k]; return v, ok }
	t.Cleanup(func() { doHTTP, getConfig = oldHTTP, oldCfg })
	return &got
}

func fetch(t *testing.T, in any) (HTTPFetchOut, *skill.Error) {
	t.Helper()
	b, _ := json.Marshal(in)
	raw, err := skill.Invoke("http_fetch", b)
	if err != nil {
		var e *skill.Error
		if !errors.As(err, &e) {
			t.Fatalf("%v is not a *skill.Error", err)
		}
		return HTTPFetchOut{}, e
	}
	var out HTTPFetchOut
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

func TestHTTPFetchJSON(t *testing.T) {
	req := fakeHost(t, &skill.HTTPResponse{Status: 200, Headers: map[string]string{"Content-Type": "application/json"}, Body: []byte(`{"ok":true}`)}, nil,
		map[string]string{"user_agent": "agent/2"})
	out, err := fetch(t, map[string]any{"url": "https://api.example.com/v1?q=1", "method": "POST", "json": map[string]int{"a": 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := HTTPFetchOut{Status: 200, OK: true, URL: "https://api.example.com/v1?q=1", ContentType: "application/json",
		Headers: map[string]string{"content-type": "application/json"}, Body: `{"ok":true}`, Bytes: 11}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	wantReq := &skill.HTTPRequest{Method: "POST", URL: "https://api.example.com/v1?q=1",
		Headers: map[string]string{"User-Agent": "agent/2", "Content-Type": "application/json"}, Body: []byte(`{"a":1}`)}
	if diff := cmp.Diff(wantReq, req); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestHTTPFetchHTMLAndLimits(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>Hi &amp; bye</title><style>p{}</style><script>alert(1)</script></head>
<body><h1>Head</h1><p>One&nbsp;two <b>three</b></p><!-- gone --><ul><li>a</li><li>b</li></ul><table><tr><td>x</td><td>y</td></tr></table></body></html>`
	req := fakeHost(t, &skill.HTTPResponse{Status: 404, Headers: map[string]string{"content-type": "text/html; charset=utf-8"}, Body: []byte(page)}, nil, nil)
	out, err := fetch(t, map[string]any{"url": "http://example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	if req.Headers["User-Agent"] != defaultUserAgent || req.Method != "GET" {
		t.Errorf("request = %+v", req)
	}
	wantBody := "Hi & bye\n\nHead\nOne two three\na\nb\nx\ty"
	if out.Status != 404 || out.OK || !out.Extracted || out.Body != wantBody {
		t.Errorf("got status %d ok %v extracted %v body %q, want body %q", out.Status, out.OK, out.Extracted, out.Body, wantBody)
	}

	out, _ = fetch(t, map[string]any{"url": "http://example.com/", "format": "raw", "max_bytes": 15})
	if out.Body != page[:15] || !out.Truncated || out.Bytes != len(page) {
		t.Errorf("raw truncated = %+v", out)
	}

	fakeHost(t, &skill.HTTPResponse{Status: 200, Body: []byte("ééé")}, nil, nil)
	out, _ = fetch(t, map[string]any{"url": "http://example.com/", "max_bytes": 4})
	if out.Body != "éé" || !out.Truncated {
		t.Errorf("truncation inside a character: %q", out.Body)
	}

	fakeHost(t, &skill.HTTPResponse{Status: 200, Body: []byte{0xff, 0x00, 0x01}}, nil, nil)
	out, _ = fetch(t, map[string]any{"url": "http://example.com/x.bin"})
	if out.Body != "" || out.BodyBase64 != "/wAB" {
		t.Errorf("binary body = %+v", out)
	}
}

func TestHTTPFetchErrors(t *testing.T) {
	fakeHost(t, nil, skill.Unavailable("no response"), nil)
	tests := []struct {
		in   map[string]any
		code abi.Code
		msg  string
	}{
		{map[string]any{"url": "ftp://example.com/"}, abi.CodeInvalidInput, "http or https"},
		{map[string]any{"url": "/relative"}, abi.CodeInvalidInput, "absolute"},
		{map[string]any{"url": "https://example.com", "method": "TRACE"}, abi.CodeInvalidInput, "is not one of"},
		{map[string]any{"url": "https://example.com", "body": "x"}, abi.CodeInvalidInput, "cannot have a body"},
		{map[string]any{"url": "https://example.com", "method": "POST", "body": "x", "json": 1}, abi.CodeInvalidInput, "not both"},
		{map[string]any{"url": "https://example.com"}, abi.CodeUnavailable, "no response"},
	}
	for _, tt := range tests {
		_, err := fetch(t, tt.in)
		if err == nil || err.Code != tt.code || !strings.Contains(err.Message, tt.msg) {
			t.Errorf("%v: error = %v, want %s with %q", tt.in, err, tt.code, tt.msg)
		}
	}
}

// TestDescribe checks that describe lists exactly the tools exports.go
// exports, each with a description and schemas.
func TestDescribe(t *testing.T) {
	skilltest.CheckDescription(t, httpFetchTool)
}
