package registry_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// deadlineBuiltin is a built-in of the deadline tests: its description is
// a built-in's, its answer whatever fn does.
func deadlineBuiltin(name string, fn func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)) registry.Native {
	return biTool{d: packs.ToolSpec{Name: name, Description: "A built-in of the deadline tests.", Loading: packs.LoadingAlways}, fn: fn}
}

// Every built-in runs under a deadline, as a Wasm tool runs under its
// timeout: the default timeout of a Wasm tool, or the caller's deadline
// when that comes first. A built-in that blocks, whether or not it looks
// at its context, ends as a timeout result at the deadline, through a
// run called with a context that has none.
func TestBuiltinsRunUnderADeadline(t *testing.T) {
	const timeout = 200 * time.Millisecond
	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	var sawDeadline sync.Map // tool name → the deadline its context carried
	builtins := []registry.Native{
		deadlineBuiltin("blocks", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			<-release // looks at nothing else: a lock, a file system
			return json.RawMessage(`"released"`), nil
		}),
		deadlineBuiltin("waits", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			d, _ := ctx.Deadline()
			sawDeadline.Store("waits", d)
			<-ctx.Done()
			return nil, ctx.Err()
		}),
		deadlineBuiltin("answers", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			if _, ok := ctx.Deadline(); !ok {
				return nil, &registry.ToolError{Code: abi.CodeInternal, Message: "no deadline"}
			}
			if registry.RunFrom(ctx) == nil {
				return nil, &registry.ToolError{Code: abi.CodeInternal, Message: "no run"}
			}
			return json.RawMessage(`{"ok":true}`), nil
		}),
		deadlineBuiltin("fails", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			return nil, &registry.ToolError{Code: abi.CodeNotFound, Message: "nothing there"}
		}),
		deadlineBuiltin("panics", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			panic("built-in bug")
		}),
	}
	ev := &events{}
	reg, err := registry.New(context.Background(), nil, registry.Options{
		Builtins: builtins, DefaultLimits: host.Limits{Timeout: timeout}, Events: ev,
	})
	if err != nil {
		t.Fatal(err)
	}
	run, err := reg.NewRun(registry.RunContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	shortly := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), timeout/4)
	}
	canceled := func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(timeout/4, cancel)
		return ctx, cancel
	}
	for _, tc := range []struct {
		name, tool string
		ctx        func() (context.Context, context.CancelFunc)
		code       abi.Code // "" for a success
		msg        string
	}{
		{"blocked past its timeout", "blocks", nil, abi.CodeTimeout, `tool "blocks" timed out after 200ms`},
		{"waiting on its context", "waits", nil, abi.CodeTimeout, `tool "waits" timed out after 200ms`},
		{"blocked past the caller's deadline", "blocks", shortly, abi.CodeTimeout, "the caller's deadline came before this call's 200ms timeout"},
		{"blocked when the caller gives up", "blocks", canceled, abi.CodeTimeout, `tool "blocks" was canceled by the caller`},
		{"answering in time", "answers", nil, "", ""},
		{"failing in time", "fails", nil, abi.CodeNotFound, "nothing there"},
		{"panicking", "panics", nil, abi.CodeInternal, `tool "panics" failed inside the host`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tc.ctx != nil {
				ctx, cancel = tc.ctx()
			}
			defer cancel()
			res, err := run.Call(ctx, tc.tool, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.code == "" {
				if res.IsError {
					t.Fatalf("failed: %+v", res.Error)
				}
				return
			}
			if !res.IsError || res.Error.Code != tc.code || !strings.Contains(res.Error.Message, tc.msg) {
				t.Errorf("result %+v, want a %s error containing %q", res.Error, tc.code, tc.msg)
			}
		})
	}
	if d, ok := sawDeadline.Load("waits"); !ok || d.(time.Time).IsZero() {
		t.Errorf("a built-in's context carried no deadline")
	}
	panics := ev.named(registry.EventToolPanic)
	if len(panics) != 1 {
		t.Fatalf("%d panic events, want 1", len(panics))
	}
	if stack, _ := panics[0].Fields["stack"].(string); !strings.Contains(stack, "builtin_deadline_test.go") {
		t.Errorf("the panic event's stack is not the built-in's:\n%s", stack)
	}
}

// A run_skill_script call may run as long as the longest timeout a grant
// gives a pack's scripts, beyond the default timeout of the other
// built-ins: a script granted a minute is not cut at the default.
func TestRunSkillScriptDeadlineCoversScriptGrants(t *testing.T) {
	set, err := registry.NewSkillSet(registry.SkillSetOptions{}, registry.Skill{
		Name: "deadline", Description: "Reports the deadline of its script.",
		Scripts: []registry.SkillScript{{Name: "deadline", Run: func(ctx context.Context, _ map[string]any) (any, error) {
			d, ok := ctx.Deadline()
			if !ok {
				return nil, &registry.ToolError{Code: abi.CodeInternal, Message: "no deadline"}
			}
			return time.Until(d).Seconds(), nil
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	op := packs.DefaultConfig()
	op.Limits.Timeout = 2 * time.Second
	op.Packs = map[string]packs.PackGrant{"slow": {Limits: host.Limits{Timeout: time.Minute}}}
	reg, err := registry.New(context.Background(), nil, registry.Options{
		Operator: op, Builtins: registry.Builtins(registry.BuiltinOptions{Skills: set}),
	})
	if err != nil {
		t.Fatal(err)
	}
	run, err := reg.NewRun(registry.RunContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Call(context.Background(), registry.RunSkillScriptName,
		json.RawMessage(`{"skill_name":"deadline","script_name":"deadline"}`), nil)
	if err != nil || res.IsError {
		t.Fatalf("%+v, %v", res, err)
	}
	var out struct{ Output float64 }
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	// 2s for the built-in's own work, a minute for the slow pack's script.
	if want := 62.0; out.Output > want || out.Output < want-5 {
		t.Errorf("the script had %.1fs left of its deadline, want about %vs", out.Output, want)
	}
}
