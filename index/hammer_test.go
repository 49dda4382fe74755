package index

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/skillhost/skillhost/packs"
)

// TestHammerConcurrentUse runs searches, syncs and pack loads from many
// goroutines at once (run it with -race). Every call must succeed, and a
// search must never see a half-written sync: the two catalogues it
// alternates between are each complete.
func TestHammerConcurrentUse(t *testing.T) {
	s := openTest(t, nil)
	ctx := context.Background()
	catalog := func(v int) []ToolRecord {
		var tools []ToolRecord
		for i := range 40 {
			tools = append(tools, ToolRecord{Name: fmt.Sprintf("tool_%02d", i), Description: fmt.Sprintf("hammer version%d item", v),
				LoadingMode: packs.LoadingDeferred, SideEffects: "read"})
		}
		return tools
	}
	mustSync(t, s, catalog(0))
	if _, err := s.LoadPack(ctx, "core", packSkills(), PackOptions{}); err != nil {
		t.Fatal(err)
	}
	iters := 30
	if raceEnabled {
		iters = 8
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	run := func(f func(i int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range iters {
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for w := range 2 {
		run(func(i int) error {
			_, err := s.SyncTools(ctx, catalog((i+w)%2))
			return err
		})
	}
	run(func(i int) error {
		skills := packSkills()
		skills[0].Steps = append(skills[0].Steps, fmt.Sprintf("step %d", i))
		_, err := s.LoadPack(ctx, "core", skills, PackOptions{UpdateExisting: true, Scope: Scope{TenantID: fmt.Sprintf("t%d", i%3)}})
		return err
	})
	run(func(i int) error {
		return s.PutSkill(ctx, SkillRecord{Name: fmt.Sprintf("learned.code.k%d", i%5), Trigger: "hammer skill"})
	})
	for w := range 4 {
		run(func(i int) error {
			st := []string{SearchFTS, SearchRegex, SearchExact}[(i+w)%3]
			q := "hammer"
			if st == SearchExact {
				q = "tool_07"
			}
			res, err := s.SearchTools(ctx, ToolQuery{Query: q, SearchType: st, Limit: 20})
			if err != nil {
				return err
			}
			want := 20
			if st == SearchExact {
				want = 1
			}
			if len(res.Tools) != want {
				return fmt.Errorf("%s search saw %d tools, want %d", st, len(res.Tools), want)
			}
			if st == SearchFTS {
				// All from one catalogue version: equal bm25, equal scores.
				for _, h := range res.Tools {
					if h.Score != 0.5 {
						return fmt.Errorf("mixed catalogue versions in one result: %+v", res.Tools)
					}
				}
			}
			return nil
		})
		run(func(i int) error {
			st := []string{SearchFTS, SearchRegex, SearchExact}[(i+w)%3]
			q := "login"
			if st == SearchExact {
				q = "pack.core.login_basic"
			}
			res, err := s.SearchSkills(ctx, SkillQuery{Query: q, SearchType: st, Scope: Scope{TenantID: fmt.Sprintf("t%d", w%3)}})
			if err != nil {
				return err
			}
			if len(res.Skills) != 1 {
				return fmt.Errorf("%s skill search (scope t%d) saw %d skills: %+v", st, w%3, len(res.Skills), res.Skills)
			}
			return nil
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSearchSeesOneSnapshot loads a tenant copy of a global skill while a
// tenant searches for it. Each search must see the skill exactly once: the
// global copy before the tenant copy exists, the tenant copy after, never
// neither (which a search whose statements saw different commits would).
func TestSearchSeesOneSnapshot(t *testing.T) {
	rounds := 10
	if raceEnabled {
		rounds = 3
	}
	ctx := context.Background()
	for range rounds {
		s := openTest(t, nil)
		if _, err := s.LoadPack(ctx, "core", packSkills(), PackOptions{}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				skills := packSkills()
				skills[0].Steps = append(skills[0].Steps, fmt.Sprintf("step %d", i))
				if _, err := s.LoadPack(ctx, "core", skills, PackOptions{UpdateExisting: true, Scope: Scope{TenantID: fmt.Sprintf("t%d", i%3)}}); err != nil {
					t.Error(err)
				}
			}
		}()
		for range 30 {
			for _, st := range []string{SearchFTS, SearchExact} {
				q := "login"
				if st == SearchExact {
					q = "pack.core.login_basic"
				}
				res, err := s.SearchSkills(ctx, SkillQuery{Query: q, SearchType: st, Scope: Scope{TenantID: "t0"}})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Skills) != 1 {
					t.Fatalf("%s search saw %d copies of the skill", st, len(res.Skills))
				}
			}
		}
		wg.Wait()
	}
}
