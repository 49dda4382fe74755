package host

import (
	"context"
	"encoding/json"

	"github.com/skillhost/skillhost/abi"
)

// ToolDispatcher runs the tools a guest calls through tool_call; a call
// passes it in CallOptions.Tools. The host has already checked the
// caller's grant and the nesting depth. In skillhost the registry's run
// implements it (the run's dispatcher, in registry/call.go): a nested call
// goes through Run.Call, with the same visibility, argument validation,
// grant of the called tool and events as a call from the model.
//
// The context carries the nesting depth (see CallDepth); a dispatcher that
// calls back into a Module passes it on unchanged.
type ToolDispatcher interface {
	CallTool(ctx context.Context, name string, args json.RawMessage) abi.ToolResult
}

// ToolDispatcherFunc adapts a function to ToolDispatcher.
type ToolDispatcherFunc func(ctx context.Context, name string, args json.RawMessage) abi.ToolResult

// CallTool calls f.
func (f ToolDispatcherFunc) CallTool(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
	return f(ctx, name, args)
}

// ServiceProvider answers capability_call for host-registered services
// ("mail.send"). The host checks the grant before calling it; the provider
// may refuse further (for a tenant, say) by returning an *abi.Error.
type ServiceProvider interface {
	CallService(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error)
}

// ServiceProviderFunc adapts a function to ServiceProvider.
type ServiceProviderFunc func(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error)

// CallService calls f.
func (f ServiceProviderFunc) CallService(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
	return f(ctx, id, args)
}

type depthKey struct{}

// withDepth records the tool_call nesting depth in ctx.
func withDepth(ctx context.Context, depth int) context.Context {
	return context.WithValue(ctx, depthKey{}, depth)
}

// CallDepth returns the tool_call nesting depth recorded in ctx: 0 for a
// call from outside any guest, n for a call made by a guest at depth n-1.
func CallDepth(ctx context.Context) int {
	d, _ := ctx.Value(depthKey{}).(int)
	return d
}
