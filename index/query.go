package index

import (
	"context"
	"errors"
)

// Search types.
const (
	SearchFTS   = "fts"
	SearchRegex = "regex"
	SearchExact = "exact"
)

// Result limits.
const (
	DefaultLimit = 8
	MaxLimit     = 20
	// MaxPatternLength is the longest regex pattern accepted, in characters.
	MaxPatternLength = 200
)

// ToolQuery is a tool search request.
type ToolQuery struct {
	Query      string
	SearchType string // "fts" (default), "regex" or "exact"
	Limit      int    // 1..MaxLimit; 0 means DefaultLimit
	// IncludeAlwaysLoaded also returns tools with loading mode "always",
	// which are visible anyway and left out by default.
	IncludeAlwaysLoaded bool
	// Visible reports whether the caller may see or activate a tool; tools
	// it refuses are never returned and never take a result slot. Nil allows
	// every indexed tool.
	Visible func(name string) bool
}

// ToolHit is one search result.
type ToolHit struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
	MatchType   string  `json:"match_type"`
	LoadingMode string  `json:"loading_mode"`
}

// ToolSearchResult is the answer to a tool search. SearchType is the search
// type actually used, "regex" when "fts" was asked for and FTS5 is not in use.
type ToolSearchResult struct {
	Tools      []ToolHit `json:"tools"`
	Query      string    `json:"query"`
	SearchType string    `json:"search_type"`
}

// SearchTools finds indexed tools matching q, best first, with scores in
// [0, 1] comparable within this result only.
func (s *Store) SearchTools(ctx context.Context, q ToolQuery) (*ToolSearchResult, error) {
	return nil, errors.New("index: SearchTools: not implemented yet")
}

// toolSnapshot is an in-memory copy of the searchable tool fields used by
// regex searches, valid for one store generation.
type toolSnapshot struct{}

// skillSnapshot is the same for skills.
type skillSnapshot struct{}
