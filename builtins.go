package skillhost

import (
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/tenancy"
)

// Skill is a skill written in Go: instructions, resources and scripts the
// skill tools serve beside the catalog's SKILL.md skills (see
// registry.Skill).
type Skill = registry.Skill

// builtins returns skillhost's own tools over catalog cat: tool_search and
// the skill discovery tools over the index (none without one), and the
// skill file tools over cat's skills and Config.GoSkills.
func (e *Engine) builtins(cat *packs.Catalog) ([]registry.Native, error) {
	redact := e.cfg.Index == nil || !e.cfg.Index.DisableRedaction
	skills, err := registry.NewSkillSet(registry.SkillSetOptions{
		Files:            cat.Skills,
		Visible:          e.skillVisible(cat),
		DisableRedaction: !redact,
	}, e.cfg.GoSkills...)
	if err != nil {
		return nil, err
	}
	return registry.Builtins(registry.BuiltinOptions{
		Index:            e.idx,
		Scope:            e.runScope,
		Skills:           skills,
		NoToolSearch:     !e.cfg.ToolSearch.On(),
		SkillTools:       e.cfg.Skills.Tools,
		NoSkillDiscovery: !e.cfg.Skills.On(),
		MaxSearchResults: e.cfg.ToolSearch.MaxResults,
	}), nil
}

// runScope is the index scope a run sees: its tenant and project, or the
// engine's scope for a run that names no tenant.
func (e *Engine) runScope(rc registry.RunContext) index.Scope {
	if rc.Tenant == "" {
		return e.cfg.Scope
	}
	return tenancy.ScopeOf(rc.Tenant, rc.Project)
}

// skillVisible returns the rule by which a run may use a file skill of
// cat: the scope its pack's skills are stored at (skillScope) must cover
// the run's, as the index's searches decide for skill_search; a hidden
// pack's skills are no run's.
func (e *Engine) skillVisible(cat *packs.Catalog) func(rc registry.RunContext, skill string) bool {
	goSkills := map[string]bool{}
	for _, sk := range e.cfg.GoSkills {
		goSkills[sk.Name] = true
	}
	return func(rc registry.RunContext, name string) bool {
		se, ok := cat.Skill(name)
		if !ok || goSkills[name] {
			return true // a Go skill (one replaces a file skill of its name): no scope, as in the index
		}
		sc, ok := e.skillScope(se.Skill.Pack)
		if !ok {
			return false
		}
		run := e.runScope(rc)
		switch sc.Mode {
		case packs.ScopeTenant:
			return sc.TenantID == run.TenantID
		case packs.ScopeProject:
			return sc.TenantID == run.TenantID && sc.ProjectID == run.ProjectID
		}
		return true
	}
}
