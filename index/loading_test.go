package index

import (
	"testing"

	"github.com/skillhost/skillhost/packs"
)

// TestEmptyLoadingModeIsDeferred: a tool synced without a loading mode is
// deferred, as a manifest reads it: searches return it without
// IncludeAlwaysLoaded, and it comes back as "deferred". A tool that says
// "always" is left out unless asked for.
func TestEmptyLoadingModeIsDeferred(t *testing.T) {
	s := openTest(t, nil)
	mustSync(t, s, []ToolRecord{
		{Name: "unstated", Description: "convert currency amounts"},
		{Name: "loaded", Description: "convert currency amounts", LoadingMode: packs.LoadingAlways},
	})
	for _, typ := range []string{SearchFTS, SearchRegex, SearchExact} {
		q := ToolQuery{Query: "unstated", SearchType: typ}
		if typ != SearchExact {
			q.Query = "currency"
		}
		res := search(t, s, q)
		if len(res.Tools) != 1 || res.Tools[0].Name != "unstated" || res.Tools[0].LoadingMode != packs.LoadingDeferred {
			t.Errorf("%s: got %+v, want only unstated, deferred", typ, res.Tools)
		}
	}
}
