package index

import (
	"context"
	"errors"
)

// SkillQuery is a skill search request.
type SkillQuery struct {
	Query      string
	SearchType string // "fts" (default), "regex" or "exact"
	Limit      int    // 1..MaxLimit; 0 means DefaultLimit
	TaskType   string // one of TaskTypes, or "" for all
	Scope      Scope  // the caller; see Scope for what it may see
}

// SkillHit is one skill search result.
type SkillHit struct {
	Name     string  `json:"name"`
	Title    string  `json:"title,omitempty"`
	Trigger  string  `json:"trigger"`
	TaskType string  `json:"task_type,omitempty"`
	Score    float64 `json:"score"`
}

// SkillSearchResult is the answer to a skill search; SearchType is the type
// actually used.
type SkillSearchResult struct {
	Skills     []SkillHit `json:"skills"`
	Query      string     `json:"query"`
	SearchType string     `json:"search_type"`
}

// SearchSkills finds skills visible in q.Scope matching q, best first.
func (s *Store) SearchSkills(ctx context.Context, q SkillQuery) (*SkillSearchResult, error) {
	return nil, errors.New("index: SearchSkills: not implemented yet")
}
