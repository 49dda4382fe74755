// Package index is skillhost's SQLite index of tools and skills: what a model
// searches with tool_search and skill_search, and what skill_get, skill_list,
// the skill directory and pre-flight retrieval read.
//
// One Store wraps one SQLite file (pure Go, WAL mode, versioned schema). It
// holds tool metadata synced from the execution registry — incrementally, by
// record hash, in one transaction per sync — and skills loaded from packs or
// stored as learned skills, each with a scope.
//
// # Searching
//
// Three search types share one score contract. Scores lie in [0, 1] and are
// comparable only within one response:
//
//   - "exact": the name itself; score 1.0.
//   - "regex": a case-insensitive RE2 pattern (at most MaxPatternLength
//     characters, linear-time matching); 0.95 when it matches the whole
//     name, 0.90 a name prefix, 0.85 inside the name, 0.75 only in the
//     description or tags.
//   - "fts": whole-name and name-prefix matches first, then the text:
//     names split into words, descriptions, tags, parameters and examples,
//     ranked by weighted bm25 and normalised per response (see
//     SearchTools). The text is ranked in memory (internal/textsearch),
//     over the snapshot of the generation the search's transaction sees,
//     with the statistics of what the caller may find (see Visibility):
//     tool queries are expanded there with synonyms and spelling
//     corrections, each term weighted, while skill queries keep their own
//     words, so skill scores are FTS5's over the caller's skills. SQLite
//     FTS5 is the index of record, written with the rows; it ranks only a
//     tool search of the whole index (no View, no Visible) when no
//     snapshot of that generation is at hand (a large catalogue that
//     another process wrote, while its snapshot loads in the background),
//     unexpanded, with the user's words quoted before they
//     reach MATCH and, to bound the work of one query in a large index,
//     taken rarest first within a budget of document frequencies (a word
//     in more than a quarter of all records is left to name matches).
//     Without FTS5 (or with Options.DisableFTS) an "fts" search runs as
//     "regex" and its result says "regex".
//
// Results are ordered by score, then namespace preference, side-effect class
// (pure < read < write < external < stateful), shorter name, and name, so
// equal inputs always give equal output.
//
// # Visibility
//
// Tool searches take the caller's visibility predicate and apply it before
// the result limit: a tool the caller may not see never appears and never
// takes a slot. Skill queries take the caller's Scope: a caller sees global
// skills, its tenant's skills and its project's skills, and nothing else.
// Skill rowids encode scope and task type, so the full-text index only ever
// ranks what the caller may see.
//
// What a caller cannot see does not move its scores either: bm25's
// document counts, lengths and word frequencies, and the spelling
// vocabulary of tool queries, are those of the tools of its ToolView (or
// that its Visible admits) and of the skills of its scopes, worked out
// once per caller and snapshot. One tenant's scores therefore say nothing
// of another tenant's packs.
//
// # Consistency
//
// Every search reads one snapshot of the database (one read transaction),
// whatever is committed meanwhile; every write is one transaction. Name
// matches, regex searches and text ranking use an in-memory copy of the
// searchable fields, used only when it is of the generation the search's
// transaction sees; writes through the Store bring it to the new
// generation as they commit. After a write by another process, a search
// that ranks with a caller's statistics uses the newest copy, a moment
// old, while the fresh one loads in the background.
//
// # Connections
//
// A Store has a pool of max(4, 2×GOMAXPROCS) connections. No operation asks
// the pool for a connection while it holds one: each reads its rows to the
// end, or runs all its statements in one read transaction, before it asks
// for anything else, and the caches it fills (the tool names that
// tool-reference rewriting judges, the statistics of the full-text index)
// are read on the caller's own connection, their locks held only to look
// at them or fill them. Snapshots load before a search's transaction
// starts, one at a time, and a caller waiting for another's load gives up
// at its context's end. Writers take the write slot before their
// connection, and nobody holding a connection waits for it. So however many
// callers there are, each waits only for connections that are being given
// back, and a wait for a connection, the write slot or a snapshot load
// ends with its context. The predicates a caller passes (Visible,
// VisibleTool) and Options.OnEvent may run while a connection is held,
// and must not call back into the store.
//
// # Redaction
//
// Every skill text the store returns (search hits, skill_get, skill_list,
// the directory, pre-flight retrieval) has personal data and credentials
// redacted (Redact, unless Options.DisableRedaction) and references to
// tools the caller may not see rewritten (the request's VisibleTool);
// both live in internal/redact.
package index
