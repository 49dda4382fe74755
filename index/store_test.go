package index

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// openTest opens a store in a fresh temp dir and closes it with the test.
func openTest(t testing.TB, opts *Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "sub", "index.db"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestOpenCreatesSchemaAndDetectsFTS(t *testing.T) {
	s := openTest(t, nil)
	if !s.FTS() {
		t.Fatal("FTS() = false; modernc.org/sqlite ships FTS5")
	}
	var v int
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != len(migrations) {
		t.Errorf("user_version = %d, want %d", v, len(migrations))
	}
	var mode string
	if err := s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q (%v), want wal", mode, err)
	}
	var fk int
	if err := s.db.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d (%v), want 1", fk, err)
	}
	for _, tbl := range []string{"tools", "tools_fts", "skills", "skills_fts", "index_meta"} {
		var n int
		if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = ?`, tbl).Scan(&n); err != nil || n != 1 {
			t.Errorf("table %s: count %d (%v)", tbl, n, err)
		}
	}
}

func TestDisableFTSCreatesNoFTSTables(t *testing.T) {
	s := openTest(t, &Options{DisableFTS: true})
	if s.FTS() {
		t.Fatal("FTS() = true with DisableFTS")
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name LIKE '%_fts'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("fts tables: %d (%v), want none", n, err)
	}
}

func TestClosedStore(t *testing.T) {
	s := openTest(t, nil)
	s.Close()
	ctx := context.Background()
	if _, err := s.SyncTools(ctx, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("SyncTools after Close: %v, want ErrClosed", err)
	}
	if err := s.PutSkill(ctx, SkillRecord{Name: "x", Trigger: "y"}); !errors.Is(err, ErrClosed) {
		t.Errorf("PutSkill after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestOpenRejectsOddPaths(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db", "a?b.db"} {
		if _, err := Open(context.Background(), p, nil); err == nil {
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

// fixedClock returns a clock that starts at a fixed instant and moves one
// second per call.
func fixedClock() func() time.Time {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	n := 0
	return func() time.Time { n++; return t0.Add(time.Duration(n) * time.Second) }
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
