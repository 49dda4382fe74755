package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// testHome is the home folder the config tests expand "~" to.
const testHome = "/home/op"

// configGolden is what a golden file holds for one config case: the parsed
// config (secrets redacted by their own encoding) or the error lines.
type configGolden struct {
	Config *Config   `json:"config,omitempty"`
	Errors []string  `json:"errors,omitempty"`
	String []string  `json:"string,omitempty"`
	Skills []string  `json:"skill_settings,omitempty"`
	Specs  []specOut `json:"sources,omitempty"`
}

type specOut struct {
	Name     string `json:"name"`
	Root     string `json:"root"`
	MaxDepth int    `json:"max_depth"`
	Optional bool   `json:"optional,omitempty"`
}

func configErrLines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

func TestConfigGolden(t *testing.T) {
	t.Setenv("HOME", testHome)
	files, err := filepath.Glob("../testdata/packs/config/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no config cases: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ParseConfig(ConfigFile, data)
			got := configGolden{Config: cfg, Errors: configErrLines(err)}
			if cfg != nil {
				got.String = strings.Split(strings.TrimSpace(cfg.String()), "\n")
				for _, sk := range []*SkillSpec{
					{Name: "research", Subagent: &Subagent{Model: "sonnet", MaxIterations: 5, MaxIterationsSet: true}},
					{Name: "code-review"},
					{Name: "other", Subagent: &Subagent{MaxIterations: 0}},
				} {
					got.Skills = append(got.Skills, fmt.Sprintf("%s: %+v", sk.Name, cfg.SkillSettings(sk)))
				}
				for _, s := range cfg.SourceSpecs() {
					got.Specs = append(got.Specs, specOut{Name: s.Name, Root: s.root(), MaxDepth: s.MaxDepth, Optional: s.Optional})
				}
			}
			out, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, '\n')
			golden := strings.TrimSuffix(file, ".toml") + ".golden.json"
			compareGolden(t, golden, string(out))
			if bytes.Contains(out, []byte("golden-secret")) {
				t.Errorf("a secret value reached the golden output")
			}
		})
	}
}

// Hostile and wrong input: each gets exactly these messages, with lines.
func TestParseConfigErrors(t *testing.T) {
	t.Setenv("HOME", testHome)
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"duplicate key", "state_dir = \"a\"\nstate_dir = \"b\"\n",
			[]string{`skillhost.toml:2: key "state_dir" is defined twice; each key and table may appear once`}},
		{"duplicate table", "[skills.x]\nA = \"1\"\n[skills.x]\nB = \"2\"\n",
			[]string{`skillhost.toml:3: key "skills.x" is defined twice; each key and table may appear once`}},
		{"invalid utf-8 in a string", "state_dir = \"\xff\"\n",
			[]string{`skillhost.toml:1: invalid UTF-8 byte 0xff; the config must be UTF-8 text`}},
		{"invalid utf-8 in a comment", "# ok\n# \xc3\x28\n",
			[]string{`skillhost.toml:2: invalid UTF-8 byte 0xc3; the config must be UTF-8 text`}},
		{"syntax", "[sources\nmax_depth = 1\n",
			[]string{`skillhost.toml:1: invalid TOML: expected '.' or ']' to end table name, but got '\n' instead`}},
		{"unknown top-level key", "colour = 1\n",
			[]string{`skillhost.toml:1: unknown key "colour"; expected one of state_dir, sources, skills, packs, limits, sandbox, tool_search, tool_examples, skill_discovery, server, tenants, capabilities`}},
		{"wrong types in sources", "[sources]\nmax_depth = \"3\"\nbundled = 1\ninstalled = \"/opt\"\n", []string{
			`skillhost.toml:2: sources.max_depth must be an integer, got string`,
			`skillhost.toml:3: sources.bundled must be true or false, got integer`,
			`skillhost.toml:4: sources.installed must be an array of folder paths, got string`,
		}},
		{"max_depth out of range", "[sources]\nmax_depth = -2\n",
			[]string{`skillhost.toml:2: sources.max_depth must be -1 (unlimited), 0 (the default, 3) or a depth from 1 to 1000, got -2`}},
		{"lowercase unknown skill setting", "[skills.x]\nmodel_name = \"haiku\"\n",
			[]string{`skillhost.toml:2: unknown setting "model_name" in [skills.x]; env values must be UPPER_CASE`}},
		{"mixed case env", "[skills.x]\nApi_Key = \"k\"\n",
			[]string{`skillhost.toml:2: unknown setting "Api_Key" in [skills.x]; env values must be UPPER_CASE`}},
		{"invalid env name", "[skills.x]\nAPI-KEY = \"k\"\n1KEY = \"k\"\n", []string{
			`skillhost.toml:2: "API-KEY" in [skills.x] is not a valid environment variable name; use A-Z, 0-9 and _, not starting with a digit`,
			`skillhost.toml:3: "1KEY" in [skills.x] is not a valid environment variable name; use A-Z, 0-9 and _, not starting with a digit`,
		}},
		{"env value not a string", "[skills.x]\nKEY = 5\n",
			[]string{`skillhost.toml:2: skills.x.KEY must be a string, got integer`}},
		{"env value in defaults", "[skills.defaults]\nKEY = \"v\"\n",
			[]string{`skillhost.toml:2: KEY cannot be set in [skills.defaults]: env values are given to one skill at a time; put it under the [skills.<name>] section of the skill that declares it`}},
		{"skill section not a table", "[skills]\nresearch = 1\n",
			[]string{`skillhost.toml:2: skills.research must be a table ([skills.research]), got integer`}},
		{"skills not a table", "skills = [1]\n",
			[]string{`skillhost.toml:1: skills must be a table of [skills.<name>] sections, got array`}},
		{"dotted skill name", "[skills.\"pack.core.x\"]\nmodel_name = 1\n",
			[]string{`skillhost.toml:2: unknown setting "model_name" in [skills."pack.core.x"]; env values must be UPPER_CASE`}},
		{"chat ids", "[skills.x]\nallow_chat_ids = [1.5, true]\n", []string{
			`skillhost.toml:2: skills.x.allow_chat_ids[0] must be a string or an integer, got float`,
			`skillhost.toml:2: skills.x.allow_chat_ids[1] must be a string or an integer, got boolean`,
		}},
		{"unknown limit", "[packs.core]\nlimits = {timeout = \"5s\",\n  bogus = 1}\n",
			[]string{`skillhost.toml:3: unknown key "packs.core.limits.bogus"; expected one of timeout, max_memory, max_output, max_log, max_var, max_http_response, max_fuel, max_write, max_open_files`}},
		{"bad limit value", "[packs.core]\nlimits = {timeout = \"soon\"}\n",
			[]string{`skillhost.toml:2: packs.core.limits: timeout "soon" must be a positive duration such as 5s or 500ms`}},
		{"mounts", "[packs.core]\nmounts = [{host = \"/d\", guest = \"d\"}, {guest = \"/x\"}, 3]\n", []string{
			`skillhost.toml:2: packs.core.mounts[0].guest "d" must be an absolute guest path without ..`,
			`skillhost.toml:2: packs.core.mounts[1] needs both host and guest`,
			`skillhost.toml:2: packs.core.mounts[2] must be a table such as {host = "/data", guest = "/data", read_only = true}, got integer`,
		}},
		{"pack grant values", "[packs.core]\nallowed_hosts = [\"https://x.com/a\"]\nservices = [\"mail\"]\nscope_mode = \"planet\"\nenv = {lower = \"x\"}\n", []string{
			`skillhost.toml:2: packs.core.allowed_hosts[0] "https://x.com/a" must be a host name or glob such as api.example.com or *.example.com, without scheme or path`,
			`skillhost.toml:3: packs.core.services[0] "mail" must be a namespaced service such as mail.send`,
			`skillhost.toml:4: packs.core.scope_mode "planet" must be one of project, tenant, global`,
			`skillhost.toml:5: "lower" in packs.core.env is not a valid environment variable name; use A-Z, 0-9 and _, not starting with a digit`,
		}},
		{"tools", "[packs.core]\ntools = [\"slugify\", \"two words\", \"\"]\n", []string{
			`skillhost.toml:2: packs.core.tools[1] "two words" must be a tool name (letters, digits, '.', '-' or '_') or "*" for every tool the pack's modules request`,
			`skillhost.toml:2: packs.core.tools[2] "" must be a tool name (letters, digits, '.', '-' or '_') or "*" for every tool the pack's modules request`,
		}},
		{"tools beside *", "[packs.core]\ntools = [\"slugify\", \"*\"]\n",
			[]string{`skillhost.toml:2: packs.core.tools lists "*" beside tool names; "*" already allows every tool the pack's modules request: write ["*"] alone or name the tools`}},
		{"tools not an array", "[packs.core]\ntools = \"*\"\n",
			[]string{`skillhost.toml:2: packs.core.tools must be an array of strings, got string`}},
		{"default limits", "[limits]\ntimeout = \"soon\"\n",
			[]string{`skillhost.toml:1: limits: timeout "soon" must be a positive duration such as 5s or 500ms`}},
		{"default limits not a table", "limits = \"5s\"\n",
			[]string{`skillhost.toml:1: limits must be a table such as {timeout = "5s", max_memory = "64MiB"}, got string`}},
		{"unknown default limit", "[limits]\ntimeout = \"5s\"\nmax_cpu = 2\n",
			[]string{`skillhost.toml:3: unknown key "limits.max_cpu"; expected one of timeout, max_memory, max_output, max_log, max_var, max_http_response, max_fuel, max_write, max_open_files`}},
		{"filesystem limits: negative", "[packs.core]\nlimits = {max_write = -1}\n[limits]\nmax_open_files = -1\n", []string{
			`skillhost.toml:2: packs.core.limits: max_write: size "-1" must start with a number, e.g. 64MiB`,
			`skillhost.toml:3: limits: max_open_files -1 must be a positive number of files, such as 64`,
		}},
		{"filesystem limits: zero", "[packs.core]\nlimits = {max_write = \"0MiB\"}\n[limits]\nmax_open_files = 0\nmax_write = 0\n", []string{
			`skillhost.toml:2: packs.core.limits: max_write "0MiB" must be a positive size such as 64MiB; to refuse every write, mount the folders read-only`,
			// One message per limits table: the first problem found.
			`skillhost.toml:3: limits: max_write "0" must be a positive size such as 64MiB; to refuse every write, mount the folders read-only`,
		}},
		{"filesystem limits: wrong types", "[packs.core]\nlimits = {max_write = true, max_open_files = \"64\"}\n[limits]\nmax_open_files = 1.5\nmax_write = [1]\n", []string{
			`skillhost.toml:2: packs.core.limits.max_open_files must be an integer, got string`,
			`skillhost.toml:2: packs.core.limits.max_write must be a size such as "64MiB" or a number of bytes, got boolean`,
			`skillhost.toml:4: limits.max_open_files must be an integer, got float`,
			`skillhost.toml:5: limits.max_write must be a size such as "64MiB" or a number of bytes, got array`,
		}},
		{"filesystem limits: too large", "[packs.core]\nlimits = {max_write = \"9000000000GiB\"}\n[packs.big]\nlimits = {max_open_files = 2000000}\n", []string{
			`skillhost.toml:2: packs.core.limits: max_write: size "9000000000GiB" is too large`,
			`skillhost.toml:4: packs.big.limits: max_open_files 2000000 is above 1048576, the most files a process may hold open`,
		}},
		{"filesystem limits: unknown unit", "[limits]\nmax_write = \"64 blocks\"\n",
			[]string{`skillhost.toml:1: limits: max_write: size "64 blocks" has an unknown unit; use B, KB, MB, GB, KiB, MiB or GiB`}},
		{"isolation", "[packs.core]\nisolation = \"thread\"\n[packs.other]\nisolation = \"Process\"\n[packs.third]\nisolation = 1\n", []string{
			`skillhost.toml:2: packs.core.isolation "thread" must be "in-process" (the default) or "process"`,
			`skillhost.toml:4: packs.other.isolation "Process" must be "in-process" (the default) or "process"`,
			`skillhost.toml:6: packs.third.isolation must be a string, got integer`,
		}},
		{"sandbox", "[sandbox]\nisolation = \"vm\"\nmode = \"process\"\n", []string{
			`skillhost.toml:2: sandbox.isolation "vm" must be "in-process" (the default) or "process"`,
			`skillhost.toml:3: unknown key "sandbox.mode"; expected isolation`,
		}},
		{"sandbox not a table", "sandbox = \"process\"\n",
			[]string{`skillhost.toml:1: sandbox must be a table ([sandbox]), got string`}},
		{"isolation in a limits table", "[limits]\nisolation = \"process\"\n[packs.core]\nlimits = {isolation = \"process\"}\n", []string{
			`skillhost.toml:2: limits.isolation is not a limit: set isolation in [sandbox] (the default for every pack) or in a [packs.<name>] section`,
			`skillhost.toml:4: packs.core.limits.isolation is not a limit: set isolation in [sandbox] (the default for every pack) or in a [packs.<name>] section`,
		}},
		{"pack name", "[packs.Bad]\nenabled = true\n",
			[]string{`skillhost.toml:1: pack name "Bad" in [packs.Bad] must be lowercase letters and digits separated by single - or _`}},
		{"unknown pack key", "[packs.core]\nallowed_host = []\n",
			[]string{`skillhost.toml:2: unknown key "packs.core.allowed_host"; expected one of enabled, allowed_hosts, allow_private_network, mounts, env, services, tools, limits, isolation, scope_mode, update_existing, pinned, config`}},
		{"tool_search not a table", "tool_search = true\n",
			[]string{`skillhost.toml:1: tool_search must be a table ([tool_search]), got boolean`}},
		{"tool_examples not a table", "tool_examples = 3\n",
			[]string{`skillhost.toml:1: tool_examples must be a table ([tool_examples]), got integer`}},
		{"directory not a table", "[skill_discovery]\nmax_tokens = 2000\ndirectory = false\n",
			[]string{`skillhost.toml:3: skill_discovery.directory must be a table ([skill_discovery.directory]), got boolean`}},
		{"empty include_fields", "[skill_discovery.directory]\ninclude_fields = []\n",
			[]string{`skillhost.toml:2: skill_discovery.directory.include_fields must list at least one of name, title, trigger, task_type; ["name"] shows the names alone`}},
		{"skill discovery written under [skills]", "[skills]\nenabled = false\ncache_dir = \"x\"\n[skills.x]\nmodel = \"m\"\n", []string{
			`skillhost.toml:2: skills.enabled is not a skill section: engine-wide skill settings go in [skill_discovery] (every table under [skills] configures the skill of its name)`,
			`skillhost.toml:3: skills.cache_dir is not a skill section: engine-wide skill settings go in [skill_discovery] (every table under [skills] configures the skill of its name)`,
		}},
		{"always-loaded patterns", "[tool_search]\nalways_loaded_patterns = \"fs_*\"\n",
			[]string{`skillhost.toml:2: tool_search.always_loaded_patterns must be an array of strings, got string`}},
		{"datetime", "state_dir = 2024-01-01\n",
			[]string{`skillhost.toml:1: state_dir must be a string, got datetime`}},
		{"too large", "# " + strings.Repeat("x", maxConfigBytes) + "\n",
			[]string{`skillhost.toml: config is larger than 1048576 bytes`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig(ConfigFile, []byte(tt.in))
			if err == nil {
				t.Fatalf("no error; config %v", cfg)
			}
			if cfg != nil {
				t.Errorf("config returned with an error")
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("%v does not match ErrInvalidConfig", err)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.File != ConfigFile {
				t.Errorf("error %T is not a *ConfigError naming the file", err)
			}
			if diff := cmp.Diff(tt.want, configErrLines(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigPaths(t *testing.T) {
	t.Setenv("HOME", testHome)
	cfg, err := ParseConfig("/etc/skillhost/skillhost.toml", []byte(`
state_dir = "state"
[sources]
installed = ["~/packs", "vendor", "/opt/skills"]
workspace = "../proj/skills"
[packs.core]
mounts = [{host = "~/data", guest = "/data"}]
`))
	if err != nil {
		t.Fatal(err)
	}
	want := struct {
		State, User, Workspace string
		Installed              []string
		Mount                  string
	}{
		State:     "/etc/skillhost/state",
		User:      testHome + "/.skillhost/skills",
		Workspace: "/etc/proj/skills",
		Installed: []string{testHome + "/packs", "/etc/skillhost/vendor", "/opt/skills"},
		Mount:     testHome + "/data",
	}
	got := want
	got.State, got.User, got.Workspace = cfg.StateDir, cfg.Sources.User, cfg.Sources.Workspace
	got.Installed, got.Mount = cfg.Sources.Installed, cfg.Packs["core"].Mounts[0].HostPath
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

func TestLoadConfig(t *testing.T) {
	t.Setenv("HOME", testHome)
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv(ConfigEnv, "")

	// No file: the defaults, relative to the working directory.
	cfg, err := LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.File != "" || !cfg.Sources.Bundled || cfg.Sources.Workspace != "skills" || cfg.Sources.User != testHome+"/.skillhost/skills" {
		t.Errorf("default config %+v", cfg.Sources)
	}

	// ./skillhost.toml is read when present.
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte("[sources]\nmax_depth = 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err = LoadConfig(""); err != nil || cfg.Sources.MaxDepth != 5 || cfg.File != filepath.Join(dir, ConfigFile) {
		t.Errorf("LoadConfig(\"\") = %v, %v", cfg, err)
	}

	// SKILLHOST_CONFIG names another file, which must exist.
	other := filepath.Join(dir, "other.toml")
	if err := os.WriteFile(other, []byte("[sources]\nmax_depth = 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ConfigEnv, other)
	if cfg, err = LoadConfig(""); err != nil || cfg.Sources.MaxDepth != 7 {
		t.Errorf("with %s: %v, %v", ConfigEnv, cfg, err)
	}
	t.Setenv(ConfigEnv, filepath.Join(dir, "missing.toml"))
	if _, err = LoadConfig(""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file named by %s: %v", ConfigEnv, err)
	}
	// An explicit path wins over the variable and must exist too.
	if cfg, err = LoadConfig(other); err != nil || cfg.Sources.MaxDepth != 7 {
		t.Errorf("LoadConfig(other) = %v, %v", cfg, err)
	}
	if _, err = LoadConfig(filepath.Join(dir, "nope.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing explicit file: %v", err)
	}
}

const secretConfig = `
[skills.research]
PERPLEXITY_API_KEY = "pplx-TOPSECRET-1"
OTHER_KEY = "other-TOPSECRET-2"
model = "haiku"

[packs.core]
env = {GITHUB_TOKEN = "ghp-TOPSECRET-3"}
`

// renderings prints each value every way a value reaches a log or a
// screen: with each fmt verb, as JSON, and through slog's JSON and text
// handlers (as a value and inside a group).
func renderings(t *testing.T, values ...any) []string {
	t.Helper()
	var out []string
	for _, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
			out = append(out, fmt.Sprintf(verb, v))
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
		var logs bytes.Buffer
		for _, h := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
			slog.New(h).Info("config", "value", v, slog.Group("g", "value", v))
		}
		out = append(out, logs.String())
	}
	return out
}

// Secret values never reach fmt, JSON or slog output.
func TestConfigRedaction(t *testing.T) {
	cfg, err := ParseConfig(ConfigFile, []byte(secretConfig))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Skills["research"].Env["PERPLEXITY_API_KEY"].Value(); got != "pplx-TOPSECRET-1" {
		t.Fatalf("Value() = %q", got)
	}
	outputs := renderings(t, cfg, *cfg, cfg.Skills, cfg.Skills["research"], cfg.Packs["core"],
		cfg.Skills["research"].Env, cfg.Skills["research"].Env["OTHER_KEY"],
		cfg.Skills["research"].Env["PERPLEXITY_API_KEY"], []any{cfg.Packs})
	outputs = append(outputs, fmt.Sprintln(*cfg), cfg.String())
	for i, out := range outputs {
		if strings.Contains(out, "TOPSECRET") {
			t.Errorf("output %d leaks a secret: %s", i, out)
		}
	}
	if !strings.Contains(cfg.String(), `PERPLEXITY_API_KEY = "[redacted]"`) {
		t.Errorf("String() does not show the redacted key:\n%s", cfg.String())
	}
}

func TestSkillEnv(t *testing.T) {
	cfg, err := ParseConfig("/srv/skillhost.toml", []byte(secretConfig))
	if err != nil {
		t.Fatal(err)
	}
	research := &SkillSpec{Name: "research", Subagent: &Subagent{Env: []string{"PERPLEXITY_API_KEY"}}}
	env, err := cfg.SkillEnv(research)
	if err != nil {
		t.Fatal(err)
	}
	// OTHER_KEY is configured but not declared: never injected.
	if diff := cmp.Diff(map[string]string{"PERPLEXITY_API_KEY": "pplx-TOPSECRET-1"}, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}

	// A skill declaring nothing gets nothing, even with a configured section.
	for _, s := range []*SkillSpec{{Name: "research"}, {Name: "research", Subagent: &Subagent{}}} {
		if env, err := cfg.SkillEnv(s); err != nil || len(env) != 0 {
			t.Errorf("undeclared: %v, %v", env, err)
		}
	}
	// Another skill declaring the same name does not get research's value.
	_, err = cfg.SkillEnv(&SkillSpec{Name: "thief", Subagent: &Subagent{Env: []string{"PERPLEXITY_API_KEY"}}})
	if !errors.Is(err, ErrMissingEnv) {
		t.Errorf("thief got %v", err)
	}

	// Missing values: every one named, with where to add it.
	_, err = cfg.SkillEnv(&SkillSpec{Name: "research", Subagent: &Subagent{Env: []string{"PERPLEXITY_API_KEY", "SERP_KEY", "MAPS_KEY"}}})
	want := []string{
		`skill "research" needs SERP_KEY: add SERP_KEY = "…" under [skills.research] in /srv/skillhost.toml`,
		`skill "research" needs MAPS_KEY: add MAPS_KEY = "…" under [skills.research] in /srv/skillhost.toml`,
	}
	if diff := cmp.Diff(want, configErrLines(err)); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	var me *MissingEnvError
	if !errors.As(err, &me) || me.Skill != "research" || me.Name != "SERP_KEY" {
		t.Errorf("not a *MissingEnvError: %#v", err)
	}

	// With no config at all the message names the default file, and a
	// dotted name is quoted as TOML needs.
	var none *Config
	_, err = none.SkillEnv(&SkillSpec{Name: "pack.core.x", Subagent: &Subagent{Env: []string{"K"}}})
	if got, want := fmt.Sprint(err), `skill "pack.core.x" needs K: add K = "…" under [skills."pack.core.x"] in skillhost.toml`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}

	// Modules get only what they request and the grant has.
	menv, missing := cfg.ModuleEnv("core", &Module{Name: "m", Request: Request{Env: []string{"GITHUB_TOKEN", "NPM_TOKEN"}}})
	if diff := cmp.Diff(map[string]string{"GITHUB_TOKEN": "ghp-TOPSECRET-3"}, menv); diff != "" {
		t.Errorf("module env (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"NPM_TOKEN"}, missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	if menv, _ := cfg.ModuleEnv("other", &Module{Request: Request{Env: []string{"GITHUB_TOKEN"}}}); len(menv) != 0 {
		t.Errorf("another pack got %v", menv)
	}
}

func TestSkillSettings(t *testing.T) {
	cfg, err := ParseConfig(ConfigFile, []byte(`
[skills.defaults]
model = "default"
max_iterations = 20
allow_chat_ids = ["1"]
enabled = false

[skills.on]
enabled = true
allow_chat_ids = []

[skills.own]
model = "configured"
max_iterations = 4
enabled = true
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		skill *SkillSpec
		want  SkillSettings
	}{
		{&SkillSpec{Name: "plain"}, SkillSettings{Enabled: false, Model: "default", MaxIterations: 20, AllowChatIDs: []string{"1"}}},
		{&SkillSpec{Name: "on", Subagent: &Subagent{Model: "from-file", MaxIterations: 7, MaxIterationsSet: true}},
			SkillSettings{Enabled: true, Model: "from-file", MaxIterations: 7}},
		// An agent skill that declares no bound carries the format default,
		// which [skills.defaults] replaces.
		{&SkillSpec{Name: "plain-agent", Subagent: &Subagent{MaxIterations: DefaultMaxIterations}},
			SkillSettings{Enabled: false, Model: "default", MaxIterations: 20, AllowChatIDs: []string{"1"}}},
		{&SkillSpec{Name: "own", Subagent: &Subagent{Model: "from-file", MaxIterations: 7, MaxIterationsSet: true}},
			SkillSettings{Enabled: true, Model: "configured", MaxIterations: 4, AllowChatIDs: []string{"1"}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, cfg.SkillSettings(tt.skill)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.skill.Name, diff)
		}
	}
	var none *Config
	if got := none.SkillSettings(&SkillSpec{Name: "x"}); !got.Enabled {
		t.Errorf("nil config disables: %+v", got)
	}
}

// String is valid TOML that parses back to the same settings.
func TestConfigStringRoundTrip(t *testing.T) {
	t.Setenv("HOME", testHome)
	data, err := os.ReadFile("../testdata/packs/config/full.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig("/etc/skillhost.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseConfig("/etc/skillhost.toml", []byte(cfg.String()))
	if err != nil {
		t.Fatalf("String() does not parse: %v\n%s", err, cfg)
	}
	// Secrets come back as the redaction marker; everything else is equal.
	if diff := cmp.Diff(cfg, back, cmp.Comparer(func(a, b Secret) bool { return true }),
		cmp.AllowUnexported(SourcesConfig{}, Config{}), cmpopts.IgnoreFields(Config{}, "walker", "mu"),
		cmpopts.IgnoreFields(SkillConfig{}, "Line"), cmpopts.IgnoreFields(PackGrant{}, "Line"),
		// String writes every pack's scope_mode, so the default one comes
		// back as set by the section.
		cmpopts.IgnoreUnexported(PackGrant{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob("../testdata/packs/config/*.toml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		"", "a = 1\na = 2", "[skills.x]\nK = \"\xff\"", "[[skills]]\nx = 1", "[packs.core]\nmounts = [[1]]",
		"[packs.core]\nlimits = {max_memory = 99999999999999}", "[skills.\"\"]\nA = \"b\"", "x = {a = {b = {c = 1}}}",
		"[sources]\ninstalled = [[\"a\"]]", "[skills.defaults.sub]\nq = 1",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(ConfigFile, data)
		if err != nil {
			if cfg != nil {
				t.Fatal("config and error")
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v does not match ErrInvalidConfig", err)
			}
			return
		}
		// Whatever parsed prints as TOML that parses again.
		if _, err := ParseConfig(ConfigFile, []byte(cfg.String())); err != nil {
			t.Fatalf("String() does not parse: %v\n%s", err, cfg)
		}
	})
}

func ExampleConfig_SkillEnv() {
	cfg, err := ParseConfig("skillhost.toml", []byte(`
[skills.research]
PERPLEXITY_API_KEY = "pplx-example"
UNRELATED_TOKEN = "never injected"
model = "haiku"
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	research := &SkillSpec{Name: "research", Subagent: &Subagent{Env: []string{"PERPLEXITY_API_KEY"}}}
	env, _ := cfg.SkillEnv(research)
	fmt.Println(len(env), env["PERPLEXITY_API_KEY"] != "")
	fmt.Println(cfg.SkillSettings(research).Model)
	fmt.Printf("%v\n", cfg.Skills["research"].Env)

	_, err = cfg.SkillEnv(&SkillSpec{Name: "maps", Subagent: &Subagent{Env: []string{"MAPS_KEY"}}})
	fmt.Println(err)
	// Output:
	// 1 true
	// haiku
	// map[PERPLEXITY_API_KEY:[redacted] UNRELATED_TOKEN:[redacted]]
	// skill "maps" needs MAPS_KEY: add MAPS_KEY = "…" under [skills.maps] in skillhost.toml
}

// A pack's grant has its section's scope_mode, else project; ScopeModeSet
// tells the two apart, so that the engine stores the skills of a pack
// whose section sets none at its default, [skill_discovery] scope_mode
// (TestSkillScopeModeDefault in the root package): packs does not apply
// another section's setting.
func TestPackScopeModeDefault(t *testing.T) {
	cfg, err := ParseConfig(ConfigFile, []byte(`
[skill_discovery]
scope_mode = "global"
[packs.own]
scope_mode = "tenant"
[packs.plain]
enabled = true
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		pack, mode string
		set        bool
	}{{"own", ScopeTenant, true}, {"plain", ScopeProject, false}, {"nosection", ScopeProject, false}} {
		if g := cfg.Pack(tt.pack); g.ScopeMode != tt.mode || g.ScopeModeSet() != tt.set {
			t.Errorf("Pack(%q): scope %q set %t, want %q %t", tt.pack, g.ScopeMode, g.ScopeModeSet(), tt.mode, tt.set)
		}
	}
	var none *Config
	if g := none.Pack("x"); g.ScopeMode != ScopeProject || g.ScopeModeSet() {
		t.Errorf("no config: %+v", g)
	}
	plain, err := ParseConfig(ConfigFile, []byte("[packs.plain]\nenabled = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g := plain.Pack("plain"); g.ScopeMode != ScopeProject || g.ScopeModeSet() {
		t.Errorf("without [skill_discovery]: %+v", g)
	}
}
