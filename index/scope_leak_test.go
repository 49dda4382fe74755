package index

import (
	"context"
	"strings"
	"testing"
)

// TestSearchSkillsScopeLeakMarkers runs skill_search of every type over
// the marked scope world: a query naming every marker, and an exact or
// regex search for every stored name, never returns a skill from a scope
// the caller does not see, and finds all those it does.
func TestSearchSkillsScopeLeakMarkers(t *testing.T) {
	w := newScopeWorld(t)
	ctx := context.Background()
	var markers []string
	for m := range worldScopes {
		markers = append(markers, mark(m))
	}
	for caller, sc := range worldScopes {
		t.Run(caller, func(t *testing.T) {
			seen := map[string]bool{}
			search := func(q, st string) {
				res, err := w.s.SearchSkills(ctx, SkillQuery{Query: q, SearchType: st, Limit: MaxLimit, Scope: sc})
				if err != nil {
					t.Fatal(err)
				}
				checkMarkers(t, caller, st+" skill_search "+q, mustJSON2(t, res.Skills)) // the query echo may name anything
				for _, h := range res.Skills {
					seen[h.Name] = true
				}
			}
			search("deploy service "+strings.Join(markers, " "), SearchFTS)
			search("deploy", SearchRegex)
			search("MARK", SearchRegex)
			for _, n := range append(w.allNames(), "pack.shared.deploy") {
				search(n, SearchExact)
				search(n, SearchRegex)
			}
			if want := 3*len(visibleMarkers[caller]) + 1; len(seen) != want {
				t.Errorf("found %d skills, want %d: %v", len(seen), want, seen)
			}
		})
	}
}
