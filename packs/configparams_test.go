package packs

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// weatherPack declares one setting of every kind: two modules, so that a
// module only sees the settings of its own tools.
const weatherPack = `name: weather
modules:
  - name: wx
    path: wx.wasm
    request:
      config: {user_agent: "wx/1"}
    tools:
      - name: forecast
        config_params:
          - {name: region, type: select, options: [eu, us], default: eu}
          - {name: max_results, type: number, min: 1, max: 100, step: 1, default: 10}
          - {name: api_key, type: secret, required: true}
          - {name: endpoint, type: url, default: "https://api.example.com/v1"}
          - {name: verbose, type: boolean, default: false}
          - {name: cache_dir, type: path}
          - {name: ratio, type: number, default: 0.25}
  - name: geo
    path: geo.wasm
    tools:
      - name: geocode
        config_params:
          - {name: precision, type: number, min: 0.5, step: 0.25, default: 1.0}
          - {name: units, type: string, required: true, default: metric}
`

func weather(t *testing.T) *Pack {
	t.Helper()
	p, err := Parse([]byte(weatherPack), "weather/pack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// parse reads a config that must parse.
func parse(t *testing.T, file, toml string) *Config {
	t.Helper()
	c, err := ParseConfig(file, []byte(toml))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return c
}

func TestPackConfigValues(t *testing.T) {
	p := weather(t)
	c := parse(t, "/srv/skillhost.toml", `
[packs.weather.config]
region = "us"
max_results = 20
api_key = "wx-TOPSECRET-9"
verbose = true
ratio = 0.5
precision = 2.75
user_agent = "ops/2"
`)
	if err := c.CheckPackConfig(p); err != nil {
		t.Fatalf("CheckPackConfig: %v", err)
	}
	g := c.Pack("weather")
	wx, geo := p.Modules[0], p.Modules[1]
	want := map[string]string{
		"region": "us", "max_results": "20", "api_key": "wx-TOPSECRET-9", "verbose": "true",
		"ratio": "0.5", "user_agent": "ops/2",
	}
	if d := cmp.Diff(want, g.ModuleConfig(wx)); d != "" {
		t.Errorf("wx config (-want +got)\n%s", d)
	}
	// geo declares neither api_key nor region: it must not see them.
	if d := cmp.Diff(map[string]string{"precision": "2.75"}, g.ModuleConfig(geo)); d != "" {
		t.Errorf("geo config (-want +got)\n%s", d)
	}
	wantDefaults := map[string]string{
		"user_agent": "wx/1", "region": "eu", "max_results": "10", "endpoint": "https://api.example.com/v1",
		"verbose": "false", "ratio": "0.25",
	}
	if d := cmp.Diff(wantDefaults, wx.ConfigDefaults()); d != "" {
		t.Errorf("wx defaults (-want +got)\n%s", d)
	}
	// A whole float default is written as a JSON number is: 1.0 → "1".
	if d := cmp.Diff(map[string]string{"precision": "1", "units": "metric"}, geo.ConfigDefaults()); d != "" {
		t.Errorf("geo defaults (-want +got)\n%s", d)
	}
	if got := (PackGrant{}).ModuleConfig(wx); got != nil {
		t.Errorf("no values: ModuleConfig = %v, want nil", got)
	}
}

// The config_get text of each TOML value.
func TestConfigValueText(t *testing.T) {
	c := parse(t, ConfigFile, `
[packs.p.config]
s = "a \"quoted\"\nline"
i = -42
big = 9007199254740993
f = 1.5
whole = 20.0
tiny = 1e-7
huge = 1e300
yes = true
no = false
`)
	got := map[string]string{}
	types := map[string]string{}
	for k, v := range c.Pack("p").Config {
		got[k], types[k] = v.Text(), v.Type()
	}
	want := map[string]string{
		"s": "a \"quoted\"\nline", "i": "-42", "big": "9007199254740993", "f": "1.5", "whole": "20",
		"tiny": "1e-7", "huge": "1e+300", "yes": "true", "no": "false",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Text (-want +got)\n%s", d)
	}
	if types["i"] != "integer" || types["f"] != "float" || types["yes"] != "boolean" || types["s"] != "string" {
		t.Errorf("types = %v", types)
	}
}

// Values of the wrong TOML kind are refused when the file is read.
func TestConfigValueParseErrors(t *testing.T) {
	_, err := ParseConfig(ConfigFile, []byte(`[packs.p]
config = "region=eu"

[packs.q.config]
list = ["a"]
table = {a = 1}
when = 2024-01-01
inf = inf
nan = nan
`))
	want := []string{
		`skillhost.toml:2: packs.p.config must be a table of settings such as {region = "eu", max_results = 20}, got string`,
		`skillhost.toml:5: packs.q.config.list must be a string, a number or true or false, got array`,
		`skillhost.toml:6: packs.q.config.table must be a string, a number or true or false, got table`,
		`skillhost.toml:7: packs.q.config.when must be a string, a number or true or false, got datetime`,
		`skillhost.toml:8: packs.q.config.inf must be a finite number, got +Inf`,
		`skillhost.toml:9: packs.q.config.nan must be a finite number, got NaN`,
	}
	if d := cmp.Diff(want, configErrLines(err)); d != "" {
		t.Errorf("errors (-want +got)\n%s", d)
	}
	if !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("err = %v, want ErrInvalidConfig", err)
	}
}

// Every kind of bad value gets a message naming the file, line, key and
// what was expected; a secret's value never appears.
func TestCheckPackConfigErrors(t *testing.T) {
	p := weather(t)
	tests := []struct {
		name, toml string
		want       []string
	}{
		{"unknown key lists the settings", "[packs.weather.config]\napi_key = \"k\"\nregoin = \"eu\"\n", []string{
			`skillhost.toml:3: unknown config key packs.weather.config.regoin: pack "weather" declares no setting "regoin"; its settings are region, max_results, api_key, endpoint, verbose, cache_dir, ratio, user_agent, precision, units`,
		}},
		{"number given as a string", "[packs.weather.config]\napi_key = \"k\"\nmax_results = \"20\"\n", []string{
			`skillhost.toml:3: packs.weather.config.max_results must be a number, such as 1, got string (tool "forecast" declares max_results as a number setting)`,
		}},
		{"above max", "[packs.weather.config]\napi_key = \"k\"\nmax_results = 500\n", []string{
			`skillhost.toml:3: packs.weather.config.max_results is 500; it must be at most 100 (tool "forecast" declares max_results as a number setting)`,
		}},
		{"below min", "[packs.weather.config]\napi_key = \"k\"\nmax_results = 0\n", []string{
			`skillhost.toml:3: packs.weather.config.max_results is 0; it must be at least 1 (tool "forecast" declares max_results as a number setting)`,
		}},
		{"off step", "[packs.weather.config]\napi_key = \"k\"\nmax_results = 2.5\nprecision = 0.6\n", []string{
			`skillhost.toml:3: packs.weather.config.max_results is 2.5; it must be 1 plus a multiple of the step 1 (1, 2, 3, …) (tool "forecast" declares max_results as a number setting)`,
			`skillhost.toml:4: packs.weather.config.precision is 0.6; it must be 0.5 plus a multiple of the step 0.25 (0.5, 0.75, 1, …) (tool "geocode" declares precision as a number setting)`,
		}},
		{"select not an option", "[packs.weather.config]\napi_key = \"k\"\nregion = \"mars\"\n", []string{
			`skillhost.toml:3: packs.weather.config.region "mars" must be one of "eu", "us" (tool "forecast" declares region as a select setting)`,
		}},
		{"select not a string", "[packs.weather.config]\napi_key = \"k\"\nregion = 1\n", []string{
			`skillhost.toml:3: packs.weather.config.region must be one of the strings "eu", "us", got integer (tool "forecast" declares region as a select setting)`,
		}},
		{"url", "[packs.weather.config]\napi_key = \"k\"\nendpoint = \"ftp://user:pw@files.example.com\"\n", []string{
			`skillhost.toml:3: packs.weather.config.endpoint "ftp://user:xxxxx@files.example.com" must be an absolute http:// or https:// URL, such as "https://api.example.com/v1" (tool "forecast" declares endpoint as a url setting)`,
		}},
		{"relative url", "[packs.weather.config]\napi_key = \"k\"\nendpoint = \"/v1\"\n", []string{
			`skillhost.toml:3: packs.weather.config.endpoint "/v1" must be an absolute http:// or https:// URL, such as "https://api.example.com/v1" (tool "forecast" declares endpoint as a url setting)`,
		}},
		{"boolean as a string", "[packs.weather.config]\napi_key = \"k\"\nverbose = \"yes\"\n", []string{
			`skillhost.toml:3: packs.weather.config.verbose must be true or false (without quotes), got string (tool "forecast" declares verbose as a boolean setting)`,
		}},
		{"empty path", "[packs.weather.config]\napi_key = \"k\"\ncache_dir = \"\"\n", []string{
			`skillhost.toml:3: packs.weather.config.cache_dir must not be empty; give a path (tool "forecast" declares cache_dir as a path setting)`,
		}},
		{"secret of the wrong type", "[packs.weather.config]\napi_key = 12345\n", []string{
			`skillhost.toml:2: packs.weather.config.api_key must be a string, got integer (tool "forecast" declares api_key as a secret setting)`,
		}},
		{"required secret missing, with a section", "[packs.weather]\nallowed_hosts = [\"api.example.com\"]\n", []string{
			`skillhost.toml:1: tool "forecast" of pack "weather" needs the secret setting api_key, which has no default: add api_key = "…" under [packs.weather.config]`,
		}},
		{"required secret missing, no section", "", []string{
			`skillhost.toml: tool "forecast" of pack "weather" needs the secret setting api_key, which has no default: add api_key = "…" under [packs.weather.config]`,
		}},
		{"inline table", "[packs.weather]\nconfig = {api_key = \"k\", region = \"asia\"}\n", []string{
			`skillhost.toml:2: packs.weather.config.region "asia" must be one of "eu", "us" (tool "forecast" declares region as a select setting)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parse(t, ConfigFile, tt.toml)
			err := c.CheckPackConfig(p)
			if d := cmp.Diff(tt.want, configErrLines(err)); d != "" {
				t.Errorf("errors (-want +got)\n%s", d)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("err = %v, want it to match ErrInvalidConfig", err)
			}
		})
	}
	var mce *MissingConfigError
	if err := (*Config)(nil).CheckPackConfig(p); !errors.As(err, &mce) || mce.Param.Name != "api_key" || mce.Tool != "forecast" || mce.File != ConfigFile {
		t.Errorf("nil config: err = %#v, want a *MissingConfigError for api_key", err)
	}
	var ce *ConfigError
	err := parse(t, "/etc/skillhost.toml", "[packs.weather.config]\napi_key = \"k\"\nnope = 1\n").CheckPackConfig(p)
	if !errors.As(err, &ce) || ce.File != "/etc/skillhost.toml" || ce.Line != 3 || ce.Key != "packs.weather.config.nope" {
		t.Errorf("err = %#v, want a *ConfigError at /etc/skillhost.toml:3 for packs.weather.config.nope", err)
	}
}

// A pack without settings refuses every key, saying so.
func TestCheckPackConfigNoSettings(t *testing.T) {
	p, err := Parse([]byte("name: plain\nmodules:\n  - {name: m, path: m.wasm, tools: [{name: t}]}\n"), "plain/pack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = parse(t, ConfigFile, "[packs.plain.config]\nx = 1\n").CheckPackConfig(p)
	want := []string{`skillhost.toml:2: unknown config key packs.plain.config.x: pack "plain" declares no setting "x"; it has no settings, remove the key`}
	if d := cmp.Diff(want, configErrLines(err)); d != "" {
		t.Errorf("errors (-want +got)\n%s", d)
	}
	if err := parse(t, ConfigFile, "[packs.other.config]\nx = 1\n").CheckPackConfig(p); err != nil {
		t.Errorf("another pack's values: %v", err)
	}
}

// Config values never reach fmt, JSON, slog or error output, whether
// their param is a secret or not, and a secret is never quoted in an
// error even when it is wrong.
func TestConfigValueRedaction(t *testing.T) {
	c := parse(t, ConfigFile, `
[packs.weather.config]
api_key = "wx-TOPSECRET-1"
region = "TOPSECRET-region"
max_results = 77777
`)
	g := c.Pack("weather")
	outputs := renderings(t, c, *c, g, g.Config, g.Config["api_key"], []any{g.Config})
	outputs = append(outputs, c.String())
	for i, out := range outputs {
		if strings.Contains(out, "TOPSECRET") || strings.Contains(out, "77777") {
			t.Errorf("output %d leaks a value: %s", i, out)
		}
	}
	if !strings.Contains(c.String(), `api_key = "[redacted]"`) {
		t.Errorf("String() does not list the key:\n%s", c.String())
	}

}

// One setting name declared with two types in one pack cannot be given a
// value that fits both, nor be both secret and shown: the manifest is
// refused.
func TestConfigParamTypeConflict(t *testing.T) {
	_, err := Parse([]byte(`name: weather
modules:
  - name: m
    path: m.wasm
    tools:
      - {name: a, config_params: [{name: api_key, type: secret}]}
  - name: n
    path: n.wasm
    tools:
      - name: b
        config_params:
          - {name: api_key, type: url}
`), "weather/pack.yaml")
	want := []string{`weather/pack.yaml:12: modules[1].tools[0].config_params[0].type: config param "api_key" is a url param here but a secret param at modules[0].tools[0].config_params[0]; the operator gives a pack's setting one value, so declare it with one type`}
	if d := cmp.Diff(want, configErrLines(err)); d != "" {
		t.Errorf("errors (-want +got)\n%s", d)
	}
	if !errors.Is(err, ErrInvalidManifest) {
		t.Errorf("err = %v, want ErrInvalidManifest", err)
	}
}

// Whatever a config holds, checking it against a pack gives problems that
// match ErrInvalidConfig, and never panics.
func FuzzCheckPackConfig(f *testing.F) {
	for _, s := range []string{
		"[packs.weather.config]\napi_key = \"k\"\nmax_results = 1e308\n",
		"[packs.weather.config]\napi_key = \"k\"\nprecision = -0.0\nmax_results = 9223372036854775807\n",
		"[packs.weather.config]\nendpoint = \"http://[::1\"\nregion = \"\"\n",
		"[packs.weather]\nconfig = {\"\" = 1, \"a.b\" = true}\n",
	} {
		f.Add([]byte(s))
	}
	p, err := Parse([]byte(weatherPack), "weather/pack.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(ConfigFile, data)
		if err != nil {
			return
		}
		if err := cfg.CheckPackConfig(p); err != nil && !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("error %v does not match ErrInvalidConfig", err)
		}
		for _, m := range p.Modules {
			_ = cfg.Pack("weather").ModuleConfig(m)
		}
	})
}

func ExampleConfig_CheckPackConfig() {
	p, err := Parse([]byte(`name: weather
modules:
  - name: wx
    path: wx.wasm
    tools:
      - name: forecast
        config_params:
          - {name: region, type: select, options: [eu, us], default: eu}
          - {name: api_key, type: secret, required: true}
`), "weather/pack.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := ParseConfig("skillhost.toml", []byte(`
[packs.weather.config]
region = "us"
api_key = "wx-example"
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.CheckPackConfig(p))
	fmt.Println(cfg.Pack("weather").ModuleConfig(p.Modules[0])["region"])
	fmt.Println(cfg.Pack("weather").Config)

	cfg, _ = ParseConfig("skillhost.toml", []byte("[packs.weather.config]\nregion = \"asia\"\n"))
	fmt.Println(cfg.CheckPackConfig(p))
	// Output:
	// <nil>
	// us
	// map[api_key:[redacted] region:[redacted]]
	// skillhost.toml:2: packs.weather.config.region "asia" must be one of "eu", "us" (tool "forecast" declares region as a select setting)
	// skillhost.toml:1: tool "forecast" of pack "weather" needs the secret setting api_key, which has no default: add api_key = "…" under [packs.weather.config]
}
