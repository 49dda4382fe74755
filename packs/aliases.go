package packs

import (
	"path"
	"strings"
)

// A playbook skill has a canonical name (pack.<pack>.<slug>, or the name
// it gives itself) and two aliases a person is likely to use for it: its
// file's name without .skill.<ext>, when the file holds no other skill,
// and its title. skillhost show, list and the skill tools accept both.

// SkillAliases returns the aliases of one playbook skill of entries (the
// catalog's skills, which tell whether its file holds others): its file's
// name and its title, each left out when it is the canonical name.
func SkillAliases(se *SkillEntry, entries []*SkillEntry) []string {
	if se == nil || se.Skill == nil || se.Skill.Kind != KindPlaybook {
		return nil
	}
	s := se.Skill
	var out []string
	inFile := 0
	for _, e := range entries {
		if e != nil && e.Path == se.Path {
			inFile++
		}
	}
	if stem := PlaybookStem(se.Path); stem != "" && stem != s.Name && inFile == 1 {
		out = append(out, stem)
	}
	if t := strings.Join(strings.Fields(s.Title), " "); t != "" && t != s.Name {
		out = append(out, t)
	}
	return out
}

// PlaybookStem is the name of a playbook file without its folder and
// .skill.<ext>; "" for any other file.
func PlaybookStem(file string) string {
	base := path.Base(strings.ReplaceAll(file, "\\", "/"))
	for _, ext := range []string{".skill.md", ".skill.yaml", ".skill.yml", ".skill.json", ".skill.jsonl"} {
		if strings.HasSuffix(base, ext) {
			return strings.TrimSuffix(base, ext)
		}
	}
	return ""
}

// FoldAlias is the form aliases are compared in: case and runs of spaces
// do not count.
func FoldAlias(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// ResolveSkillAlias returns the canonical names of the skills of entries
// that name is an alias of (compared by FoldAlias): none when it is no
// alias or is itself a skill's canonical name, more than one when
// playbooks share it.
func ResolveSkillAlias(name string, entries []*SkillEntry) []string {
	for _, e := range entries {
		if e != nil && e.Skill != nil && e.Skill.Name == name {
			return nil
		}
	}
	want := FoldAlias(name)
	var out []string
	for _, e := range entries {
		if e == nil || e.Skill == nil {
			continue
		}
		for _, a := range SkillAliases(e, entries) {
			if FoldAlias(a) == want {
				out = append(out, e.Skill.Name)
				break
			}
		}
	}
	return out
}
