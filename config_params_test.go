package skillhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/packs"
)

// statsPack runs the Rust textstats guest, whose count_vowels reads the
// config key "vowels" with config_get and echoes it.
const statsPack = `name: stats
modules:
  - name: textstats
    path: textstats.wasm
    tools:
      - name: count_vowels
        config_params:
          - {name: vowels, type: string, default: "aeiou"}
          - {name: token, type: secret}
          - {name: limit, type: number, min: 1, max: 10}
`

func operator(t *testing.T, toml string) *packs.Config {
	t.Helper()
	cfg, err := packs.ParseConfig("/etc/skillhost/skillhost.toml", []byte("[sources]\nbundled = false\nuser = \"\"\nworkspace = \"\"\n"+toml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// vowels calls count_vowels on a text and returns what it reports.
func vowels(t *testing.T, e *skillhost.Engine, text string) (count int, set string) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"t": text})
	res, err := e.Call(context.Background(), "count_vowels", args, nil)
	if err != nil || res.IsError {
		t.Fatalf("count_vowels: %+v, %v", res, err)
	}
	var out struct {
		Count  int    `json:"count"`
		Vowels string `json:"vowels"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("count_vowels output %s: %v", res.Output, err)
	}
	return out.Count, out.Vowels
}

// The operator's [packs.<name>.config] value reaches the module's
// config_get; without one the param's default does.
func TestEngineConfigValues(t *testing.T) {
	pack := writePack(t, statsPack, "../../guests/rust/examples/textstats/textstats.wasm", "textstats.wasm")

	e := open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t, "")})
	if n, set := vowels(t, e, "xyz"); set != "aeiou" || n != 0 {
		t.Errorf("without an operator value: vowels %q, count %d; want the default aeiou, 0", set, n)
	}

	e = open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t, `
[packs.stats.config]
vowels = "xyz"
token = "tok-SECRET-5"
limit = 3
`)})
	if p := e.Problems(); len(p) > 0 {
		t.Fatalf("problems: %v", p)
	}
	if n, set := vowels(t, e, "xyz"); set != "xyz" || n != 3 {
		t.Errorf("with vowels = \"xyz\": vowels %q, count %d; want xyz, 3", set, n)
	}
	tool, err := e.Tool("count_vowels")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"vowels": "xyz", "token": "tok-SECRET-5", "limit": "3"}
	if d := cmp.Diff(want, tool.Effective.Config); d != "" {
		t.Errorf("effective config (-want +got)\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"vowels": "aeiou"}, tool.Requested.Config); d != "" {
		t.Errorf("requested config (-want +got)\n%s", d)
	}
	if len(tool.ConfigParams) != 3 || tool.ConfigParams[1].Type != packs.ParamSecret {
		t.Errorf("ConfigParams = %+v", tool.ConfigParams)
	}
	if s := fmt.Sprint(e.Operator()); strings.Contains(s, "tok-SECRET-5") {
		t.Errorf("the operator config prints a secret: %s", s)
	}
}

// A value that does not fit its param keeps the pack's tools out and is
// reported, with the file and line, without its value if secret.
func TestEngineBadConfigValue(t *testing.T) {
	pack := writePack(t, statsPack, "../../guests/rust/examples/textstats/textstats.wasm", "textstats.wasm")
	tests := []struct {
		name, toml, want string
	}{
		{"out of range", "[packs.stats.config]\nlimit = 11\n",
			`/etc/skillhost/skillhost.toml:6: packs.stats.config.limit is 11; it must be at most 10 (tool "count_vowels" declares limit as a number setting) (the tools of pack stats are not loaded)`},
		{"unknown key", "[packs.stats]\nconfig = {vowel = \"x\"}\n",
			`/etc/skillhost/skillhost.toml:6: unknown config key packs.stats.config.vowel: pack "stats" declares no setting "vowel"; its settings are vowels, token, limit (the tools of pack stats are not loaded)`},
		{"secret of the wrong type", "[packs.stats.config]\ntoken = 123456789\n",
			`/etc/skillhost/skillhost.toml:6: packs.stats.config.token must be a string, got integer (tool "count_vowels" declares token as a secret setting) (the tools of pack stats are not loaded)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t, tt.toml)})
			if _, err := e.Tool("count_vowels"); !errors.Is(err, skillhost.ErrToolNotFound) {
				t.Errorf("Tool(count_vowels) = %v; want ErrToolNotFound", err)
			}
			p := e.Problems()
			var got []string
			for _, err := range p {
				got = append(got, err.Error())
			}
			if d := cmp.Diff([]string{tt.want}, got); d != "" {
				t.Errorf("problems (-want +got)\n%s", d)
			}
			var ce *packs.ConfigError
			if len(p) != 1 || !errors.As(p[0], &ce) || !errors.Is(p[0], packs.ErrInvalidConfig) {
				t.Errorf("problem %v is not a *packs.ConfigError", p)
			}
		})
	}

	// A required param without a default and without a value.
	required := strings.Replace(statsPack, "type: secret}", "type: secret, required: true}", 1)
	pack = writePack(t, required, "../../guests/rust/examples/textstats/textstats.wasm", "textstats.wasm")
	e := open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t, "[packs.stats]\nenabled = true\n")})
	var mce *packs.MissingConfigError
	if p := e.Problems(); len(p) != 1 || !errors.As(p[0], &mce) || mce.Param.Name != "token" {
		t.Fatalf("problems = %v; want one *packs.MissingConfigError for token", p)
	}
	if _, err := e.Tool("count_vowels"); err == nil {
		t.Error("count_vowels loaded without its required token")
	}
	// An embedder's grant replaces the config section and is taken as given.
	e = open(t, skillhost.Config{PackDirs: []string{pack}, NoBundled: true, Operator: operator(t, ""),
		Grants: map[string]skillhost.Grant{"stats": {Config: map[string]string{"token": "t", "vowels": "t"}}}})
	if n, set := vowels(t, e, "tt"); set != "t" || n != 3 { // the t of {"t":…} counts too
		t.Errorf("with a granted config: vowels %q, count %d", set, n)
	}
}
