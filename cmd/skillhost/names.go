package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/packs"
)

// findSkill returns the skill called name, by its canonical name or one
// of its aliases (a playbook's file name or title, packs.SkillAliases);
// alias is the alias it was found by ("" for the name).
func findSkill(e *skillhost.Engine, name string) (se *packs.SkillEntry, alias string, err error) {
	if se, err := e.Skill(name); err == nil {
		return se, "", nil
	}
	names := packs.ResolveSkillAlias(name, e.Skills())
	switch len(names) {
	case 0:
		return nil, "", fmt.Errorf("no skill is called %q", name)
	case 1:
		se, err := e.Skill(names[0])
		return se, name, err
	}
	sort.Strings(names)
	return nil, "", usageErr("%q names %d skills: %s; give the one you mean", name, len(names), strings.Join(names, ", "))
}

// knownNames lists every tool name, and every skill name and alias, for
// suggestions.
func knownNames(e *skillhost.Engine, tools, skills bool) []string {
	var out []string
	if tools {
		for _, t := range e.Tools() {
			out = append(out, t.Name)
		}
	}
	if skills {
		all := e.Skills()
		for _, se := range all {
			out = append(out, se.Skill.Name)
			out = append(out, packs.SkillAliases(se, all)...)
		}
	}
	return out
}
