package index

import (
	"context"
	"fmt"
	"strings"

	"github.com/skillhost/skillhost/index/internal/redact"
)

// Limits of Relevant.
const (
	DefaultRelevantTopK   = 3
	DefaultRelevantTokens = 2000
	MinRelevantTokens     = 100
	MaxRelevantTokens     = 32000
)

// RelevantRequest asks for the skills that fit a task, for pre-flight
// injection into a prompt.
type RelevantRequest struct {
	// Task is the task or user request in plain words.
	Task string
	// TopK is how many skills to retrieve, 1..MaxLimit; 0 means
	// DefaultRelevantTopK.
	TopK int
	// MaxTokens bounds FormattedContext: MinRelevantTokens..
	// MaxRelevantTokens, 0 means DefaultRelevantTokens.
	MaxTokens int
	// TaskType optionally restricts retrieval to one of TaskTypes.
	TaskType string
	// Scope is the caller.
	Scope Scope
	// VisibleTool and KnownTools are as in SkillGetRequest.
	VisibleTool func(name string) bool
	KnownTools  []string
	// ReadTool is the tool FormattedContext tells the model to read other
	// skills with: the one its run has, load_skill or skill_get; "" means
	// skill_get.
	ReadTool string
}

// RelevantResult is what pre-flight retrieval injects.
type RelevantResult struct {
	// Skills are the retrieved skills, best first, redacted and rewritten
	// but not shortened.
	Skills []SkillContent `json:"skills"`
	// FormattedContext is the <skill_context> block, within MaxTokens;
	// "" when no skill was found.
	FormattedContext string `json:"formatted_context"`
	// SearchType is the search type retrieval actually used ("fts", or
	// "regex" without FTS5).
	SearchType string `json:"search_type"`
	// RawTokensEst estimates the block before compression and
	// FinalTokensEst the block returned.
	RawTokensEst   int `json:"raw_tokens_est"`
	FinalTokensEst int `json:"final_tokens_est"`
	// WasSummarized reports that fields were dropped or shortened, or the
	// block was cut, to fit the budget.
	WasSummarized bool `json:"was_summarized"`
}

// Relevant retrieves the r.TopK skills visible in r.Scope that best match
// r.Task (full-text search, or its regex fallback without FTS5), fits them
// into r.MaxTokens by structured compression and then truncation, renders
// them as a <skill_context> block, and counts each returned skill as used,
// in one transaction. The search, the reading of the skills and the
// recording of their use each take one connection, one after the other.
func (s *Store) Relevant(ctx context.Context, r RelevantRequest) (*RelevantResult, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(r.Task) == "" {
		return nil, fmt.Errorf("%w: task", ErrEmptyQuery)
	}
	topK := r.TopK
	if topK == 0 {
		topK = DefaultRelevantTopK
	}
	if topK < 1 || topK > MaxLimit {
		return nil, fmt.Errorf("%w: top_k %d, want 1..%d", ErrBadLimit, r.TopK, MaxLimit)
	}
	maxTokens := r.MaxTokens
	if maxTokens == 0 {
		maxTokens = DefaultRelevantTokens
	}
	if maxTokens < MinRelevantTokens || maxTokens > MaxRelevantTokens {
		return nil, fmt.Errorf("%w: max_tokens %d, want %d..%d", ErrBadMaxTokens, r.MaxTokens, MinRelevantTokens, MaxRelevantTokens)
	}
	if err := checkRequestScope(r.Scope); err != nil {
		return nil, err
	}

	hits, _, err := s.searchSkills(ctx, SkillQuery{Query: r.Task, SearchType: "fts", Limit: topK, TaskType: r.TaskType, Scope: r.Scope})
	if err != nil {
		return nil, fmt.Errorf("index: relevant skills: %w", err)
	}
	names := make([]string, 0, len(hits.Skills))
	for _, h := range hits.Skills {
		names = append(names, h.Name)
	}
	res := &RelevantResult{Skills: []SkillContent{}, SearchType: hits.SearchType}
	if len(names) > 0 {
		// Read the content through the same scope filter as GetSkills:
		// a hit can only be injected if the caller could fetch it.
		var found map[string]idSkill
		var tr *redact.ToolRefs
		err := s.read(ctx, func(rd *readTx) (err error) {
			if found, err = s.skillsByName(ctx, rd, r.Scope, names); err != nil {
				return err
			}
			tr, err = s.toolRedactor(ctx, rd, r.VisibleTool, r.KnownTools)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("index: relevant skills: %w", err)
		}
		var ids []string
		for _, n := range names {
			if sk, ok := found[n]; ok && sk.Name == n {
				res.Skills = append(res.Skills, s.skillDoc(sk.SkillRecord, tr))
				ids = append(ids, sk.id)
			}
		}
		if len(res.Skills) > 0 {
			fit := fitSkills(res.Skills, maxTokens, contextHeader(r.ReadTool))
			res.FormattedContext = fit.Text
			res.RawTokensEst, res.FinalTokensEst = fit.RawTokens, fit.FinalTokens
			res.WasSummarized = fit.Compressed || fit.Truncated
		}
		if err := s.touchSkills(ctx, ids); err != nil {
			return nil, fmt.Errorf("index: relevant skills: recording use: %w", err)
		}
	}
	s.emit(EventSkillsRetrieved, map[string]any{
		"skill_count":      len(res.Skills),
		"top_k_used":       topK,
		"raw_tokens_est":   res.RawTokensEst,
		"final_tokens_est": res.FinalTokensEst,
		"was_summarized":   res.WasSummarized,
	})
	return res, nil
}
