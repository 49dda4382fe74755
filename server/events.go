package server

import (
	"context"
	"sync/atomic"

	"github.com/skillhost/skillhost/registry"
)

// EventHub is the engine's event sink when it is served: it passes every
// event on to the next sink (the log, say) and lets the server account
// each finished call to its tenant's quotas, audit log and metrics. Open
// the engine with it (skillhost.Config.Events), then give it to New in
// Options.Events.
type EventHub struct {
	next   registry.Sink
	server atomic.Pointer[Server]
}

// NewEventHub returns a hub passing events on to next (nil: to nobody).
func NewEventHub(next registry.Sink) *EventHub { return &EventHub{next: next} }

// Event passes e on and accounts a call.
func (h *EventHub) Event(ctx context.Context, e registry.Event) {
	if h.next != nil {
		h.next.Event(ctx, e)
	}
	if s := h.server.Load(); s != nil {
		s.observe(ctx, e)
	}
}

// observe accounts one event of the engine.
func (s *Server) observe(ctx context.Context, e registry.Event) {
	if e.Name == registry.EventCapabilityCall {
		s.ops.capability(e)
		return
	}
	if e.Call == nil {
		return
	}
	if t := s.tenants[e.Run.Tenant]; t != nil {
		t.quota.spend(e.Call.Fuel, e.Call.Execute)
	}
	s.ops.call(ctx, e)
}
