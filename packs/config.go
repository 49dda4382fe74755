package packs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/skillhost/skillhost/grant"
	"github.com/skillhost/skillhost/internal/confwalk"
)

// ConfigFile is the name of the operator's config file, looked for in the
// working directory unless ConfigEnv names another.
const ConfigFile = "skillhost.toml"

// ConfigEnv is the environment variable that names the config file to read
// instead of ./skillhost.toml.
const ConfigEnv = "SKILLHOST_CONFIG"

// DefaultStateDir is where skillhost keeps its index and compile cache when
// the config does not say.
const DefaultStateDir = ".skillhost"

// DefaultUserSkills is the user's own skills folder.
const DefaultUserSkills = "~/.skillhost/skills"

// DefaultWorkspaceSkills is the project's skills folder.
const DefaultWorkspaceSkills = "./skills"

// Scope modes a pack's skills may be stored under.
const (
	ScopeProject = "project"
	ScopeTenant  = "tenant"
	ScopeGlobal  = "global"
)

// topLevelKeys are the keys of the file, in the order messages list them.
const topLevelKeys = "state_dir, sources, skills, packs, limits, sandbox, tool_search, tool_examples, skill_discovery, server, tenants, capabilities"

// maxConfigBytes bounds what is read of a config file.
const maxConfigBytes = 1 << 20

// defaultsSection is the [skills.<name>] section that holds values for every
// skill; no skill can be configured under that name.
const defaultsSection = "defaults"

var (
	// configNameRE is what a skill or pack name in a section header may be.
	configNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	// serviceRE is a namespaced host service such as mail.send.
	serviceRE = regexp.MustCompile(`^[a-z0-9_-]+(\.[a-z0-9_-]+)+$`)
	// hostGlobRE is a host name or glob in allowed_hosts.
	hostGlobRE = regexp.MustCompile(`^[A-Za-z0-9*?.\-\[\]]+(:[0-9]+)?$`)
)

// ConfigError is one problem in the operator's config file: FILE:LINE:
// message, with the key path. It matches ErrInvalidConfig (and every other
// layer's ErrBadConfig, the same value).
type ConfigError = confwalk.Error

// MissingEnvError says that a skill declares an environment variable the
// config gives no value for, and where to add it.
type MissingEnvError struct {
	Skill string
	Name  string
	// File is the config file the value belongs in.
	File string
}

func (e *MissingEnvError) Error() string {
	section := toml.Key{"skills", e.Skill}.String()
	return fmt.Sprintf("skill %q needs %s: add %s = \"…\" under [%s] in %s", e.Skill, e.Name, e.Name, section, e.File)
}

// Is makes a *MissingEnvError match ErrMissingEnv.
func (e *MissingEnvError) Is(target error) bool { return target == ErrMissingEnv }

// Config is the operator's configuration: where skills come from, and what
// each skill and pack is allowed. The zero value is not useful; get one
// from LoadConfig, ParseConfig or DefaultConfig. A nil *Config behaves as
// DefaultConfig in every method. Printing or encoding a Config never shows
// a secret value.
type Config struct {
	// File is the config file read ("" when none was).
	File string `json:"file,omitempty"`
	// StateDir holds the index and compile cache.
	StateDir string        `json:"state_dir"`
	Sources  SourcesConfig `json:"sources"`
	// Defaults holds the [skills.defaults] values, used where a skill's
	// own section sets none.
	Defaults SkillConfig `json:"defaults"`
	// Skills holds the [skills.<name>] sections by skill name.
	Skills map[string]SkillConfig `json:"skills,omitempty"`
	// Packs holds the [packs.<name>] grants by pack name.
	Packs map[string]PackGrant `json:"packs,omitempty"`
	// Limits holds the [limits] section: the operator's default ceilings
	// for every pack. A pack's own limits are held to its section's
	// limits, else to these, else to the built-in defaults.
	Limits grant.Limits `json:"limits,omitzero"`
	// Sandbox holds the [sandbox] section: the operator's defaults for
	// how every pack's calls are run.
	Sandbox grant.Sandbox `json:"sandbox,omitzero"`
	// sections holds what the owners of the tables packs does not read
	// made of them ([server] and [tenants] are the server's), by owner
	// (Owned).
	sections map[string]any
	// Capabilities holds the [capabilities] section: the external
	// commands that serve a guest's capability_call, by namespace.
	Capabilities CapabilitiesConfig `json:"capabilities,omitzero"`
	// stateDirSet records that the file sets state_dir itself.
	stateDirSet bool
	// owned holds the sections other packages own (ownedSections), by
	// name: a pointer to the owner's type when the owner is linked in and
	// registered it (read with the rest of the file), else the section
	// unread. Section hands one over.
	owned map[string]any
	// walker reads an unread one; mu makes its reads one at a time.
	walker *confwalk.Walker
	mu     *sync.Mutex
}

// ownedSections are the top-level sections of the file that other
// packages own, as caddy's apps own theirs: [tool_search],
// [tool_examples] and [skill_discovery] (registry.ToolSearchConfig,
// registry.ExamplesConfig, registry.SkillsConfig).
// ParseConfig decodes each into its owner's type, registered with the
// shared walker, and checks it with the owner's Validate, so that their
// problems are reported with the others, in file order.
var ownedSections = []string{"tool_search", "tool_examples", "skill_discovery"}

// Section sets *dst to the file's top-level section name, one of the
// sections other packages own; dst is a pointer to the owner's section
// type. A section the file does not have leaves *dst as it is. The
// section was checked by ParseConfig when its owner was linked in; when it
// was not, it is decoded now and every problem returned, joined, each a
// *ConfigError with its line.
func (c *Config) Section(name string, dst any) error {
	if c == nil {
		return nil
	}
	switch v := c.owned[name].(type) {
	case nil:
		return nil
	case tomlValue:
		c.mu.Lock()
		defer c.mu.Unlock()
		w := c.walker.Fork()
		w.Decode(v, dst)
		return w.Err()
	default:
		d, src := reflect.ValueOf(dst), reflect.ValueOf(v)
		if d.Kind() != reflect.Pointer || d.Type() != src.Type() {
			return fmt.Errorf("%w: section %s is a %s, not a %T", ErrInvalidConfig, name, src.Type(), dst)
		}
		d.Elem().Set(src.Elem())
		return nil
	}
}

// SourcesConfig is the [sources] section. Relative paths are relative to
// the folder of the config file; "~" is the user's home.
type SourcesConfig struct {
	// Bundled includes the skills compiled into the binary (default true).
	Bundled bool `json:"bundled"`
	// Installed are folders of installed packs, lowest precedence first.
	Installed []string `json:"installed,omitempty"`
	// User is the user's skills folder ("" turns it off).
	User string `json:"user"`
	// Workspace is the project's skills folder ("" turns it off).
	Workspace string `json:"workspace"`
	// MaxDepth bounds how deep a source is searched: 0 means
	// DefaultMaxDepth, -1 unlimited.
	MaxDepth int `json:"max_depth"`

	userSet, workspaceSet bool
}

// SkillConfig is a [skills.<name>] section (or [skills.defaults]).
type SkillConfig struct {
	// Enabled is nil when the section does not set it.
	Enabled *bool `json:"enabled,omitempty"`
	// Model overrides the model the skill runs with.
	Model string `json:"model,omitempty"`
	// MaxIterations overrides the skill's iteration bound (0: not set).
	MaxIterations int `json:"max_iterations,omitempty"`
	// AllowChatIDs restricts the chats the skill may be invoked from. nil
	// means not set here; an empty list means no restriction.
	AllowChatIDs []string `json:"allow_chat_ids,omitempty"`
	// Env holds the UPPER_CASE keys of the section: values for the
	// environment variables the skill declares.
	Env map[string]Secret `json:"env,omitempty"`
	// Line is the line of the section header in the config file.
	Line int `json:"-"`
}

// SkillSettings are a skill's effective settings: its config section, then
// its own file, then [skills.defaults].
type SkillSettings struct {
	Enabled       bool
	Model         string
	MaxIterations int
	// AllowChatIDs is nil when no restriction applies.
	AllowChatIDs []string
}

// PackGrant is what the operator grants a pack's modules in [packs.<name>].
// A module gets the smaller of its request and this grant.
type PackGrant struct {
	// Enabled false removes the pack, its tools and skills (default true).
	Enabled bool `json:"enabled"`
	// AllowedHosts are host name globs HTTP requests may reach.
	AllowedHosts []string `json:"allowed_hosts,omitempty"`
	// AllowPrivateNetwork lets requests reach loopback, private and
	// link-local addresses.
	AllowPrivateNetwork bool `json:"allow_private_network,omitempty"`
	// Mounts map host folders to the guest paths modules ask for.
	Mounts []grant.Mount `json:"mounts,omitempty"`
	// Env holds the values of environment variables modules declare.
	Env map[string]Secret `json:"env,omitempty"`
	// Services are the host services (ns.name) modules may call.
	Services []string `json:"services,omitempty"`
	// Tools are the tools modules may call through tool_call; "*" allows
	// every tool a module requests. A module requesting "*" gets these.
	Tools []string `json:"tools,omitempty"`
	// Limits are the pack's ceilings: a module's limits are held to them.
	// A limit not set here is held to the [limits] default, else to the
	// built-in one; a limit set here may be above either.
	Limits grant.Limits `json:"limits"`
	// Isolation is where the pack's calls run: grant.IsolationInProcess
	// or grant.IsolationProcess; "" when the section does not say, and then the
	// [sandbox] default holds.
	Isolation grant.Isolation `json:"isolation,omitempty"`
	// ScopeMode is project, tenant or global: the section's scope_mode,
	// else project. The engine stores the skills of a pack whose section
	// sets none (ScopeModeSet false) at its default scope mode instead.
	ScopeMode string `json:"scope_mode"`
	// UpdateExisting lets a changed pack skill replace the stored one
	// (default true).
	UpdateExisting bool `json:"update_existing"`
	// Pinned names skills always listed in the skill directory.
	Pinned []string `json:"pinned,omitempty"`
	// Config holds the [packs.<name>.config] values by key: the settings
	// the pack's tools declare as config_params, read by modules through
	// config_get. CheckPackConfig checks them against the declarations.
	Config map[string]ConfigValue `json:"config,omitempty"`
	// Line is the line of the section header in the config file.
	Line int `json:"-"`

	// scopeSet records that the section sets scope_mode itself.
	scopeSet bool
}

// ScopeModeSet reports whether the pack's own section sets scope_mode: a
// default scope mode (the file's or the embedder's) applies only to packs
// whose section does not.
func (g PackGrant) ScopeModeSet() bool { return g.scopeSet }

// StateDirSet reports whether the config file sets state_dir itself;
// without it, StateDir is .skillhost beside the file, and skillhost keeps
// its state in the user's folders instead (see skillhost.StateDir).
func (c *Config) StateDirSet() bool { return c != nil && c.stateDirSet }

// DefaultConfig returns the configuration used when there is no config
// file: bundled skills, ~/.skillhost/skills and ./skills, depth 3, and no
// grants. Relative paths are kept relative to the working directory.
func DefaultConfig() *Config {
	c := &Config{
		StateDir: DefaultStateDir,
		Sources: SourcesConfig{
			Bundled:   true,
			Workspace: filepath.Clean(DefaultWorkspaceSkills),
		},
	}
	if home, err := os.UserHomeDir(); err == nil {
		c.Sources.User = filepath.Join(home, ".skillhost", "skills")
	}
	return c
}

// LoadConfig reads the config file at path. An empty path means the file
// named by $SKILLHOST_CONFIG, or else ./skillhost.toml; when that default
// file does not exist, LoadConfig returns DefaultConfig. A file named
// explicitly must exist. Relative paths inside the file are taken relative
// to its folder.
func LoadConfig(path string) (*Config, error) {
	explicit := path != ""
	if !explicit {
		path = os.Getenv(ConfigEnv)
		explicit = path != ""
	}
	if !explicit {
		path = ConfigFile
	}
	p, err := expandHome(path)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	f, err := os.Open(p)
	if err != nil {
		if !explicit && errors.Is(err, os.ErrNotExist) {
			return DefaultConfig(), nil
		}
		return nil, fmt.Errorf("reading config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return ParseConfig(p, data)
}

// ParseConfig reads a config file's bytes; file names it in errors and its
// folder is the base of relative paths. Every problem found is returned,
// joined (errors.Join), each a *ConfigError with the line where known.
func ParseConfig(file string, data []byte) (*Config, error) {
	w, top, err := confwalk.Parse(file, data, maxConfigBytes)
	if err != nil {
		return nil, err
	}
	r := &tomlReader{Walker: w, base: w.Base()}
	owned := map[string][]tomlValue{}
	c := &Config{
		walker:   w,
		mu:       new(sync.Mutex),
		File:     file,
		StateDir: filepath.Join(r.base, DefaultStateDir),
		Sources:  SourcesConfig{Bundled: true},
	}
	for _, kv := range top {
		switch kv.Key.Last() {
		case "state_dir":
			if s, ok := r.Path(kv); ok {
				c.StateDir, c.stateDirSet = s, true
			}
		case "sources":
			r.sources(c, kv)
		case "skills":
			r.skills(c, kv)
		case "packs":
			r.packs(c, kv)
		case "limits":
			r.Decode(kv, &c.Limits)
		case "sandbox":
			r.Decode(kv, &c.Sandbox)
		case "capabilities":
			r.capabilities(c, kv)
		default:
			if sectionOf(kv.Key.Last()) != "" {
				owned[kv.Key.Last()] = append(owned[kv.Key.Last()], kv)
				continue
			}
			if !slices.Contains(ownedSections, kv.Key.Last()) {
				r.Errorf(kv, "unknown key %q; expected one of %s", kv.Key.String(), topLevelKeys)
				continue
			}
			if c.owned == nil {
				c.owned = map[string]any{}
			}
			c.owned[kv.Key.Last()] = kv
			if v, ok := confwalk.NewSection(kv.Key.Last()); ok {
				r.Decode(kv, v)
				c.owned[kv.Key.Last()] = v
			}
		}
	}
	readSections(r.Walker, c, owned)
	if !c.Sources.userSet {
		if home, err := os.UserHomeDir(); err == nil {
			c.Sources.User = filepath.Join(home, ".skillhost", "skills")
		}
	}
	if !c.Sources.workspaceSet {
		c.Sources.Workspace = filepath.Join(r.base, DefaultWorkspaceSkills)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// tomlReader reads the sections packs owns with the shared walker.
type tomlReader struct {
	*confwalk.Walker
	base string
}

// tomlValue is one key of the document and its value.
type tomlValue = confwalk.Value

func sortedNames[V any](m map[string]V) []string { return confwalk.SortedNames(m) }

// expandHome replaces a leading "~" or "~/" with the user's home folder.
func expandHome(p string) (string, error) { return confwalk.ExpandHome(p) }

func (r *tomlReader) sources(c *Config, kv tomlValue) {
	keys, ok := r.Table(kv, "a table ([sources])")
	if !ok {
		return
	}
	s := &c.Sources
	for _, k := range keys {
		switch k.Key.Last() {
		case "bundled":
			if b, ok := r.Bool(k); ok {
				s.Bundled = b
			}
		case "installed":
			items, ok := r.Array(k, "an array of folder paths")
			if !ok {
				continue
			}
			for _, it := range items {
				if p, ok := r.Path(it); ok {
					s.Installed = append(s.Installed, p)
				}
			}
		case "user", "workspace":
			dst, set := &s.User, &s.userSet
			if k.Key.Last() == "workspace" {
				dst, set = &s.Workspace, &s.workspaceSet
			}
			if v, ok := k.Val.(string); ok && v == "" {
				*dst, *set = "", true // turned off
				continue
			}
			if p, ok := r.Path(k); ok {
				*dst, *set = p, true
			}
		case "max_depth":
			n, ok := r.Int(k)
			if !ok {
				continue
			}
			if n < -1 || n > 1000 {
				r.Errorf(k, "%s must be -1 (unlimited), 0 (the default, %d) or a depth from 1 to 1000, got %d", k.Key, DefaultMaxDepth, n)
				continue
			}
			s.MaxDepth = int(n)
		default:
			r.Errorf(k, "unknown key %q; expected one of bundled, installed, user, workspace, max_depth", k.Key.String())
		}
	}
}

// isEnvCandidate tells whether a key in a [skills.x] section is meant as an
// environment variable: it has capital letters and no small ones.
func isEnvCandidate(k string) bool {
	return strings.ToUpper(k) == k && strings.ToLower(k) != k
}

func (r *tomlReader) skills(c *Config, kv tomlValue) {
	sections, ok := r.Table(kv, "a table of [skills.<name>] sections")
	if !ok {
		return
	}
	for _, sec := range sections {
		name := sec.Key.Last()
		if _, isTable := sec.Val.(map[string]any); !isTable && (slices.Contains(confwalk.SectionKeys("skill_discovery"), name) || name == "cache_dir" || name == "skill_packs") {
			r.Errorf(sec, "%s is not a skill section: engine-wide skill settings go in [skill_discovery] (every table under [skills] configures the skill of its name)", sec.Key)
			continue
		}
		if !configNameRE.MatchString(name) {
			r.Errorf(sec, "skill name %q in [%s] must be letters, digits, '.', '-' or '_'", name, sec.Key)
			continue
		}
		sc, ok := r.skillSection(sec, name == defaultsSection)
		if !ok {
			continue
		}
		if name == defaultsSection {
			c.Defaults = sc
			continue
		}
		if c.Skills == nil {
			c.Skills = map[string]SkillConfig{}
		}
		c.Skills[name] = sc
	}
}

func (r *tomlReader) skillSection(sec tomlValue, defaults bool) (SkillConfig, bool) {
	sc := SkillConfig{Line: sec.Line}
	keys, ok := r.Table(sec, fmt.Sprintf("a table ([%s])", sec.Key))
	if !ok {
		return sc, false
	}
	for _, k := range keys {
		name := k.Key.Last()
		switch name {
		case "enabled":
			if b, ok := r.Bool(k); ok {
				sc.Enabled = &b
			}
		case "model":
			if s, ok := r.Str(k); ok {
				sc.Model = s
			}
		case "max_iterations":
			if n, ok := r.Int(k); ok {
				if n < 1 || n > 1000 {
					r.Errorf(k, "%s must be from 1 to 1000, got %d", k.Key, n)
					continue
				}
				sc.MaxIterations = int(n)
			}
		case "allow_chat_ids":
			if ids, ok := r.Strings(k, true); ok {
				if ids == nil {
					ids = []string{}
				}
				sc.AllowChatIDs = ids
			}
		default:
			switch {
			case sec.Key.Last() == "directory" && slices.Contains(confwalk.SectionKeys("skill_discovery", "directory"), name):
				r.Errorf(k, "unknown setting %q in [%s]: this section configures the skill named directory; the skill directory is configured in [skill_discovery.directory]", name, sec.Key)
			case !isEnvCandidate(name):
				r.Errorf(k, "unknown setting %q in [%s]; env values must be UPPER_CASE", name, sec.Key)
			case !envRE.MatchString(name):
				r.Errorf(k, "%q in [%s] is not a valid environment variable name; use A-Z, 0-9 and _, not starting with a digit", name, sec.Key)
			case defaults:
				r.Errorf(k, "%s cannot be set in [%s]: env values are given to one skill at a time; put it under the [skills.<name>] section of the skill that declares it", name, sec.Key)
			default:
				if s, ok := r.Str(k); ok {
					if sc.Env == nil {
						sc.Env = map[string]Secret{}
					}
					sc.Env[name] = NewSecret(s)
				}
			}
		}
	}
	return sc, true
}

func (r *tomlReader) packs(c *Config, kv tomlValue) {
	if g := r.packGrants(kv, "a table of [packs.<name>] sections"); g != nil {
		c.Packs = g
	}
}

// packGrants reads a table of pack sections by pack name: [packs.<name>],
// or a tenant's [tenants.<id>.grants.<name>]. It returns nil when there
// are none.
func (r *tomlReader) packGrants(kv tomlValue, want string) map[string]PackGrant {
	sections, ok := r.Table(kv, want)
	if !ok {
		return nil
	}
	var out map[string]PackGrant
	for _, sec := range sections {
		name := sec.Key.Last()
		if !nameRE.MatchString(name) {
			r.Errorf(sec, "pack name %q in [%s] must be lowercase letters and digits separated by single - or _", name, sec.Key)
			continue
		}
		g, ok := r.packSection(sec)
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]PackGrant{}
		}
		out[name] = g
	}
	return out
}

func defaultGrant() PackGrant {
	return PackGrant{Enabled: true, ScopeMode: ScopeProject, UpdateExisting: true}
}

func (r *tomlReader) packSection(sec tomlValue) (PackGrant, bool) {
	g := defaultGrant()
	g.Line = sec.Line
	keys, ok := r.Table(sec, fmt.Sprintf("a table ([%s])", sec.Key))
	if !ok {
		return g, false
	}
	for _, k := range keys {
		switch k.Key.Last() {
		case "enabled":
			if b, ok := r.Bool(k); ok {
				g.Enabled = b
			}
		case "allowed_hosts":
			hosts, _ := r.Strings(k, false)
			for i, h := range hosts {
				if !hostGlobRE.MatchString(h) {
					r.Errorf(k, "%s[%d] %q must be a host name or glob such as api.example.com or *.example.com, without scheme or path", k.Key, i, h)
					continue
				}
				g.AllowedHosts = append(g.AllowedHosts, strings.ToLower(h))
			}
		case "allow_private_network":
			if b, ok := r.Bool(k); ok {
				g.AllowPrivateNetwork = b
			}
		case "mounts":
			items, ok := r.Array(k, "an array of tables such as {host = \"/data\", guest = \"/data\", read_only = true}")
			if !ok {
				continue
			}
			for _, it := range items {
				if m, ok := r.mount(it); ok {
					g.Mounts = append(g.Mounts, m)
				}
			}
		case "env":
			vars, ok := r.Table(k, "a table of NAME = \"value\"")
			if !ok {
				continue
			}
			for _, v := range vars {
				name := v.Key.Last()
				if !envRE.MatchString(name) {
					r.Errorf(v, "%q in %s is not a valid environment variable name; use A-Z, 0-9 and _, not starting with a digit", name, k.Key)
					continue
				}
				if s, ok := r.Str(v); ok {
					if g.Env == nil {
						g.Env = map[string]Secret{}
					}
					g.Env[name] = NewSecret(s)
				}
			}
		case "services":
			svcs, _ := r.Strings(k, false)
			for i, s := range svcs {
				if !serviceRE.MatchString(s) {
					r.Errorf(k, "%s[%d] %q must be a namespaced service such as mail.send", k.Key, i, s)
					continue
				}
				g.Services = append(g.Services, s)
			}
		case "tools":
			g.Tools = r.toolNames(k)
		case "limits":
			r.Decode(k, &g.Limits)
		case "isolation":
			if s, ok := r.isolation(k); ok {
				g.Isolation = s
			}
		case "scope_mode":
			s, ok := r.Str(k)
			if !ok {
				continue
			}
			if r.scopeMode(k, s) {
				g.ScopeMode, g.scopeSet = s, true
			}
		case "update_existing":
			if b, ok := r.Bool(k); ok {
				g.UpdateExisting = b
			}
		case "pinned":
			if p, ok := r.Strings(k, false); ok {
				g.Pinned = p
			}
		case "config":
			vals, ok := r.Table(k, "a table of settings such as {region = \"eu\", max_results = 20}")
			if !ok {
				continue
			}
			for _, v := range vals {
				cv, ok := r.configValue(v)
				if !ok {
					continue
				}
				if g.Config == nil {
					g.Config = map[string]ConfigValue{}
				}
				g.Config[v.Key.Last()] = cv
			}
		case "name":
			r.Errorf(k, "%s is not a setting: a pack's name is its section's, [packs.<name>], and must equal the name in its pack.yaml", k.Key)
		case "path":
			r.Errorf(k, "%s is not a setting: packs are found in the folders of [sources]; add the folder that holds the pack to [sources] installed", k.Key)
		case "format":
			r.Errorf(k, "%s is not a setting: the format of each skill file is read from its name (SKILL.md, *.skill.md, *.skill.yaml, *.skill.yml, *.skill.json, *.skill.jsonl)", k.Key)
		case "update_existing_pack_skills":
			r.Errorf(k, "unknown key %q; the setting is called update_existing", k.Key.String())
		case "pinned_skill_names":
			r.Errorf(k, "unknown key %q; the setting is called pinned", k.Key.String())
		default:
			r.Errorf(k, "unknown key %q; expected one of enabled, allowed_hosts, allow_private_network, mounts, env, services, tools, limits, isolation, scope_mode, update_existing, pinned, config", k.Key.String())
		}
	}
	return g, true
}

// toolNames reads a pack's tools: tool names, or "*" alone for every tool
// its modules request.
func (r *tomlReader) toolNames(kv tomlValue) []string {
	names, _ := r.Strings(kv, false)
	var out []string
	for i, n := range names {
		if n != "*" && !configNameRE.MatchString(n) {
			r.Errorf(kv, "%s[%d] %q must be a tool name (letters, digits, '.', '-' or '_') or \"*\" for every tool the pack's modules request", kv.Key, i, n)
			continue
		}
		out = append(out, n)
	}
	if len(out) > 1 && slices.Contains(out, "*") {
		r.Errorf(kv, "%s lists \"*\" beside tool names; \"*\" already allows every tool the pack's modules request: write [\"*\"] alone or name the tools", kv.Key)
		return nil
	}
	return out
}

func (r *tomlReader) mount(it tomlValue) (grant.Mount, bool) {
	var m grant.Mount
	keys, ok := r.Table(it, "a table such as {host = \"/data\", guest = \"/data\", read_only = true}")
	if !ok {
		return m, false
	}
	good := true
	for _, k := range keys {
		switch k.Key.Last() {
		case "host":
			p, ok := r.Path(k)
			m.HostPath, good = p, good && ok
		case "guest":
			s, ok := r.Str(k)
			if ok && (!strings.HasPrefix(s, "/") || strings.Contains(s, "..")) {
				r.Errorf(k, "%s %q must be an absolute guest path without ..", k.Key, s)
				ok = false
			}
			m.GuestPath, good = s, good && ok
		case "read_only":
			b, ok := r.Bool(k)
			m.ReadOnly, good = b, good && ok
		default:
			r.Errorf(k, "unknown key %q; expected one of host, guest, read_only", k.Key.String())
			good = false
		}
	}
	if m.HostPath == "" || m.GuestPath == "" {
		if good {
			r.Errorf(it, "%s needs both host and guest", it.Key)
		}
		return m, false
	}
	return m, good
}

// isolation reads a pack's isolation mode as [sandbox] isolation is read.
func (r *tomlReader) isolation(kv tomlValue) (grant.Isolation, bool) {
	s, ok := r.Str(kv)
	if !ok {
		return "", false
	}
	iso, err := grant.ParseIsolation(s)
	if err != nil {
		r.Errorf(kv, "%s %v", kv.Key, err)
		return "", false
	}
	return iso, true
}

// scopeMode checks a scope mode read from kv.
func (r *tomlReader) scopeMode(kv tomlValue, s string) bool {
	switch s {
	case ScopeProject, ScopeTenant, ScopeGlobal:
		return true
	}
	r.Errorf(kv, "%s %q must be one of project, tenant, global", kv.Key, s)
	return false
}

// SkillSettings returns the effective settings of s: each value from the
// skill's config section, else from the skill itself, else from
// [skills.defaults]. A skill is enabled unless a section says otherwise.
func (c *Config) SkillSettings(s *SkillSpec) SkillSettings {
	out := SkillSettings{Enabled: true}
	if s == nil {
		return out
	}
	if s.Subagent != nil {
		out.Model, out.MaxIterations = s.Subagent.Model, s.Subagent.MaxIterations
	}
	if c == nil {
		return out
	}
	own, def := c.Skills[s.Name], c.Defaults
	switch {
	case own.Enabled != nil:
		out.Enabled = *own.Enabled
	case def.Enabled != nil:
		out.Enabled = *def.Enabled
	}
	switch {
	case own.Model != "":
		out.Model = own.Model
	case out.Model == "":
		out.Model = def.Model
	}
	switch {
	case own.MaxIterations != 0:
		out.MaxIterations = own.MaxIterations
	case def.MaxIterations != 0 && (s.Subagent == nil || !s.Subagent.MaxIterationsSet):
		// The skill's own bound is the format default: the operator's
		// default replaces it.
		out.MaxIterations = def.MaxIterations
	}
	switch {
	case own.AllowChatIDs != nil:
		out.AllowChatIDs = own.AllowChatIDs
	default:
		out.AllowChatIDs = def.AllowChatIDs
	}
	if len(out.AllowChatIDs) == 0 {
		out.AllowChatIDs = nil
	}
	return out
}

// skillEnabled reports whether the config leaves the named skill enabled,
// and the section that decides it.
func (c *Config) skillEnabled(name string) (bool, string) {
	if c == nil {
		return true, ""
	}
	if e := c.Skills[name].Enabled; e != nil {
		return *e, "[" + toml.Key{"skills", name}.String() + "] enabled = " + strconv.FormatBool(*e)
	}
	if e := c.Defaults.Enabled; e != nil {
		return *e, "[skills.defaults] enabled = " + strconv.FormatBool(*e)
	}
	return true, ""
}

// Pack returns the grant for the named pack: its [packs.<name>] section, or
// an enabled pack with nothing granted, stored at scope_mode project. The
// engine stores the skills of a pack whose section sets no scope_mode
// (ScopeModeSet) at its default scope mode, [skill_discovery]
// scope_mode.
func (c *Config) Pack(name string) PackGrant {
	if c != nil {
		if g, ok := c.Packs[name]; ok {
			return g
		}
	}
	return defaultGrant()
}

// fileName is the config file named in messages.
func (c *Config) fileName() string {
	if c == nil || c.File == "" {
		return ConfigFile
	}
	return c.File
}

// SkillEnv returns the environment for skill s: exactly the variables it
// declares (s.Subagent.Env), with values from its [skills.<name>] section.
// Keys configured but not declared are never included. Every declared
// variable without a value is reported, each a *MissingEnvError saying
// which key to add where.
func (c *Config) SkillEnv(s *SkillSpec) (map[string]string, error) {
	env := map[string]string{}
	if s == nil || s.Subagent == nil {
		return env, nil
	}
	var have map[string]Secret
	if c != nil {
		have = c.Skills[s.Name].Env
	}
	var errs []error
	for _, name := range s.Subagent.Env {
		v, ok := have[name]
		if !ok {
			errs = append(errs, &MissingEnvError{Skill: s.Name, Name: name, File: c.fileName()})
			continue
		}
		env[name] = v.Value()
	}
	if len(errs) > 0 {
		return env, errors.Join(errs...)
	}
	return env, nil
}

// ModuleEnv returns the environment for module m of the named pack: the
// variables the module requests that [packs.<pack>] env grants. Requested
// variables without a grant are listed in missing; they stay invisible to
// the module.
func (c *Config) ModuleEnv(pack string, m *Module) (env map[string]string, missing []string) {
	env = map[string]string{}
	if m == nil {
		return env, nil
	}
	granted := c.Pack(pack).Env
	for _, name := range m.Request.Env {
		if v, ok := granted[name]; ok {
			env[name] = v.Value()
		} else {
			missing = append(missing, name)
		}
	}
	return env, missing
}

// SourceSpecs returns the sources the config names, lowest precedence first:
// the bundled skills (unless turned off), each installed folder, the
// user's folder and the workspace folder. A user or workspace folder that
// does not exist is an empty source unless the config names it.
func (c *Config) SourceSpecs() []SourceSpec {
	if c == nil {
		c = DefaultConfig()
	}
	var specs []SourceSpec
	if c.Sources.Bundled {
		specs = append(specs, BundledSource())
	}
	for _, dir := range c.Sources.Installed {
		specs = append(specs, SourceSpec{Name: SourceInstalled, Dir: dir, MaxDepth: c.Sources.MaxDepth})
	}
	if c.Sources.User != "" {
		specs = append(specs, SourceSpec{Name: SourceUser, Dir: c.Sources.User, MaxDepth: c.Sources.MaxDepth, Optional: !c.Sources.userSet})
	}
	if c.Sources.Workspace != "" {
		specs = append(specs, SourceSpec{Name: SourceWorkspace, Dir: c.Sources.Workspace, MaxDepth: c.Sources.MaxDepth, Optional: !c.Sources.workspaceSet})
	}
	return specs
}
