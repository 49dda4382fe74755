package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
)

// EventCapabilityCall is reported after every capability_call a provider
// served (or refused by namespace). Fields: capability, outcome ("ok" or
// "error"), code (of an error), duration_ms. The arguments and the result
// are left out: they may hold secrets.
const EventCapabilityCall = "capability_call"

// checkServices refuses Options.Services that cannot be routed: a
// namespace must be a non-empty name without a dot, and have a provider.
func checkServices(s map[string]host.ServiceProvider) error {
	for ns, p := range s {
		if ns == "" || strings.ContainsAny(ns, ". \t") {
			return fmt.Errorf("%w: capability provider namespace %q: want a name without dots or spaces, such as \"mail\" for mail.send", ErrBadConfig, ns)
		}
		if p == nil {
			return fmt.Errorf("%w: capability provider namespace %q has no provider", ErrBadConfig, ns)
		}
	}
	return nil
}

// defaultServices is what a run made without RunOptions.Services asks a
// guest's capability_call of: the registry's providers (Options.Services),
// or nil when it has none (the host then answers "no provider").
func (r *Registry) defaultServices(run *Run) host.ServiceProvider {
	if len(r.opts.Services) == 0 {
		return nil
	}
	return runServices{run}
}

// runServices serves a guest's capability_call for the run it was made
// in: it routes the id by its namespace (the part before the first dot)
// to the provider registered for it. The host has already checked that
// the caller's grant (its manifest's request, the operator's and the
// run's grants together) names the capability. The provider's context
// carries the run (RunFrom), so it can see the tenant.
type runServices struct{ run *Run }

var _ host.ServiceProvider = runServices{}

func (s runServices) CallService(ctx context.Context, id string, args json.RawMessage) (out json.RawMessage, err error) {
	start := time.Now()
	reg := s.run.reg
	defer func() {
		if p := recover(); p != nil {
			reg.emit(ctx, s.run.rc, EventToolPanic, map[string]any{"capability": id, "panic": fmt.Sprint(p), "stack": string(debug.Stack())})
			out, err = nil, &abi.Error{Code: abi.CodeInternal, Message: fmt.Sprintf("capability provider of %q failed inside the host", id)}
		}
		if reg.opts.Events != nil {
			f := map[string]any{"capability": id, "outcome": "ok", "duration_ms": ms(time.Since(start))}
			if err != nil {
				f["outcome"], f["code"] = "error", string(abi.CodeUnavailable)
				if ae, ok := err.(*abi.Error); ok {
					f["code"] = string(ae.Code)
				}
			}
			reg.emit(ctx, s.run.rc, EventCapabilityCall, f)
		}
	}()
	ns, _, ok := strings.Cut(id, ".")
	if !ok || ns == "" {
		return nil, &abi.Error{Code: abi.CodeInvalidInput, Message: fmt.Sprintf("capability id %q has no namespace: want namespace.name, such as mail.send", id)}
	}
	p, ok := reg.opts.Services[ns]
	if !ok {
		return nil, &abi.Error{Code: abi.CodeNotFound, Message: fmt.Sprintf("no capability provider serves namespace %q (capability %q)", ns, id)}
	}
	if !json.Valid(args) {
		return nil, &abi.Error{Code: abi.CodeInvalidInput, Message: fmt.Sprintf("arguments of capability %q are not valid JSON", id)}
	}
	return p.CallService(withRun(ctx, s.run), id, args)
}

// Services returns the namespaces of the registry's capability providers,
// sorted.
func (r *Registry) Services() []string { return slices.Sorted(maps.Keys(r.opts.Services)) }
