package index

import (
	"errors"
	"fmt"

	"github.com/skillhost/skillhost/internal/confwalk"
)

// Sentinel errors. Every error the package returns for bad input wraps one of
// these, so callers test with errors.Is; the message around it names the field,
// the value given and what was expected (a range, or the accepted values).
var (
	// ErrBadConfig is matched by every configuration error of every
	// layer: a bad [skill_discovery] section, a DiscoveryConfig or a
	// DirectoryConfig that cannot work. It is host.ErrBadConfig.
	ErrBadConfig = confwalk.ErrBadConfig

	// ErrEmptyQuery is returned when a search query is empty or only
	// whitespace.
	ErrEmptyQuery = errors.New("index: query is empty; pass the words, name or pattern to search for")

	// ErrBadSearchType is returned when a search type is not "fts", "regex"
	// or "exact" (the empty string means "fts").
	ErrBadSearchType = errors.New("index: search_type must be \"fts\", \"regex\" or \"exact\"")

	// ErrPatternTooLong is returned when a regex pattern is longer than
	// MaxPatternLength characters.
	ErrPatternTooLong = errors.New("index: regex pattern is too long")

	// ErrBadPattern is returned when a regex pattern does not compile.
	ErrBadPattern = errors.New("index: regex pattern is not valid")

	// ErrBadLimit is returned when a result limit is outside 1..MaxLimit
	// (0 means DefaultLimit).
	ErrBadLimit = errors.New("index: limit is out of range")

	// ErrBadScope is returned when a scope is malformed: an unknown mode, or
	// identifiers that do not fit the mode.
	ErrBadScope = errors.New("index: scope is not valid")

	// ErrBadTaskType is returned when a task type is not one of TaskTypes.
	ErrBadTaskType = errors.New("index: task_type is not valid")

	// ErrBadTool is returned by SyncTools and RebuildTools when a tool record
	// is malformed (no name, a duplicate name, an unknown loading mode or
	// side-effect class).
	ErrBadTool = errors.New("index: tool record is not valid")

	// ErrBadSkill is returned by LoadPack and PutSkill when a skill is
	// malformed (no name, no trigger or description, an unknown origin, a
	// duplicate name in one pack).
	ErrBadSkill = errors.New("index: skill is not valid")

	// ErrBadNames is returned by GetSkills when names is empty, has more
	// than MaxGetNames entries, or holds an empty or overlong name.
	ErrBadNames = errors.New("index: names must list 1 to 10 non-empty skill names")

	// ErrBadFormat is returned by GetSkills when format is not "raw" or
	// "injection" (the empty string means "injection").
	ErrBadFormat = errors.New("index: format must be \"raw\" or \"injection\"")

	// ErrBadMaxTokens is returned when a token budget is outside its range:
	// MinGetTokens..MaxGetTokens for GetSkills, MinRelevantTokens..
	// MaxRelevantTokens for Relevant (0 means the default).
	ErrBadMaxTokens = errors.New("index: max_tokens is out of range")

	// ErrBadPage is returned by ListSkills when page or page_size is out of
	// range.
	ErrBadPage = errors.New("index: page or page_size is out of range")

	// ErrBadOrigin is returned by ListSkills when an origin filter is not
	// "pack" or "learned".
	ErrBadOrigin = errors.New("index: origin must be \"pack\" or \"learned\"")

	// ErrBadDirectoryConfig is returned by Directory for an unknown
	// strategy or field, or max_entries out of range. It matches
	// ErrBadConfig, as every configuration error does.
	ErrBadDirectoryConfig = fmt.Errorf("index: directory config is not valid: %w", ErrBadConfig)

	// ErrSchemaTooNew is returned by Open when the database file was written
	// by a newer skillhost whose schema this version does not know.
	ErrSchemaTooNew = errors.New("index: database schema is newer than this skillhost")

	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("index: store is closed")
)
