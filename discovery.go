package skillhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// ErrSkillNotFound is returned when no loaded source has a skill of that
// name.
var ErrSkillNotFound = errors.New("skillhost: skill not found")

// ErrNoIndex is returned by the searches and skill retrieval of an engine
// opened with Config.NoIndex.
var ErrNoIndex = errors.New("skillhost: the engine was opened without its discovery index (Config.NoIndex)")

// store returns the discovery index, or ErrNoIndex.
func (e *Engine) store() (*index.Store, error) {
	if e.idx == nil {
		return nil, ErrNoIndex
	}
	return e.idx, nil
}

// openIndex opens the discovery index and brings it up to date with the
// catalog: tools incrementally by record hash, skills pack by pack.
func (e *Engine) openIndex(ctx context.Context) error {
	idx, err := index.Open(ctx, e.cfg.IndexPath, e.indexOptions())
	if err != nil {
		return fmt.Errorf("opening the index: %w", err)
	}
	e.idx = idx
	return nil
}

// indexOptions are Config.Index with the index's events sent to
// Config.Events too, so an embedder reads one event stream.
func (e *Engine) indexOptions() *index.Options {
	if e.cfg.Events == nil {
		return e.cfg.Index
	}
	var o index.Options
	if e.cfg.Index != nil {
		o = *e.cfg.Index
	}
	next, sink := o.OnEvent, e.cfg.Events
	o.OnEvent = func(ev index.Event) {
		sink.Event(context.Background(), registry.Event{Name: ev.Name, Time: time.Now(), Fields: ev.Fields})
		if next != nil {
			next(ev)
		}
	}
	return &o
}

// syncOpenedIndex brings the index just opened up to date with the first
// generation: rewritten whole when the operator asks, else by record hash.
func (e *Engine) syncOpenedIndex(ctx context.Context, l *loaded) error {
	idx := e.idx
	if e.cfg.ToolSearch.Rebuild() {
		if _, err := idx.RebuildTools(ctx, indexTools(l.reg, e.RenderOptions().MaxExamples)); err != nil {
			return fmt.Errorf("rebuilding the tool index: %w", err)
		}
	}
	return e.syncIndex(ctx, l)
}

// syncIndex brings the index up to date with generation l; an engine
// without an index has nothing to do.
func (e *Engine) syncIndex(ctx context.Context, l *loaded) error {
	if e.idx == nil {
		return nil
	}
	if _, err := e.idx.SyncTools(ctx, indexTools(l.reg, e.RenderOptions().MaxExamples)); err != nil {
		return fmt.Errorf("indexing tools: %w", err)
	}
	return e.syncSkills(ctx, l)
}

// indexTools describes every tool of reg for the index. A tool's
// examples are the ones a rendering shows (at most maxExamples, in the
// renderings' order), each as its compact arguments and description, so
// changing an example's arguments changes the tool's record hash.
func indexTools(reg *registry.Registry, maxExamples int) []index.ToolRecord {
	out := make([]index.ToolRecord, 0, len(reg.Tools()))
	for _, t := range reg.Tools() {
		it := index.ToolRecord{
			Name: t.Name, Description: t.Description, Namespace: t.Pack, Category: t.Category,
			Tags: t.Tags, Params: schemaParams(t.InputSchema), LoadingMode: t.Loading,
			SideEffects: sideEffectClass(t.ToolSpec),
		}
		if block := registry.ExamplesBlock(t, maxExamples); block != "" {
			_, lines, _ := strings.Cut(block, "\n")
			it.Examples = strings.Split(lines, "\n")
		}
		out = append(out, it)
	}
	return out
}

// sideEffectClass places a tool on the pure < read < write < external <
// stateful scale used to order equal search scores.
func sideEffectClass(t *packs.ToolSpec) string {
	switch {
	case t.SideEffects && t.RequiresNetwork:
		return "external"
	case t.SideEffects:
		return "write"
	case t.RequiresNetwork || t.RequiresFilesystem:
		return "read"
	}
	return "pure"
}

// schemaParams lists the top-level properties of an input schema with
// their descriptions.
func schemaParams(schema json.RawMessage) []index.Param {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := make([]index.Param, 0, len(s.Properties))
	for name, p := range s.Properties {
		out = append(out, index.Param{Name: name, Description: p.Description})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// syncSkills stores the catalog's skills pack by pack in the engine's
// scope, and empties packs the catalog no longer has.
func (e *Engine) syncSkills(ctx context.Context, l *loaded) error {
	byPack := map[string][]index.SkillRecord{}
	goSkills := map[string]bool{}
	for _, sk := range e.cfg.GoSkills {
		goSkills[sk.Name] = true
		byPack[goSkillsPack] = append(byPack[goSkillsPack], indexGoSkill(sk))
	}
	for _, se := range l.cat.Skills() {
		if goSkills[se.Skill.Name] {
			continue // replaced by the Go skill of its name
		}
		byPack[se.Skill.Pack] = append(byPack[se.Skill.Pack], indexSkill(se.Skill))
	}
	// A pack may have moved scope since the last run: look in every scope
	// the engine could have stored it in, and, when packs belong to
	// tenants, in every tenant scope it is stored at, so a pack given to
	// another tenant leaves its old owner's scope.
	stored, err := e.idx.PackScopes(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(byPack)+len(stored))
	for p := range byPack {
		names = append(names, p)
	}
	for p := range stored {
		if _, ok := byPack[p]; !ok {
			names = append(names, p)
		}
	}
	owned := e.ownsPacks(names)
	own := e.storeScopes()
	candidates := func(p string) []index.Scope {
		out := own
		if owned {
			for _, sc := range stored[p] {
				if sc.Mode == packs.ScopeTenant && !slices.Contains(out, sc) {
					out = append(slices.Clip(out), sc)
				}
			}
		}
		return out
	}
	names = names[:0]
	for p, scopes := range stored {
		if _, ok := byPack[p]; ok {
			continue
		}
		for _, sc := range scopes {
			if slices.Contains(candidates(p), sc) {
				byPack[p] = nil // gone from the catalog: emptied below
				break
			}
		}
	}
	for p := range byPack {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		g := e.op.Pack(p)
		at, keep := e.skillScope(p)
		for _, sc := range candidates(p) {
			if !keep || sc != at {
				// Drop what an earlier run stored at another scope.
				if _, err := e.idx.LoadPack(ctx, p, nil, index.PackOptions{UpdateExisting: true, Scope: sc}); err != nil {
					return fmt.Errorf("indexing the skills of pack %s: %w", p, err)
				}
			}
		}
		if !keep {
			continue // a hidden pack: no run sees its skills
		}
		rep, err := e.idx.LoadPack(ctx, p, byPack[p], index.PackOptions{UpdateExisting: g.UpdateExisting, Pinned: g.Pinned, Scope: at})
		if err != nil {
			l.problems = append(l.problems, fmt.Errorf("indexing the skills of pack %s: %w", p, err))
			continue
		}
		l.reports = append(l.reports, rep)
	}
	return nil
}

// packScope is where a pack's skills are stored: the pack's scope_mode
// filled with the engine's tenant and project, or global when the engine
// has no tenant (or project) to give it.
func (e *Engine) packScope(mode string) index.Scope {
	t, p := e.cfg.Scope.TenantID, e.cfg.Scope.ProjectID
	switch {
	case mode == packs.ScopeProject && p != "":
		return index.Scope{Mode: packs.ScopeProject, TenantID: t, ProjectID: p}
	case (mode == packs.ScopeProject || mode == packs.ScopeTenant) && t != "":
		return index.Scope{Mode: packs.ScopeTenant, TenantID: t}
	}
	return index.Scope{Mode: packs.ScopeGlobal}
}

// storeScopes are the scopes packScope can give.
func (e *Engine) storeScopes() []index.Scope {
	seen := map[index.Scope]bool{}
	var out []index.Scope
	for _, m := range []string{packs.ScopeGlobal, packs.ScopeTenant, packs.ScopeProject} {
		if sc := e.packScope(m); !seen[sc] {
			seen[sc] = true
			out = append(out, sc)
		}
	}
	return out
}

// indexSkill turns a loaded skill into its index record.
func indexSkill(s *packs.SkillSpec) index.SkillRecord {
	trigger := s.Trigger
	if trigger == "" {
		trigger = s.Description
	}
	return index.SkillRecord{
		Name: s.Name, Title: s.Title, Description: s.Description, Trigger: trigger, TaskType: s.TaskType,
		Tags: s.Tags, Steps: s.Steps, Preconditions: s.Preconditions, FailureModes: s.FailureModes,
		Instructions: s.Instructions, Origin: index.OriginPack, OriginRef: s.Pack, ContentHash: s.ContentHash,
	}
}

// goSkillsPack is the pack the index files Config.GoSkills under: a name
// no pack can have, so they never mix with a pack's skills.
const goSkillsPack = "(go)"

// indexGoSkill describes a Go skill for the index.
func indexGoSkill(s Skill) index.SkillRecord {
	return index.SkillRecord{Name: s.Name, Description: s.Description, Trigger: s.Description,
		Instructions: s.Instructions, Origin: index.OriginPack, OriginRef: goSkillsPack}
}

// Problems returns what could not be loaded: broken skills and packs,
// duplicate names in one source, skills the index refused. Everything
// else loaded.
func (e *Engine) Problems() []error { return append([]error(nil), e.now().problems...) }

// Overrides lists the skills and tools a later source replaced by name.
func (e *Engine) Overrides() []packs.Override {
	return append([]packs.Override(nil), e.now().cat.Overrides...)
}

// Catalog returns the merged view of all sources.
func (e *Engine) Catalog() *packs.Catalog { return e.now().cat }

// Operator returns the operator configuration in use. Printing it never
// shows a secret.
func (e *Engine) Operator() *packs.Config { return e.op }

// Skills returns every loaded skill, sorted by name.
func (e *Engine) Skills() []*packs.SkillEntry { return e.now().cat.Skills() }

// Skill returns the loaded skill called name.
func (e *Engine) Skill(name string) (*packs.SkillEntry, error) {
	se, ok := e.now().cat.Skill(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrSkillNotFound, name)
	}
	return se, nil
}

// visibleTool reports whether searches and skill texts may name a tool:
// it is loaded and not hidden.
func (e *Engine) visibleTool(name string) bool {
	t, ok := e.now().reg.Tool(name)
	return ok && !t.Hidden
}

func (e *Engine) toolNames() []string {
	tools := e.now().reg.Tools()
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

// both is a visibility predicate admitting what a and b (when set) admit.
func both(a, b func(string) bool) func(string) bool {
	if b == nil {
		return a
	}
	return func(n string) bool { return a(n) && b(n) }
}

// SearchTools runs tool_search over the engine's tools. Only loaded tools
// that are not hidden, and that q.Visible admits when set, are returned,
// at most Config.ToolSearch.MaxResults of them when that is set.
func (e *Engine) SearchTools(ctx context.Context, q index.ToolQuery) (*index.ToolSearchResult, error) {
	idx, err := e.store()
	if err != nil {
		return nil, err
	}
	q = e.toolQuery(q)
	q.Visible = both(e.visibleTool, q.Visible)
	return idx.SearchTools(ctx, q)
}

// SearchSkills runs skill_search; a zero q.Scope means the engine's scope.
// Titles and triggers are redacted like every other skill text handed to
// a model (unless the index options turn redaction off), and references to
// tools the engine does not have, or q.VisibleTool refuses, are rewritten.
func (e *Engine) SearchSkills(ctx context.Context, q index.SkillQuery) (*index.SkillSearchResult, error) {
	idx, err := e.store()
	if err != nil {
		return nil, err
	}
	e.runView(&q.Scope, &q.VisibleTool, &q.KnownTools)
	return idx.SearchSkills(ctx, q)
}

// runView fills the caller's part of a skill request: the engine's scope
// when none is given, and the tools the text may name.
func (e *Engine) runView(sc *index.Scope, visible *func(string) bool, known *[]string) {
	if sc != nil && *sc == (index.Scope{}) {
		*sc = e.cfg.Scope
	}
	*visible = both(e.visibleTool, *visible)
	*known = append(*known, e.toolNames()...)
}

// GetSkills runs skill_get. References to tools the engine does not have,
// or r.VisibleTool refuses, are rewritten out of the returned text.
func (e *Engine) GetSkills(ctx context.Context, r index.SkillGetRequest) (*index.SkillGetResult, error) {
	idx, err := e.store()
	if err != nil {
		return nil, err
	}
	e.runView(&r.Scope, &r.VisibleTool, &r.KnownTools)
	return idx.GetSkills(ctx, r)
}

// ListSkills runs skill_list.
func (e *Engine) ListSkills(ctx context.Context, r index.SkillListRequest) (*index.SkillListResult, error) {
	idx, err := e.store()
	if err != nil {
		return nil, err
	}
	e.runView(&r.Scope, &r.VisibleTool, &r.KnownTools)
	return idx.ListSkills(ctx, r)
}

// Relevant retrieves the skills for a task, within a token budget, as a
// block ready to inject into a prompt, which tells the model to read other
// skills with the reading tool of the engine's skill tool family unless
// r.ReadTool names one. A request without a budget gets
// Config.Skills.MaxTokens; with skill discovery off the result is empty.
func (e *Engine) Relevant(ctx context.Context, r index.RelevantRequest) (*index.RelevantResult, error) {
	idx, err := e.store()
	if err != nil {
		return nil, err
	}
	if e.relevantRequest(&r) {
		return noSkills(), nil
	}
	e.runView(&r.Scope, &r.VisibleTool, &r.KnownTools)
	if r.ReadTool == "" {
		r.ReadTool = e.readTool()
	}
	return idx.Relevant(ctx, r)
}

// readTool is the tool the engine's runs read a skill with by name, which
// the prompt blocks name: load_skill, or skill_get for the search family.
func (e *Engine) readTool() string {
	if e.cfg.Skills.Tools == registry.SkillToolsSearch {
		return registry.SkillGetName
	}
	return registry.LoadSkillName
}

// Directory returns the skill directory of the engine's scope for a
// prompt, whose Render names the reading tool of the engine's skill tool
// family. The fields d leaves zero come from Config.Skills.Directory;
// with the directory or skill discovery off it is empty.
func (e *Engine) Directory(ctx context.Context, d index.DirectoryConfig) (*index.Directory, error) {
	idx, err := e.store()
	if err != nil {
		return nil, err
	}
	if e.directoryConfig(&d) {
		return noDirectory(), nil
	}
	e.runView(nil, &d.VisibleTool, &d.KnownTools)
	dir, err := idx.Directory(ctx, d, e.cfg.Scope)
	if dir != nil {
		dir.ReadTool = e.readTool()
	}
	return dir, err
}

// RebuildIndex drops and rewrites the tool index.
func (e *Engine) RebuildIndex(ctx context.Context) (index.SyncReport, error) {
	idx, err := e.store()
	if err != nil {
		return index.SyncReport{}, err
	}
	return idx.RebuildTools(ctx, indexTools(e.now().reg, e.RenderOptions().MaxExamples))
}

// PackReports says what loading each pack's skills into the index did.
func (e *Engine) PackReports() []index.PackReport {
	return append([]index.PackReport(nil), e.now().reports...)
}
