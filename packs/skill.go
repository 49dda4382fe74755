package packs

// SkillKind tells how a skill was written.
type SkillKind string

const (
	// KindAgent is an Agent Skills folder or flat file: SKILL.md with YAML
	// frontmatter and Markdown instructions.
	KindAgent SkillKind = "agent"
	// KindPlaybook is a playbook skill (trigger → steps) read from a
	// *.skill.md, *.skill.yaml, *.skill.yml, *.skill.json or *.skill.jsonl
	// file.
	KindPlaybook SkillKind = "playbook"
)

// Task types a playbook skill may declare.
const (
	TaskBrowser = "browser"
	TaskAPI     = "api"
	TaskCode    = "code"
	TaskDomain  = "domain"
	TaskUnknown = "unknown"
)

// SkillSpec is one skill, whichever format it was written in. Fields a format
// does not have stay zero.
type SkillSpec struct {
	// Name identifies the skill. Agent skills use the folder name; playbook
	// skills without one get pack.<pack>.<slug>.
	Name string    `json:"name"`
	Kind SkillKind `json:"kind"`
	// Title is a short human label (playbook skills).
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`

	// Agent Skills fields.
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	// AllowedTools lists the tools the skill may use: the Agent Skills
	// allowed-tools field or the subagent allowed_tools list. Empty means
	// no restriction was declared.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Instructions is the Markdown body after the frontmatter.
	Instructions string `json:"instructions,omitempty"`
	// Resources are the files of an agent skill's folder besides SKILL.md
	// (scripts/, references/, assets/ and any others), sorted by path.
	Resources []Resource `json:"resources,omitempty"`
	// Subagent holds the settings used when the skill runs as a subagent.
	Subagent *Subagent `json:"subagent,omitempty"`

	// Playbook fields.
	Trigger       string   `json:"trigger,omitempty"`
	Steps         []string `json:"steps,omitempty"`
	TaskType      string   `json:"task_type,omitempty"`
	Tags          []string `json:"tags,omitempty"`
	Preconditions []string `json:"preconditions,omitempty"`
	FailureModes  []string `json:"failure_modes,omitempty"`
	// Extra holds fields the format does not define: a playbook's extra
	// keys, or frontmatter fields of an agent skill that skillhost does not
	// know (kept, with a warning each).
	Extra map[string]any `json:"extra,omitempty"`

	// ContentHash is the hex sha256 of the canonical JSON of the
	// normalised fields; it changes when the skill's content does.
	ContentHash string `json:"content_hash"`

	// Provenance: the pack and source it came from and the file it was
	// read from (relative to the source root).
	Pack   string `json:"pack,omitempty"`
	Source string `json:"source,omitempty"`
	File   string `json:"file"`
	// Line is the line of the skill in File (JSONL: its line; else 1).
	Line int `json:"line,omitempty"`

	// Warnings are problems that do not stop the skill from loading, such
	// as an instructions body longer than 500 lines.
	Warnings []string `json:"warnings,omitempty"`
}

// Resource is one file a skill brings along.
type Resource struct {
	// Path is relative to the skill folder, with forward slashes.
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Subagent holds the settings of a skill that runs as its own LLM loop.
type Subagent struct {
	// Model overrides the model the subagent uses ("" keeps the default).
	Model string `json:"model,omitempty"`
	// MaxIterations bounds the subagent's loop (default 10).
	MaxIterations int `json:"max_iterations"`
	// MaxIterationsSet says the skill declared max_iterations itself, so
	// [skills.defaults] does not replace it.
	MaxIterationsSet bool `json:"-"`
	// Env names the environment variables the skill needs; the values come
	// only from the operator's config.
	Env []string `json:"env,omitempty"`
	// Capabilities are namespaced host services ("mail.send").
	Capabilities []string `json:"capabilities,omitempty"`
	// ChatTypes restricts where the skill may be invoked.
	ChatTypes []string `json:"chat_types,omitempty"`
	Sensitive bool     `json:"sensitive,omitempty"`
	Authors   []string `json:"authors,omitempty"`
	Rationale string   `json:"rationale,omitempty"`
	// Packages are recorded only; skillhost installs nothing.
	Packages []string `json:"packages,omitempty"`
}

// DefaultMaxIterations is a subagent's loop bound when the skill sets none.
const DefaultMaxIterations = 10
