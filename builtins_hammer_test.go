package skillhost_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// hammerWait bounds each hammer round: a round that has not finished by
// then is stuck. It bounds a hang, not the speed of the calls, which take
// a fraction of it even under the race detector.
const hammerWait = 60 * time.Second

// hammerCallers is eight times the connections of an index store, which
// Open gives max(4, 2×GOMAXPROCS) (index.Open).
func hammerCallers() int { return 8 * max(4, 2*runtime.GOMAXPROCS(0)) }

// echoTool is a native tool that returns its arguments.
type echoTool struct{ name, description string }

func (e echoTool) Describe() packs.ToolSpec {
	return packs.ToolSpec{Name: e.name, Description: e.description, Loading: packs.LoadingDeferred}
}

func (e echoTool) Execute(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	return args, nil
}

// writeSkills writes a source folder of skills in version v: an agent
// skill with a reference, and a playbook.
func writeSkills(t *testing.T, dir string, v int) {
	t.Helper()
	files := map[string]string{
		"skills/triage-guide/SKILL.md": fmt.Sprintf("---\nname: triage-guide\ndescription: Triage service logs and count the errors "+
			"with word_count (version %d).\n---\n# Triage\n\nRead references/guide.md, then count with `word_count`.\n", v),
		"skills/triage-guide/references/guide.md": "# Guide\n\nGroup the errors by service.\n",
		"skills/ops/restart-service.skill.yaml": fmt.Sprintf("name: restart-service\ntitle: Restart a stuck service\n"+
			"trigger: A service stopped answering (version %d).\ntask_type: domain\nsteps:\n  - Save the logs.\n  - Restart it.\n", v),
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hammerConfig is an engine over the skills of dir, with a native tool
// to find and a Go skill with a script, keeping its index at indexPath,
// whose runs have the skill tool family skillTools.
func hammerConfig(dir, indexPath, skillTools string) skillhost.Config {
	return skillhost.Config{
		Skills:   registry.SkillsConfig{Tools: skillTools},
		Operator: packs.DefaultConfig(), NoBundled: true, PackDirs: []string{dir}, IndexPath: indexPath,
		Tools: []skillhost.Native{echoTool{"word_count", "Count the words of a text."}, echoTool{"web_fetch", "Fetch a web page."}},
		GoSkills: []skillhost.Skill{{Name: "greeter", Description: "Greets people by name.", Instructions: "Run hello.",
			Resources: []registry.SkillResource{{Name: "names.txt", Content: []byte("Ada\n")}},
			Scripts: []registry.SkillScript{{Name: "hello", Run: func(_ context.Context, args map[string]any) (any, error) {
				return fmt.Sprintf("hello, %v", args["name"]), nil
			}}}}},
	}
}

// builtinCall is a call of a built-in tool, in an engine whose runs have
// the skill tool family family ("" for a tool of every engine).
type builtinCall struct{ tool, args, family string }

// builtinCalls are a call of every built-in tool.
var builtinCalls = []builtinCall{
	{registry.ToolSearchName, `{"query":"count the words"}`, ""},
	{registry.SkillSearchName, `{"query":"triage logs"}`, registry.SkillToolsSearch},
	{registry.SkillGetName, `{"names":["triage-guide","restart-service"]}`, registry.SkillToolsSearch},
	{registry.SkillListName, `{}`, registry.SkillToolsSearch},
	{registry.ListSkillsName, `{}`, registry.SkillToolsLoad},
	{registry.LoadSkillName, `{"skill_name":"triage-guide"}`, registry.SkillToolsLoad},
	{registry.ReadSkillResourceName, `{"skill_name":"triage-guide","resource_name":"references/guide.md"}`, registry.SkillToolsLoad},
	{registry.RunSkillScriptName, `{"skill_name":"greeter","script_name":"hello","args":{"name":"Ada"}}`, registry.SkillToolsLoad},
}

// familyCalls are the calls of builtinCalls an engine of the skill tool
// family family answers.
func familyCalls(family string) []builtinCall {
	var out []builtinCall
	for _, c := range builtinCalls {
		if c.family == "" || c.family == family {
			out = append(out, c)
		}
	}
	return out
}

// callBuiltin makes one call through the engine and turns a failed
// result into an error; a timeout result wraps context.DeadlineExceeded,
// so that the hammer takes the call as stuck.
func callBuiltin(ctx context.Context, e *skillhost.Engine, tool, args string) error {
	res, err := e.Call(ctx, tool, json.RawMessage(args), nil)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", tool, err)
	case res.IsError && res.Error.Code == abi.CodeTimeout:
		return fmt.Errorf("%s: %w: %s", tool, context.DeadlineExceeded, res.Error.Message)
	case res.IsError:
		return fmt.Errorf("%s: %s: %s", tool, res.Error.Code, res.Error.Message)
	}
	return nil
}

// TestHammerBuiltins calls every built-in tool through Engine.Call from
// eight times as many callers as the index has connections, all at once,
// while the index's caches are cold: right after Open, right after a
// Reload that changed the skills, and right after another engine on the
// same index file (another process) changed them. Every call must end,
// well inside the bound; a stuck one runs into its deadline, and the
// hammer logs every goroutine's stack. Run it with -race.
func TestHammerBuiltins(t *testing.T) {
	ctx := context.Background()
	// Each family's engine, hammered with every built-in it has at once.
	everyLoad := builtinCall{"every built-in, load family", "", registry.SkillToolsLoad}
	everySearch := builtinCall{"every built-in, search family", "", registry.SkillToolsSearch}
	warm := func(t *testing.T, e *skillhost.Engine, family string) {
		t.Helper()
		for _, c := range familyCalls(family) {
			if err := callBuiltin(ctx, e, c.tool, c.args); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, cold := range []struct {
		name string
		cool func(t *testing.T, e *skillhost.Engine, family, dir, indexPath string)
	}{
		{"after Open", func(*testing.T, *skillhost.Engine, string, string, string) {}},
		{"after Reload", func(t *testing.T, e *skillhost.Engine, family, dir, _ string) {
			warm(t, e, family)
			writeSkills(t, dir, 1)
			if err := e.Reload(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"after another engine's change", func(t *testing.T, e *skillhost.Engine, family, _, indexPath string) {
			warm(t, e, family)
			other := t.TempDir()
			writeSkills(t, other, 2)
			o, err := skillhost.Open(ctx, hammerConfig(other, indexPath, family))
			if err != nil {
				t.Fatal(err)
			}
			o.Close(ctx)
		}},
	} {
		t.Run(cold.name, func(t *testing.T) {
			for _, c := range append(builtinCalls[:len(builtinCalls):len(builtinCalls)], everyLoad, everySearch) {
				t.Run(c.tool, func(t *testing.T) {
					dir, indexPath := t.TempDir(), filepath.Join(t.TempDir(), "index.db")
					writeSkills(t, dir, 0)
					e := open(t, hammerConfig(dir, indexPath, c.family))
					cold.cool(t, e, c.family, dir, indexPath)
					testenv.Hammer(t, hammerCallers(), hammerWait, func(ctx context.Context, i int) error {
						if c != everyLoad && c != everySearch {
							return callBuiltin(ctx, e, c.tool, c.args)
						}
						calls := familyCalls(c.family)
						for k := range calls {
							bc := calls[(i+k)%len(calls)]
							if err := callBuiltin(ctx, e, bc.tool, bc.args); err != nil {
								return err
							}
						}
						return nil
					})
				})
			}
		})
	}
}

// A built-in that blocks ends at its deadline as a timeout result, through
// Engine.Call with a context that has none, as a Wasm tool does: the
// deadline is the default timeout of a Wasm tool (here
// Config.DefaultLimits; [limits] timeout in the operator config). Each
// case blocks a built-in in another way: a Go skill's resource that does
// not look at its context, and the index's write lock held by another
// process while skill_get records a use.
func TestBuiltinsEndAtTheirDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ctx := context.Background()
	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	dir, indexPath := t.TempDir(), filepath.Join(t.TempDir(), "index.db")
	writeSkills(t, dir, 0)
	cfg := hammerConfig(dir, indexPath, registry.SkillToolsLoad)
	cfg.DefaultLimits = host.Limits{Timeout: timeout}
	cfg.GoSkills = append(cfg.GoSkills, skillhost.Skill{Name: "stuck", Description: "A skill whose file never comes.",
		Resources: []registry.SkillResource{{Name: "never.txt", Load: func(context.Context) ([]byte, error) {
			<-release
			return []byte("late"), nil
		}}}})
	e := open(t, cfg)
	cfg.Skills.Tools = registry.SkillToolsSearch // skill_get's engine, on the same index
	search := open(t, cfg)

	for _, tc := range []struct {
		name, tool, args string
		e                *skillhost.Engine
		hold             func(t *testing.T) (undo func())
	}{
		{"a resource that never comes", registry.ReadSkillResourceName, `{"skill_name":"stuck","resource_name":"never.txt"}`, e,
			func(*testing.T) func() { return func() {} }},
		{"the index locked by another process", registry.SkillGetName, `{"names":["triage-guide"]}`, search,
			func(t *testing.T) func() {
				db, err := sql.Open("sqlite", indexPath)
				if err != nil {
					t.Fatal(err)
				}
				conn, err := db.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
					t.Fatal(err)
				}
				return func() {
					conn.ExecContext(ctx, "ROLLBACK")
					conn.Close()
					db.Close()
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			undo := tc.hold(t)
			defer undo()
			done := make(chan struct{})
			var res *skillhost.Result
			var err error
			go func() {
				defer close(done)
				res, err = tc.e.Call(ctx, tc.tool, json.RawMessage(tc.args), nil)
			}()
			select {
			case <-done:
			case <-time.After(hammerWait):
				t.Fatalf("%s did not return; goroutines:\n%s", tc.tool, testenv.Stacks())
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.Error.Code != abi.CodeTimeout || !strings.Contains(res.Error.Message, "timed out after 300ms") {
				t.Errorf("result %+v, want a timeout after 300ms", res.Error)
			}
		})
	}
	releaseOnce.Do(func() { close(release) })
	// The engine still answers.
	if err := callBuiltin(ctx, search, registry.SkillGetName, `{"names":["triage-guide"]}`); err != nil {
		t.Errorf("once nothing blocks: %v", err)
	}
}
