package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skillhost/skillhost/packs"
)

// Scope says where a skill lives, or, in a request, who is asking.
//
// A stored skill's scope is global (no identifiers), tenant (TenantID set) or
// project (ProjectID set; TenantID may be empty for single-tenant use). An
// empty Mode is inferred: project when ProjectID is set, else tenant when
// TenantID is set, else global.
//
// A request scope names the caller's tenant and project; its Mode is not used
// for matching. A caller (T, P) sees global skills, tenant skills of tenant T,
// and project skills of tenant T and project P; nothing else, ever. When one
// name exists at several scopes a caller sees, the most specific wins:
// project over tenant over global.
type Scope struct {
	Mode      string `json:"mode"`
	TenantID  string `json:"tenant_id,omitempty"`
	ProjectID string `json:"project_id,omitempty"`
}

// Origins of a skill.
const (
	OriginPack    = "pack"
	OriginLearned = "learned"
)

// TaskTypes are the task types a skill may have; "" is stored as "unknown".
var TaskTypes = []string{"browser", "api", "code", "domain", "unknown"}

// SkillRecord is one skill in the store: a playbook skill (trigger, steps,
// preconditions, failure modes) or an Agent Skills SKILL.md skill
// (description and Markdown instructions).
type SkillRecord struct {
	Name        string
	Title       string
	Description string
	Trigger     string // when to use it; "" is stored as Description
	TaskType    string // one of TaskTypes; "" is stored as "unknown"

	Tags          []string
	Steps         []string
	Preconditions []string
	FailureModes  []string

	Instructions string // Markdown body of a SKILL.md skill ("" for playbook skills)

	Origin    string // OriginPack or OriginLearned
	OriginRef string // e.g. "core@1.0.0"

	Scope       Scope
	ContentHash string // computed from the content fields when empty
	Pinned      bool   // listed first in the skill directory

	// Filled on read.
	CreatedAt, UpdatedAt, LastUsed time.Time
	UseCount                       int
}

// PackOptions control LoadPack.
type PackOptions struct {
	// UpdateExisting rewrites pack skills whose content hash changed; when
	// false they are left as stored and reported in Skipped.
	UpdateExisting bool
	// Pinned names skills of the pack to pin in the skill directory.
	Pinned []string
	// Scope is where the pack's skills are stored (zero value: global). It
	// replaces the Scope of each skill.
	Scope Scope
}

// PackReport says what LoadPack did. All lists are sorted names.
type PackReport struct {
	Pack      string
	Added     []string // new skills inserted
	Updated   []string // pack skills rewritten because their content changed
	Unchanged []string // pack skills with the same content hash
	// Skipped are skills left as stored although the pack brings a different
	// version: learned skills (never overwritten by a pack) and, without
	// UpdateExisting, changed pack skills.
	Skipped []string
	// Removed are skills this pack stored earlier in the same scope that it
	// no longer contains.
	Removed []string
}

// normScope validates a stored skill's scope and fills in its mode.
func normScope(sc Scope) (Scope, error) {
	mode := sc.Mode
	if mode == "" {
		switch {
		case sc.ProjectID != "":
			mode = packs.ScopeProject
		case sc.TenantID != "":
			mode = packs.ScopeTenant
		default:
			mode = packs.ScopeGlobal
		}
	}
	switch mode {
	case packs.ScopeGlobal:
		if sc.TenantID != "" || sc.ProjectID != "" {
			return Scope{}, fmt.Errorf("%w: a global scope has no tenant_id or project_id (got %q, %q)", ErrBadScope, sc.TenantID, sc.ProjectID)
		}
	case packs.ScopeTenant:
		if sc.TenantID == "" {
			return Scope{}, fmt.Errorf("%w: a tenant scope needs a tenant_id", ErrBadScope)
		}
		if sc.ProjectID != "" {
			return Scope{}, fmt.Errorf("%w: a tenant scope has no project_id (got %q); use mode \"project\"", ErrBadScope, sc.ProjectID)
		}
	case packs.ScopeProject:
		if sc.ProjectID == "" {
			return Scope{}, fmt.Errorf("%w: a project scope needs a project_id", ErrBadScope)
		}
	default:
		return Scope{}, fmt.Errorf("%w: mode %q, want \"project\", \"tenant\" or \"global\"", ErrBadScope, sc.Mode)
	}
	return Scope{Mode: mode, TenantID: sc.TenantID, ProjectID: sc.ProjectID}, nil
}

// checkRequestScope validates the scope of a request: a known mode or none.
func checkRequestScope(sc Scope) error {
	switch sc.Mode {
	case "", packs.ScopeGlobal, packs.ScopeTenant, packs.ScopeProject:
		return nil
	}
	return fmt.Errorf("%w: mode %q, want \"project\", \"tenant\", \"global\" or empty", ErrBadScope, sc.Mode)
}

// scopeWhere returns an SQL condition on the skills table's scope columns
// (unqualified column names) that admits exactly the skills a caller with
// this request scope may see, with its arguments. Use it in every query that
// returns skills to a caller.
func scopeWhere(sc Scope) (string, []any) {
	return scopeWhereAlias(sc, "")
}

// scopeWhereAlias is scopeWhere with the columns qualified by alias ("s." ).
func scopeWhereAlias(sc Scope, alias string) (string, []any) {
	a := alias
	switch {
	case sc.TenantID == "" && sc.ProjectID == "":
		return "(" + a + "scope_mode = 'global')", nil
	case sc.ProjectID == "":
		return "(" + a + "scope_mode = 'global' OR (" + a + "scope_mode = 'tenant' AND " + a + "scope_tenant_id = ?))",
			[]any{sc.TenantID}
	case sc.TenantID == "":
		return "(" + a + "scope_mode = 'global' OR (" + a + "scope_mode = 'project' AND " + a + "scope_tenant_id = '' AND " +
			a + "scope_project_id = ?))", []any{sc.ProjectID}
	default:
		return "(" + a + "scope_mode = 'global' OR (" + a + "scope_mode = 'tenant' AND " + a + "scope_tenant_id = ?) OR (" +
				a + "scope_mode = 'project' AND " + a + "scope_tenant_id = ? AND " + a + "scope_project_id = ?))",
			[]any{sc.TenantID, sc.TenantID, sc.ProjectID}
	}
}

// scopeSpecificity ranks scope modes: a more specific scope shadows a less
// specific one with the same skill name.
func scopeSpecificity(mode string) int {
	switch mode {
	case packs.ScopeProject:
		return 2
	case packs.ScopeTenant:
		return 1
	}
	return 0
}

// skillID is the opaque storage ID of a skill: stable for a name in a scope.
func skillID(sc Scope, name string) string {
	sum := sha256.Sum256([]byte(sc.Mode + "\x00" + sc.TenantID + "\x00" + sc.ProjectID + "\x00" + name))
	return "sk_" + hex.EncodeToString(sum[:10])
}

// canonicalSkill is the hashed content of a skill, fields in a fixed order.
type canonicalSkill struct {
	Description   string   `json:"description"`
	FailureModes  []string `json:"failure_modes"`
	Instructions  string   `json:"instructions"`
	Name          string   `json:"name"`
	Preconditions []string `json:"preconditions"`
	Steps         []string `json:"steps"`
	Tags          []string `json:"tags"`
	TaskType      string   `json:"task_type"`
	Title         string   `json:"title"`
	Trigger       string   `json:"trigger"`
}

// SkillContentHash returns the content hash of a skill: sha256 over its
// content fields (not scope, origin or statistics) in canonical JSON.
func SkillContentHash(sk SkillRecord) string {
	sum := sha256.Sum256([]byte(mustJSON(canonicalSkill{
		Description: sk.Description, FailureModes: nonNil(sk.FailureModes), Instructions: sk.Instructions,
		Name: sk.Name, Preconditions: nonNil(sk.Preconditions), Steps: nonNil(sk.Steps), Tags: nonNil(sk.Tags),
		TaskType: sk.TaskType, Title: sk.Title, Trigger: sk.Trigger,
	})))
	return hex.EncodeToString(sum[:])
}

func validTaskType(t string) bool {
	for _, v := range TaskTypes {
		if t == v {
			return true
		}
	}
	return false
}

// prepareSkill validates sk and fills its defaults.
func prepareSkill(sk SkillRecord) (SkillRecord, error) {
	if strings.TrimSpace(sk.Name) == "" {
		return SkillRecord{}, fmt.Errorf("%w: a skill has an empty name", ErrBadSkill)
	}
	if strings.ContainsFunc(sk.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) || !utf8.ValidString(sk.Name) {
		return SkillRecord{}, fmt.Errorf("%w: skill name %q contains control characters or invalid UTF-8", ErrBadSkill, sk.Name)
	}
	if sk.Trigger == "" {
		sk.Trigger = sk.Description
	}
	if strings.TrimSpace(sk.Trigger) == "" {
		return SkillRecord{}, fmt.Errorf("%w: skill %q has neither a trigger nor a description", ErrBadSkill, sk.Name)
	}
	if sk.TaskType == "" {
		sk.TaskType = "unknown"
	}
	if !validTaskType(sk.TaskType) {
		return SkillRecord{}, fmt.Errorf("%w: skill %q: task_type %q, want one of %s", ErrBadTaskType, sk.Name, sk.TaskType, strings.Join(TaskTypes, ", "))
	}
	switch sk.Origin {
	case "":
		sk.Origin = OriginLearned
	case OriginPack, OriginLearned:
	default:
		return SkillRecord{}, fmt.Errorf("%w: skill %q: origin %q, want \"pack\" or \"learned\"", ErrBadSkill, sk.Name, sk.Origin)
	}
	sc, err := normScope(sk.Scope)
	if err != nil {
		return SkillRecord{}, fmt.Errorf("skill %q: %w", sk.Name, err)
	}
	sk.Scope = sc
	sk.Tags, sk.Steps = nonNil(sk.Tags), nonNil(sk.Steps)
	sk.Preconditions, sk.FailureModes = nonNil(sk.Preconditions), nonNil(sk.FailureModes)
	if sk.ContentHash == "" {
		sk.ContentHash = SkillContentHash(sk)
	}
	return sk, nil
}

// skillBody is the searchable text of a skill's content.
func skillBody(sk SkillRecord) string {
	parts := make([]string, 0, len(sk.Steps)+len(sk.Preconditions)+len(sk.FailureModes)+1)
	parts = append(parts, sk.Steps...)
	parts = append(parts, sk.Preconditions...)
	parts = append(parts, sk.FailureModes...)
	if sk.Instructions != "" {
		parts = append(parts, sk.Instructions)
	}
	return strings.Join(parts, " ")
}

// skillColumns are the columns scanSkill reads, in its order; qualify with an
// alias via skillColumnsAlias.
const skillColumns = `name, title, description, trigger, task_type, tags, steps, preconditions, failure_modes,
	instructions, origin, origin_ref, scope_mode, scope_tenant_id, scope_project_id, content_hash, pinned,
	created_at, updated_at, last_used, use_count`

// rowScanner is satisfied by *sql.Row and *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

// scanSkill reads one row selected with skillColumns.
func scanSkill(r rowScanner) (SkillRecord, error) {
	var sk SkillRecord
	var tags, steps, pre, fail string
	var pinned int
	var created, updated, used int64
	if err := r.Scan(&sk.Name, &sk.Title, &sk.Description, &sk.Trigger, &sk.TaskType, &tags, &steps, &pre, &fail,
		&sk.Instructions, &sk.Origin, &sk.OriginRef, &sk.Scope.Mode, &sk.Scope.TenantID, &sk.Scope.ProjectID,
		&sk.ContentHash, &pinned, &created, &updated, &used, &sk.UseCount); err != nil {
		return SkillRecord{}, err
	}
	for _, f := range []struct {
		src string
		dst *[]string
	}{{tags, &sk.Tags}, {steps, &sk.Steps}, {pre, &sk.Preconditions}, {fail, &sk.FailureModes}} {
		if err := jsonStrings(f.src, f.dst); err != nil {
			return SkillRecord{}, fmt.Errorf("skill %q: %w", sk.Name, err)
		}
	}
	sk.Pinned = pinned != 0
	sk.CreatedAt, sk.UpdatedAt, sk.LastUsed = fromNano(created), fromNano(updated), fromNano(used)
	return sk, nil
}

// Skill rowids. The seq column (the full-text rowid) encodes where a skill
// lives, so that a search asks the full-text index for the caller's scopes
// (and task type) as rowid ranges and never ranks another tenant's skills:
//
//	seq = scope block << 32 | task type index << 29 | number
//
// The scope block is the skill_scopes row of the skill's scope (1 is
// global); the task type index is its place in TaskTypes. A skill whose task
// type changes moves to the other range.
const (
	scopeShift = 32
	typeShift  = 29
)

// skillRange is the rowid range [lo, hi) of a scope block, or of one task
// type in it when taskType is not "".
func skillRange(block int64, taskType string) (lo, hi int64) {
	lo = block << scopeShift
	if taskType == "" {
		return lo, lo + 1<<scopeShift
	}
	lo += int64(taskIndex(taskType)) << typeShift
	return lo, lo + 1<<typeShift
}

// taskIndex is a task type's place in TaskTypes.
func taskIndex(t string) int {
	for i, v := range TaskTypes {
		if v == t {
			return i
		}
	}
	return len(TaskTypes) - 1 // "unknown"
}

const skillInsertSQL = `INSERT INTO skills (seq, id, scope_mode, scope_tenant_id, scope_project_id, name, name_key,
	name_terms, title, description, trigger, task_type, tags, tags_text, steps, preconditions, failure_modes,
	instructions, body, origin, origin_ref, pack, content_hash, pinned, created_at, updated_at, last_used, use_count)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const skillUpdateSQL = `UPDATE skills SET name_key = ?, name_terms = ?, title = ?, description = ?, trigger = ?,
	task_type = ?, tags = ?, tags_text = ?, steps = ?, preconditions = ?, failure_modes = ?, instructions = ?, body = ?,
	origin = ?, origin_ref = ?, pack = ?, content_hash = ?, pinned = ?, updated_at = ? WHERE id = ?`

// skillArgs returns the content arguments shared by insert and update, from
// name_key to pinned.
func skillArgs(sk SkillRecord, pack string) []any {
	return []any{strings.ToLower(sk.Name), nameTerms(sk.Name), sk.Title, sk.Description, sk.Trigger, sk.TaskType,
		mustJSON(sk.Tags), strings.Join(sk.Tags, " "), mustJSON(sk.Steps), mustJSON(sk.Preconditions),
		mustJSON(sk.FailureModes), sk.Instructions, skillBody(sk), sk.Origin, sk.OriginRef, pack, sk.ContentHash,
		boolInt(sk.Pinned)}
}

// storedSkill is what LoadPack and PutSkill need to know about an existing row.
type storedSkill struct {
	id, origin, hash, pack, taskType string
	pinned                           bool
	created, lastUsed                int64
	useCount                         int
}

// skillWriter writes skills inside one transaction, with its statements
// prepared once and the next free rowid of each range remembered.
type skillWriter struct {
	tx                            *sql.Tx
	now                           int64
	lookup, insert, update, del   *sql.Stmt
	scopeGet, scopeAdd, rangeNext *sql.Stmt
	next                          map[int64]int64 // range start → next free rowid
}

func newSkillWriter(ctx context.Context, tx *sql.Tx, now int64) (*skillWriter, error) {
	w := &skillWriter{tx: tx, now: now, next: make(map[int64]int64)}
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{
		{&w.lookup, `SELECT id, origin, content_hash, pack, task_type, pinned, created_at, last_used, use_count FROM skills
			WHERE name = ? AND scope_mode = ? AND scope_tenant_id = ? AND scope_project_id = ?`},
		{&w.insert, skillInsertSQL},
		{&w.update, skillUpdateSQL},
		{&w.del, `DELETE FROM skills WHERE id = ?`},
		{&w.scopeGet, `SELECT id FROM skill_scopes WHERE scope_mode = ? AND scope_tenant_id = ? AND scope_project_id = ?`},
		{&w.scopeAdd, `INSERT INTO skill_scopes (scope_mode, scope_tenant_id, scope_project_id) VALUES (?, ?, ?) RETURNING id`},
		{&w.rangeNext, `SELECT coalesce(max(seq) + 1, ?1) FROM skills WHERE seq >= ?1 AND seq < ?2`},
	} {
		st, err := tx.PrepareContext(ctx, p.q)
		if err != nil {
			w.close()
			return nil, err
		}
		*p.st = st
	}
	return w, nil
}

func (w *skillWriter) close() {
	for _, st := range []*sql.Stmt{w.lookup, w.insert, w.update, w.del, w.scopeGet, w.scopeAdd, w.rangeNext} {
		if st != nil {
			st.Close()
		}
	}
}

// find returns the stored skill of this name in this scope.
func (w *skillWriter) find(ctx context.Context, sc Scope, name string) (storedSkill, bool, error) {
	var st storedSkill
	var pinned int
	err := w.lookup.QueryRowContext(ctx, name, sc.Mode, sc.TenantID, sc.ProjectID).Scan(&st.id, &st.origin, &st.hash,
		&st.pack, &st.taskType, &pinned, &st.created, &st.lastUsed, &st.useCount)
	if errors.Is(err, sql.ErrNoRows) {
		return storedSkill{}, false, nil
	}
	st.pinned = pinned != 0
	return st, err == nil, err
}

// seq returns a free rowid for a skill of this scope and task type.
func (w *skillWriter) seq(ctx context.Context, sc Scope, taskType string) (int64, error) {
	var block int64
	err := w.scopeGet.QueryRowContext(ctx, sc.Mode, sc.TenantID, sc.ProjectID).Scan(&block)
	if errors.Is(err, sql.ErrNoRows) {
		err = w.scopeAdd.QueryRowContext(ctx, sc.Mode, sc.TenantID, sc.ProjectID).Scan(&block)
	}
	if err != nil {
		return 0, err
	}
	if block >= 1<<(63-scopeShift) {
		return 0, fmt.Errorf("too many skill scopes")
	}
	lo, hi := skillRange(block, taskType)
	n, ok := w.next[lo]
	if !ok {
		if err := w.rangeNext.QueryRowContext(ctx, lo, hi).Scan(&n); err != nil {
			return 0, err
		}
	}
	if n >= hi {
		return 0, fmt.Errorf("skill rowids of scope %+v, task type %q are exhausted", sc, taskType)
	}
	w.next[lo] = n + 1
	return n, nil
}

// insert stores a new skill with the given statistics.
func (w *skillWriter) insertStats(ctx context.Context, sk SkillRecord, pack string, created, lastUsed int64, useCount int) error {
	seq, err := w.seq(ctx, sk.Scope, sk.TaskType)
	if err != nil {
		return err
	}
	args := []any{seq, skillID(sk.Scope, sk.Name), sk.Scope.Mode, sk.Scope.TenantID, sk.Scope.ProjectID, sk.Name}
	args = append(args, skillArgs(sk, pack)...)
	args = append(args, created, w.now, lastUsed, useCount)
	_, err = w.insert.ExecContext(ctx, args...)
	return err
}

func (w *skillWriter) add(ctx context.Context, sk SkillRecord, pack string) error {
	return w.insertStats(ctx, sk, pack, w.now, 0, 0)
}

// replace rewrites a stored skill's content, keeping its creation time and
// use statistics, and moving it when its task type changed.
func (w *skillWriter) replace(ctx context.Context, st storedSkill, sk SkillRecord, pack string) error {
	if st.taskType != sk.TaskType {
		if _, err := w.del.ExecContext(ctx, st.id); err != nil {
			return err
		}
		return w.insertStats(ctx, sk, pack, st.created, st.lastUsed, st.useCount)
	}
	_, err := w.update.ExecContext(ctx, append(skillArgs(sk, pack), w.now, st.id)...)
	return err
}

// PutSkill inserts sk, or replaces the skill of the same name in the same
// scope whatever its origin, keeping its creation time and use statistics.
// An empty Origin means OriginLearned.
func (s *Store) PutSkill(ctx context.Context, sk SkillRecord) error {
	if err := s.check(); err != nil {
		return err
	}
	sk, err := prepareSkill(sk)
	if err != nil {
		return fmt.Errorf("index: put skill: %w", err)
	}
	pack := ""
	if sk.Origin == OriginPack {
		pack, _, _ = strings.Cut(sk.OriginRef, "@")
	}
	now := s.nowNano()
	err = s.write(ctx, func(tx *sql.Tx, d *writeDelta) error {
		d.skills.changed, d.skills.uids = true, []string{skillID(sk.Scope, sk.Name)}
		w, err := newSkillWriter(ctx, tx, now)
		if err != nil {
			return err
		}
		defer w.close()
		st, ok, err := w.find(ctx, sk.Scope, sk.Name)
		if err != nil {
			return err
		}
		if ok {
			if st.id != d.skills.uids[0] {
				d.skills.uids = append(d.skills.uids, st.id) // the row stored under another ID
			}
			return w.replace(ctx, st, sk, pack)
		}
		return w.add(ctx, sk, pack)
	})
	if err != nil {
		return fmt.Errorf("index: put skill %q: %w", sk.Name, err)
	}
	return nil
}

// LoadPack stores the skills of pack in o.Scope, in one transaction: new
// skills are inserted; stored pack skills whose content hash changed are
// rewritten when o.UpdateExisting is set (else skipped); learned skills are
// never overwritten; skills the pack stored earlier in this scope and no
// longer has are removed. Every skill is stored with origin "pack"; an empty
// OriginRef becomes the pack name.
func (s *Store) LoadPack(ctx context.Context, pack string, skills []SkillRecord, o PackOptions) (PackReport, error) {
	if err := s.check(); err != nil {
		return PackReport{}, err
	}
	if strings.TrimSpace(pack) == "" {
		return PackReport{}, fmt.Errorf("index: load pack: %w: the pack name is empty", ErrBadSkill)
	}
	sc, err := normScope(o.Scope)
	if err != nil {
		return PackReport{}, fmt.Errorf("index: load pack %q: %w", pack, err)
	}
	pinned := make(map[string]bool, len(o.Pinned))
	for _, n := range o.Pinned {
		pinned[n] = true
	}
	prepared := make([]SkillRecord, 0, len(skills))
	seen := make(map[string]bool, len(skills))
	for _, sk := range skills {
		sk.Origin = OriginPack
		if sk.OriginRef == "" {
			sk.OriginRef = pack
		}
		sk.Scope = sc
		sk.Pinned = pinned[sk.Name]
		p, err := prepareSkill(sk)
		if err != nil {
			return PackReport{}, fmt.Errorf("index: load pack %q: %w", pack, err)
		}
		if seen[p.Name] {
			return PackReport{}, fmt.Errorf("index: load pack %q: %w: skill name %q appears twice", pack, ErrBadSkill, p.Name)
		}
		seen[p.Name] = true
		prepared = append(prepared, p)
	}
	for _, n := range o.Pinned {
		if !seen[n] {
			return PackReport{}, fmt.Errorf("index: load pack %q: %w: pinned skill %q is not in the pack", pack, ErrBadSkill, n)
		}
	}
	rep := PackReport{Pack: pack}
	now := s.nowNano()
	err = s.write(ctx, func(tx *sql.Tx, d *writeDelta) error {
		// Every row inserted, rewritten, repinned or deleted is reported
		// (pack is searchable: it orders ties).
		d.skills.changed, d.skills.uids = true, []string{}
		rep = PackReport{Pack: pack}
		w, err := newSkillWriter(ctx, tx, now)
		if err != nil {
			return err
		}
		defer w.close()
		for _, sk := range prepared {
			st, ok, err := w.find(ctx, sc, sk.Name)
			if err != nil {
				return err
			}
			switch {
			case !ok:
				if err := w.add(ctx, sk, pack); err != nil {
					return fmt.Errorf("inserting skill %q: %w", sk.Name, err)
				}
				d.skills.uids = append(d.skills.uids, skillID(sc, sk.Name))
				rep.Added = append(rep.Added, sk.Name)
			case st.origin != OriginPack:
				rep.Skipped = append(rep.Skipped, sk.Name)
			case st.hash == sk.ContentHash || !o.UpdateExisting:
				// Pinning is configuration, not content: it follows the
				// options even when the content stays.
				if st.pinned != sk.Pinned || st.pack != pack {
					if _, err := tx.ExecContext(ctx, `UPDATE skills SET pinned = ?, pack = ? WHERE id = ?`,
						boolInt(sk.Pinned), pack, st.id); err != nil {
						return err
					}
					d.skills.uids = append(d.skills.uids, st.id)
				}
				if st.hash == sk.ContentHash {
					rep.Unchanged = append(rep.Unchanged, sk.Name)
				} else {
					rep.Skipped = append(rep.Skipped, sk.Name)
				}
			default:
				if err := w.replace(ctx, st, sk, pack); err != nil {
					return fmt.Errorf("updating skill %q: %w", sk.Name, err)
				}
				d.skills.uids = append(d.skills.uids, st.id)
				if id := skillID(sc, sk.Name); id != st.id {
					d.skills.uids = append(d.skills.uids, id) // a moved row takes this ID
				}
				rep.Updated = append(rep.Updated, sk.Name)
			}
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, name FROM skills WHERE pack = ? AND origin = 'pack'
			AND scope_mode = ? AND scope_tenant_id = ? AND scope_project_id = ?`, pack, sc.Mode, sc.TenantID, sc.ProjectID)
		if err != nil {
			return err
		}
		var gone [][2]string
		for rows.Next() {
			var id, name string
			if err := rows.Scan(&id, &name); err != nil {
				rows.Close()
				return err
			}
			if !seen[name] {
				gone = append(gone, [2]string{id, name})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, g := range gone {
			if _, err := tx.ExecContext(ctx, `DELETE FROM skills WHERE id = ?`, g[0]); err != nil {
				return err
			}
			d.skills.uids = append(d.skills.uids, g[0])
			rep.Removed = append(rep.Removed, g[1])
		}
		var total int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM skills`).Scan(&total); err != nil {
			return err
		}
		return s.tidyFTS(ctx, tx, "skills_fts", len(rep.Added)+len(rep.Updated)+len(rep.Removed), total)
	})
	if err != nil {
		return PackReport{}, fmt.Errorf("index: load pack %q: %w", pack, err)
	}
	for _, l := range [][]string{rep.Added, rep.Updated, rep.Unchanged, rep.Skipped, rep.Removed} {
		sort.Strings(l)
	}
	s.emit(EventSkillPackLoaded, map[string]any{
		"pack_name": pack, "skill_count": len(prepared), "updated_count": len(rep.Updated),
		"added_count": len(rep.Added), "skipped_count": len(rep.Skipped), "removed_count": len(rep.Removed),
	})
	return rep, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
