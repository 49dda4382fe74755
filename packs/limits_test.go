package packs

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/grant"
)

// The filesystem limits read from either file, by the one check both
// share: sizes for max_write, a positive integer up to the ceiling for
// max_open_files, and neither zero.
func TestParseLimitsFilesystem(t *testing.T) {
	tests := []struct {
		name    string
		raw     rawLimits
		want    grant.Limits
		wantErr string
	}{
		{"both", rawLimits{MaxWrite: "1MiB", MaxOpenFiles: "16"}, grant.Limits{MaxWriteBytes: 1 << 20, MaxOpenFiles: 16}, ""},
		{"bytes", rawLimits{MaxWrite: "4096"}, grant.Limits{MaxWriteBytes: 4096}, ""},
		{"the ceiling", rawLimits{MaxOpenFiles: "1048576"}, grant.Limits{MaxOpenFiles: MaxOpenFilesCeiling}, ""},
		{"unset", rawLimits{}, grant.Limits{}, ""},
		{"zero write", rawLimits{MaxWrite: "0"}, grant.Limits{}, `max_write "0" must be a positive size such as 64MiB; to refuse every write, mount the folders read-only`},
		{"zero write with a unit", rawLimits{MaxWrite: "0KiB"}, grant.Limits{}, `max_write "0KiB" must be a positive size`},
		{"negative write", rawLimits{MaxWrite: "-5"}, grant.Limits{}, `max_write: size "-5" must start with a number`},
		{"write too large", rawLimits{MaxWrite: "99999999999GiB"}, grant.Limits{}, `max_write: size "99999999999GiB" is too large`},
		{"zero open", rawLimits{MaxOpenFiles: "0"}, grant.Limits{}, `max_open_files 0 must be a positive number of files, such as 64`},
		{"negative open", rawLimits{MaxOpenFiles: "-1"}, grant.Limits{}, `max_open_files -1 must be a positive number of files`},
		{"very negative open", rawLimits{MaxOpenFiles: "-99999999999999999999"}, grant.Limits{}, `max_open_files -99999999999999999999 must be a positive number of files`},
		{"open above the ceiling", rawLimits{MaxOpenFiles: "1048577"}, grant.Limits{}, `max_open_files 1048577 is above 1048576, the most files a process may hold open`},
		{"open past int64", rawLimits{MaxOpenFiles: "99999999999999999999"}, grant.Limits{}, `max_open_files 99999999999999999999 is above 1048576`},
		{"open not a number", rawLimits{MaxOpenFiles: "many"}, grant.Limits{}, `max_open_files many must be a positive number of files`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLimits(tt.raw)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("limits = %+v; want %+v", got, tt.want)
			}
		})
	}
}

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
	keys := strings.Split(limitKeys, ", ")
	slices.Sort(inSchema)
	slices.Sort(keys)
	if !slices.Equal(inSchema, keys) {
		t.Errorf("pack.yaml limits %v; skillhost.toml limits %v", inSchema, keys)
	}
	open := props["max_open_files"]
	if open.Maximum == nil || *open.Maximum != MaxOpenFilesCeiling || open.Minimum == nil || *open.Minimum != 1 {
		t.Errorf("schema max_open_files bounds %v..%v; want 1..%d", open.Minimum, open.Maximum, MaxOpenFilesCeiling)
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
	if cfg.Sandbox.Isolation != IsolationProcess {
		t.Errorf("sandbox isolation %q; want process", cfg.Sandbox.Isolation)
	}
	for pack, want := range map[string]string{"fast": IsolationInProcess, "plain": "", "absent": ""} {
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
