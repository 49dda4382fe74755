package abi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseError(t *testing.T) {
	tests := []struct {
		in   string
		want *Error
	}{
		{"boom", &Error{Code: CodeGuestError, Message: "boom"}},
		{`{"code":"invalid_input","message":"bad arg"}`, &Error{Code: CodeInvalidInput, Message: "bad arg"}},
		{` {"code":"not_found","message":"no file","details":{"path":"/x"}}`, &Error{Code: CodeNotFound, Message: "no file", Details: json.RawMessage(`{"path":"/x"}`)}},
		// Unknown codes, missing messages and broken JSON stay plain text.
		{`{"code":"made_up","message":"x"}`, &Error{Code: CodeGuestError, Message: `{"code":"made_up","message":"x"}`}},
		{`{"code":"trap"}`, &Error{Code: CodeGuestError, Message: `{"code":"trap"}`}},
		{`{"code":`, &Error{Code: CodeGuestError, Message: `{"code":`}},
		{"", &Error{Code: CodeGuestError, Message: ""}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, ParseError([]byte(tt.in))); d != "" {
			t.Errorf("ParseError(%q) (-want +got)\n%s", tt.in, d)
		}
	}
}

func TestErrorString(t *testing.T) {
	if got := (&Error{Code: CodeTimeout, Message: "after 1s"}).Error(); got != "timeout: after 1s" {
		t.Errorf("Error() = %q", got)
	}
	if got := (&Error{Message: "plain"}).Error(); got != "plain" {
		t.Errorf("Error() = %q", got)
	}
}

func TestLogLevelString(t *testing.T) {
	for l, want := range map[LogLevel]string{LogTrace: "trace", LogDebug: "debug", LogInfo: "info", LogWarn: "warn", LogError: "error", LogOff: "off", 42: "unknown"} {
		if got := l.String(); got != want {
			t.Errorf("LogLevel(%d).String() = %q, want %q", l, got, want)
		}
	}
}

func FuzzParseError(f *testing.F) {
	f.Add([]byte(`{"code":"invalid_input","message":"bad"}`))
	f.Add([]byte("plain text"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e := ParseError(b)
		if e == nil || !e.Code.Known() {
			t.Fatalf("ParseError(%q) = %+v", b, e)
		}
		if e.Code != CodeGuestError && e.Message == "" {
			t.Fatalf("structured error without a message: %+v", e)
		}
	})
}
