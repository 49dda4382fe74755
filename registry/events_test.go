package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/registry"
)

// TestCallEvent: every call reports a typed EventToolCall with its tool,
// outcome, code, timings and the arguments it ran with (none when they
// were refused).
func TestCallEvent(t *testing.T) {
	reg, ev := newRegistry(t, registry.Options{})
	run := newRun(t, reg, registry.RunContext{Tenant: "t"}, nil)
	ctx := context.Background()
	if _, err := run.Call(ctx, "echo_args", json.RawMessage(` {"text":"hi"} `), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Call(ctx, "echo_args", json.RawMessage(`{"text":5}`), nil); err != nil {
		t.Fatal(err)
	}
	calls := ev.named(registry.EventToolCall)
	if len(calls) != 2 {
		t.Fatalf("%d call events, want 2", len(calls))
	}
	ok, bad := calls[0], calls[1]
	if ok.Fields != nil || ok.Call == nil || ok.Run.Tenant != "t" {
		t.Fatalf("event = %+v, want a typed call event of tenant t", ok)
	}
	if c := ok.Call; c.Tool != "echo_args" || c.Kind != registry.KindWasm || c.Outcome != "ok" || c.Code != "" ||
		c.Duration <= 0 || c.Execute <= 0 || c.Duration < c.Execute || string(c.Args) != `{"text":"hi"}` || c.Depth != 0 {
		t.Errorf("good call = %+v", c)
	}
	if c := bad.Call; c.Outcome != "error" || c.Code != abi.CodeInvalidInput || c.Args != nil || c.Execute != 0 {
		t.Errorf("refused call = %+v, want error %s without arguments or execution", c, abi.CodeInvalidInput)
	}
}

// TestSlogSinkLogsCallsWithoutArguments: the default sink writes a call's
// fields as attributes, at debug level, and never its argument values.
func TestSlogSinkLogsCallsWithoutArguments(t *testing.T) {
	var buf bytes.Buffer
	sink := registry.SlogSink{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	reg, ev := newRegistry(t, registry.Options{})
	run := newRun(t, reg, registry.RunContext{Tenant: "t"}, nil)
	if _, err := run.Call(context.Background(), "echo_args", json.RawMessage(`{"text":"s3cr3t-value"}`), nil); err != nil {
		t.Fatal(err)
	}
	// Replay the event the registry reported through the slog sink.
	calls := ev.named(registry.EventToolCall)
	sink.Event(context.Background(), calls[len(calls)-1])
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("log line %q: %v", buf.String(), err)
	}
	for _, k := range []string{"tool_name", "kind", "outcome", "duration_ms", "instantiate_ms", "execute_ms", "depth", "run"} {
		if _, ok := rec[k]; !ok {
			t.Errorf("log record lacks %s: %s", k, buf.String())
		}
	}
	if _, ok := rec["fuel"]; ok != calls[len(calls)-1].Call.FuelCounted {
		t.Errorf("log record has fuel: %v, but the call counted fuel: %v", ok, calls[len(calls)-1].Call.FuelCounted)
	}
	if rec["level"] != "DEBUG" || rec["msg"] != registry.EventToolCall || rec["tool_name"] != "echo_args" {
		t.Errorf("log record = %s", buf.String())
	}
	if strings.Contains(buf.String(), "s3cr3t") {
		t.Errorf("the log holds an argument value: %s", buf.String())
	}
}
