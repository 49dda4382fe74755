package index

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
)

// hammerWait bounds each hammer round: a round that has not finished by
// then is stuck. It bounds a hang, not the speed of the calls, which take
// a fraction of it even under the race detector.
const hammerWait = 60 * time.Second

// hammerOp is one operation of the store, as a caller makes it; write
// says it writes.
type hammerOp struct {
	name  string
	call  func(ctx context.Context, s *Store, caller int) error
	write bool
}

// hammerScope gives callers the global view, a tenant's or a project's.
func hammerScope(caller int) Scope {
	switch caller % 3 {
	case 1:
		return Scope{TenantID: "t1"}
	case 2:
		return Scope{TenantID: "t1", ProjectID: "p1"}
	}
	return Scope{}
}

// hammerVisible hides one indexed tool, so that every skill answer
// rewrites its references and needs the indexed tool names.
func hammerVisible(name string) bool { return name != "write_file" }

// hammerTools is the tool catalogue, in version v.
func hammerTools(v int) []ToolRecord {
	tools := sampleTools()
	for i := range 20 {
		tools = append(tools, ToolRecord{Name: fmt.Sprintf("hammer_%02d", i), Description: fmt.Sprintf("hammer version%d tool", v),
			LoadingMode: packs.LoadingDeferred, SideEffects: "read"})
	}
	return tools
}

// hammerSkills are a pack's skills, in version v; their texts name the
// hidden tool.
func hammerSkills(v int) []SkillRecord {
	skills := packSkills()
	for i := range skills {
		skills[i].Steps = append(skills[i].Steps, fmt.Sprintf("Clean up with write_file (version %d)", v))
	}
	return skills
}

// hammerOps are every operation of the store: the searches, skill
// retrieval, the directory, pre-flight retrieval, the listings, the
// snapshots and the writes.
var hammerOps = []hammerOp{
	{"SearchTools/fts", func(ctx context.Context, s *Store, i int) error {
		_, err := s.SearchTools(ctx, ToolQuery{Query: "search the web", Visible: hammerVisible})
		return err
	}, false},
	{"SearchTools/regex", func(ctx context.Context, s *Store, i int) error {
		_, err := s.SearchTools(ctx, ToolQuery{Query: "^hammer_0", SearchType: SearchRegex, Visible: hammerVisible})
		return err
	}, false},
	{"SearchTools/exact", func(ctx context.Context, s *Store, i int) error {
		_, err := s.SearchTools(ctx, ToolQuery{Query: "read_file", SearchType: SearchExact})
		return err
	}, false},
	{"SearchSkills/fts", func(ctx context.Context, s *Store, i int) error {
		_, err := s.SearchSkills(ctx, SkillQuery{Query: "login form", Scope: hammerScope(i), VisibleTool: hammerVisible})
		return err
	}, false},
	{"SearchSkills/regex", func(ctx context.Context, s *Store, i int) error {
		_, err := s.SearchSkills(ctx, SkillQuery{Query: "pack\\.core", SearchType: SearchRegex, Scope: hammerScope(i), VisibleTool: hammerVisible})
		return err
	}, false},
	{"SearchSkills/exact", func(ctx context.Context, s *Store, i int) error {
		_, err := s.SearchSkills(ctx, SkillQuery{Query: "pack.core.login_basic", SearchType: SearchExact, Scope: hammerScope(i), VisibleTool: hammerVisible})
		return err
	}, false},
	{"GetSkills", func(ctx context.Context, s *Store, i int) error {
		_, err := s.GetSkills(ctx, SkillGetRequest{Names: []string{"pack.core.login_basic", "pack.core.pdf_tables"},
			Scope: hammerScope(i), VisibleTool: hammerVisible})
		return err
	}, false},
	{"ListSkills", func(ctx context.Context, s *Store, i int) error {
		res, err := s.ListSkills(ctx, SkillListRequest{Scope: hammerScope(i), VisibleTool: hammerVisible})
		if err == nil && res.Total == 0 {
			err = errors.New("listed no skills")
		}
		return err
	}, false},
	{"ListSkills/past the end", func(ctx context.Context, s *Store, i int) error {
		_, err := s.ListSkills(ctx, SkillListRequest{Page: 50, Scope: hammerScope(i), VisibleTool: hammerVisible})
		return err
	}, false},
	{"Directory", func(ctx context.Context, s *Store, i int) error {
		d, err := s.Directory(ctx, DirectoryConfig{VisibleTool: hammerVisible}, hammerScope(i))
		if err == nil {
			d.Render()
		}
		return err
	}, false},
	{"Relevant", func(ctx context.Context, s *Store, i int) error {
		_, err := s.Relevant(ctx, RelevantRequest{Task: "log into the website", Scope: hammerScope(i), VisibleTool: hammerVisible})
		return err
	}, false},
	{"Packs", func(ctx context.Context, s *Store, i int) error {
		_, err := s.Packs(ctx, Scope{Mode: packs.ScopeGlobal})
		return err
	}, false},
	{"PackScopes", func(ctx context.Context, s *Store, i int) error {
		_, err := s.PackScopes(ctx)
		return err
	}, false},
	{"ToolsFingerprint", func(ctx context.Context, s *Store, i int) error {
		_, err := s.ToolsFingerprint(ctx)
		return err
	}, false},
	{"Warm", func(ctx context.Context, s *Store, i int) error {
		return s.Warm(ctx)
	}, false},
	{"SyncTools", func(ctx context.Context, s *Store, i int) error {
		_, err := s.SyncTools(ctx, hammerTools(i%2))
		return err
	}, true},
	{"LoadPack", func(ctx context.Context, s *Store, i int) error {
		_, err := s.LoadPack(ctx, "core", hammerSkills(i%2), PackOptions{UpdateExisting: true,
			Scope: Scope{Mode: packs.ScopeTenant, TenantID: "t1"}})
		return err
	}, true},
	{"PutSkill", func(ctx context.Context, s *Store, i int) error {
		return s.PutSkill(ctx, SkillRecord{Name: fmt.Sprintf("learned.code.k%d", i%4), Trigger: "hammer skill; see write_file"})
	}, true},
}

// TestHammerColdCaches runs every operation of the store from eight
// times as many callers as the store has connections, all at once, while
// its caches are cold: right after Open, right after another store (as
// another process would) wrote the file, and right after a write through
// the store itself. No operation may wait for a connection while it
// holds one: with every connection held by such a wait, none would ever
// come, and the callers would run into their deadline (the hammer then
// logs every goroutine's stack). Run it with -race.
func TestHammerColdCaches(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	seed, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustSync(t, seed, hammerTools(0))
	for _, sc := range []Scope{{Mode: packs.ScopeGlobal}, {Mode: packs.ScopeTenant, TenantID: "t1"},
		{Mode: packs.ScopeProject, TenantID: "t1", ProjectID: "p1"}} {
		if _, err := seed.LoadPack(ctx, "core", hammerSkills(0), PackOptions{Scope: sc, Pinned: []string{"pack.core.pdf_tables"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := seed.Close(); err != nil {
		t.Fatal(err)
	}

	// A cold store has neither snapshots nor the tool names of its
	// generation at hand.
	warm := func(t *testing.T, s *Store) {
		t.Helper()
		if err := s.Warm(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ListSkills(ctx, SkillListRequest{VisibleTool: hammerVisible}); err != nil {
			t.Fatal(err)
		}
	}
	version := 0
	change := func(t *testing.T, s *Store) {
		t.Helper()
		version++
		if _, err := s.SyncTools(ctx, hammerTools(version)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.LoadPack(ctx, "core", hammerSkills(version), PackOptions{UpdateExisting: true}); err != nil {
			t.Fatal(err)
		}
	}
	colds := []struct {
		name string
		cool func(t *testing.T, s *Store)
	}{
		{"after Open", func(*testing.T, *Store) {}},
		{"after another store's write", func(t *testing.T, s *Store) {
			warm(t, s)
			other, err := Open(ctx, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			change(t, other)
		}},
		{"after the store's own write", func(t *testing.T, s *Store) {
			warm(t, s)
			change(t, s)
		}},
	}
	// Every caller makes every read, each starting at another; one in
	// four writes too (writes queue for the one writer, and a few keep
	// the generation moving under the readers).
	every := hammerOp{name: "every operation", call: func(ctx context.Context, s *Store, i int) error {
		for k := range hammerOps {
			op := hammerOps[(i+k)%len(hammerOps)]
			if op.write && i%4 != 0 {
				continue
			}
			if err := op.call(ctx, s, i); err != nil {
				return fmt.Errorf("%s: %w", op.name, err)
			}
		}
		return nil
	}}
	for _, cold := range colds {
		t.Run(cold.name, func(t *testing.T) {
			for _, op := range append(hammerOps[:len(hammerOps):len(hammerOps)], every) {
				t.Run(op.name, func(t *testing.T) {
					s, err := Open(ctx, path, &Options{OnEvent: func(Event) {}})
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					cold.cool(t, s)
					callers := 8 * s.db.Stats().MaxOpenConnections
					testenv.Hammer(t, callers, hammerWait, func(ctx context.Context, i int) error {
						return op.call(ctx, s, i)
					})
				})
			}
		})
	}
}
