package index

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/internal/confwalk"
	"github.com/skillhost/skillhost/packs"
)

// DiscoveryConfig holds the keys of the [skill_discovery] section of
// skillhost.toml that the index reads: the budget of pre-flight
// retrieval, redaction, the scope of pack skills and the directory. The
// registry's SkillsConfig, the section's owner, embeds it beside the
// switches of the model's skill tools. A field left zero (nil for a
// switch) is not set, so an embedder's value and the file's can be told
// apart: the embedder's wins where it sets one, false included.
type DiscoveryConfig struct {
	// MaxTokens is the token budget of pre-flight retrieval when a
	// request sets none: MinRelevantTokens to MaxRelevantTokens; 0 means
	// DefaultRelevantTokens.
	MaxTokens int `toml:"max_tokens"`
	// RedactPII false hands skill texts to the model unredacted
	// (Options.DisableRedaction). nil means true.
	RedactPII *bool `toml:"redact_pii"`
	// ScopeMode is where the skills of a pack whose [packs.<name>] section
	// sets no scope_mode are stored: packs.ScopeProject (the default),
	// packs.ScopeTenant or packs.ScopeGlobal.
	ScopeMode string `toml:"scope_mode"`
	// Directory is the [skill_discovery.directory] section: what
	// Directory uses for the fields a request leaves zero.
	Directory DirectorySection `toml:"directory"`
}

// DirectorySection is the [skill_discovery.directory] section: the
// bounded list of skill names a prompt may show.
type DirectorySection struct {
	// Enabled false leaves the directory empty. nil means on.
	Enabled *bool `toml:"enabled"`
	DirectoryConfig
}

// Redact reports whether skill texts are redacted: RedactPII is not set
// to false.
func (c DiscoveryConfig) Redact() bool { return c.RedactPII == nil || *c.RedactPII }

// On reports whether the directory shows skills: Enabled is not set to
// false.
func (d DirectorySection) On() bool { return d.Enabled == nil || *d.Enabled }

// Why the [skill_discovery] keys skillhost does not offer are fixed or
// refused.
const (
	whySummary  = "skillhost has no summarising model; retrieval fits skills into max_tokens by dropping and shortening fields, then cutting"
	whyFallback = "a full-text search without SQLite FTS5 always runs as a regex search over the same fields and reports search_type \"regex\" (skillhost's SQLite has FTS5)"
	whyCacheDir = "is not a setting: tools and skills share one index, <state_dir>/index.db; set state_dir at the top of the file"
	whyPacks    = "is not a setting: packs are found in the folders of [sources] and each is configured in its [packs.<name>] section"
)

func init() {
	// The bounds and values of the sections, for the file and Go alike.
	confwalk.Register[DiscoveryConfig](confwalk.Rules{
		Bounds: map[string]confwalk.Bound{"max_tokens": {Lo: MinRelevantTokens, Hi: MaxRelevantTokens}},
		Enums:  map[string][]string{"scope_mode": {packs.ScopeProject, packs.ScopeTenant, packs.ScopeGlobal}},
		Fixed: []confwalk.FixedKey{
			{Key: "summarize", Want: false, Why: whySummary},
			{Key: "fts_fallback_to_regex", Want: true, Why: whyFallback},
		},
		Refused: map[string]string{"cache_dir": whyCacheDir, "skill_packs": whyPacks},
	})
	confwalk.Register[DirectoryConfig](confwalk.Rules{
		Bounds: map[string]confwalk.Bound{"max_entries": {Lo: 1, Hi: MaxDirectoryEntries}},
		Enums:  map[string][]string{"selection_strategy": {DirectoryPinnedThenRecent, DirectoryPinnedThenTop}},
	})
}

// Validate reports each setting no request could use, every error
// matching ErrBadConfig; those of the directory match
// ErrBadDirectoryConfig too.
func (c DiscoveryConfig) Validate() error {
	var errs []error
	for _, err := range confwalk.Check(c) {
		var ce *confwalk.Error
		if errors.As(err, &ce) && strings.HasPrefix(ce.Key, "directory.") {
			err = fmt.Errorf("%w: %w", ErrBadDirectoryConfig, err)
		}
		errs = append(errs, err)
	}
	fields := c.Directory.IncludeFields
	if fields != nil && len(fields) == 0 {
		errs = append(errs, fmt.Errorf("%w: %w", ErrBadDirectoryConfig, confwalk.Invalid("directory.include_fields",
			"must list at least one of %s; [\"name\"] shows the names alone", strings.Join(DirectoryFields, ", "))))
	}
	for i, f := range fields {
		if !slices.Contains(DirectoryFields, f) {
			errs = append(errs, fmt.Errorf("%w: %w", ErrBadDirectoryConfig, confwalk.Invalid(
				confwalk.Key{"directory", "include_fields"}.Index(i).String(),
				"%q must be one of %s", f, strings.Join(DirectoryFields, ", "))))
		}
	}
	return errors.Join(errs...)
}
