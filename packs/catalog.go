package packs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
)

// Kinds of catalog entries, as named in overrides, duplicates and diffs.
const (
	EntrySkill = "skill"
	EntryTool  = "tool"
	EntryPack  = "pack"
)

// Origin says where a catalog entry was defined.
type Origin struct {
	// Source is the source's name (SourceWorkspace, ...).
	Source string `json:"source"`
	// Path is the file, with the source root in front.
	Path string `json:"path"`
}

// SkillEntry is a skill of the catalog and where it came from.
type SkillEntry struct {
	Skill *SkillSpec `json:"skill"`
	Origin
}

// ToolEntry is a tool of the catalog, the module and pack that bring it,
// and where it came from.
type ToolEntry struct {
	Tool   *ToolSpec `json:"tool"`
	Module *Module   `json:"-"`
	Pack   *Pack     `json:"-"`
	Origin
	// Hash identifies the tool's record: its manifest entry, its module's
	// name, path, pin, request and limits, the pack's name and version, and
	// the module file's size and modification time. It changes when any of
	// them does.
	Hash string `json:"hash"`
}

// Override records that a later source replaced an entry of an earlier
// one by name.
type Override struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Winner Origin `json:"winner"`
	Loser  Origin `json:"loser"`
}

func (o Override) String() string {
	return fmt.Sprintf("%s %q from %s (%s) overrides %s (%s)", o.Kind, o.Name, o.Winner.Source, o.Winner.Path, o.Loser.Source, o.Loser.Path)
}

// Disabled records an entry the config removed from the catalog.
type Disabled struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Origin
	// Reason is the config setting that removed it.
	Reason string `json:"reason"`
}

// CatalogOptions adjust LoadCatalog. A nil *CatalogOptions means defaults.
type CatalogOptions struct {
	// Config turns skills and packs off (enabled = false); nil keeps all.
	Config *Config
}

// Catalog is the merged view of all sources: every skill and tool by
// name, taken from the source of highest precedence that has it. A
// Catalog is not changed after LoadCatalog returns it and is safe for
// concurrent use; Reload builds a new one.
type Catalog struct {
	// Overrides lists, in load order, each entry a later source replaced.
	Overrides []Override
	// Disabled lists the entries the config turned off.
	Disabled []Disabled
	// Warnings are problems that lost nothing, such as symbolic links not
	// followed or config sections that name no skill or pack.
	Warnings []string

	skills map[string]*SkillEntry
	tools  map[string]*ToolEntry
	packs  []*Pack

	specs []SourceSpec
	opts  CatalogOptions
}

// LoadCatalog loads every source in specs, lowest precedence first, and
// merges them: a skill or tool of a later source replaces one of the same
// name from an earlier source, and each replacement is recorded in
// Overrides. Two skills, tools or packs of the same name in one source
// are a *DuplicateError naming both paths (the first is kept).
//
// A broken pack or skill does not hide the others: LoadCatalog returns the
// catalog of everything that loaded together with every problem of every
// source, joined. The catalog is nil only when ctx ends first.
func LoadCatalog(ctx context.Context, specs []SourceSpec, opts *CatalogOptions) (*Catalog, error) {
	c := &Catalog{
		skills: map[string]*SkillEntry{},
		tools:  map[string]*ToolEntry{},
		specs:  append([]SourceSpec(nil), specs...),
	}
	if opts != nil {
		c.opts = *opts
	}
	cfg := c.opts.Config
	var errs []error
	seenSkills, seenPacks := map[string]bool{}, map[string]bool{}
	for _, spec := range specs {
		sc, err := LoadSource(ctx, spec)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if err != nil {
			errs = append(errs, err)
		}
		c.Warnings = append(c.Warnings, sc.Warnings...)
		disabledPacks := map[string]string{}
		toolsHere := map[string]bool{}
		for _, p := range sc.Packs {
			seenPacks[p.Name] = true
			if g := cfg.Pack(p.Name); !g.Enabled {
				reason := fmt.Sprintf("[packs.%s] enabled = false", p.Name)
				disabledPacks[p.Name] = reason
				c.Disabled = append(c.Disabled, Disabled{Kind: EntryPack, Name: p.Name,
					Origin: Origin{Source: sc.Name, Path: joinRoot(p.Dir, ManifestFile)}, Reason: reason})
				continue
			}
			c.packs = append(c.packs, p)
			c.addTools(sc, p, toolsHere)
		}
		for _, s := range sc.Skills {
			seenSkills[s.Name] = true
			o := Origin{Source: sc.Name, Path: sc.Path(s.File)}
			if reason, off := disabledPacks[s.Pack]; off {
				c.Disabled = append(c.Disabled, Disabled{Kind: EntrySkill, Name: s.Name, Origin: o, Reason: reason})
				continue
			}
			if on, reason := cfg.skillEnabled(s.Name); !on {
				c.Disabled = append(c.Disabled, Disabled{Kind: EntrySkill, Name: s.Name, Origin: o, Reason: reason})
				continue
			}
			if old, ok := c.skills[s.Name]; ok {
				c.Overrides = append(c.Overrides, Override{Kind: EntrySkill, Name: s.Name, Winner: o, Loser: old.Origin})
			}
			c.skills[s.Name] = &SkillEntry{Skill: s, Origin: o}
		}
	}
	if cfg != nil {
		for _, name := range sortedNames(cfg.Skills) {
			if !seenSkills[name] {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: [skills.%s] names no skill found in any source", cfg.fileName(), cfg.Skills[name].Line, name))
			}
		}
		for _, name := range sortedNames(cfg.Packs) {
			if !seenPacks[name] {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: [packs.%s] names no pack found in any source", cfg.fileName(), cfg.Packs[name].Line, name))
			}
		}
	}
	return c, errors.Join(errs...)
}

// addTools merges the tools of pack p, loaded from source sc; here holds
// the names of the tools this source already brought.
func (c *Catalog) addTools(sc *SourceContents, p *Pack, here map[string]bool) {
	where := joinRoot(p.Dir, ManifestFile)
	for _, m := range p.Modules {
		fp := moduleFingerprint(p, m)
		for _, t := range m.Tools {
			if here[t.Name] {
				continue // a duplicate in one source: reported by LoadSource, the first kept
			}
			here[t.Name] = true
			o := Origin{Source: sc.Name, Path: where}
			if old, ok := c.tools[t.Name]; ok {
				c.Overrides = append(c.Overrides, Override{Kind: EntryTool, Name: t.Name, Winner: o, Loser: old.Origin})
			}
			c.tools[t.Name] = &ToolEntry{Tool: t, Module: m, Pack: p, Origin: o, Hash: toolHash(p, m, t, fp)}
		}
	}
}

// moduleFingerprint identifies a module file's version without reading
// it: its size and modification time (embedded files have no time, but
// cannot change either).
func moduleFingerprint(p *Pack, m *Module) string {
	if p.FS == nil {
		return ""
	}
	fi, err := fs.Stat(p.FS, m.Path)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%d@%d", fi.Size(), fi.ModTime().UnixNano())
}

func toolHash(p *Pack, m *Module, t *ToolSpec, fingerprint string) string {
	return contentHash(map[string]any{
		"pack":    map[string]any{"name": p.Name, "version": p.Version},
		"module":  map[string]any{"name": m.Name, "path": m.Path, "sha256": m.SHA256, "request": m.Request, "limits": m.Limits, "file": fingerprint},
		"tool":    t,
		"dir":     path.Clean(p.Dir),
		"version": 1,
	})
}

// Skill returns the skill named name.
func (c *Catalog) Skill(name string) (*SkillEntry, bool) {
	e, ok := c.skills[name]
	return e, ok
}

// Skills returns every skill, sorted by name.
func (c *Catalog) Skills() []*SkillEntry {
	out := make([]*SkillEntry, 0, len(c.skills))
	for _, name := range sortedNames(c.skills) {
		out = append(out, c.skills[name])
	}
	return out
}

// Tool returns the tool named name.
func (c *Catalog) Tool(name string) (*ToolEntry, bool) {
	e, ok := c.tools[name]
	return e, ok
}

// Tools returns every tool, sorted by name.
func (c *Catalog) Tools() []*ToolEntry {
	out := make([]*ToolEntry, 0, len(c.tools))
	for _, name := range sortedNames(c.tools) {
		out = append(out, c.tools[name])
	}
	return out
}

// Packs returns the packs loaded and enabled, lowest precedence first. A
// pack's tools may have been replaced by tools of later packs.
func (c *Catalog) Packs() []*Pack { return append([]*Pack(nil), c.packs...) }

// Reload loads the same sources with the same options again and reports
// what changed. The receiver is not modified.
func (c *Catalog) Reload(ctx context.Context) (*Catalog, CatalogDiff, error) {
	opts := c.opts
	n, err := LoadCatalog(ctx, c.specs, &opts)
	if n == nil {
		return nil, CatalogDiff{}, err
	}
	return n, DiffCatalogs(c, n), err
}

// CatalogChange names one entry that differs between two catalogs.
type CatalogChange struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// CatalogDiff is what changed from one catalog to the next. Each list is
// sorted by kind, then name.
type CatalogDiff struct {
	Added   []CatalogChange `json:"added,omitempty"`
	Changed []CatalogChange `json:"changed,omitempty"`
	Removed []CatalogChange `json:"removed,omitempty"`
}

// Empty tells whether nothing changed.
func (d CatalogDiff) Empty() bool { return len(d.Added)+len(d.Changed)+len(d.Removed) == 0 }

// DiffCatalogs compares two catalogs by entry name. A skill changed when
// its content hash, pack or origin differs; a tool when its record hash or
// origin differs. A nil catalog is empty.
func DiffCatalogs(old, new *Catalog) CatalogDiff {
	if old == nil {
		old = &Catalog{}
	}
	if new == nil {
		new = &Catalog{}
	}
	var d CatalogDiff
	for _, name := range sortedNames(old.skills) {
		if _, ok := new.skills[name]; !ok {
			d.Removed = append(d.Removed, CatalogChange{EntrySkill, name})
		}
	}
	for _, name := range sortedNames(new.skills) {
		n := new.skills[name]
		o, ok := old.skills[name]
		switch {
		case !ok:
			d.Added = append(d.Added, CatalogChange{EntrySkill, name})
		case o.Skill.ContentHash != n.Skill.ContentHash || o.Skill.Pack != n.Skill.Pack || o.Origin != n.Origin:
			d.Changed = append(d.Changed, CatalogChange{EntrySkill, name})
		}
	}
	for _, name := range sortedNames(old.tools) {
		if _, ok := new.tools[name]; !ok {
			d.Removed = append(d.Removed, CatalogChange{EntryTool, name})
		}
	}
	for _, name := range sortedNames(new.tools) {
		n := new.tools[name]
		o, ok := old.tools[name]
		switch {
		case !ok:
			d.Added = append(d.Added, CatalogChange{EntryTool, name})
		case o.Hash != n.Hash || o.Origin != n.Origin:
			d.Changed = append(d.Changed, CatalogChange{EntryTool, name})
		}
	}
	sortChanges := func(cs []CatalogChange) {
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].Kind != cs[j].Kind {
				return cs[i].Kind < cs[j].Kind
			}
			return cs[i].Name < cs[j].Name
		})
	}
	sortChanges(d.Added)
	sortChanges(d.Changed)
	sortChanges(d.Removed)
	return d
}
