package index

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// migrations is the ordered schema history. Entry i moves a database from
// user_version i to i+1; a database is always brought to len(migrations).
// Never edit an entry that has shipped: append a new one.
var migrations = []string{
	// 1: tools and index metadata.
	`CREATE TABLE tools (
		id            INTEGER PRIMARY KEY,
		name          TEXT NOT NULL UNIQUE,
		name_key      TEXT NOT NULL,            -- lower-case name
		name_terms    TEXT NOT NULL,            -- name split into lower-case words
		description   TEXT NOT NULL,
		namespace     TEXT NOT NULL,
		category      TEXT NOT NULL,
		tags          TEXT NOT NULL,            -- JSON array
		params        TEXT NOT NULL,            -- JSON array of {name, description}
		examples      TEXT NOT NULL,            -- JSON array
		loading_mode  TEXT NOT NULL CHECK (loading_mode IN ('always', 'deferred')),
		side_effects  TEXT NOT NULL,
		side_rank     INTEGER NOT NULL,
		tags_text     TEXT NOT NULL,            -- searchable forms of the JSON columns
		params_text   TEXT NOT NULL,
		examples_text TEXT NOT NULL,
		record_hash   TEXT NOT NULL,
		updated_at    INTEGER NOT NULL
	);
	CREATE INDEX tools_name_key ON tools(name_key);
	CREATE INDEX tools_name_terms ON tools(name_terms);
	CREATE TABLE index_meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	);`,

	// 2: skills.
	`CREATE TABLE skills (
		seq              INTEGER PRIMARY KEY,
		id               TEXT NOT NULL UNIQUE,
		scope_mode       TEXT NOT NULL CHECK (scope_mode IN ('project', 'tenant', 'global')),
		scope_tenant_id  TEXT NOT NULL DEFAULT '',
		scope_project_id TEXT NOT NULL DEFAULT '',
		name             TEXT NOT NULL,
		name_key         TEXT NOT NULL,
		name_terms       TEXT NOT NULL,
		title            TEXT NOT NULL DEFAULT '',
		description      TEXT NOT NULL DEFAULT '',
		trigger          TEXT NOT NULL,
		task_type        TEXT NOT NULL,
		tags             TEXT NOT NULL,         -- JSON array
		tags_text        TEXT NOT NULL,
		steps            TEXT NOT NULL,         -- JSON array
		preconditions    TEXT NOT NULL,         -- JSON array
		failure_modes    TEXT NOT NULL,         -- JSON array
		origin           TEXT NOT NULL CHECK (origin IN ('pack', 'learned')),
		origin_ref       TEXT NOT NULL DEFAULT '',
		pack             TEXT NOT NULL DEFAULT '',
		content_hash     TEXT NOT NULL,
		created_at       INTEGER NOT NULL,
		updated_at       INTEGER NOT NULL,
		last_used        INTEGER NOT NULL,
		use_count        INTEGER NOT NULL,
		UNIQUE (name, scope_mode, scope_tenant_id, scope_project_id)
	);
	CREATE INDEX skills_scope ON skills(scope_mode, scope_tenant_id, scope_project_id);
	CREATE INDEX skills_task_type ON skills(task_type);
	CREATE INDEX skills_origin ON skills(origin);
	CREATE INDEX skills_pack ON skills(pack, scope_mode, scope_tenant_id, scope_project_id);
	CREATE INDEX skills_name_key ON skills(name_key);
	CREATE INDEX skills_name_terms ON skills(name_terms);
	CREATE INDEX skills_last_used ON skills(last_used);`,

	// 3: SKILL.md instructions, directory pinning, and the searchable body
	// (steps, preconditions, failure modes and instructions as text).
	`ALTER TABLE skills ADD COLUMN instructions TEXT NOT NULL DEFAULT '';
	ALTER TABLE skills ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE skills ADD COLUMN body TEXT NOT NULL DEFAULT '';
	UPDATE skills SET body = trim(
		(SELECT coalesce(group_concat(value, ' '), '') FROM json_each(skills.steps)) || ' ' ||
		(SELECT coalesce(group_concat(value, ' '), '') FROM json_each(skills.preconditions)) || ' ' ||
		(SELECT coalesce(group_concat(value, ' '), '') FROM json_each(skills.failure_modes)));
	CREATE INDEX skills_pinned ON skills(pinned) WHERE pinned <> 0;`,

	// 4: always-loaded tools move to their own rowid range (see
	// alwaysBase), and skills get filter tokens for the full-text index
	// (no longer used since version 5).
	`UPDATE tools SET id = id + 1099511627776 WHERE loading_mode = 'always' AND id < 1099511627776;
	ALTER TABLE skills ADD COLUMN search_filter TEXT NOT NULL DEFAULT '';
	UPDATE skills SET search_filter = CASE scope_mode
		WHEN 'global' THEN 'sg0'
		WHEN 'tenant' THEN 'st' || hex(scope_tenant_id) || '0'
		ELSE 'sp' || hex(scope_tenant_id) || 'x' || hex(scope_project_id) || '0' END
		|| ' tt' || task_type || '0';`,

	// 5: skill rowids encode scope and task type (see skillRange in
	// skills_store.go), replacing the filter tokens of version 4.
	`CREATE TABLE skill_scopes (
		id               INTEGER PRIMARY KEY,
		scope_mode       TEXT NOT NULL,
		scope_tenant_id  TEXT NOT NULL,
		scope_project_id TEXT NOT NULL,
		UNIQUE (scope_mode, scope_tenant_id, scope_project_id)
	);
	INSERT INTO skill_scopes (id, scope_mode, scope_tenant_id, scope_project_id) VALUES (1, 'global', '', '');
	INSERT OR IGNORE INTO skill_scopes (scope_mode, scope_tenant_id, scope_project_id)
		SELECT DISTINCT scope_mode, scope_tenant_id, scope_project_id FROM skills ORDER BY 1, 2, 3;
	UPDATE skills SET seq = (SELECT c.id FROM skill_scopes c WHERE c.scope_mode = skills.scope_mode
			AND c.scope_tenant_id = skills.scope_tenant_id AND c.scope_project_id = skills.scope_project_id) * 4294967296
		+ (CASE task_type WHEN 'browser' THEN 0 WHEN 'api' THEN 1 WHEN 'code' THEN 2 WHEN 'domain' THEN 3 ELSE 4 END) * 536870912
		+ seq
		WHERE seq < 536870912;
	UPDATE skills SET search_filter = '';`,
}

// migrate brings db from its user_version up to version target, in one
// transaction.
func migrate(ctx context.Context, db *sql.DB, target int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("%w: file has schema version %d, this build knows up to %d", ErrSchemaTooNew, v, len(migrations))
	}
	if v >= target {
		return nil
	}
	for i := v; i < target; i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("migrating schema to version %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, target)); err != nil {
		return fmt.Errorf("setting schema version: %w", err)
	}
	return tx.Commit()
}

// detectFTS5 reports whether SQLite can create an FTS5 table, by trying a
// temporary one.
func detectFTS5(ctx context.Context, db *sql.DB) (bool, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE VIRTUAL TABLE temp.skillhost_fts5_probe USING fts5(x)`); err != nil {
		if strings.Contains(err.Error(), "no such module") {
			return false, nil
		}
		return false, err
	}
	_, err = conn.ExecContext(ctx, `DROP TABLE temp.skillhost_fts5_probe`)
	return true, err
}

// ftsVersion names the shape of the full-text tables below. When it differs
// from the one recorded in index_meta the tables are dropped, recreated and
// rebuilt from the content tables.
const ftsVersion = "3"

// ftsTables are external-content FTS5 tables over tools and skills, kept in
// step by triggers inside the writing transaction. Column order matters: the
// bm25 weights in query.go and skills_search.go follow it.
var ftsTables = []string{
	`CREATE VIRTUAL TABLE tools_fts USING fts5(
		name_terms, description, tags_text, params_text, examples_text,
		content='tools', content_rowid='id', tokenize='porter unicode61')`,
	`CREATE TRIGGER tools_fts_ai AFTER INSERT ON tools BEGIN
		INSERT INTO tools_fts(rowid, name_terms, description, tags_text, params_text, examples_text)
		VALUES (new.id, new.name_terms, new.description, new.tags_text, new.params_text, new.examples_text);
	END`,
	`CREATE TRIGGER tools_fts_ad AFTER DELETE ON tools BEGIN
		INSERT INTO tools_fts(tools_fts, rowid, name_terms, description, tags_text, params_text, examples_text)
		VALUES ('delete', old.id, old.name_terms, old.description, old.tags_text, old.params_text, old.examples_text);
	END`,
	`CREATE TRIGGER tools_fts_au AFTER UPDATE OF name_terms, description, tags_text, params_text, examples_text ON tools BEGIN
		INSERT INTO tools_fts(tools_fts, rowid, name_terms, description, tags_text, params_text, examples_text)
		VALUES ('delete', old.id, old.name_terms, old.description, old.tags_text, old.params_text, old.examples_text);
		INSERT INTO tools_fts(rowid, name_terms, description, tags_text, params_text, examples_text)
		VALUES (new.id, new.name_terms, new.description, new.tags_text, new.params_text, new.examples_text);
	END`,
	`CREATE VIRTUAL TABLE skills_fts USING fts5(
		name_terms, title, trigger, description, tags_text, body,
		content='skills', content_rowid='seq', tokenize='porter unicode61')`,
	`CREATE TRIGGER skills_fts_ai AFTER INSERT ON skills BEGIN
		INSERT INTO skills_fts(rowid, name_terms, title, trigger, description, tags_text, body)
		VALUES (new.seq, new.name_terms, new.title, new.trigger, new.description, new.tags_text, new.body);
	END`,
	`CREATE TRIGGER skills_fts_ad AFTER DELETE ON skills BEGIN
		INSERT INTO skills_fts(skills_fts, rowid, name_terms, title, trigger, description, tags_text, body)
		VALUES ('delete', old.seq, old.name_terms, old.title, old.trigger, old.description, old.tags_text, old.body);
	END`,
	`CREATE TRIGGER skills_fts_au AFTER UPDATE OF name_terms, title, trigger, description, tags_text, body ON skills BEGIN
		INSERT INTO skills_fts(skills_fts, rowid, name_terms, title, trigger, description, tags_text, body)
		VALUES ('delete', old.seq, old.name_terms, old.title, old.trigger, old.description, old.tags_text, old.body);
		INSERT INTO skills_fts(rowid, name_terms, title, trigger, description, tags_text, body)
		VALUES (new.seq, new.name_terms, new.title, new.trigger, new.description, new.tags_text, new.body);
	END`,
	`INSERT INTO tools_fts(tools_fts) VALUES ('rebuild')`,
	`INSERT INTO skills_fts(skills_fts) VALUES ('rebuild')`,
}

// ftsDrop removes the full-text tables and their triggers.
var ftsDrop = []string{
	`DROP TRIGGER IF EXISTS tools_fts_ai`, `DROP TRIGGER IF EXISTS tools_fts_ad`, `DROP TRIGGER IF EXISTS tools_fts_au`,
	`DROP TRIGGER IF EXISTS skills_fts_ai`, `DROP TRIGGER IF EXISTS skills_fts_ad`, `DROP TRIGGER IF EXISTS skills_fts_au`,
	`DROP TABLE IF EXISTS tools_fts`, `DROP TABLE IF EXISTS skills_fts`,
}

// ensureFTS creates the full-text tables when they are missing or of an older
// shape (for example in a file first written where FTS5 was unavailable) and
// fills them from the content tables.
func ensureFTS(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var have string
	err = tx.QueryRowContext(ctx, `SELECT value FROM index_meta WHERE key = 'fts_version'`).Scan(&have)
	if err != nil && err != sql.ErrNoRows {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_master WHERE name IN ('tools_fts', 'skills_fts', 'tools_fts_ai', 'tools_fts_ad', 'tools_fts_au', 'skills_fts_ai', 'skills_fts_ad', 'skills_fts_au')`).Scan(&n); err != nil {
		return err
	}
	if have == ftsVersion && n == 8 {
		return nil
	}
	for _, q := range append(append([]string(nil), ftsDrop...), ftsTables...) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO index_meta(key, value) VALUES ('fts_version', ?)
		 ON CONFLICT(key) DO UPDATE SET value = excluded.value`, ftsVersion); err != nil {
		return err
	}
	return tx.Commit()
}
