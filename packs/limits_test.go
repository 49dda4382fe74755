package packs

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/skillhost/skillhost/grant"
	"github.com/skillhost/skillhost/internal/confwalk"
)

// pack.yaml's limits and the operator's limits tables have the same keys,
// and the schema holds max_open_files to the ceiling the config reader
// does.
func TestLimitKeysMatchSchema(t *testing.T) {
	data, err := schemaFiles.ReadFile("schemas/pack.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs struct {
			Limits struct {
				Properties map[string]struct {
					Maximum *int64 `json:"maximum"`
					Minimum *int64 `json:"minimum"`
				} `json:"properties"`
			} `json:"limits"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	props := schema.Defs.Limits.Properties
	var inSchema []string
	for k := range props {
		inSchema = append(inSchema, k)
	}
	keys := confwalk.Keys(reflect.TypeFor[grant.Limits]())
	slices.Sort(inSchema)
	slices.Sort(keys)
	if !slices.Equal(inSchema, keys) {
		t.Errorf("pack.yaml limits %v; skillhost.toml limits %v", inSchema, keys)
	}
	open := props["max_open_files"]
	if open.Maximum == nil || *open.Maximum != grant.MaxOpenFilesCeiling || open.Minimum == nil || *open.Minimum != 1 {
		t.Errorf("schema max_open_files bounds %v..%v; want 1..%d", open.Minimum, open.Maximum, grant.MaxOpenFilesCeiling)
	}
}

// [packs.<name>] isolation and [sandbox] isolation are read as written;
// a pack without the key leaves it to the [sandbox] default.
func TestConfigIsolation(t *testing.T) {
	cfg, err := ParseConfig(ConfigFile, []byte(`
[sandbox]
isolation = "process"

[packs.fast]
isolation = "in-process"

[packs.plain]
allowed_hosts = ["api.example.com"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sandbox.Isolation != grant.IsolationProcess {
		t.Errorf("sandbox isolation %q; want process", cfg.Sandbox.Isolation)
	}
	for pack, want := range map[string]grant.Isolation{"fast": grant.IsolationInProcess, "plain": "", "absent": ""} {
		if got := cfg.Pack(pack).Isolation; got != want {
			t.Errorf("pack %s isolation %q; want %q", pack, got, want)
		}
	}
	cfg, err = ParseConfig(ConfigFile, []byte("[packs.fast]\nenabled = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sandbox.Isolation != "" {
		t.Errorf("no [sandbox]: isolation %q; want none", cfg.Sandbox.Isolation)
	}
}
