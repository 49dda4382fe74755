package index

import (
	"context"
	"fmt"
	"strings"

	"github.com/skillhost/skillhost/index/internal/redact"
	"github.com/skillhost/skillhost/packs"
)

// Limits of ListSkills.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
	// MaxPage bounds page so that the offset stays small.
	MaxPage = 100000
	// listTriggerLen is the length triggers are cut to in a listing.
	listTriggerLen = 120
)

// SkillListRequest asks for one page of the skills visible in a scope,
// ordered by name.
type SkillListRequest struct {
	// Page is 1-based; 0 means 1.
	Page int
	// PageSize is 1..MaxPageSize; 0 means DefaultPageSize.
	PageSize int
	// TaskType filters on one of TaskTypes; "" lists all.
	TaskType string
	// Origin filters on OriginPack or OriginLearned; "" lists all.
	Origin string
	// ScopeMode filters on where the listed skills are stored:
	// packs.ScopeProject, packs.ScopeTenant or packs.ScopeGlobal; "" lists all. It narrows
	// what Scope sees and never widens it: a project skill is listed only
	// to a caller of that project.
	ScopeMode string
	// Scope is the caller.
	Scope Scope
	// VisibleTool and KnownTools are as in SkillGetRequest; they apply to
	// the triggers listed.
	VisibleTool func(name string) bool
	KnownTools  []string
}

// SkillListEntry is one listed skill: its name and a short trigger.
type SkillListEntry struct {
	Name     string `json:"name"`
	Trigger  string `json:"trigger"`
	TaskType string `json:"task_type,omitempty"`
	Origin   string `json:"origin"`
	// ScopeMode is where the skill is stored: project, tenant or global.
	ScopeMode string `json:"scope_mode"`
}

// SkillListResult is one page of a listing.
type SkillListResult struct {
	Skills   []SkillListEntry `json:"skills"`
	Page     int              `json:"page"`
	PageSize int              `json:"page_size"`
	// Total counts the skills matching the filters on all pages.
	Total   int  `json:"total"`
	HasMore bool `json:"has_more"`
}

// ListSkills returns one page of the skills visible in r.Scope that match
// the filters, ordered by name (names are unique among the skills a caller
// sees, so the order is total and pages never overlap), with their triggers shortened, redacted
// and rewritten like GetSkills content. Listing does not count as use.
func (s *Store) ListSkills(ctx context.Context, r SkillListRequest) (*SkillListResult, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	page, size := r.Page, r.PageSize
	if page == 0 {
		page = 1
	}
	if size == 0 {
		size = DefaultPageSize
	}
	if page < 1 || page > MaxPage {
		return nil, fmt.Errorf("%w: page %d, want 1..%d", ErrBadPage, r.Page, MaxPage)
	}
	if size < 1 || size > MaxPageSize {
		return nil, fmt.Errorf("%w: page_size %d, want 1..%d", ErrBadPage, r.PageSize, MaxPageSize)
	}
	if r.TaskType != "" && !validTaskType(r.TaskType) {
		return nil, fmt.Errorf("%w: %q, want one of %s", ErrBadTaskType, r.TaskType, strings.Join(TaskTypes, ", "))
	}
	switch r.Origin {
	case "", OriginPack, OriginLearned:
	default:
		return nil, fmt.Errorf("%w: got %q", ErrBadOrigin, r.Origin)
	}
	switch r.ScopeMode {
	case "", packs.ScopeProject, packs.ScopeTenant, packs.ScopeGlobal:
	default:
		return nil, fmt.Errorf("%w: scope filter %q, want \"project\", \"tenant\", \"global\" or empty", ErrBadScope, r.ScopeMode)
	}
	if err := checkRequestScope(r.Scope); err != nil {
		return nil, err
	}

	// Filters other than the name go after the CTE: inside it, a filtered
	// out project skill would unshadow the global skill of the same name.
	cte, args := visibleSkillsCTE(r.Scope, "")
	filter := ` FROM v WHERE shadow_rank = 1`
	if r.TaskType != "" {
		filter += ` AND task_type = ?`
		args = append(args, r.TaskType)
	}
	if r.Origin != "" {
		filter += ` AND origin = ?`
		args = append(args, r.Origin)
	}
	if r.ScopeMode != "" {
		filter += ` AND scope_mode = ?`
		args = append(args, r.ScopeMode)
	}
	q := cte + `SELECT name, trigger, task_type, origin, scope_mode, COUNT(*) OVER () ` + filter + ` ORDER BY name LIMIT ? OFFSET ?`
	// One read transaction, on one connection: the page is read to its
	// end before the count or the tool names are asked for, and those come
	// from the same transaction, so the listing never waits for a second
	// connection while it holds one (with every connection held by a
	// listing that waits, none would come).
	res := &SkillListResult{Skills: []SkillListEntry{}, Page: page, PageSize: size}
	total := -1
	var tr *redact.ToolRefs
	err := s.read(ctx, func(rd *readTx) error {
		rows, err := rd.query(ctx, q, append(args, size, (page-1)*size)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e SkillListEntry
			if err := rows.Scan(&e.Name, &e.Trigger, &e.TaskType, &e.Origin, &e.ScopeMode, &total); err != nil {
				return s.wrapErr(err)
			}
			res.Skills = append(res.Skills, e)
		}
		if err := rows.Err(); err != nil {
			return s.wrapErr(err)
		}
		rows.Close()
		if total < 0 {
			// A page past the end has no rows to carry the count.
			if err := rd.scanOne(ctx, cte+`SELECT COUNT(*)`+filter, []any{&total}, args...); err != nil {
				return err
			}
		}
		tr, err = s.toolRedactor(ctx, rd, r.VisibleTool, r.KnownTools)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("index: skill_list: %w", err)
	}
	for i := range res.Skills {
		e := &res.Skills[i]
		e.Trigger = cutText(oneLine(s.clean(tr, e.Trigger)), listTriggerLen)
		if e.TaskType == "unknown" {
			e.TaskType = ""
		}
	}
	res.Total = total
	res.HasMore = (page-1)*size+len(res.Skills) < total
	s.emit(EventSkillList, map[string]any{
		"filters": map[string]any{
			"task_type": r.TaskType,
			"origin":    r.Origin,
			"scope":     r.ScopeMode,
			"page":      page,
			"page_size": size,
		},
		"returned_count": len(res.Skills),
	})
	return res, nil
}
