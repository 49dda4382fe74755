package sandboxfs

import (
	"math"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// A charge that would carry the count past the largest int64 is refused
// like any charge past the quota, and leaves the count where it was: it
// does not wrap to a negative count that every later write would fit
// under. Without a quota the count stops at the largest int64.
func TestBudgetChargeDoesNotOverflow(t *testing.T) {
	b := NewBudget(1000, 0)
	if errno := b.chargeWrite(10); errno != 0 {
		t.Fatalf("charging 10 bytes: %s", errnoName(errno))
	}
	for _, n := range []int64{math.MaxInt64, math.MaxInt64 - 5, math.MaxInt64 - 10} {
		if errno := b.chargeWrite(n); errno != EDQUOT {
			t.Errorf("charging %d bytes over 10: %s, want EDQUOT", n, errnoName(errno))
		}
		if got := b.Written(); got != 10 {
			t.Errorf("after charging %d bytes: Written() = %d, want 10", n, got)
		}
	}
	if !b.QuotaHit() || b.TakeRefusal() != EDQUOT {
		t.Error("the refusals were not recorded")
	}
	// What fits still fits, and not a byte more.
	if errno := b.chargeWrite(990); errno != 0 {
		t.Errorf("charging the last 990 bytes: %s", errnoName(errno))
	}
	if errno := b.chargeWrite(1); errno != EDQUOT || b.Written() != 1000 {
		t.Errorf("one byte past the quota: %s, Written() = %d", errnoName(errno), b.Written())
	}

	unlimited := NewBudget(0, 0)
	for range 3 {
		if errno := unlimited.chargeWrite(math.MaxInt64 - 1); errno != 0 {
			t.Fatalf("no quota: %s", errnoName(errno))
		}
		if got := unlimited.Written(); got < 0 {
			t.Fatalf("no quota: Written() = %d, wrapped below zero", got)
		}
	}
	if got := unlimited.Written(); got != math.MaxInt64 {
		t.Errorf("no quota: Written() = %d, want the largest int64", got)
	}
}

// rootName refuses every path that leaves the mount on its own, before
// os.Root would: a parent step that climbs out, however spelled, and
// absolute paths. Paths that stay inside come back as they are.
func TestRootNameRefusesEscapes(t *testing.T) {
	for _, p := range []string{
		"..", "../", "../x", "../../x", "a/../../x", "a/b/../../../x", "./../x", "x/./../..",
		"/etc/passwd", "//x",
	} {
		if name, errno := rootName(p); errno != experimentalsys.EPERM {
			t.Errorf("rootName(%q) = %q, %s; want EPERM", p, name, errnoName(errno))
		}
	}
	for p, want := range map[string]string{
		"": ".", ".": ".", "/": ".", "x": "x", "a/b": "a/b", "a/../x": "a/../x", "a/..": "a/..", "..x": "..x", "x..": "x..",
	} {
		if name, errno := rootName(p); errno != 0 || name != want {
			t.Errorf("rootName(%q) = %q, %s; want %q", p, name, errnoName(errno), want)
		}
	}
}
