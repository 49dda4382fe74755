package packs

import (
	"slices"
	"testing"
)

func TestSkillAliases(t *testing.T) {
	entry := func(name, title, file string, kind SkillKind) *SkillEntry {
		return &SkillEntry{Skill: &SkillSpec{Name: name, Title: title, Kind: kind}, Origin: Origin{Source: SourceWorkspace, Path: file}}
	}
	rotate := entry("pack.ops.rotate_cert", "Rotate a  TLS certificate", "skills/ops/rotate-cert.skill.yaml", KindPlaybook)
	faq1 := entry("pack.ops.faq.vpn", "VPN", "skills/ops/faq.skill.jsonl", KindPlaybook)
	faq2 := entry("pack.ops.faq.rota", "", "skills/ops/faq.skill.jsonl", KindPlaybook)
	agent := entry("pdf-tools", "", "skills/pdf-tools/SKILL.md", KindAgent)
	same := entry("restart", "", "skills/restart.skill.md", KindPlaybook)
	all := []*SkillEntry{rotate, faq1, faq2, agent, same}

	for _, tc := range []struct {
		se   *SkillEntry
		want []string
	}{
		{rotate, []string{"rotate-cert", "Rotate a TLS certificate"}},
		{faq1, []string{"VPN"}}, // the file holds two skills: no file alias
		{faq2, nil},
		{agent, nil},
		{same, nil}, // the file's name is its canonical name
	} {
		if got := SkillAliases(tc.se, all); !slices.Equal(got, tc.want) {
			t.Errorf("SkillAliases(%s) = %q, want %q", tc.se.Skill.Name, got, tc.want)
		}
	}
	for name, want := range map[string][]string{
		"rotate-cert":                {"pack.ops.rotate_cert"},
		"rotate a tls   CERTIFICATE": {"pack.ops.rotate_cert"},
		"vpn":                        {"pack.ops.faq.vpn"},
		"faq":                        nil,
		"pack.ops.rotate_cert":       nil, // a canonical name is no alias
		"nope":                       nil,
	} {
		if got := ResolveSkillAlias(name, all); !slices.Equal(got, want) {
			t.Errorf("ResolveSkillAlias(%q) = %q, want %q", name, got, want)
		}
	}
	if got := PlaybookStem(`C:\skills\a.skill.json`); got != "a" {
		t.Errorf("PlaybookStem = %q", got)
	}
}
