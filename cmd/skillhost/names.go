package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/packs"
)

// A playbook skill has a canonical name (pack.<pack>.<slug>, or the name
// it gives itself) and two aliases a person is likely to type: its file's
// name without .skill.<ext> (when the file holds only this skill) and its
// display name, the title. show, call's suggestions and list know both.

// skillAliases returns the aliases of the playbook skills of e: by alias,
// the canonical names it may stand for.
func skillAliases(e *skillhost.Engine) map[string][]string {
	entries := e.Skills()
	perFile := map[string]int{}
	for _, se := range entries {
		if se.Skill.Kind == packs.KindPlaybook {
			perFile[se.Path]++
		}
	}
	out := map[string][]string{}
	add := func(alias, name string) {
		if alias == "" || alias == name {
			return
		}
		for _, n := range out[alias] {
			if n == name {
				return
			}
		}
		out[alias] = append(out[alias], name)
	}
	for _, se := range entries {
		for _, a := range aliasesOf(se, perFile[se.Path]) {
			add(foldAlias(a), se.Skill.Name)
		}
	}
	return out
}

// aliasesOf lists a playbook skill's aliases: its file's name, when the
// file holds no other skill, and its title.
func aliasesOf(se *packs.SkillEntry, skillsInFile int) []string {
	s := se.Skill
	if s.Kind != packs.KindPlaybook {
		return nil
	}
	var out []string
	if skillsInFile == 1 {
		if stem := playbookStem(filepath.Base(se.Path)); stem != "" && stem != s.Name {
			out = append(out, stem)
		}
	}
	if t := strings.Join(strings.Fields(s.Title), " "); t != "" && t != s.Name {
		out = append(out, t)
	}
	return out
}

// playbookStem is a playbook file's name without .skill.<ext>.
func playbookStem(base string) string {
	for _, ext := range []string{".skill.md", ".skill.yaml", ".skill.yml", ".skill.json", ".skill.jsonl"} {
		if strings.HasSuffix(base, ext) {
			return strings.TrimSuffix(base, ext)
		}
	}
	return ""
}

// foldAlias is the form aliases are matched in: case and runs of spaces
// do not matter.
func foldAlias(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// findSkill returns the skill called name, by its canonical name or one
// of its aliases; alias is the alias it was found by ("" for the name).
func findSkill(e *skillhost.Engine, name string) (se *packs.SkillEntry, alias string, err error) {
	if se, err := e.Skill(name); err == nil {
		return se, "", nil
	}
	names := skillAliases(e)[foldAlias(name)]
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

// knownNames lists every tool and skill name and alias, for suggestions.
func knownNames(e *skillhost.Engine, tools, skills bool) []string {
	var out []string
	if tools {
		for _, t := range e.Tools() {
			out = append(out, t.Name)
		}
	}
	if skills {
		perFile := map[string]int{}
		for _, se := range e.Skills() {
			if se.Skill.Kind == packs.KindPlaybook {
				perFile[se.Path]++
			}
		}
		for _, se := range e.Skills() {
			out = append(out, se.Skill.Name)
			out = append(out, aliasesOf(se, perFile[se.Path])...)
		}
	}
	return out
}
