package registry

import (
	"errors"

	"github.com/gobwas/glob"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/internal/confwalk"
	"github.com/skillhost/skillhost/packs"
)

// ToolSearchConfig is the [tool_search] section of skillhost.toml and
// Options.ToolSearch: how a run's tools are found and activated. The zero
// value is the default: tool search on, deferred activation on first use
// scoped to the run. A field left zero (nil for a switch) is not set, so
// an embedder's value and the file's can be told apart: the embedder's
// wins where it sets one, false included.
type ToolSearchConfig struct {
	// Enabled false puts every tool in every run's catalog from the start
	// and removes the tool_search tool. nil means on.
	Enabled *bool `toml:"enabled"`
	// DefaultLoading is the loading mode of native and built-in tools that
	// set none (packs.LoadingAlways, packs.LoadingDeferred; "" is always
	// for built-ins, else deferred). Pack tools take their pack's
	// default_loading.
	DefaultLoading string `toml:"default_loading_mode"`
	// AlwaysLoaded are name globs of tools visible from the start of every
	// run whatever their loading mode ("tool_search", "fs_*").
	AlwaysLoaded []string `toml:"always_loaded_patterns"`
	// ActivationScope is ScopeRun (the default) or ScopeSession. Session
	// activation needs RunContext.Session on every run.
	ActivationScope string `toml:"activation_scope"`
	// PreferredNamespaces order tools of equal score by namespace: pack
	// names, "" for native and built-in tools. The index ranks with them
	// (index.Options.PreferredNamespaces).
	PreferredNamespaces []string `toml:"preferred_namespaces"`
	// RebuildIndex true rewrites the tool index whenever an engine opens,
	// instead of updating the records whose hash changed. nil means false.
	RebuildIndex *bool `toml:"rebuild_cache_on_init"`
	// MaxResults caps the tools one search returns, 1 to index.MaxLimit:
	// a query asking for more gets MaxResults, one asking for none the
	// smaller of index.DefaultLimit and MaxResults. 0 means no cap below
	// index.MaxLimit.
	MaxResults int `toml:"max_search_results"`
	// DisableActivation turns activation on first use off: deferred tools
	// are then reachable only when the embedder activates them
	// (Run.Activate) — the fail-closed setting for a host that cannot
	// serialise the calls of a session. It has no key in the file.
	DisableActivation bool
}

// On reports whether tool search is on: Enabled is not set to false.
func (c ToolSearchConfig) On() bool { return c.Enabled == nil || *c.Enabled }

// Rebuild reports whether RebuildIndex is set to true.
func (c ToolSearchConfig) Rebuild() bool { return c.RebuildIndex != nil && *c.RebuildIndex }

// Why the [tool_search] keys skillhost does not offer are fixed or
// refused.
const (
	whyFallback = "a full-text search without SQLite FTS5 always runs as a regex search over the same fields and reports search_type \"regex\" (skillhost's SQLite has FTS5)"
	whyIncr     = "the tool index is always updated record by record; to rewrite it whenever an engine opens, set rebuild_cache_on_init = true"
	whyCacheDir = "is not a setting: tools and skills share one index, <state_dir>/index.db; set state_dir at the top of the file"
)

func init() {
	confwalk.Register[ToolSearchConfig](confwalk.Rules{
		Section: "tool_search",
		// The bounds and values of the section, for the file and Go alike.
		Bounds: map[string]confwalk.Bound{"max_search_results": {Lo: 1, Hi: index.MaxLimit}},
		Enums: map[string][]string{
			"default_loading_mode": {packs.LoadingAlways, packs.LoadingDeferred},
			"activation_scope":     {ScopeRun, ScopeSession},
		},
		Fixed: []confwalk.FixedKey{
			{Key: "fts_fallback_to_regex", Want: true, Why: whyFallback},
			{Key: "enable_incremental_index", Want: true, Why: whyIncr},
		},
		Refused: map[string]string{"cache_dir": whyCacheDir},
	})
	confwalk.Register[SkillsConfig](confwalk.Rules{
		Section: "skill_discovery",
		Enums:   map[string][]string{"tools": {SkillToolsLoad, SkillToolsSearch}},
	})
	confwalk.Register[ExamplesConfig](confwalk.Rules{
		Section: "tool_examples",
		Bounds:  map[string]confwalk.Bound{"max_examples_per_tool": {Lo: 1, Hi: MaxExamples}},
	})
}

// Validate reports each setting no run could use, every error matching
// ErrBadConfig.
func (c ToolSearchConfig) Validate() error {
	errs := confwalk.Check(c)
	for i, p := range c.AlwaysLoaded {
		if _, err := glob.Compile(p); err != nil || p == "" {
			errs = append(errs, confwalk.Invalid(indexKey("always_loaded_patterns", i), "%q must be a tool name or a glob such as \"fs_*\"", p))
		}
	}
	for i, n := range c.PreferredNamespaces {
		if n != "" && !packs.ValidPackName(n) {
			errs = append(errs, confwalk.Invalid(indexKey("preferred_namespaces", i), "%q must be a pack name, or \"\" for native and built-in tools", n))
		}
	}
	return errors.Join(errs...)
}

// MaxExamples is the most examples a rendering shows per tool.
const MaxExamples = 20

// ExamplesConfig is the [tool_examples] section of skillhost.toml: how
// the renderings of a run's tools show their examples. A field left zero
// (nil for a switch) is not set; Apply puts the ones set on a
// RenderOptions.
type ExamplesConfig struct {
	// Enabled adds each tool's examples to its description in the
	// renderings (RenderOptions.Examples). nil means off.
	Enabled *bool `toml:"enabled"`
	// MaxPerTool caps the examples shown per tool, 1 to MaxExamples
	// (RenderOptions.MaxExamples); 0 means DefaultMaxExamples.
	MaxPerTool int `toml:"max_examples_per_tool"`
	// IncludeDescriptions false shows each example's arguments without its
	// description (RenderOptions.OmitExampleDescriptions). nil means true.
	IncludeDescriptions *bool `toml:"include_descriptions"`
}

// Validate reports each setting no rendering could use, every error
// matching ErrBadConfig.
func (c ExamplesConfig) Validate() error { return errors.Join(confwalk.Check(c)...) }

// Apply returns o with the example settings c sets.
func (c ExamplesConfig) Apply(o RenderOptions) RenderOptions {
	if c.Enabled != nil {
		o.Examples = *c.Enabled
	}
	if c.MaxPerTool != 0 {
		o.MaxExamples = c.MaxPerTool
	}
	if c.IncludeDescriptions != nil {
		o.OmitExampleDescriptions = !*c.IncludeDescriptions
	}
	return o
}

func indexKey(key string, i int) string { return confwalk.Key{key}.Index(i).String() }

// SkillsConfig is the [skill_discovery] section of skillhost.toml:
// engine-wide skill settings, kept out of [skills], whose every table
// names a skill. The registry reads which skill tools a run's model is
// given; the settings the index reads are its embedded DiscoveryConfig.
// A field left zero (nil for a switch) is not set, so an embedder's value
// and the file's can be told apart: the embedder's wins where it sets
// one, false included.
type SkillsConfig struct {
	// Tools is the skill tool family a run's model is given:
	// SkillToolsLoad ("", the default: list_skills, load_skill,
	// read_skill_resource and run_skill_script) or SkillToolsSearch
	// (skill_search, skill_get and skill_list). The other family is not
	// registered.
	Tools string `toml:"tools"`
	// Enabled false turns the model's skill discovery off: no tool named
	// skill_search, skill_get or skill_list is registered, and pre-flight
	// retrieval and the directory are empty. The skills are still loaded
	// and indexed and answer the embedder. nil means on.
	Enabled *bool `toml:"enabled"`
	index.DiscoveryConfig
}

// On reports whether the model's skill discovery is on: Enabled is not
// set to false.
func (c SkillsConfig) On() bool { return c.Enabled == nil || *c.Enabled }

// DirectoryOn reports whether the skill directory shows skills: skill
// discovery and the directory are both on.
func (c SkillsConfig) DirectoryOn() bool { return c.On() && c.Directory.On() }

// Validate reports each setting no request could use, every error
// matching ErrBadConfig.
func (c SkillsConfig) Validate() error {
	var errs []error
	if c.Tools != "" && SkillToolNames(c.Tools) == nil {
		errs = append(errs, confwalk.Invalid("tools", "%q must be one of %s, %s", c.Tools, SkillToolsLoad, SkillToolsSearch))
	}
	return errors.Join(append(errs, c.DiscoveryConfig.Validate())...)
}
