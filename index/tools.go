package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/skillhost/skillhost/packs"
)

// ToolRecord is the searchable description of one tool in the execution registry.
// The index stores metadata only; it never reconstructs a callable tool.
type ToolRecord struct {
	Name        string
	Description string
	Namespace   string // pack name, or "" for built-ins
	Category    string
	Tags        []string
	Params      []Param
	Examples    []string // example descriptions or rendered arguments
	LoadingMode string   // packs.LoadingAlways or packs.LoadingDeferred; "" means deferred, as in a manifest
	SideEffects string   // "pure", "read", "write", "external" or "stateful"; "" means "pure"
}

// Param is one input parameter of a tool, indexed for search.
type Param struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// sideEffectRank orders side-effect classes for ties: pure < read < write <
// external < stateful.
var sideEffectRank = map[string]int{"pure": 0, "read": 1, "write": 2, "external": 3, "stateful": 4}

// SyncReport says what a SyncTools or RebuildTools call changed. Added,
// Changed and Removed are sorted names; Fingerprint identifies the whole
// catalogue now indexed.
type SyncReport struct {
	Added, Changed, Removed []string
	Unchanged               int
	Fingerprint             string
}

// toolRow is a validated tool with its derived columns.
type toolRow struct {
	ToolRecord
	nameKey, nameTerms                string
	tagsJSON, paramsJSON, exJSON      string
	tagsText, paramsText, examplesTxt string
	sideRank                          int
	hash                              string
}

// canonicalTool is the hashed form of a tool: fields in a fixed order, so
// equal metadata always gives equal record hashes.
type canonicalTool struct {
	Category    string   `json:"category"`
	Description string   `json:"description"`
	Examples    []string `json:"examples"`
	LoadingMode string   `json:"loading_mode"`
	Name        string   `json:"name"`
	Namespace   string   `json:"namespace"`
	Params      []Param  `json:"params"`
	SideEffects string   `json:"side_effects"`
	Tags        []string `json:"tags"`
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only strings and slices of them are marshalled here.
		panic(fmt.Sprintf("index: marshalling %T: %v", v, err))
	}
	return string(b)
}

// prepareTool validates t and computes its stored columns.
func prepareTool(t ToolRecord) (toolRow, error) {
	if strings.TrimSpace(t.Name) == "" {
		return toolRow{}, fmt.Errorf("%w: a tool has an empty name", ErrBadTool)
	}
	if strings.ContainsFunc(t.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) || !utf8.ValidString(t.Name) {
		return toolRow{}, fmt.Errorf("%w: tool name %q contains control characters or invalid UTF-8", ErrBadTool, t.Name)
	}
	switch t.LoadingMode {
	case "":
		t.LoadingMode = packs.LoadingDeferred
	case packs.LoadingAlways, packs.LoadingDeferred:
	default:
		return toolRow{}, fmt.Errorf("%w: tool %q: loading mode %q, want %q or %q", ErrBadTool, t.Name, t.LoadingMode, packs.LoadingAlways, packs.LoadingDeferred)
	}
	if t.SideEffects == "" {
		t.SideEffects = "pure"
	}
	rank, ok := sideEffectRank[t.SideEffects]
	if !ok {
		return toolRow{}, fmt.Errorf("%w: tool %q: side effects %q, want pure, read, write, external or stateful", ErrBadTool, t.Name, t.SideEffects)
	}
	t.Tags, t.Params, t.Examples = nonNil(t.Tags), nonNil(t.Params), nonNil(t.Examples)
	r := toolRow{ToolRecord: t, nameKey: strings.ToLower(t.Name), nameTerms: nameTerms(t.Name), sideRank: rank}
	r.tagsJSON, r.paramsJSON, r.exJSON = mustJSON(t.Tags), mustJSON(t.Params), mustJSON(t.Examples)
	r.tagsText = strings.Join(t.Tags, " ")
	var pt []string
	for _, p := range t.Params {
		pt = append(pt, nameTerms(p.Name), p.Description)
	}
	r.paramsText = strings.Join(pt, " ")
	r.examplesTxt = strings.Join(t.Examples, " ")
	sum := sha256.Sum256([]byte(mustJSON(canonicalTool{
		Category: t.Category, Description: t.Description, Examples: t.Examples, LoadingMode: t.LoadingMode,
		Name: t.Name, Namespace: t.Namespace, Params: t.Params, SideEffects: t.SideEffects, Tags: t.Tags,
	})))
	r.hash = hex.EncodeToString(sum[:])
	return r, nil
}

// prepareTools validates a catalogue, refusing duplicate names.
func prepareTools(tools []ToolRecord) ([]toolRow, error) {
	rows := make([]toolRow, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		r, err := prepareTool(t)
		if err != nil {
			return nil, err
		}
		if seen[r.Name] {
			return nil, fmt.Errorf("%w: tool name %q appears twice", ErrBadTool, r.Name)
		}
		seen[r.Name] = true
		rows = append(rows, r)
	}
	return rows, nil
}

// catalogFingerprint hashes the sorted (name, record hash) pairs.
func catalogFingerprint(hashes map[string]string) string {
	names := make([]string, 0, len(hashes))
	for n := range hashes {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write([]byte(hashes[n]))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// alwaysBase is the first rowid of always-loaded tools; deferred tools have
// rowids below it. A search leaving always-loaded tools out then asks the
// full-text index for rowids below alwaysBase, which it skips to directly,
// instead of filtering every match.
const alwaysBase = 1 << 40

const toolInsertSQL = `INSERT INTO tools (id, name, name_key, name_terms, description, namespace, category, tags,
	params, examples, loading_mode, side_effects, side_rank, tags_text, params_text, examples_text, record_hash,
	updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const toolUpdateSQL = `UPDATE tools SET name_key = ?, name_terms = ?, description = ?, namespace = ?, category = ?,
	tags = ?, params = ?, examples = ?, loading_mode = ?, side_effects = ?, side_rank = ?, tags_text = ?,
	params_text = ?, examples_text = ?, record_hash = ?, updated_at = ? WHERE name = ?`

// failToolWrite, when set by a test, is called before each tool row is
// written and may fail the write, to check that a failed sync leaves the
// previous index intact.
var failToolWrite func(name string) error

// SyncTools makes the indexed tools equal to tools, rewriting only the rows
// whose record hash changed, inserting new ones and deleting absent ones, all
// in one transaction: on any error the previous index stays as it was. When
// the catalogue fingerprint is unchanged nothing is written.
func (s *Store) SyncTools(ctx context.Context, tools []ToolRecord) (SyncReport, error) {
	return s.syncTools(ctx, tools, false)
}

// RebuildTools replaces every indexed tool with tools in one transaction,
// whatever their record hashes.
func (s *Store) RebuildTools(ctx context.Context, tools []ToolRecord) (SyncReport, error) {
	return s.syncTools(ctx, tools, true)
}

func (s *Store) syncTools(ctx context.Context, tools []ToolRecord, rebuild bool) (SyncReport, error) {
	if err := s.check(); err != nil {
		return SyncReport{}, err
	}
	rows, err := prepareTools(tools)
	if err != nil {
		return SyncReport{}, err
	}
	want := make(map[string]string, len(rows))
	for _, r := range rows {
		want[r.Name] = r.hash
	}
	rep := SyncReport{Fingerprint: catalogFingerprint(want)}
	now := s.nowNano()
	wrote := false
	err = s.write(ctx, func(tx *sql.Tx, d *writeDelta) error {
		rep.Added, rep.Changed, rep.Removed, rep.Unchanged = nil, nil, nil, 0
		wrote = false
		var fp string
		err := tx.QueryRowContext(ctx, `SELECT value FROM index_meta WHERE key = 'tools_fingerprint'`).Scan(&fp)
		if err != nil && err != sql.ErrNoRows {
			return err
		}
		if !rebuild && fp == rep.Fingerprint {
			rep.Unchanged = len(rows)
			return errNoChange
		}
		type stored struct{ hash, mode string }
		have := make(map[string]stored)
		if rebuild {
			if _, err := tx.ExecContext(ctx, `DELETE FROM tools`); err != nil {
				return err
			}
		} else {
			qr, err := tx.QueryContext(ctx, `SELECT name, record_hash, loading_mode FROM tools`)
			if err != nil {
				return err
			}
			for qr.Next() {
				var n string
				var st stored
				if err := qr.Scan(&n, &st.hash, &st.mode); err != nil {
					qr.Close()
					return err
				}
				have[n] = st
			}
			qr.Close()
			if err := qr.Err(); err != nil {
				return err
			}
		}
		// The next free rowid of each loading mode's range.
		var nextDeferred, nextAlways int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT max(id) FROM tools WHERE id < ?1), 0) + 1,
			coalesce((SELECT max(id) FROM tools WHERE id >= ?1), ?1 - 1) + 1`, alwaysBase).Scan(&nextDeferred, &nextAlways); err != nil {
			return err
		}
		if nextDeferred >= alwaysBase {
			return fmt.Errorf("tool rowids of deferred tools are exhausted")
		}
		newID := func(mode string) int64 {
			if mode == packs.LoadingAlways {
				nextAlways++
				return nextAlways - 1
			}
			nextDeferred++
			return nextDeferred - 1
		}
		ins, err := tx.PrepareContext(ctx, toolInsertSQL)
		if err != nil {
			return err
		}
		defer ins.Close()
		upd, err := tx.PrepareContext(ctx, toolUpdateSQL)
		if err != nil {
			return err
		}
		defer upd.Close()
		del, err := tx.PrepareContext(ctx, `DELETE FROM tools WHERE name = ?`)
		if err != nil {
			return err
		}
		defer del.Close()
		for _, r := range rows {
			old, exists := have[r.Name]
			if exists && old.hash == r.hash {
				rep.Unchanged++
				continue
			}
			if failToolWrite != nil {
				if err := failToolWrite(r.Name); err != nil {
					return err
				}
			}
			if exists && old.mode != r.LoadingMode {
				// A tool changing loading mode moves to the other rowid range.
				if _, err := del.ExecContext(ctx, r.Name); err != nil {
					return fmt.Errorf("moving tool %q: %w", r.Name, err)
				}
			}
			if exists && old.mode == r.LoadingMode {
				_, err = upd.ExecContext(ctx, r.nameKey, r.nameTerms, r.Description, r.Namespace, r.Category,
					r.tagsJSON, r.paramsJSON, r.exJSON, r.LoadingMode, r.SideEffects, r.sideRank, r.tagsText,
					r.paramsText, r.examplesTxt, r.hash, now, r.Name)
			} else {
				_, err = ins.ExecContext(ctx, newID(r.LoadingMode), r.Name, r.nameKey, r.nameTerms, r.Description,
					r.Namespace, r.Category, r.tagsJSON, r.paramsJSON, r.exJSON, r.LoadingMode, r.SideEffects,
					r.sideRank, r.tagsText, r.paramsText, r.examplesTxt, r.hash, now)
			}
			if err != nil {
				return fmt.Errorf("writing tool %q: %w", r.Name, err)
			}
			if exists {
				rep.Changed = append(rep.Changed, r.Name)
			} else {
				rep.Added = append(rep.Added, r.Name)
			}
		}
		if !rebuild {
			for n := range have {
				if _, ok := want[n]; ok {
					continue
				}
				if _, err := del.ExecContext(ctx, n); err != nil {
					return fmt.Errorf("removing tool %q: %w", n, err)
				}
				rep.Removed = append(rep.Removed, n)
			}
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO index_meta(key, value) VALUES ('tools_fingerprint', ?)
			 ON CONFLICT(key) DO UPDATE SET value = excluded.value`, rep.Fingerprint); err != nil {
			return err
		}
		if err := s.tidyFTS(ctx, tx, "tools_fts", len(rep.Added)+len(rep.Changed)+len(rep.Removed), len(rows)); err != nil {
			return err
		}
		wrote = true
		d.tools.changed = true
		if !rebuild {
			d.tools.uids = append(append(append(make([]string, 0, len(rep.Added)+len(rep.Changed)+len(rep.Removed)),
				rep.Added...), rep.Changed...), rep.Removed...)
		}
		return nil
	})
	if err != nil {
		return SyncReport{}, fmt.Errorf("index: syncing tools: %w", err)
	}
	sort.Strings(rep.Added)
	sort.Strings(rep.Changed)
	sort.Strings(rep.Removed)
	if wrote {
		s.emit(EventToolsSynced, map[string]any{
			"added": len(rep.Added), "changed": len(rep.Changed), "removed": len(rep.Removed),
			"unchanged": rep.Unchanged, "rebuild": rebuild, "fingerprint": rep.Fingerprint,
		})
	}
	return rep, nil
}

// ToolsFingerprint returns the fingerprint of the indexed catalogue ("" when
// no tools were ever synced), for callers that want to skip building the
// tool list when nothing changed.
func (s *Store) ToolsFingerprint(ctx context.Context) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	var fp string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM index_meta WHERE key = 'tools_fingerprint'`).Scan(&fp)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return fp, s.wrapErr(err)
}

// jsonStrings decodes a JSON array of strings stored by this package.
func jsonStrings(src string, dst *[]string) error {
	*dst = nil
	if err := json.Unmarshal([]byte(src), dst); err != nil {
		return fmt.Errorf("decoding stored list %q: %w", src, err)
	}
	if *dst == nil {
		*dst = []string{}
	}
	return nil
}
