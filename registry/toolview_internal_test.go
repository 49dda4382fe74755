package registry

import (
	"context"
	"strings"
	"testing"
)

// tenantOnly is a pointer policy, as a server's tenant policy is.
type tenantOnly struct{ prefix string }

func (p *tenantOnly) Allowed(rc RunContext, t *Tool) bool { return strings.HasPrefix(t.Name, p.prefix) }

// Runs share the index view of their tools when their policy (a pointer,
// or none) and run context are the same, and only then; a run with a
// function policy, which cannot be compared, keeps one of its own.
func TestToolViewSharedByPolicyAndContext(t *testing.T) {
	reg, err := New(context.Background(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := &tenantOnly{"a_"}, &tenantOnly{"a_"}
	fn := VisibilityFunc(func(RunContext, *Tool) bool { return true })
	run := func(rc RunContext, p VisibilityPolicy) *Run {
		t.Helper()
		r, err := reg.NewRun(rc, &RunOptions{Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ta, tb := RunContext{Tenant: "a"}, RunContext{Tenant: "b"}
	for _, tc := range []struct {
		name   string
		x, y   *Run
		shared bool
	}{
		{"same policy and context", run(ta, a), run(ta, a), true},
		{"no policy", run(ta, nil), run(ta, nil), true},
		{"another context", run(ta, a), run(tb, a), false},
		{"another session", run(ta, a), run(RunContext{Tenant: "a", Session: "s1"}, a), false},
		{"an equal policy at another address", run(ta, a), run(ta, b), false},
		{"a function policy", run(ta, fn), run(ta, fn), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.x.toolView() == tc.y.toolView(); got != tc.shared {
				t.Errorf("shared = %v, want %v", got, tc.shared)
			}
			if first, again := tc.x.toolView(), tc.x.toolView(); first != again {
				t.Error("a run's view changes between searches")
			}
		})
	}
}
