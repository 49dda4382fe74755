package index

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/index/internal/redact"
)

// Directory selection strategies.
const (
	// DirectoryPinnedThenRecent lists pinned skills, then the most
	// recently used.
	DirectoryPinnedThenRecent = "pinned_then_recent"
	// DirectoryPinnedThenTop lists pinned skills, then the most used.
	DirectoryPinnedThenTop = "pinned_then_top"
)

// Limits of the skill directory.
const (
	DefaultDirectoryEntries = 30
	MaxDirectoryEntries     = 200
	directoryTitleLen       = 80
	directoryTriggerLen     = 120
)

// DirectoryFields are the fields a directory line may show, in the order
// they are shown. The name is always shown.
var DirectoryFields = []string{"name", "title", "trigger", "task_type"}

// defaultDirectoryFields is used when DirectoryConfig.IncludeFields is
// empty.
var defaultDirectoryFields = []string{"name", "title", "trigger"}

// DirectoryConfig says which skills the directory shows and how.
type DirectoryConfig struct {
	// MaxEntries caps the entries, pinned ones included: 1..
	// MaxDirectoryEntries, 0 means DefaultDirectoryEntries.
	MaxEntries int `toml:"max_entries"`
	// IncludeFields is a subset of DirectoryFields; empty means name,
	// title and trigger. The name is shown whether listed or not.
	IncludeFields []string `toml:"include_fields"`
	// Strategy is DirectoryPinnedThenRecent (default) or
	// DirectoryPinnedThenTop.
	Strategy string `toml:"selection_strategy"`
	// VisibleTool and KnownTools are as in SkillGetRequest; they apply to
	// titles and triggers.
	VisibleTool func(name string) bool
	KnownTools  []string
}

// DirectoryEntry is one skill in the directory, already redacted and
// shortened.
type DirectoryEntry struct {
	Name     string `json:"name"`
	Title    string `json:"title,omitempty"`
	Trigger  string `json:"trigger,omitempty"`
	TaskType string `json:"task_type,omitempty"`
	Pinned   bool   `json:"pinned,omitempty"`
}

// Directory is the bounded list of skill names shown in a prompt. Render
// reports an event through the store's listener each time it is called.
type Directory struct {
	Entries []DirectoryEntry
	// ReadTool is the tool Render tells a model to read a skill with, by
	// name: the one its run has, load_skill or skill_get. "" means
	// skill_get, with skill_search for discovery.
	ReadTool string
	fields   map[string]bool
	emit     func(name string, fields map[string]any)
}

// Directory selects the skills to name in a prompt for a caller with
// scope: pinned skills first (by name), then the most recently used or
// the most used, never more than cfg.MaxEntries in all.
func (s *Store) Directory(ctx context.Context, cfg DirectoryConfig, scope Scope) (*Directory, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	limit := cfg.MaxEntries
	if limit == 0 {
		limit = DefaultDirectoryEntries
	}
	if limit < 1 || limit > MaxDirectoryEntries {
		return nil, fmt.Errorf("%w: max_entries %d, want 1..%d", ErrBadDirectoryConfig, cfg.MaxEntries, MaxDirectoryEntries)
	}
	fields, err := directoryFields(cfg.IncludeFields)
	if err != nil {
		return nil, err
	}
	var order string
	switch cfg.Strategy {
	case "", DirectoryPinnedThenRecent:
		order = `pinned DESC, CASE WHEN pinned <> 0 THEN 0 ELSE last_used END DESC,
			CASE WHEN pinned <> 0 THEN 0 ELSE use_count END DESC, name`
	case DirectoryPinnedThenTop:
		order = `pinned DESC, CASE WHEN pinned <> 0 THEN 0 ELSE use_count END DESC,
			CASE WHEN pinned <> 0 THEN 0 ELSE last_used END DESC, name`
	default:
		return nil, fmt.Errorf("%w: strategy %q, want %q or %q", ErrBadDirectoryConfig, cfg.Strategy,
			DirectoryPinnedThenRecent, DirectoryPinnedThenTop)
	}
	if err := checkRequestScope(scope); err != nil {
		return nil, err
	}
	cte, args := visibleSkillsCTE(scope, "")
	d := &Directory{Entries: []DirectoryEntry{}, fields: fields, emit: s.emit}
	var tr *redact.ToolRefs
	// The entries and the tool names come from one read transaction, on
	// one connection; the entries are read to their end first.
	err = s.read(ctx, func(rd *readTx) error {
		rows, err := rd.query(ctx, cte+`SELECT name, title, trigger, task_type, pinned FROM v
			WHERE shadow_rank = 1 ORDER BY `+order+` LIMIT ?`, append(args, limit)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e DirectoryEntry
			var pinned int
			if err := rows.Scan(&e.Name, &e.Title, &e.Trigger, &e.TaskType, &pinned); err != nil {
				return s.wrapErr(err)
			}
			e.Pinned = pinned != 0
			d.Entries = append(d.Entries, e)
		}
		if err := rows.Err(); err != nil {
			return s.wrapErr(err)
		}
		rows.Close()
		tr, err = s.toolRedactor(ctx, rd, cfg.VisibleTool, cfg.KnownTools)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("index: skill directory: %w", err)
	}
	for i := range d.Entries {
		e := &d.Entries[i]
		e.Title = cutText(oneLine(s.clean(tr, e.Title)), directoryTitleLen)
		e.Trigger = cutText(oneLine(s.clean(tr, e.Trigger)), directoryTriggerLen)
		if e.TaskType == "unknown" {
			e.TaskType = ""
		}
	}
	return d, nil
}

// directoryFields validates IncludeFields.
func directoryFields(in []string) (map[string]bool, error) {
	if len(in) == 0 {
		in = defaultDirectoryFields
	}
	out := map[string]bool{"name": true}
	for _, f := range in {
		if !slices.Contains(DirectoryFields, f) {
			return nil, fmt.Errorf("%w: include_fields has %q, want some of %s", ErrBadDirectoryConfig, f,
				strings.Join(DirectoryFields, ", "))
		}
		out[f] = true
	}
	return out, nil
}

// The skill directory block.
const (
	directoryOpen   = "<skill_directory>\n"
	directoryHeader = "Known skills (use skill_get by name; use skill_search for discovery):\n"
	// directoryReadHeader is the header for Directory.ReadTool, %s.
	directoryReadHeader = "Known skills (read one with %s by its name):\n"
	directoryClose      = "</skill_directory>"
)

// Render returns the <skill_directory> block, one line per entry:
// "- name [task_type] — Title: trigger", with the parts not included left
// out. It returns "" when the directory is empty, and reports
// EventSkillDirectoryRendered either way.
func (d *Directory) Render() string {
	fields := d.fields
	if fields == nil {
		fields, _ = directoryFields(nil)
	}
	var b strings.Builder
	if len(d.Entries) > 0 {
		b.WriteString(directoryOpen)
		if d.ReadTool == "" || d.ReadTool == "skill_get" {
			b.WriteString(directoryHeader)
		} else {
			fmt.Fprintf(&b, directoryReadHeader, d.ReadTool)
		}
		for _, e := range d.Entries {
			b.WriteString("- ")
			b.WriteString(e.Name)
			if fields["task_type"] && e.TaskType != "" {
				b.WriteString(" [")
				b.WriteString(e.TaskType)
				b.WriteString("]")
			}
			title := fields["title"] && e.Title != ""
			trigger := fields["trigger"] && e.Trigger != "" && e.Trigger != e.Title
			if title || trigger {
				b.WriteString(" — ")
			}
			if title {
				b.WriteString(e.Title)
			}
			if title && trigger {
				b.WriteString(": ")
			}
			if trigger {
				b.WriteString(e.Trigger)
			}
			b.WriteByte('\n')
		}
		b.WriteString(directoryClose)
	}
	if d.emit != nil {
		d.emit(EventSkillDirectoryRendered, map[string]any{"count": len(d.Entries)})
	}
	return b.String()
}
