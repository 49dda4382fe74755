package index

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/index/internal/redact"
)

// Formats of GetSkills' formatted context.
const (
	// FormatInjection wraps the skills in a <skill_context> block ready
	// to add to a prompt.
	FormatInjection = "injection"
	// FormatRaw renders the same Markdown sections without the block.
	FormatRaw = "raw"
)

// Limits of GetSkills.
const (
	MaxGetNames      = 10
	MaxSkillNameLen  = 256
	DefaultGetTokens = 1500
	MinGetTokens     = 200
	MaxGetTokens     = 6000
)

// Event names of skill retrieval.
const (
	// EventSkillGet is reported after every GetSkills call that passed
	// validation. Fields: names (as requested), returned_count,
	// max_tokens, final_tokens_est.
	EventSkillGet = "skill_get"

	// EventSkillList is reported after every ListSkills call that passed
	// validation. Fields: filters (task_type, origin, page, page_size),
	// returned_count.
	EventSkillList = "skill_list"

	// EventSkillsRetrieved is reported after every Relevant call that
	// passed validation. Fields: skill_count, top_k_used, raw_tokens_est,
	// final_tokens_est, was_summarized.
	EventSkillsRetrieved = "skills_retrieved"

	// EventSkillDirectoryRendered is reported by Directory.Render. Fields:
	// count (entries rendered).
	EventSkillDirectoryRendered = "skill_directory_rendered"
)

// SkillGetRequest asks for skills by name.
type SkillGetRequest struct {
	// Names are the skill names, 1 to MaxGetNames; duplicates, and names
	// that resolve to the same skill, count once.
	Names []string
	// Format is FormatInjection (default) or FormatRaw.
	Format string
	// MaxTokens bounds FormattedContext: MinGetTokens..MaxGetTokens, 0
	// means DefaultGetTokens.
	MaxTokens int
	// Scope is the caller; skills outside it are reported as missing,
	// exactly like names that do not exist.
	Scope Scope
	// VisibleTool reports whether the run may see or activate a tool.
	// References to known tools it rejects are rewritten in every text
	// field. Nil means every tool is visible.
	VisibleTool func(name string) bool
	// KnownTools names tools besides those indexed with SyncTools whose
	// references VisibleTool should judge.
	KnownTools []string
}

// SkillGetResult is the answer to GetSkills.
type SkillGetResult struct {
	// Skills are the skills found, in request order, with redaction and
	// tool-reference rewriting applied; they are not shortened.
	Skills []SkillContent `json:"skills"`
	// FormattedContext renders Skills within the token budget
	// (EstimateTokens(FormattedContext) <= MaxTokens); "" when none was
	// found.
	FormattedContext string `json:"formatted_context"`
	// Missing lists requested names with no skill visible in the scope.
	Missing []string `json:"missing,omitempty"`
}

// GetSkills returns the named skills visible in r.Scope and a rendering of
// them that fits r.MaxTokens, and counts each returned skill as used
// (use_count and last_used, in one transaction). A name that does not
// exist and a name that exists only in another scope are both reported in
// Missing. Names match exactly, or else case-insensitively.
func (s *Store) GetSkills(ctx context.Context, r SkillGetRequest) (*SkillGetResult, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	names, err := checkNames(r.Names)
	if err != nil {
		return nil, err
	}
	format := r.Format
	switch format {
	case "":
		format = FormatInjection
	case FormatInjection, FormatRaw:
	default:
		return nil, fmt.Errorf("%w: got %q", ErrBadFormat, r.Format)
	}
	maxTokens := r.MaxTokens
	if maxTokens == 0 {
		maxTokens = DefaultGetTokens
	}
	if maxTokens < MinGetTokens || maxTokens > MaxGetTokens {
		return nil, fmt.Errorf("%w: max_tokens %d, want %d..%d", ErrBadMaxTokens, r.MaxTokens, MinGetTokens, MaxGetTokens)
	}
	if err := checkRequestScope(r.Scope); err != nil {
		return nil, err
	}

	// The skills and the tool names come from one read transaction, on
	// one connection; the use is recorded after it ended.
	var found map[string]idSkill
	var tr *redact.ToolRefs
	err = s.read(ctx, func(rd *readTx) (err error) {
		if found, err = s.skillsByName(ctx, rd, r.Scope, names); err != nil {
			return err
		}
		tr, err = s.toolRedactor(ctx, rd, r.VisibleTool, r.KnownTools)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("index: skill_get: %w", err)
	}
	res := &SkillGetResult{Skills: []SkillContent{}}
	var ids []string
	for _, n := range names {
		sk, ok := found[n]
		if !ok {
			res.Missing = append(res.Missing, n)
			continue
		}
		if slices.Contains(ids, sk.id) {
			continue // another spelling of a name already returned
		}
		res.Skills = append(res.Skills, s.skillDoc(sk.SkillRecord, tr))
		ids = append(ids, sk.id)
	}
	final := 0
	if len(res.Skills) > 0 {
		header := ""
		if format == FormatInjection {
			header = contextHeader("")
		}
		fit := fitSkills(res.Skills, maxTokens, header)
		res.FormattedContext, final = fit.Text, fit.FinalTokens
		if err := s.touchSkills(ctx, ids); err != nil {
			return nil, fmt.Errorf("index: skill_get: recording use: %w", err)
		}
	}
	s.emit(EventSkillGet, map[string]any{
		"names":            names,
		"returned_count":   len(res.Skills),
		"max_tokens":       maxTokens,
		"final_tokens_est": final,
	})
	return res, nil
}

// checkNames validates and de-duplicates requested skill names, keeping
// their order.
func checkNames(in []string) ([]string, error) {
	if len(in) == 0 || len(in) > MaxGetNames {
		return nil, fmt.Errorf("%w: got %d", ErrBadNames, len(in))
	}
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, n := range in {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, fmt.Errorf("%w: names[%d] is empty", ErrBadNames, i)
		}
		if len(n) > MaxSkillNameLen {
			return nil, fmt.Errorf("%w: names[%d] is longer than %d bytes", ErrBadNames, i, MaxSkillNameLen)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// visibleSkillsCTE returns a WITH clause defining "v": the rows of skills
// a caller with scope sc may see, with shadow_rank 1 on the row that wins
// for its name (project over tenant over global). Every skill read in
// this package's retrieval goes through it and filters on
// shadow_rank = 1. byName, when not empty, is an extra SQL condition with
// its arguments that may only test the name (or name_key): it narrows the
// rows before ranking, which keeps lookups by name from ranking the whole
// table, and cannot change which row wins for a name. Conditions on other
// columns must go after the CTE, or a filtered-out row could unshadow one
// from a wider scope.
func visibleSkillsCTE(sc Scope, byName string, byNameArgs ...any) (string, []any) {
	where, args := scopeWhere(sc)
	if byName != "" {
		where += " AND (" + byName + ")"
		args = append(args, byNameArgs...)
	}
	return `WITH v AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY name ORDER BY
		CASE scope_mode WHEN 'project' THEN 2 WHEN 'tenant' THEN 1 ELSE 0 END DESC) AS shadow_rank
		FROM skills WHERE ` + where + `) `, args
}

// idSkill is a stored skill with its storage ID.
type idSkill struct {
	id string
	SkillRecord
}

// idScanner reads the id column in front of skillColumns.
type idScanner struct {
	r  rowScanner
	id *string
}

func (w idScanner) Scan(dest ...any) error {
	return w.r.Scan(append([]any{w.id}, dest...)...)
}

// skillsByName loads the skills visible in sc whose name is one of names,
// keyed by the requested name: an exact match, else the one
// case-insensitive match.
func (s *Store) skillsByName(ctx context.Context, rd *readTx, sc Scope, names []string) (map[string]idSkill, error) {
	marks := strings.TrimSuffix(strings.Repeat("?,", len(names)), ",")
	var nameArgs []any
	for _, n := range names {
		nameArgs = append(nameArgs, n)
	}
	for _, n := range names {
		nameArgs = append(nameArgs, strings.ToLower(n))
	}
	cte, args := visibleSkillsCTE(sc, `name IN (`+marks+`) OR name_key IN (`+marks+`)`, nameArgs...)
	q := cte + `SELECT id, ` + skillColumns + ` FROM v WHERE shadow_rank = 1 ORDER BY name`
	rows, err := rd.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	exact := make(map[string]idSkill)
	folded := make(map[string][]idSkill)
	for rows.Next() {
		var sk idSkill
		sk.SkillRecord, err = scanSkill(idScanner{rows, &sk.id})
		if err != nil {
			return nil, s.wrapErr(err)
		}
		exact[sk.Name] = sk
		key := strings.ToLower(sk.Name)
		folded[key] = append(folded[key], sk)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr(err)
	}
	out := make(map[string]idSkill, len(names))
	for _, n := range names {
		if sk, ok := exact[n]; ok {
			out[n] = sk
		} else if c := folded[strings.ToLower(n)]; len(c) == 1 {
			out[n] = c[0]
		}
	}
	return out, nil
}

// touchSkills counts one use of each skill: use_count + 1 and last_used
// now, in one transaction, holding the write slot as Store.write does. Use
// statistics are not searchable content, so unlike Store.write this does
// not bump the generation the search snapshots are keyed by. The caller
// holds no connection (its reads have ended).
func (s *Store) touchSkills(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.check(); err != nil {
		return err
	}
	now := s.nowNano()
	if err := s.lockWrite(ctx); err != nil {
		return err
	}
	defer s.unlockWrite()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrapErr(err)
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE skills SET use_count = use_count + 1, last_used = ? WHERE id = ?`, now, id); err != nil {
			tx.Rollback()
			return s.wrapErr(err)
		}
	}
	return s.wrapErr(tx.Commit())
}

// toolRedactor builds the tool-reference rewriter for one request from
// the indexed tool names, as rd sees them, and extra. It is nil when
// visible is nil.
func (s *Store) toolRedactor(ctx context.Context, rd *readTx, visible func(string) bool, extra []string) (*redact.ToolRefs, error) {
	if visible == nil {
		return nil, nil
	}
	names, err := s.indexedToolNames(ctx, rd)
	if err != nil {
		return nil, err
	}
	return redact.NewToolRefs(visible, append(slices.Clip(names), extra...)), nil
}

// toolRefs is toolRedactor in a read transaction of its own, for an
// operation that holds no connection when it needs the rewriter.
func (s *Store) toolRefs(ctx context.Context, visible func(string) bool, extra []string) (tr *redact.ToolRefs, err error) {
	if visible == nil {
		return nil, nil
	}
	err = s.read(ctx, func(rd *readTx) error {
		tr, err = s.toolRedactor(ctx, rd, visible, extra)
		return err
	})
	return tr, err
}

// indexedToolNames returns the names of the indexed tools of the
// generation rd sees, read once per generation: every skill answer handed
// to a model judges them, and reading thousands of names costs
// milliseconds. The names are read through rd, on the connection the
// caller already holds, and the cache's lock is held only to look at the
// cache or fill it, never while the names are read: callers that find the
// cache cold each read them, rather than wait, holding a connection, for
// one that reads. The slice is shared; do not change it.
func (s *Store) indexedToolNames(ctx context.Context, rd *readTx) ([]string, error) {
	gen, err := rd.generation(ctx)
	if err != nil {
		return nil, err
	}
	c := &s.toolNames
	c.mu.Lock()
	names, ok := c.names, c.names != nil && c.gen == gen
	c.mu.Unlock()
	if ok {
		return names, nil
	}
	rows, err := rd.query(ctx, `SELECT name FROM tools`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names = []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, s.wrapErr(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr(err)
	}
	c.mu.Lock()
	if c.names == nil || gen >= c.gen {
		c.gen, c.names = gen, names
	}
	c.mu.Unlock()
	return names, nil
}

// clean applies tool-reference rewriting and, unless disabled, redaction
// to text handed to a model.
func (s *Store) clean(tr *redact.ToolRefs, text string) string {
	text = tr.Rewrite(text)
	if s.redact {
		text = Redact(text)
	}
	return text
}

// skillDoc turns a stored skill into what a model sees.
func (s *Store) skillDoc(sk SkillRecord, tr *redact.ToolRefs) SkillContent {
	list := func(in []string) []string {
		out := make([]string, 0, len(in))
		for _, it := range in {
			if it = s.clean(tr, it); strings.TrimSpace(it) != "" {
				out = append(out, it)
			}
		}
		return out
	}
	d := SkillContent{
		Name:          sk.Name,
		Title:         s.clean(tr, sk.Title),
		Description:   s.clean(tr, sk.Description),
		Trigger:       s.clean(tr, sk.Trigger),
		TaskType:      sk.TaskType,
		Steps:         list(sk.Steps),
		Preconditions: list(sk.Preconditions),
		FailureModes:  list(sk.FailureModes),
		Instructions:  s.clean(tr, sk.Instructions),
	}
	if d.TaskType == "unknown" {
		d.TaskType = ""
	}
	return d
}
