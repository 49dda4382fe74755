package skillhost

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"time"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/provider"
	"github.com/skillhost/skillhost/registry"
)

// ServiceProvider answers a guest's capability_call of the services of
// one namespace (Config.Services). The host calls it only for a service
// the calling tool's grant allows: its manifest requests it, the
// operator's [packs.<name>] services grant it, and the run's grants (a
// tenant's) leave it. Its context carries the run (RunFrom): a provider
// may refuse further, for a tenant, with an *abi.Error.
type ServiceProvider = host.ServiceProvider

// ServiceProviderFunc adapts a function to ServiceProvider.
type ServiceProviderFunc = host.ServiceProviderFunc

// RunFrom returns the run a capability provider or a native tool is
// called in (its Context names the tenant), or nil.
func RunFrom(ctx context.Context) *Run { return registry.RunFrom(ctx) }

// Events of the capability provider commands of [capabilities.providers]
// (Config.Events); each has the field namespace.
const (
	// EventProviderStarted: the command started. Fields: pid.
	EventProviderStarted = provider.EventStarted
	// EventProviderStartFailed: it could not be started. Fields: error.
	EventProviderStartFailed = provider.EventStartFailed
	// EventProviderExited: it exited; it is started again after
	// restart_in. Fields: pid, error, failed (calls in flight that
	// failed), restart_in.
	EventProviderExited = provider.EventExited
	// EventProviderStderr: a line of its standard error. Fields: line.
	EventProviderStderr = provider.EventStderr
	// EventProviderBadOutput: a line of its output that answers no call
	// in flight. Fields: problem.
	EventProviderBadOutput = provider.EventBadOutput
	// EventCapabilityCall: a provider served (or refused) a guest's
	// capability_call. Fields: capability, outcome, code, duration_ms.
	EventCapabilityCall = registry.EventCapabilityCall
)

// engineServices are an engine's capability providers, kept across
// reloads: a provider command is not restarted when the packs are.
type engineServices struct {
	services map[string]host.ServiceProvider
	procs    []*provider.Process
}

// openServices gathers the engine's capability providers: Config.Services
// and a command for each enabled [capabilities.providers.<namespace>]
// section of the operator config. Commands start on their first call.
func (e *Engine) openServices() error {
	svcs := maps.Clone(e.cfg.Services)
	for _, pc := range e.op.Capabilities.EnabledProviders() {
		if _, dup := svcs[pc.Namespace]; dup {
			e.closeServices()
			return fmt.Errorf("capability provider namespace %q is registered in Go (Config.Services) and by [capabilities.providers.%s] in %s; keep one", pc.Namespace, pc.Namespace, e.op.File)
		}
		env := make(map[string]string, len(pc.Env))
		for k, v := range pc.Env {
			env[k] = v.Value()
		}
		p, err := provider.New(provider.Options{Namespace: pc.Namespace, Command: pc.Command, Env: env,
			Timeout: pc.Timeout, OnEvent: e.providerEvent})
		if err != nil {
			e.closeServices()
			return err
		}
		if svcs == nil {
			svcs = map[string]host.ServiceProvider{}
		}
		svcs[pc.Namespace] = commandService{p}
		e.svc.procs = append(e.svc.procs, p)
	}
	e.svc.services = svcs
	return nil
}

// Services returns the namespaces of the engine's capability providers
// (Config.Services and [capabilities.providers]), sorted. They are fixed
// when the engine opens: a reload keeps them.
func (e *Engine) Services() []string { return e.now().reg.Services() }

// serviceProblems reports the provider commands that cannot be started
// now (the program is not found or not executable): their calls would
// fail. It is checked at each load, so a reload after installing the
// program clears it.
func (e *Engine) serviceProblems() []error {
	var out []error
	for _, pc := range e.op.Capabilities.EnabledProviders() {
		if _, err := exec.LookPath(pc.Command[0]); err != nil {
			out = append(out, fmt.Errorf("[capabilities.providers.%s]: command %q cannot be started (%v); its %s.* capabilities fail until it can", pc.Namespace, pc.Command[0], err, pc.Namespace))
		}
	}
	return out
}

// closeServices stops the provider commands.
func (e *Engine) closeServices() {
	for _, p := range e.svc.procs {
		p.Close()
	}
	e.svc.procs = nil
}

// providerEvent reports a provider command's event to Config.Events.
func (e *Engine) providerEvent(name string, fields map[string]any) {
	if e.cfg.Events != nil {
		e.cfg.Events.Event(context.Background(), registry.Event{Name: name, Time: time.Now(), Fields: fields})
	}
}

// commandService serves a namespace with a provider command, sending the
// tenant of the run the call is made in.
type commandService struct{ p *provider.Process }

var _ host.ServiceProvider = commandService{}

func (c commandService) CallService(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
	var tenant string
	if run := registry.RunFrom(ctx); run != nil {
		tenant = run.Context().Tenant
	}
	return c.p.Call(ctx, id, args, tenant)
}
