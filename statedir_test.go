package skillhost_test

import (
	"path/filepath"
	"testing"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/packs"
)

// TestStateDir: Config.StateDir, else the config file's state_dir, else
// $SKILLHOST_STATE_DIR, else .skillhost; a configuration that was not read
// from a file (packs.DefaultConfig) does not hide the environment.
func TestStateDir(t *testing.T) {
	dir := t.TempDir()
	file, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(`state_dir = "st"`))
	if err != nil {
		t.Fatal(err)
	}
	noState, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  string
		cfg  skillhost.Config
		op   *packs.Config
		want string
	}{
		{"config field wins", "env", skillhost.Config{StateDir: "field", Operator: file}, nil, "field"},
		{"file's state_dir", "env", skillhost.Config{}, file, filepath.Join(dir, "st")},
		{"cfg.Operator when op is nil", "env", skillhost.Config{Operator: file}, nil, filepath.Join(dir, "st")},
		{"file without state_dir", "env", skillhost.Config{}, noState, filepath.Join(dir, ".skillhost")},
		{"no file: environment", "env", skillhost.Config{}, packs.DefaultConfig(), "env"},
		{"nothing at all", "", skillhost.Config{}, nil, ".skillhost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(skillhost.StateDirEnv, tc.env)
			if got := skillhost.StateDir(tc.cfg, tc.op); got != tc.want {
				t.Errorf("StateDir = %q, want %q", got, tc.want)
			}
		})
	}
}
