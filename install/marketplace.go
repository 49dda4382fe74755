package install

import (
	"encoding/json"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// marketplaceFile lists a repository's plugins and the skill folders of
// each, as public skill repositories publish them for agent clients.
const marketplaceFile = ".claude-plugin/marketplace.json"

// maxMarketplaceBytes bounds the file read.
const maxMarketplaceBytes = 1 << 20

// marketplace is the part of marketplace.json an install reads.
type marketplace struct {
	Plugins []struct {
		Name   string   `json:"name"`
		Source any      `json:"source"` // a path, or an object for a remote source
		Skills []string `json:"skills"`
	} `json:"plugins"`
}

// plugins reads the tree's marketplace.json, if it has one, and returns
// the names of the units of each plugin: a request may name a plugin to
// install its skills. A plugin whose source is not a path in the tree, or
// whose skill paths leave it, names nothing; a file that cannot be read
// is ignored (the skills are found by the search all the same).
func plugins(tree string, units []unit) map[string][]string {
	b, err := readBounded(filepath.Join(tree, filepath.FromSlash(marketplaceFile)), maxMarketplaceBytes)
	if err != nil {
		return nil
	}
	var m marketplace
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	out := map[string][]string{}
	for _, p := range m.Plugins {
		src, ok := p.Source.(string)
		if !ok || p.Name == "" {
			continue
		}
		for _, s := range p.Skills {
			rel := path.Clean(path.Join(src, s))
			if rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
				continue
			}
			for _, u := range units {
				if u.rel == rel && !slices.Contains(out[p.Name], u.name) {
					out[p.Name] = append(out[p.Name], u.name)
				}
			}
		}
	}
	return out
}

// expandPlugins replaces each requested name that is a plugin's, and
// not a skill's or pack's, with the names of the plugin's units.
func expandPlugins(req []string, names []string, byPlugin map[string][]string) []string {
	var out []string
	for _, n := range req {
		if us, ok := byPlugin[n]; ok && !slices.Contains(names, n) {
			out = append(out, us...)
			continue
		}
		out = append(out, n)
	}
	return out
}
