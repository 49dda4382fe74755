// Package packs reads what is on disk: skills, packs and the operator's
// configuration, from folders on disk or embedded.
//
// A source (SourceSpec: bundled, installed, user, workspace) is a folder
// of skills and packs. A skill is an Agent Skills folder with a SKILL.md
// (ParseSkillMD) or a playbook file, *.skill.{md,yaml,yml,json,jsonl}
// (ParsePlaybook); a pack is a folder with a pack.yaml manifest (Parse)
// naming the Wasm modules it brings, the tools each exports (read from the
// module's exports or declared in the manifest), the capabilities it
// requests and its limits. LoadCatalog reads the sources in precedence
// order into one Catalog, a later source overriding an earlier one by
// name. ParseConfig reads skillhost.toml: sources, grants per pack, skill
// settings, limits and the other sections it reads or hands to the
// packages that own them. Manifests and skill files are checked against
// the JSON Schemas shipped in the package (schemas/), and every problem of
// every file names its file, line and field.
//
// The package only reads and validates; it runs nothing. Module bytes are
// read through the pack's fs.FS and handed to the host by the caller.
package packs

import (
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/skillhost/skillhost/grant"
	"github.com/skillhost/skillhost/internal/confwalk"
)

// ManifestFile is the name of a pack's manifest at the pack root.
const ManifestFile = "pack.yaml"

// Errors of the package. A *ManifestError carries the file, line and field
// of each manifest problem and matches ErrInvalidManifest; a *ConfigError
// does the same for the operator's config and matches ErrInvalidConfig.
var (
	// ErrNoManifest is returned when a folder has no pack.yaml.
	ErrNoManifest = errors.New("packs: no pack.yaml")
	// ErrInvalidManifest is matched by every manifest problem.
	ErrInvalidManifest = errors.New("packs: invalid manifest")
	// ErrDuplicateName is matched by a *DuplicateError: one source defines
	// two skills, tools or packs of the same name.
	ErrDuplicateName = errors.New("packs: duplicate name in one source")
	// ErrInvalidConfig is matched by every *ConfigError, a problem in the
	// operator's skillhost.toml. It is the one configuration sentinel of
	// every layer: host.ErrBadConfig, registry.ErrBadConfig and
	// skillhost.ErrBadConfig are the same value.
	ErrInvalidConfig = confwalk.ErrBadConfig
	// ErrMissingEnv is matched by a *MissingEnvError: a skill declares an
	// environment variable the config gives no value for.
	ErrMissingEnv = errors.New("packs: missing env value")
	// ErrToolSchema is matched by a *ToolSchemaError: a tool's input or
	// output schema has a part MCP clients refuse, with no equivalent
	// form they accept (see FitInputSchema).
	ErrToolSchema = errors.New("packs: tool schema MCP clients refuse")
)

// Pack is a loaded, validated pack.
type Pack struct {
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	// DefaultLoading is the loading mode of the pack's tools that do not
	// set one: LoadingDeferred unless the manifest says otherwise.
	DefaultLoading string `json:"default_loading"`
	// Source says where the pack came from: "bundled", "installed", "user"
	// or "workspace".
	Source string `json:"source,omitempty"`
	// Dir is the folder the pack was read from ("embedded:..." for the
	// bundled pack).
	Dir     string    `json:"dir,omitempty"`
	Modules []*Module `json:"modules"`
	// FS holds the pack's files; module paths are relative to it.
	FS fs.FS `json:"-"`
}

// Module is one Wasm module of a pack and the tools it exports.
type Module struct {
	Name string `json:"name"`
	// Path of the .wasm file inside the pack.
	Path string `json:"path"`
	// SHA256 is an optional hex pin of the module's bytes.
	SHA256 string `json:"sha256,omitempty"`
	// Request is what the module asks to be granted.
	Request Request `json:"request"`
	// Limits bound each call; zero fields take the operator's defaults.
	Limits grant.Limits `json:"limits"`
	// Tools lists the module's tools. When the manifest lists none, the
	// caller takes them from the module's describe export (and completes
	// them with Pack.CompleteTool).
	Tools []*ToolSpec `json:"tools,omitempty"`
}

// Request is the capabilities a module asks for. Nothing is granted unless
// the operator's grant allows it too.
type Request struct {
	// AllowedHosts are hostname globs for HTTP.
	AllowedHosts []string `yaml:"allowed_hosts" json:"allowed_hosts,omitempty"`
	// Mounts are guest paths; the operator maps each to a host folder.
	Mounts []MountRequest `yaml:"mounts" json:"mounts,omitempty"`
	// Env names the environment variables the module reads.
	Env []string `yaml:"env" json:"env,omitempty"`
	// Config holds default values for config_get.
	Config map[string]string `yaml:"config" json:"config,omitempty"`
	// Tools are the tools the module may call through tool_call.
	Tools []string `yaml:"tools" json:"tools,omitempty"`
	// Services are host capabilities ("mail.send") for capability_call.
	Services []string `yaml:"services" json:"services,omitempty"`
}

// MountRequest asks for a folder at Guest.
type MountRequest struct {
	Guest    string `yaml:"guest" json:"guest"`
	ReadOnly bool   `yaml:"read_only" json:"read_only,omitempty"`
}

// Loading modes of a tool. An empty mode means LoadingDeferred
// everywhere: CompleteTool fills it in, and the index and the registry
// read an empty mode the same way.
const (
	// LoadingAlways puts the tool in every run's visible catalog.
	LoadingAlways = "always"
	// LoadingDeferred keeps the tool out of the catalog until a search
	// finds it or a call activates it; the default for pack tools.
	LoadingDeferred = "deferred"
)

// DefaultCategory is the category of a tool that declares none.
const DefaultCategory = "general"

// ToolSpec describes one tool a module exports.
type ToolSpec struct {
	Name string `json:"name"`
	// Export is the module export implementing the tool (default: Name).
	Export string `json:"export"`
	// DisplayName is the name shown to people (default: the name
	// humanised, "word_count" → "Word count").
	DisplayName string `json:"display_name,omitempty"`
	Description string `json:"description"`
	// Icon is an optional icon: an emoji, a name or a path in the pack.
	Icon string `json:"icon,omitempty"`
	// Version of the tool (default: the pack's version).
	Version      string          `json:"version,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// Examples are sample calls; each one's Args matched InputSchema
	// when the manifest was read.
	Examples []Example `json:"examples,omitempty"`
	Tags     []string  `json:"tags,omitempty"`
	// Category groups tools in listings (default DefaultCategory).
	Category    string `json:"category,omitempty"`
	SideEffects bool   `json:"side_effects,omitempty"`
	Idempotent  bool   `json:"idempotent,omitempty"`
	// RequiresNetwork and RequiresFilesystem say what the tool needs; they
	// feed the derived risk level.
	RequiresNetwork    bool `json:"requires_network,omitempty"`
	RequiresFilesystem bool `json:"requires_filesystem,omitempty"`
	// RiskLevel is SAFE, MODERATE, DANGEROUS or CRITICAL; AUTO (or empty)
	// derives it, see Risk.
	RiskLevel string `json:"risk_level,omitempty"`
	Hidden    bool   `json:"hidden,omitempty"`
	// Loading is LoadingAlways or LoadingDeferred (default: the pack's
	// DefaultLoading).
	Loading string `json:"loading,omitempty"`
	// ConfigParams are the settings an operator may give the tool.
	ConfigParams []ConfigParam `json:"config_params,omitempty"`
	// Written lists the keys the tool's pack.yaml entry wrote, sorted
	// ("description", "idempotent", ...); empty for a tool that no entry
	// declared. MergeTool lets exactly these override what the module's
	// describe export reports.
	Written []string `json:"-"`
}

// Example is one sample call of a tool.
type Example struct {
	// Args is the arguments object, valid against the tool's input schema.
	Args        json.RawMessage `json:"args"`
	Description string          `json:"description,omitempty"`
	Tags        []string        `json:"tags,omitempty"`
}

// Types of a ConfigParam.
const (
	ParamString  = "string"
	ParamNumber  = "number"
	ParamBoolean = "boolean"
	ParamSelect  = "select" // one of Options
	ParamText    = "text"   // a multi-line string
	ParamSecret  = "secret" // never has a default; the operator supplies it
	ParamPath    = "path"   // a file or folder path
	ParamURL     = "url"    // an absolute URL
	ParamCode    = "code"   // source text shown in a code editor
)

// ConfigParam is one setting of a tool, given by the operator and read by
// the tool through config_get.
//
// A secret param never has a default: the manifest is public, so a
// default would be a published secret, and a listing never shows a
// secret's value.
type ConfigParam struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is one of the Param* constants.
	Type string `json:"type"`
	// Default is the JSON value used when the operator gives none; it has
	// the param's type (a string for select, text, path, url and code).
	Default json.RawMessage `json:"default,omitempty"`
	// Min, Max and Step bound a number param.
	Min  *float64 `json:"min,omitempty"`
	Max  *float64 `json:"max,omitempty"`
	Step *float64 `json:"step,omitempty"`
	// Options are the choices of a select param.
	Options     []string `json:"options,omitempty"`
	Unit        string   `json:"unit,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Required    bool     `json:"required,omitempty"`
}

// Risk returns the tool's risk level: the declared one, or when AUTO,
// SAFE for an idempotent tool without side effects, DANGEROUS for side
// effects with network or filesystem access, and MODERATE otherwise — a
// tool that declares neither flag is not assumed safe.
func (t *ToolSpec) Risk() string {
	if t.RiskLevel != "" && t.RiskLevel != "AUTO" {
		return t.RiskLevel
	}
	switch {
	case !t.SideEffects && t.Idempotent:
		return "SAFE"
	case t.SideEffects && (t.RequiresNetwork || t.RequiresFilesystem):
		return "DANGEROUS"
	}
	return "MODERATE"
}
