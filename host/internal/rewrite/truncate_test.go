package rewrite

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// splitSections returns the sections of a well-formed module: each one's
// id and contents.
func splitSections(t *testing.T, wasm []byte) (ids []byte, bodies [][]byte) {
	t.Helper()
	r := reader{b: wasm, pos: 8, end: len(wasm)}
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			t.Fatal(err)
		}
		size, err := r.u32()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		bodies = append(bodies, wasm[r.pos:r.pos+int(size)])
		r.pos += int(size)
	}
	return ids, bodies
}

// Every module made by cutting one section's contents short, its size
// saying how many bytes are left, is refused as malformed: whatever the
// section, wherever its contents stop, each reader of the scan reports
// the bytes missing, and none is taken for a shorter valid section.
func TestEveryTruncatedSectionIsRefused(t *testing.T) {
	root := repoRoot(t)
	for _, name := range []string{"echo.wasm", "tables.wasm", "segments.wasm", "state.wasm", "start.wasm", "pages.wasm", "loop_count.wasm", "describe_schemas.wasm"} {
		wasm, err := os.ReadFile(filepath.Join(root, "testdata", "guests", "wat", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := Instrument(wasm, Options{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ids, bodies := splitSections(t, wasm)
		for i, id := range ids {
			// The data count section is copied as it is: a count of
			// data segments, which wazero checks against the data
			// section when it validates the module (the host's loader
			// has it do so before the rewrite runs).
			if id == secCustom || id == secDataCount {
				continue
			}
			for cut := range len(bodies[i]) {
				var secs [][]byte
				for j := range ids {
					body := bodies[j]
					if j == i {
						body = body[:cut]
					}
					secs = append(secs, sec(ids[j], body))
				}
				for _, tick := range []bool{false, true} {
					out, _, err := Instrument(mod(secs...), Options{Tick: tick})
					if !errors.Is(err, ErrMalformed) || out != nil {
						t.Errorf("%s: section %d cut to %d of %d bytes, tick %v: %d bytes out, %v; want ErrMalformed",
							name, id, cut, len(bodies[i]), tick, len(out), err)
					}
				}
			}
		}
	}
}

// A module with too many functions, globals or types for the rewrite to
// add its own is refused as malformed; one below each bound is rewritten.
func TestCountsAtTheirLimits(t *testing.T) {
	// Counts near 2^32 only as numbers: the sections that would hold
	// that many entries are cut short, so the scan stops at the count.
	for name, in := range map[string][]byte{
		"functions": mod(sec(secType, vec(functype(nil, nil))), sec(secFunction, u32(0xffffffff))),
		"globals":   mod(sec(secGlobal, u32(0xfffffffe))),
		"types":     mod(sec(secType, u32(0xffffffff))),
	} {
		if _, _, err := Instrument(in, Options{}); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}
