package index

import "github.com/skillhost/skillhost/index/internal/redact"

// Redact returns text with personal data and credentials replaced by
// placeholders: email addresses by [REDACTED_EMAIL], phone numbers by
// [REDACTED_PHONE], bearer tokens, API keys and secret-named values by
// [REDACTED_TOKEN], and it strips the query (and fragment) of URLs that
// carry user, session or credential parameters. The rules are conservative
// so that procedural text keeps its structure: dates, versions, ports,
// years and plain numbers are left alone. Redact is idempotent and safe
// for any input. The index applies it to every skill text it returns
// unless Options.DisableRedaction is set.
func Redact(text string) string { return redact.Text(text) }
