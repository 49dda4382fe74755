package skillhost

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/internal/confwalk"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// ErrBadConfig is returned by Open for settings that cannot work: a value
// out of range, an unknown mode, session activation without a session id
// on a run.
var ErrBadConfig = registry.ErrBadConfig

// RenderOptions say how the renderings of a run's tools (registry.OpenAITools,
// registry.AnthropicTools, registry.MCPTools and the others) show each
// tool's examples and which features of each API they use; see
// registry.RenderOptions.
type RenderOptions = registry.RenderOptions

// withOperatorSections returns cfg with the sections of the operator
// config op that the layers below own read into their types and filled in
// where cfg leaves them zero (confwalk.Fill): a field the embedder sets
// wins over the file, a switch set to false included. Each owner checks
// the result.
func withOperatorSections(cfg Config, op *packs.Config) (Config, error) {
	var ts registry.ToolSearchConfig
	var ex registry.ExamplesConfig
	var sk registry.SkillsConfig
	if err := errors.Join(op.Section("tool_search", &ts), op.Section("tool_examples", &ex),
		op.Section("skill_discovery", &sk)); err != nil {
		return cfg, err
	}
	confwalk.Fill(&cfg.ToolSearch, ts)
	confwalk.Fill(&cfg.ToolExamples, ex)
	confwalk.Fill(&cfg.Skills, sk)
	if err := errors.Join(prefixed("Config.ToolSearch", cfg.ToolSearch.Validate()),
		prefixed("Config.ToolExamples", cfg.ToolExamples.Validate()),
		prefixed("Config.Skills", cfg.Skills.Validate()), checkRender(cfg.Render)); err != nil {
		return cfg, err
	}
	idx := index.Options{}
	if cfg.Index != nil {
		idx = *cfg.Index
	}
	if len(idx.PreferredNamespaces) == 0 {
		idx.PreferredNamespaces = slices.Clone(cfg.ToolSearch.PreferredNamespaces)
	}
	idx.DisableRedaction = idx.DisableRedaction || !cfg.Skills.Redact()
	cfg.Index = &idx
	// Switched off: the model's skill discovery tools gone from the
	// registry. (Tool search switched off, the registry puts every tool in
	// view and keeps no tool_search.)
	if !cfg.Skills.On() {
		cfg.ToolPolicy.Deny = append(slices.Clip(cfg.ToolPolicy.Deny),
			registry.SkillSearchName, registry.SkillGetName, registry.SkillListName)
	}
	return cfg, nil
}

func prefixed(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// checkRender reports the rendering settings no rendering could use.
func checkRender(o RenderOptions) error {
	if n := o.MaxExamples; n < 0 {
		return fmt.Errorf("%w: Render.MaxExamples %d, want at least 1 (0: %d)", ErrBadConfig, n, registry.DefaultMaxExamples)
	}
	if rev := o.MCPRevision; rev != "" {
		if _, err := time.Parse(time.DateOnly, rev); err != nil {
			return fmt.Errorf("%w: Render.MCPRevision %q, want an MCP revision such as %q", ErrBadConfig, rev, registry.MCPRevisionAnyOutput)
		}
	}
	return nil
}

// RenderOptions returns how the renderings of a run's tools should show
// their examples and which features of each API they use: Config.Render
// with Config.ToolExamples (the embedder's, filled from the operator
// config's [tool_examples]) applied. Pass it to the registry's renderings:
//
//	run, _ := e.NewRun(rc, nil)
//	tools := registry.OpenAITools(run.Tools(), e.RenderOptions())
func (e *Engine) RenderOptions() RenderOptions { return e.cfg.ToolExamples.Apply(e.cfg.Render) }

// toolQuery holds q to ToolSearch.MaxResults. A limit above index.MaxLimit
// is left for the index to refuse.
func (e *Engine) toolQuery(q index.ToolQuery) index.ToolQuery {
	max := e.cfg.ToolSearch.MaxResults
	switch {
	case max == 0:
	case q.Limit == 0:
		q.Limit = min(index.DefaultLimit, max)
	case q.Limit > max && q.Limit <= index.MaxLimit:
		q.Limit = max
	}
	return q
}

// relevantRequest fills r's token budget from Config.Skills and reports
// whether skill discovery is off, when nothing is retrieved.
func (e *Engine) relevantRequest(r *index.RelevantRequest) (off bool) {
	if r.MaxTokens == 0 {
		r.MaxTokens = e.cfg.Skills.MaxTokens
	}
	return !e.cfg.Skills.On()
}

// noSkills is what Relevant answers when skill discovery is off.
func noSkills() *index.RelevantResult {
	return &index.RelevantResult{Skills: []index.SkillContent{}}
}

// directoryConfig fills the fields d leaves zero from
// Config.Skills.Directory and reports whether the directory is off.
func (e *Engine) directoryConfig(d *index.DirectoryConfig) (off bool) {
	def := e.cfg.Skills.Directory
	if d.MaxEntries == 0 {
		d.MaxEntries = def.MaxEntries
	}
	if len(d.IncludeFields) == 0 {
		d.IncludeFields = def.IncludeFields
	}
	if d.Strategy == "" {
		d.Strategy = def.Strategy
	}
	if d.VisibleTool == nil {
		d.VisibleTool = def.VisibleTool
	}
	if len(d.KnownTools) == 0 {
		d.KnownTools = def.KnownTools
	}
	return !e.cfg.Skills.DirectoryOn()
}

// noDirectory is what Directory answers when the directory is off: no
// entries, rendered as "".
func noDirectory() *index.Directory {
	return &index.Directory{Entries: []index.DirectoryEntry{}}
}

// packScopeMode is the scope mode a pack's skills are stored at: its
// section's, else Config.Skills.ScopeMode, else the operator config's
// [skill_discovery] one (already in g), else project.
func (e *Engine) packScopeMode(g packs.PackGrant) string {
	if !g.ScopeModeSet() && e.cfg.Skills.ScopeMode != "" {
		return e.cfg.Skills.ScopeMode
	}
	return g.ScopeMode
}
