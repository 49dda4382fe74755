package index

// Event is a structured observation the store reports through
// Options.OnEvent: a name from the Event* constants and its fields.
type Event struct {
	Name   string
	Fields map[string]any
}

// Event names.
const (
	// EventToolSearchQuery is reported after every SearchTools call that
	// passed validation. Fields: query, requested_search_type,
	// effective_search_type, results_count.
	EventToolSearchQuery = "tool_search_query"

	// EventSkillSearchQuery is reported after every SearchSkills call that
	// passed validation. Fields as for EventToolSearchQuery.
	EventSkillSearchQuery = "skill_search_query"

	// EventSkillPackLoaded is reported after LoadPack committed. Fields:
	// pack_name, skill_count (skills in the pack), updated_count (existing
	// skills rewritten), added_count, skipped_count, removed_count.
	EventSkillPackLoaded = "skill_pack_loaded"

	// EventToolsSynced is reported after SyncTools or RebuildTools committed.
	// Fields: added, changed, removed, unchanged (counts), rebuild (bool),
	// fingerprint.
	EventToolsSynced = "tools_synced"
)

// emit reports an event when the store has a listener.
func (s *Store) emit(name string, fields map[string]any) {
	if s.onEvent == nil {
		return
	}
	s.onEvent(Event{Name: name, Fields: fields})
}
