package registry

import (
	"context"
	"log/slog"
	"time"
)

// Event is one structured observation of the registry and its runs: a
// name from the Event* constants, when it happened, the run it belongs to
// and its fields. The discovery index reports its own events (tool and
// skill searches, pack loads) through the same Sink when the engine wires
// it so.
type Event struct {
	Name   string
	Time   time.Time
	Run    RunContext
	Fields map[string]any
}

// Sink receives events. It is called synchronously on the goroutine that
// made the event, so it must be quick and safe for concurrent use.
type Sink interface {
	Event(ctx context.Context, e Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, e Event)

// Event calls f.
func (f SinkFunc) Event(ctx context.Context, e Event) { f(ctx, e) }

// SlogSink writes each event as a log record at level Info (Debug for
// EventToolCall), with the event's fields and run as attributes.
type SlogSink struct{ Logger *slog.Logger }

// Event logs e.
func (s SlogSink) Event(ctx context.Context, e Event) {
	l := s.Logger
	if l == nil {
		l = slog.Default()
	}
	level := slog.LevelInfo
	if e.Name == EventToolCall {
		level = slog.LevelDebug
	}
	if !l.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, len(e.Fields)+2)
	if e.Run != (RunContext{}) {
		attrs = append(attrs, slog.Any("run", e.Run))
	}
	for k, v := range e.Fields {
		attrs = append(attrs, slog.Any(k, v))
	}
	l.LogAttrs(ctx, level, e.Name, attrs...)
}

// Event names.
const (
	// EventToolActivated is reported when a deferred tool becomes visible
	// in a run or session. Fields: tool_name, activation_scope ("run" or
	// "session"), source ("model", "tool_call" or "embedder"), reason.
	EventToolActivated = "tool_activated"
	// EventToolActivationDenied is reported when activation is refused.
	// Fields: tool_name, reason.
	EventToolActivationDenied = "tool_activation_denied"
	// EventToolCall is reported after every call a run made. Fields:
	// tool_name, kind, outcome ("ok" or "error"), code (the abi code of an
	// error), duration_ms (total, validation included), instantiate_ms and
	// execute_ms (a Wasm tool's instance and export time), fuel
	// (instructions a metered Wasm tool ran), depth (0 for a model's call,
	// n for a guest's nested tool_call).
	EventToolCall = "tool_call"
	// EventToolPanic is reported when a native tool panicked. Fields:
	// tool_name, panic, stack.
	EventToolPanic = "tool_panic"
)

// emit reports an event when the registry has a sink.
func (r *Registry) emit(ctx context.Context, rc RunContext, name string, fields map[string]any) {
	if r.opts.Events == nil {
		return
	}
	r.opts.Events.Event(ctx, Event{Name: name, Time: time.Now(), Run: rc, Fields: fields})
}

// callFields are the fields of an EventToolCall.
func callFields(t *Tool, res *Result, d time.Duration, depth int) map[string]any {
	f := map[string]any{
		"tool_name":      t.Name,
		"kind":           string(t.Kind),
		"outcome":        "ok",
		"duration_ms":    float64(d.Microseconds()) / 1000,
		"instantiate_ms": float64(res.Instantiate.Microseconds()) / 1000,
		"execute_ms":     float64(res.Execute.Microseconds()) / 1000,
		"fuel":           res.Fuel,
		"depth":          depth,
	}
	if res.IsError {
		f["outcome"] = "error"
		if res.Error != nil {
			f["code"] = string(res.Error.Code)
		}
	}
	return f
}
