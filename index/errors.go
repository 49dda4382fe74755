package index

import "errors"

// Sentinel errors. Every error the package returns for bad input wraps one of
// these, so callers test with errors.Is; the message around it names the field
// and what was expected.
var (
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

	// ErrSchemaTooNew is returned by Open when the database file was written
	// by a newer skillhost whose schema this version does not know.
	ErrSchemaTooNew = errors.New("index: database schema is newer than this skillhost")

	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("index: store is closed")
)
