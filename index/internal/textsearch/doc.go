// Package textsearch is the in-memory full-text ranking of the index
// package: an inverted index of a snapshot's searchable text (Index),
// query expansion with synonyms and spelling corrections (Expand), and
// scoring of weighted terms with FTS5's bm25 formula (Scorer).
//
// FTS5 keeps the index of record in package index: it is written in the
// same transaction as the rows and answers an "fts" search of the whole
// index whose snapshot is not current. An Index holds the same text as
// FTS5 indexes it
// (unicode61 words, folded, without diacritics, porter-stemmed) in
// inverted lists, and ranks with FTS5's own bm25 formula over them. Only
// there can a query be expanded with a weight per term: FTS5 has no
// per-term weight inside MATCH, and one MATCH per term made searches two
// to three times slower (see RATIONALE.md). Tool searches are expanded;
// skill searches keep FTS5's ranking of the query's own words (Plain).
// Reading a few posting lists from memory costs microseconds. A View of
// part of the documents ranks as an index of that part alone would, so a
// caller who may see part of a catalogue gets statistics (and spelling
// corrections) of that part only.
//
// The package is internal to the index: its types are the index's
// implementation, not an API, and the index's tests hold it to FTS5
// (TestTextIndexMatchesFTS5, TestTextIndexBM25MatchesFTS5).
package textsearch
