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

// SkillsConfig configures skill discovery, with Config.Index (redaction)
// and the operator config's [packs.<name>] sections (scope_mode,
// update_existing, pinned). The operator config's [skill_discovery]
// section fills the fields left zero.
type SkillsConfig struct {
	// Tools is the skill tool family a run's model is given:
	// registry.SkillToolsLoad ("", the default: list_skills, load_skill,
	// read_skill_resource and run_skill_script) or
	// registry.SkillToolsSearch (skill_search, skill_get and skill_list).
	// The other family is not registered. The operator config's
	// [skill_discovery] tools fills it when left "".
	Tools string
	// Disabled turns the model's skill discovery off: no tool named
	// skill_search, skill_get or skill_list is registered, and
	// Engine.Relevant and Engine.Directory return empty results. The
	// skills are still loaded and indexed, and Engine.SearchSkills,
	// GetSkills and ListSkills still answer the embedder.
	Disabled bool
	// MaxTokens is the token budget of Engine.Relevant when a request
	// sets none: index.MinRelevantTokens to index.MaxRelevantTokens; 0
	// means index.DefaultRelevantTokens.
	MaxTokens int
	// ScopeMode is where the skills of a pack whose [packs.<name>] section
	// sets no scope_mode are stored: packs.ScopeProject (the default),
	// packs.ScopeTenant or packs.ScopeGlobal, filled with Config.Scope's
	// IDs.
	ScopeMode string
	// Directory is what Engine.Directory uses for the fields a request
	// leaves zero.
	Directory index.DirectoryConfig
	// DisableDirectory makes Engine.Directory return an empty directory.
	DisableDirectory bool
}

// withOperatorSections returns cfg with the sections of the operator
// config op that the layers below own read into their types and filled in
// where cfg leaves them zero (confwalk.Fill): a field the embedder sets
// wins over the file, a switch set to false included. Each owner checks
// the result.
func withOperatorSections(cfg Config, op *packs.Config) (Config, error) {
	var ts registry.ToolSearchConfig
	var ex registry.ExamplesConfig
	if err := errors.Join(op.Section("tool_search", &ts), op.Section("tool_examples", &ex)); err != nil {
		return cfg, err
	}
	confwalk.Fill(&cfg.ToolSearch, ts)
	confwalk.Fill(&cfg.ToolExamples, ex)
	if err := cfg.ToolSearch.Validate(); err != nil {
		return cfg, fmt.Errorf("Config.ToolSearch: %w", err)
	}
	if err := cfg.ToolExamples.Validate(); err != nil {
		return cfg, fmt.Errorf("Config.ToolExamples: %w", err)
	}
	sd := op.SkillDiscovery
	off := func(b *bool) bool { return b != nil && !*b }

	idx := index.Options{}
	if cfg.Index != nil {
		idx = *cfg.Index
	}
	if len(idx.PreferredNamespaces) == 0 {
		idx.PreferredNamespaces = slices.Clone(cfg.ToolSearch.PreferredNamespaces)
	}
	idx.DisableRedaction = idx.DisableRedaction || off(sd.RedactPII)
	cfg.Index = &idx

	sk := &cfg.Skills
	if sk.Tools == "" {
		sk.Tools = sd.Tools
	}
	sk.Disabled = sk.Disabled || off(sd.Enabled)
	if sk.MaxTokens == 0 {
		sk.MaxTokens = sd.MaxTokens
	}
	dir := &sk.Directory
	if dir.MaxEntries == 0 {
		dir.MaxEntries = sd.Directory.MaxEntries
	}
	if len(dir.IncludeFields) == 0 {
		dir.IncludeFields = slices.Clone(sd.Directory.IncludeFields)
	}
	if dir.Strategy == "" {
		dir.Strategy = sd.Directory.Strategy
	}
	sk.DisableDirectory = sk.DisableDirectory || off(sd.Directory.Enabled)

	// Switched off: the model's skill discovery tools gone from the
	// registry. (Tool search switched off, the registry puts every tool in
	// view and keeps no tool_search.)
	if sk.Disabled {
		cfg.ToolPolicy.Deny = append(slices.Clip(cfg.ToolPolicy.Deny),
			registry.SkillSearchName, registry.SkillGetName, registry.SkillListName)
	}
	return cfg, checkDiscovery(cfg)
}

// checkDiscovery reports the discovery settings no request could use.
// The catalog settings are checked by the registry.
func checkDiscovery(cfg Config) error {
	if n := cfg.Render.MaxExamples; n < 0 {
		return fmt.Errorf("%w: Render.MaxExamples %d, want at least 1 (0: %d)", ErrBadConfig, n, registry.DefaultMaxExamples)
	}
	if rev := cfg.Render.MCPRevision; rev != "" {
		if _, err := time.Parse(time.DateOnly, rev); err != nil {
			return fmt.Errorf("%w: Render.MCPRevision %q, want an MCP revision such as %q", ErrBadConfig, rev, registry.MCPRevisionAnyOutput)
		}
	}
	if cfg.Skills.Tools != "" && registry.SkillToolNames(cfg.Skills.Tools) == nil {
		return fmt.Errorf("%w: Skills.Tools %q, want %q or %q", ErrBadConfig, cfg.Skills.Tools,
			registry.SkillToolsLoad, registry.SkillToolsSearch)
	}
	if n := cfg.Skills.MaxTokens; n != 0 && (n < index.MinRelevantTokens || n > index.MaxRelevantTokens) {
		return fmt.Errorf("%w: Skills.MaxTokens %d, want %d..%d (0: %d)", ErrBadConfig, n,
			index.MinRelevantTokens, index.MaxRelevantTokens, index.DefaultRelevantTokens)
	}
	switch cfg.Skills.ScopeMode {
	case "", packs.ScopeProject, packs.ScopeTenant, packs.ScopeGlobal:
	default:
		return fmt.Errorf("%w: Skills.ScopeMode %q, want %q, %q or %q", ErrBadConfig, cfg.Skills.ScopeMode,
			packs.ScopeProject, packs.ScopeTenant, packs.ScopeGlobal)
	}
	d := cfg.Skills.Directory
	if d.MaxEntries < 0 || d.MaxEntries > index.MaxDirectoryEntries {
		return fmt.Errorf("%w: Skills.Directory.MaxEntries %d, want 1..%d (0: %d)", index.ErrBadDirectoryConfig, d.MaxEntries,
			index.MaxDirectoryEntries, index.DefaultDirectoryEntries)
	}
	for _, f := range d.IncludeFields {
		if !slices.Contains(index.DirectoryFields, f) {
			return fmt.Errorf("%w: Skills.Directory.IncludeFields has %q, want some of %v", index.ErrBadDirectoryConfig, f, index.DirectoryFields)
		}
	}
	switch d.Strategy {
	case "", index.DirectoryPinnedThenRecent, index.DirectoryPinnedThenTop:
	default:
		return fmt.Errorf("%w: Skills.Directory.Strategy %q, want %q or %q", index.ErrBadDirectoryConfig, d.Strategy,
			index.DirectoryPinnedThenRecent, index.DirectoryPinnedThenTop)
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
	return e.cfg.Skills.Disabled
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
	return e.cfg.Skills.Disabled || e.cfg.Skills.DisableDirectory
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
