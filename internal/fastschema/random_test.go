package fastschema

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/packs"
)

// TestRandomDifferential runs the fuzz test's generators on random bytes
// (a fixed seed), so every test run compares the fast path with the full
// validator on a few thousand generated schemas and documents.
func TestRandomDifferential(t *testing.T) {
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("FASTSCHEMA_RANDOM_N")); err == nil {
		n = v
	} else if testing.Short() {
		n = 300
	}
	seed := uint64(1)
	if v, err := strconv.ParseUint(os.Getenv("FASTSCHEMA_RANDOM_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	var schemas, plans int
	var verdicts [3]int
	for range n {
		sb := make([]byte, 64)
		for i := range sb {
			sb[i] = byte(rng.Uint32())
		}
		if sb[0] == '{' {
			sb[0] = 0
		}
		voc := &vocabulary{}
		schema := (&gen{b: sb}).schema(voc, 0)
		full, err := packs.CompileSchema(json.RawMessage(schema))
		plan, ok := Compile(json.RawMessage(schema))
		if ok && err != nil {
			t.Fatalf("Compile accepts a schema the validator refuses (%v): %s", err, schema)
		}
		if err != nil {
			continue
		}
		schemas++
		if !ok {
			continue
		}
		plans++
		for range 20 {
			db := make([]byte, 48)
			for i := range db {
				db[i] = byte(rng.Uint32())
			}
			var doc strings.Builder
			(&gen{b: db}).doc(&doc, voc, 0)
			verdicts[agree(t, schema, full, plan, []byte(doc.String()))]++
		}
	}
	t.Logf("%d schemas compiled, %d with a plan; verdicts: %d valid, %d invalid, %d unsure", schemas, plans, verdicts[valid], verdicts[invalid], verdicts[unsure])
}
