package registry

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/skillhost/skillhost/abi"
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
	// Call describes the call of an EventToolCall (whose Fields are nil);
	// nil for every other event.
	Call *CallEvent
}

// CallEvent is what an EventToolCall reports of one call: typed, because
// every call makes one and audit logs and metrics read them all.
type CallEvent struct {
	Tool string
	Kind Kind
	// Outcome is "ok" or "error"; Code is the abi code of an error.
	Outcome string
	Code    abi.Code
	// Duration is the whole call, validation included; Instantiate and
	// Execute split a Wasm tool's time between giving the call its
	// instance and running the export.
	Duration, Instantiate, Execute time.Duration
	// Fuel is the instructions a metered Wasm tool ran, when FuelCounted
	// is set (see Result.FuelCounted).
	Fuel        int64
	FuelCounted bool
	// Depth is 0 for a model's call and n for a guest's nested tool_call.
	Depth int
	// Args are the arguments the tool ran with (after validation; nil
	// when they were refused). They may hold secrets: a sink that keeps
	// them keeps their shape, not their values.
	Args json.RawMessage
}

// attrs are c's fields as log attributes, the arguments left out.
func (c *CallEvent) attrs() []slog.Attr {
	a := []slog.Attr{
		slog.String("tool_name", c.Tool), slog.String("kind", string(c.Kind)), slog.String("outcome", c.Outcome),
		slog.Float64("duration_ms", ms(c.Duration)), slog.Float64("instantiate_ms", ms(c.Instantiate)),
		slog.Float64("execute_ms", ms(c.Execute)), slog.Int("depth", c.Depth),
	}
	if c.FuelCounted {
		a = append(a, slog.Int64("fuel", c.Fuel))
	}
	if c.Code != "" {
		a = append(a, slog.String("code", string(c.Code)))
	}
	return a
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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
// EventToolCall and EventCapabilityCall, made by every call), with the
// event's fields and run as attributes.
type SlogSink struct{ Logger *slog.Logger }

// Event logs e.
func (s SlogSink) Event(ctx context.Context, e Event) {
	l := s.Logger
	if l == nil {
		l = slog.Default()
	}
	level := slog.LevelInfo
	if e.Name == EventToolCall || e.Name == EventCapabilityCall { // one per call
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
	if e.Call != nil {
		attrs = append(attrs, e.Call.attrs()...)
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
	// EventToolCall is reported after every call a run made; its
	// Event.Call says which tool ran, how it ended, how long it took and
	// how much fuel it used (logged by SlogSink as tool_name, kind,
	// outcome, code, duration_ms, instantiate_ms, execute_ms, fuel and
	// depth).
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

// callEvent describes a finished call.
func callEvent(t *Tool, args json.RawMessage, res *Result, d time.Duration, depth int) *CallEvent {
	c := &CallEvent{Tool: t.Name, Kind: t.Kind, Outcome: "ok", Duration: d, Instantiate: res.Instantiate,
		Execute: res.Execute, Fuel: res.Fuel, FuelCounted: res.FuelCounted, Depth: depth, Args: args}
	if res.IsError {
		c.Outcome = "error"
		if res.Error != nil {
			c.Code = res.Error.Code
		}
	}
	return c
}
