package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
)

// Names of the built-in tools.
const (
	ToolSearchName        = "tool_search"
	SkillSearchName       = "skill_search"
	SkillGetName          = "skill_get"
	SkillListName         = "skill_list"
	ListSkillsName        = "list_skills"
	LoadSkillName         = "load_skill"
	ReadSkillResourceName = "read_skill_resource"
	RunSkillScriptName    = "run_skill_script"
)

// The skill tool families a model may be given (BuiltinOptions.SkillTools).
// A run shows one of them, so that a model never has two ways to read the
// same skill.
const (
	// SkillToolsLoad is the default family: list_skills, load_skill,
	// read_skill_resource and run_skill_script, the progressive
	// disclosure of the Agent Skills format (names and descriptions, then
	// a skill's instructions, then its files and scripts).
	SkillToolsLoad = "load"
	// SkillToolsSearch is the family of the discovery index: skill_search,
	// skill_get and skill_list, a ranked search over many skills and
	// their texts fitted to a token budget, without files or scripts.
	SkillToolsSearch = "search"
)

// SkillToolNames returns the names of the tools of a skill tool family
// ("" means SkillToolsLoad), or nil for a name that is no family.
func SkillToolNames(family string) []string {
	switch family {
	case "", SkillToolsLoad:
		return []string{ListSkillsName, LoadSkillName, ReadSkillResourceName, RunSkillScriptName}
	case SkillToolsSearch:
		return []string{SkillSearchName, SkillGetName, SkillListName}
	}
	return nil
}

// BuiltinOptions say what the built-in tools serve. One skill tool family
// is built (SkillTools), and a tool whose backing is missing is not: without
// Index there is no tool_search, skill_search, skill_get or skill_list;
// without Skills no list_skills, load_skill, read_skill_resource or
// run_skill_script.
type BuiltinOptions struct {
	// Index is the discovery index the search tools read. The embedder
	// keeps it in step with the registry (SyncTools) and the catalog's
	// skills (LoadPack).
	Index *index.Store
	// Scope maps a run to the index scope whose skills it sees (tenant
	// and project). Nil, or a zero scope, sees global skills only.
	Scope func(rc RunContext) index.Scope
	// Skills are the file and programmatic skills of list_skills,
	// load_skill, read_skill_resource and run_skill_script.
	Skills *SkillSet
	// NoToolSearch leaves tool_search out, for an operator who turned
	// tool search off ([tool_search] enabled = false).
	NoToolSearch bool
	// SkillTools is the skill tool family the model is given:
	// SkillToolsLoad ("", the default: list_skills, load_skill,
	// read_skill_resource, run_skill_script, over Skills) or
	// SkillToolsSearch (skill_search, skill_get, skill_list, over Index).
	// The other family is not built. Any other value builds neither.
	SkillTools string
	// NoSkillDiscovery leaves skill_search, skill_get and skill_list out
	// ([skill_discovery] enabled = false).
	NoSkillDiscovery bool
	// MaxSearchResults caps the tools one tool_search returns, 1 to
	// index.MaxLimit: a larger limit, or the default one, is lowered to
	// it. 0 means index.MaxLimit.
	MaxSearchResults int
}

// UsesIndex reports whether name is a built-in tool that answers from the
// discovery index (tool_search, skill_search, skill_get, skill_list), and
// so exists only in a registry built with BuiltinOptions.Index.
func UsesIndex(name string) bool {
	switch name {
	case toolSearchDesc.Name, skillSearchDesc.Name, skillGetDesc.Name, skillListDesc.Name:
		return true
	}
	return false
}

// Builtins returns skillhost's own tools as natives to pass as
// Options.Builtins: tool_search over opts.Index, and one skill tool family
// (opts.SkillTools): list_skills, load_skill, read_skill_resource and
// run_skill_script over opts.Skills, or skill_search, skill_get and
// skill_list over opts.Index. Each answers with a JSON document and
// reports failures as tool errors; each must be called through a Run,
// whose visibility it applies: a search shows only tools the run may find
// (Run.Findable), and skill texts handed back have references to other
// tools rewritten. Passed as Options.Builtins, each runs under a deadline,
// as a Wasm tool runs under its timeout: the default timeout of a Wasm
// tool (Options.DefaultLimits, else the operator's [limits], else
// host.DefaultTimeout), and for run_skill_script the longest timeout a
// pack's grant gives on top of it; a call still running then ends as a
// timeout result, whatever the tool is waiting for.
func Builtins(opts BuiltinOptions) []Native {
	var out []Native
	if opts.Index != nil && !opts.NoToolSearch {
		out = append(out, &builtin{desc: toolSearchDesc, fn: opts.toolSearch})
	}
	if opts.Index != nil && !opts.NoSkillDiscovery && opts.SkillTools == SkillToolsSearch {
		out = append(out,
			&builtin{desc: skillSearchDesc, fn: opts.skillSearch},
			&builtin{desc: skillGetDesc, fn: opts.skillGet},
			&builtin{desc: skillListDesc, fn: opts.skillList},
		)
	}
	if s := opts.Skills; s != nil && (opts.SkillTools == "" || opts.SkillTools == SkillToolsLoad) {
		out = append(out,
			&builtin{desc: listSkillsDesc, fn: s.listSkills, set: s},
			&builtin{desc: loadSkillDesc, fn: s.loadSkill},
			&builtin{desc: readSkillResourceDesc, fn: s.readSkillResource},
			&builtin{desc: runSkillScriptDesc, fn: s.runSkillScript, runsScripts: true},
		)
	}
	return out
}

// builtin is one built-in tool: its description and the function that
// answers a call made in a run. The registry runs fn under a deadline
// (builtinTool).
type builtin struct {
	desc packs.ToolSpec
	fn   func(ctx context.Context, run *Run, args json.RawMessage) (any, error)
	set  *SkillSet // list_skills' skill set, for Run.Skills
	// runsScripts says fn runs skills' scripts, each under its own
	// timeout (grants.builtinTimeout).
	runsScripts bool
}

func (b *builtin) Describe() packs.ToolSpec { return b.desc }

func (b *builtin) Execute(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	run := RunFrom(ctx)
	if run == nil {
		return nil, builtinError(abi.CodeInternal, "%s answers only calls made through a run", b.desc.Name)
	}
	v, err := b.fn(ctx, run, args)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, builtinError(abi.CodeInternal, "%s: encoding the answer: %v", b.desc.Name, err)
	}
	return out, nil
}

func builtinError(code abi.Code, format string, args ...any) *ToolError {
	return &ToolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// decodeBuiltinArgs reads arguments the registry has already checked against the
// tool's input schema.
func decodeBuiltinArgs(args json.RawMessage, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return builtinError(abi.CodeInvalidInput, "arguments: %v", err)
	}
	return nil
}

// fromIndexError turns an index error into a tool error: a request the index
// refuses is the model's to fix (invalid_input); a closed index is
// unavailable; the rest is the host's.
func fromIndexError(tool string, err error) error {
	switch {
	case errors.Is(err, index.ErrBadScope):
		return builtinError(abi.CodeInternal, "%s: the run's scope is not valid: %v", tool, err)
	case errors.Is(err, index.ErrEmptyQuery), errors.Is(err, index.ErrBadSearchType), errors.Is(err, index.ErrBadLimit),
		errors.Is(err, index.ErrPatternTooLong), errors.Is(err, index.ErrBadPattern), errors.Is(err, index.ErrBadTaskType),
		errors.Is(err, index.ErrBadNames), errors.Is(err, index.ErrBadFormat), errors.Is(err, index.ErrBadMaxTokens),
		errors.Is(err, index.ErrBadPage), errors.Is(err, index.ErrBadOrigin):
		return builtinError(abi.CodeInvalidInput, "%v", err)
	case errors.Is(err, index.ErrClosed):
		return builtinError(abi.CodeUnavailable, "%s: the discovery index is closed", tool)
	case errors.Is(err, context.DeadlineExceeded):
		return builtinError(abi.CodeTimeout, "%s: %v", tool, err)
	}
	return builtinError(abi.CodeInternal, "%s: %v", tool, err)
}

// registryToolNames are the names of every tool of the run's registry: the tools
// whose references in skill texts the run's visibility judges.
func registryToolNames(run *Run) []string {
	tools := run.Registry().Tools()
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func (o BuiltinOptions) scope(run *Run) index.Scope {
	if o.Scope == nil {
		return index.Scope{}
	}
	return o.Scope(run.Context())
}

// ---- tool_search -----------------------------------------------------

var toolSearchDesc = packs.ToolSpec{
	Name: ToolSearchName,
	Description: "Find tools you can use that are not in your tool list yet. Describe what you need in a few words " +
		"(search_type fts, the default), give a regular expression (regex) or an exact tool name (exact). " +
		"A tool it returns can be called at once, like a listed one. Only tools this request may use are returned; " +
		"tools already in your list are left out unless include_always_loaded is true. " +
		"Answers {tools: [{name, description, score (0-1, higher is better), match_type, loading_mode}], query, " +
		"search_type (the type actually used: regex when full-text search is not available)}. " +
		"Errors: invalid_input for an empty query, a pattern that does not compile or is over 200 characters.",
	InputSchema: json.RawMessage(`{"type":"object","required":["query"],"additionalProperties":false,"properties":{` +
		`"query":{"type":"string","description":"What you need, in a few words; a regular expression for regex; a tool name for exact."},` +
		`"search_type":{"type":"string","enum":["fts","regex","exact"],"default":"fts"},` +
		`"limit":{"type":"integer","minimum":1,"maximum":20,"default":8},` +
		`"include_always_loaded":{"type":"boolean","default":false,"description":"Also return tools already in your tool list."}}}`),
	OutputSchema: json.RawMessage(`{"type":"object","required":["tools","query","search_type"],"properties":{` +
		`"tools":{"type":"array","items":{"type":"object","required":["name","description","score","match_type","loading_mode"],"properties":{` +
		`"name":{"type":"string"},"description":{"type":"string"},"score":{"type":"number","minimum":0,"maximum":1},` +
		`"match_type":{"type":"string","enum":["exact","regex","fts"]},"loading_mode":{"type":"string","enum":["always","deferred"]}}}},` +
		`"query":{"type":"string"},"search_type":{"type":"string","enum":["exact","regex","fts"]}}}`),
	Examples: []packs.Example{
		{Args: json.RawMessage(`{"query":"count the words in a text"}`), Description: "find a tool by what it does", Tags: []string{"minimal"}},
		{Args: json.RawMessage(`{"query":"^github_","search_type":"regex","limit":20}`), Description: "every tool whose name starts with github_"},
	},
	Category:   "discovery",
	Tags:       []string{"search", "tools"},
	Idempotent: true,
	Loading:    packs.LoadingAlways,
}

// toolSearch runs tool_search in run: the index ranks, and only tools the
// run may find take a place in the answer. The user's words reach SQLite
// only quoted (index.SearchTools).
func (o BuiltinOptions) toolSearch(ctx context.Context, run *Run, args json.RawMessage) (any, error) {
	var in struct {
		Query               string `json:"query"`
		SearchType          string `json:"search_type"`
		Limit               int    `json:"limit"`
		IncludeAlwaysLoaded bool   `json:"include_always_loaded"`
	}
	if err := decodeBuiltinArgs(args, &in); err != nil {
		return nil, err
	}
	if t, ok := run.Registry().Tool(in.Query); ok && in.SearchType == index.SearchExact {
		in.Query = t.Name // the name a rendering showed, which the index does not hold
	}
	if most := o.MaxSearchResults; most > 0 && most < index.MaxLimit {
		if in.Limit == 0 {
			in.Limit = index.DefaultLimit
		}
		in.Limit = min(in.Limit, most)
	}
	// The run decides what is already in the model's list (always-loaded
	// tools, patterns, activations), not the index's loading mode, so the
	// index is asked for every mode and the run filters.
	// The index ranks with the statistics of the tools the run may find
	// (its View), whatever the run already shows.
	res, err := o.Index.SearchTools(ctx, index.ToolQuery{
		Query: in.Query, SearchType: in.SearchType, Limit: in.Limit, IncludeAlwaysLoaded: true,
		View: run.toolView(),
		Visible: func(name string) bool {
			return run.Findable(name) && (in.IncludeAlwaysLoaded || !run.Visible(name))
		},
	})
	if err != nil {
		return nil, fromIndexError(ToolSearchName, err)
	}
	// A tool is named as the renderings show it to the model (APIName),
	// which is the name it calls it by.
	for i := range res.Tools {
		if t, ok := run.Registry().Tool(res.Tools[i].Name); ok {
			res.Tools[i].LoadingMode = t.Loading
			res.Tools[i].Name = t.APIName
		}
	}
	return res, nil
}

// ---- skill_search, skill_get, skill_list -----------------------------

var skillSearchDesc = packs.ToolSpec{
	Name: SkillSearchName,
	Description: "Search the skills (written procedures for recurring tasks) by what a task needs. Returns names; read a " +
		"skill with skill_get. search_type fts (default: words), regex (a pattern) or exact (a skill name). " +
		"Answers {skills: [{name, title, trigger, task_type, score (0-1)}], query, search_type (the type actually used)}. " +
		"Errors: invalid_input for an empty query or a bad pattern.",
	InputSchema: json.RawMessage(`{"type":"object","required":["query"],"additionalProperties":false,"properties":{` +
		`"query":{"type":"string","description":"The task, in a few words; a regular expression for regex; a skill name for exact."},` +
		`"search_type":{"type":"string","enum":["fts","regex","exact"],"default":"fts"},` +
		`"limit":{"type":"integer","minimum":1,"maximum":20,"default":8},` +
		`"task_type":{"type":"string","enum":["browser","api","code","domain","unknown"],"description":"Only skills of this task type."}}}`),
	OutputSchema: json.RawMessage(`{"type":"object","required":["skills","query","search_type"],"properties":{` +
		`"skills":{"type":"array","items":{"type":"object","required":["name","trigger","score"],"properties":{` +
		`"name":{"type":"string"},"title":{"type":"string"},"trigger":{"type":"string"},"task_type":{"type":"string"},` +
		`"score":{"type":"number","minimum":0,"maximum":1}}}},` +
		`"query":{"type":"string"},"search_type":{"type":"string","enum":["exact","regex","fts"]}}}`),
	Examples: []packs.Example{
		{Args: json.RawMessage(`{"query":"log in to a website"}`), Description: "find skills for a task", Tags: []string{"minimal"}},
	},
	Category:   "discovery",
	Tags:       []string{"search", "skills"},
	Idempotent: true,
	Loading:    packs.LoadingAlways,
}

func (o BuiltinOptions) skillSearch(ctx context.Context, run *Run, args json.RawMessage) (any, error) {
	var in struct {
		Query      string `json:"query"`
		SearchType string `json:"search_type"`
		Limit      int    `json:"limit"`
		TaskType   string `json:"task_type"`
	}
	if err := decodeBuiltinArgs(args, &in); err != nil {
		return nil, err
	}
	res, err := o.Index.SearchSkills(ctx, index.SkillQuery{
		Query: in.Query, SearchType: in.SearchType, Limit: in.Limit, TaskType: in.TaskType,
		Scope: o.scope(run), VisibleTool: run.Findable, KnownTools: registryToolNames(run),
	})
	if err != nil {
		return nil, fromIndexError(SkillSearchName, err)
	}
	return res, nil
}

var skillGetDesc = packs.ToolSpec{
	Name: SkillGetName,
	Description: "Read skills by name (1 to 10 names from skill_search, skill_list or the skill directory). " +
		"Answers {skills: [{name, title, description, trigger, task_type, steps, preconditions, failure_modes, instructions}], " +
		"formatted_context (the skills as one text within max_tokens, ready to follow), missing (names with no skill)}. " +
		"format injection (default) wraps formatted_context in a <skill_context> block; raw does not. " +
		"Errors: invalid_input for no names, more than 10, or an empty name.",
	InputSchema: json.RawMessage(`{"type":"object","required":["names"],"additionalProperties":false,"properties":{` +
		`"names":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":10},` +
		`"format":{"type":"string","enum":["raw","injection"],"default":"injection"},` +
		`"max_tokens":{"type":"integer","minimum":200,"maximum":6000,"default":1500}}}`),
	OutputSchema: json.RawMessage(`{"type":"object","required":["skills","formatted_context"],"properties":{` +
		`"skills":{"type":"array","items":{"type":"object","required":["name","trigger","steps"],"properties":{` +
		`"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"trigger":{"type":"string"},` +
		`"task_type":{"type":"string"},"steps":{"type":"array","items":{"type":"string"}},` +
		`"preconditions":{"type":"array","items":{"type":"string"}},"failure_modes":{"type":"array","items":{"type":"string"}},` +
		`"instructions":{"type":"string"}}}},` +
		`"formatted_context":{"type":"string"},"missing":{"type":"array","items":{"type":"string"}}}}`),
	Examples: []packs.Example{
		{Args: json.RawMessage(`{"names":["log-triage"]}`), Description: "read one skill", Tags: []string{"minimal"}},
	},
	Category:   "discovery",
	Tags:       []string{"skills"},
	Idempotent: true,
	Loading:    packs.LoadingAlways,
}

func (o BuiltinOptions) skillGet(ctx context.Context, run *Run, args json.RawMessage) (any, error) {
	var in struct {
		Names     []string `json:"names"`
		Format    string   `json:"format"`
		MaxTokens int      `json:"max_tokens"`
	}
	if err := decodeBuiltinArgs(args, &in); err != nil {
		return nil, err
	}
	// A playbook's file name or title stands for its canonical name.
	for i, n := range in.Names {
		in.Names[i] = o.Skills.canonical(run.Context(), n)
	}
	res, err := o.Index.GetSkills(ctx, index.SkillGetRequest{
		Names: in.Names, Format: in.Format, MaxTokens: in.MaxTokens,
		Scope: o.scope(run), VisibleTool: run.Findable, KnownTools: registryToolNames(run),
	})
	if err != nil {
		return nil, fromIndexError(SkillGetName, err)
	}
	return res, nil
}

var skillListDesc = packs.ToolSpec{
	Name: SkillListName,
	Description: "List the skills page by page, by name, with a short trigger each; filter by task_type, origin " +
		"(pack or learned) and scope (project, tenant or global: where the skill is kept). " +
		"Answers {skills: [{name, trigger, task_type, origin, scope_mode}], page, page_size, total, has_more}. " +
		"Errors: invalid_input for a page out of range.",
	InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{` +
		`"page":{"type":"integer","minimum":1,"maximum":100000,"default":1},` +
		`"page_size":{"type":"integer","minimum":1,"maximum":100,"default":20},` +
		`"task_type":{"type":"string","enum":["browser","api","code","domain","unknown"]},` +
		`"origin":{"type":"string","enum":["pack","learned"]},` +
		`"scope":{"type":"string","enum":["project","tenant","global"]}}}`),
	OutputSchema: json.RawMessage(`{"type":"object","required":["skills","page","page_size","total","has_more"],"properties":{` +
		`"skills":{"type":"array","items":{"type":"object","required":["name","trigger"],"properties":{` +
		`"name":{"type":"string"},"trigger":{"type":"string"},"task_type":{"type":"string"},` +
		`"origin":{"type":"string"},"scope_mode":{"type":"string"}}}},` +
		`"page":{"type":"integer"},"page_size":{"type":"integer"},"total":{"type":"integer"},"has_more":{"type":"boolean"}}}`),
	Category:   "discovery",
	Tags:       []string{"skills"},
	Idempotent: true,
	Loading:    packs.LoadingAlways,
}

func (o BuiltinOptions) skillList(ctx context.Context, run *Run, args json.RawMessage) (any, error) {
	var in struct {
		Page     int    `json:"page"`
		PageSize int    `json:"page_size"`
		TaskType string `json:"task_type"`
		Origin   string `json:"origin"`
		Scope    string `json:"scope"`
	}
	if err := decodeBuiltinArgs(args, &in); err != nil {
		return nil, err
	}
	res, err := o.Index.ListSkills(ctx, index.SkillListRequest{
		Page: in.Page, PageSize: in.PageSize, TaskType: in.TaskType, Origin: in.Origin, ScopeMode: in.Scope,
		Scope: o.scope(run), VisibleTool: run.Findable, KnownTools: registryToolNames(run),
	})
	if err != nil {
		return nil, fromIndexError(SkillListName, err)
	}
	return res, nil
}
