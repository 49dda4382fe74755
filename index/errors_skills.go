package index

import "errors"

// Sentinel errors of skill retrieval (GetSkills, ListSkills, Relevant,
// Directory). Like those in errors.go, each is wrapped with a message that
// names the field and the value given.
var (
	// ErrBadNames is returned by GetSkills when names is empty, has more
	// than MaxGetNames entries, or holds an empty or overlong name.
	ErrBadNames = errors.New("index: names must list 1 to 10 skill names")

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
	// strategy or field, or max_entries out of range.
	ErrBadDirectoryConfig = errors.New("index: directory config is not valid")
)
