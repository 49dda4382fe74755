package packs_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// The bounds and values the config reader accepts are exactly those the
// index and the registry accept (the registry's activation scopes are checked by the
// engine's tests): a value the file lets through never fails
// later, and every value they take can be written in the file.
func TestDiscoveryConfigMatchesIndex(t *testing.T) {
	ok := func(toml string) {
		t.Helper()
		if _, err := packs.ParseConfig(packs.ConfigFile, []byte(toml)); err != nil {
			t.Errorf("%s: %v", strings.TrimSpace(toml), err)
		}
	}
	bad := func(toml string) {
		t.Helper()
		if _, err := packs.ParseConfig(packs.ConfigFile, []byte(toml)); err == nil {
			t.Errorf("%s: no error", strings.TrimSpace(toml))
		}
	}
	bounds := []struct {
		section, key string
		lo, hi       int
	}{
		{"tool_search", "max_search_results", 1, index.MaxLimit},
		{"skill_discovery", "max_tokens", index.MinRelevantTokens, index.MaxRelevantTokens},
		{"skill_discovery.directory", "max_entries", 1, index.MaxDirectoryEntries},
	}
	for _, b := range bounds {
		ok(fmt.Sprintf("[%s]\n%s = %d\n", b.section, b.key, b.lo))
		ok(fmt.Sprintf("[%s]\n%s = %d\n", b.section, b.key, b.hi))
		bad(fmt.Sprintf("[%s]\n%s = %d\n", b.section, b.key, b.lo-1))
		bad(fmt.Sprintf("[%s]\n%s = %d\n", b.section, b.key, b.hi+1))
	}
	for _, f := range index.DirectoryFields {
		ok(fmt.Sprintf("[skill_discovery.directory]\ninclude_fields = [%q]\n", f))
	}
	for _, s := range []string{index.DirectoryPinnedThenRecent, index.DirectoryPinnedThenTop} {
		ok(fmt.Sprintf("[skill_discovery.directory]\nselection_strategy = %q\n", s))
	}
	for _, s := range []string{packs.ScopeProject, packs.ScopeTenant, packs.ScopeGlobal} {
		ok(fmt.Sprintf("[skill_discovery]\nscope_mode = %q\n", s))
	}
	for _, f := range []string{registry.SkillToolsLoad, registry.SkillToolsSearch} {
		c, err := packs.ParseConfig(packs.ConfigFile, []byte(fmt.Sprintf("[skill_discovery]\ntools = %q\n", f)))
		var sk registry.SkillsConfig
		if err == nil {
			err = c.Section("skill_discovery", &sk)
		}
		if err != nil || sk.Tools != f {
			t.Errorf("tools = %q: %+v, %v", f, c, err)
		}
	}
	bad("[skill_discovery]\ntools = \"both\"\n")
	bad("[skill_discovery]\ntools = \"\"\n")
}
