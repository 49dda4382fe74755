package index

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rawDB opens a file with the driver only, for preparing old databases.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// TestOpenMigratesVersion2Database builds a database as the schema stood at
// version 2 (skills without instructions, pinning or body, no full-text
// tables), fills it, and checks that Open brings it up to date with the data
// intact and searchable.
func TestOpenMigratesVersion2Database(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db := rawDB(t, path)
	if err := migrate(ctx, db, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO skills (id, scope_mode, name, name_key, name_terms, trigger, task_type,
		tags, tags_text, steps, preconditions, failure_modes, origin, content_hash, created_at, updated_at, last_used, use_count)
		VALUES ('sk_1', 'global', 'pack.core.login', 'pack.core.login', 'pack core login', 'Log into a website',
		'browser', '["auth"]', 'auth', '["Open the login page","Submit the credentials"]', '[]', '["captcha"]',
		'pack', 'h1', 1, 2, 3, 4)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO tools (name, name_key, name_terms, description, namespace, category, tags,
		params, examples, loading_mode, side_effects, side_rank, tags_text, params_text, examples_text, record_hash, updated_at)
		VALUES ('old_tool', 'old_tool', 'old tool', 'an ancient helper', '', '', '[]', '[]', '[]', 'deferred', 'pure', 0, '', '', '', 'h', 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("Open on a version-2 file: %v", err)
	}
	defer s.Close()
	var v int
	s.db.QueryRow(`PRAGMA user_version`).Scan(&v)
	if v != len(migrations) {
		t.Errorf("user_version = %d, want %d", v, len(migrations))
	}
	row := s.db.QueryRow(`SELECT ` + skillColumns + ` FROM skills WHERE id = 'sk_1'`)
	sk, err := scanSkill(row)
	if err != nil {
		t.Fatal(err)
	}
	want := SkillRecord{Name: "pack.core.login", Trigger: "Log into a website", TaskType: "browser", Tags: []string{"auth"},
		Steps: []string{"Open the login page", "Submit the credentials"}, Preconditions: []string{}, FailureModes: []string{"captcha"},
		Origin: "pack", Scope: Scope{Mode: "global"}, ContentHash: "h1",
		CreatedAt: fromNano(1), UpdatedAt: fromNano(2), LastUsed: fromNano(3), UseCount: 4}
	if d := cmp.Diff(want, sk); d != "" {
		t.Errorf("migrated skill (-want +got):\n%s", d)
	}
	// The body column was filled from the steps, and the full-text tables
	// were built from the existing rows.
	res, err := s.SearchSkills(ctx, SkillQuery{Query: "credentials"})
	if err != nil || len(res.Skills) != 1 {
		t.Errorf("search of migrated step text: %+v, %v", res, err)
	}
	tres, err := s.SearchTools(ctx, ToolQuery{Query: "ancient"})
	if err != nil || len(tres.Tools) != 1 {
		t.Errorf("search of a tool written before the full-text tables existed: %+v, %v", tres, err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	db := rawDB(t, path)
	if _, err := db.Exec(`PRAGMA user_version = 999`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(context.Background(), path, nil); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Open = %v, want ErrSchemaTooNew", err)
	}
}

// TestFTSTablesFollowFallbackFile checks a file written without full-text
// tables (as where FTS5 is missing) gets them, filled, when opened with FTS5.
func TestFTSTablesFollowFallbackFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	s, err := Open(ctx, path, &Options{DisableFTS: true})
	if err != nil {
		t.Fatal(err)
	}
	mustSync(t, s, sampleTools())
	if err := s.PutSkill(ctx, SkillRecord{Name: "learned.code.dates", Trigger: "parse ISO dates"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.FTS() {
		t.Fatal("FTS not in use")
	}
	res, err := s.SearchTools(ctx, ToolQuery{Query: "forecast"})
	if err != nil || res.SearchType != SearchFTS || len(res.Tools) != 1 {
		t.Errorf("tool search: %+v %v", res, err)
	}
	sres, err := s.SearchSkills(ctx, SkillQuery{Query: "dates"})
	if err != nil || len(sres.Skills) != 1 {
		t.Errorf("skill search: %+v %v", sres, err)
	}
	// Reopening does not rebuild again: the recorded version matches.
	var v string
	s.db.QueryRow(`SELECT value FROM index_meta WHERE key = 'fts_version'`).Scan(&v)
	if v != ftsVersion {
		t.Errorf("fts_version = %q", v)
	}
}

func TestMigrationsApplyOneByOne(t *testing.T) {
	ctx := context.Background()
	db := rawDB(t, filepath.Join(t.TempDir(), "steps.db"))
	defer db.Close()
	for v := 1; v <= len(migrations); v++ {
		if err := migrate(ctx, db, v); err != nil {
			t.Fatalf("to version %d: %v", v, err)
		}
		var got int
		db.QueryRow(`PRAGMA user_version`).Scan(&got)
		if got != v {
			t.Fatalf("user_version %d, want %d", got, v)
		}
	}
}
