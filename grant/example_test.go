package grant_test

import (
	"fmt"
	"time"

	"github.com/skillhost/skillhost/grant"
)

// A manifest's limits meet the operator's ceilings: the smaller of each
// pair, the one that is set where only one is.
func ExampleLimits_Cap() {
	requested := grant.Limits{Timeout: 10 * time.Second, MaxOutputBytes: 1 << 20}
	ceiling := grant.Limits{Timeout: 5 * time.Second, MaxFuel: 1_000_000}
	l := requested.Cap(ceiling)
	fmt.Println(l.Timeout, l.MaxOutputBytes, l.MaxFuel)
	// Output: 5s 1048576 1000000
}
