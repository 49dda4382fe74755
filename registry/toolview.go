package registry

import (
	"reflect"
	"sync"

	"github.com/skillhost/skillhost/index"
)

// Views of the index for tool_search.
//
// The index ranks a tool search with the statistics of the tools its
// caller may find (index.ToolView), so that one tenant's tools never move
// another's scores. A view remembers those statistics between searches,
// so runs that find the same tools should share one: the registry keeps
// a view per visibility policy and run context, which for a server's
// tenant is one per tenant and session. A run whose policy cannot be
// told apart from another's (a VisibilityFunc: functions do not compare)
// keeps a view of its own.

// maxToolViews bounds the views a registry keeps; past it the registry
// starts again, and runs make their views anew on their next search.
const maxToolViews = 4096

// toolViews are a registry's views, by policy and run context.
type toolViews struct {
	mu sync.Mutex
	m  map[toolViewKey]*index.ToolView
}

// toolViewKey identifies the tools a run may find: its policy's answers
// for its run context.
type toolViewKey struct {
	policy VisibilityPolicy
	rc     RunContext
}

// toolView returns the index view of the tools the run may find
// (Findable), shared with every run of the registry with the same policy
// and run context.
func (run *Run) toolView() *index.ToolView {
	if !comparablePolicy(run.policy) {
		run.ownView.Do(func() { run.view = run.reg.newToolView(run.policy, run.rc) })
		return run.view
	}
	key := toolViewKey{run.policy, run.rc}
	vs := &run.reg.views
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if v, ok := vs.m[key]; ok {
		return v
	}
	if vs.m == nil || len(vs.m) >= maxToolViews {
		vs.m = make(map[toolViewKey]*index.ToolView)
	}
	v := run.reg.newToolView(run.policy, run.rc)
	vs.m[key] = v
	return v
}

// newToolView returns the view of the tools policy lets a run of rc find:
// Run.Findable, holding no run.
func (r *Registry) newToolView(policy VisibilityPolicy, rc RunContext) *index.ToolView {
	return index.NewToolView(func(name string) bool {
		t, ok := r.tools[name]
		return ok && !t.Hidden && policy.Allowed(rc, t)
	})
}

// comparablePolicy reports whether policy can be a map key: a pointer, or
// a value of no size (allowAll). A struct could hold a function.
func comparablePolicy(policy VisibilityPolicy) bool {
	t := reflect.TypeOf(policy)
	return t != nil && (t.Kind() == reflect.Pointer || (t.Size() == 0 && t.Comparable()))
}
