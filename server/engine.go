package server

import (
	"context"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/tenancy"
)

// Engine is what a server serves: runs of the engine's registry for its
// sessions, its tools, skills and tenants, and what readiness, reload and
// metrics ask of it. *skillhost.Engine is one. The server names the types
// of the layers it serves (registry, tenancy, packs, host) and none of the
// root package's, so that the façade and the server stand side by side
// over those layers, and the façade knows nothing of HTTP.
type Engine interface {
	// NewRun starts the run of a session or a stateless request.
	NewRun(rc registry.RunContext, opts *registry.RunOptions) (*registry.Run, error)
	// EndSession forgets a session's activations once it is over.
	EndSession(tenant, session string)
	// Busy says that tenant has a request in flight outside any guest
	// until done is called (host.Host.Busy).
	Busy(tenant string) (done func())
	// Tool returns a tool of the registry by name.
	Tool(name string) (*registry.Tool, error)
	// RenderOptions say how tools/list renders the run's tools.
	RenderOptions() registry.RenderOptions
	// Skills are the file skills of the catalog, for the skills
	// extension's checks.
	Skills() []*packs.SkillEntry
	// Tenants are the tenants whose packs' skills the engine keeps apart;
	// a server refuses an engine whose tenants are not its own.
	Tenants() *tenancy.Set
	// Services are the namespaces of the capability providers, for
	// metrics.
	Services() []string
	// MemoryStats says what the engine holds between calls.
	MemoryStats() host.MemoryStats
	// CompileModules compiles every module ahead of the first call (Warm).
	CompileModules(ctx context.Context, progress func(name string, size int) (done func())) (compiled int, failed []error, err error)
	// Reload reads the sources again and swaps the catalog in whole.
	Reload(ctx context.Context) error
	// Operator is the operator config the engine was opened with.
	Operator() *packs.Config
	// SourceDirs are the folders a reload watches.
	SourceDirs() []string
}
