package index

import "github.com/skillhost/skillhost/index/internal/redact"

// ToolRefRewriter rewrites references to tools a run may not see in text
// that does not come from the store (a skill registered in Go, a skill
// file read from disk) by the rules every skill answer of the store
// follows (see SkillGetRequest.VisibleTool): a code span naming such a
// tool is replaced whole, and so is a bare identifier holding one, by
// guidance that names no tool. It is safe for concurrent use.
type ToolRefRewriter struct{ tr *redact.ToolRefs }

// NewToolRefRewriter returns a rewriter for the tools of known that visible
// rejects. With visible nil, or no rejected tool, it rewrites nothing.
func NewToolRefRewriter(visible func(name string) bool, known []string) *ToolRefRewriter {
	return &ToolRefRewriter{tr: redact.NewToolRefs(visible, known)}
}

// Rewrite returns text with every reference to a rejected tool replaced.
// A nil rewriter returns text as it is.
func (r *ToolRefRewriter) Rewrite(text string) string {
	if r == nil {
		return text
	}
	return r.tr.Rewrite(text)
}
