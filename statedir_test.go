package skillhost_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/packs"
)

// TestStateDir: one state folder from Config.StateDir, else the config
// file's state_dir, else $SKILLHOST_STATE_DIR; without one, the cache in
// the user's cache folder and the index in the user's data folder. A
// configuration that was not read from a file (packs.DefaultConfig), or a
// file that does not set state_dir, names no folder.
func TestStateDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the user's folders are checked as XDG names them")
	}
	dir := t.TempDir()
	file, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(`state_dir = "st"`))
	if err != nil {
		t.Fatal(err)
	}
	noState, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := func(d string) skillhost.StateFolders {
		return skillhost.StateFolders{Dir: d, Cache: filepath.Join(d, "cache"), Index: filepath.Join(d, "index.db")}
	}
	cache, data := filepath.Join(dir, "xdg-cache"), filepath.Join(dir, "xdg-data")
	user := skillhost.StateFolders{Cache: filepath.Join(cache, "skillhost"), Index: filepath.Join(data, "skillhost", "index.db")}
	for _, tc := range []struct {
		name string
		env  string
		home string // "" leaves HOME and the XDG folders unset
		cfg  skillhost.Config
		op   *packs.Config
		want skillhost.StateFolders
	}{
		{"config field wins", "env", "home", skillhost.Config{StateDir: "field", Operator: file}, nil, in("field")},
		{"file's state_dir", "env", "home", skillhost.Config{}, file, in(filepath.Join(dir, "st"))},
		{"cfg.Operator when op is nil", "env", "home", skillhost.Config{Operator: file}, nil, in(filepath.Join(dir, "st"))},
		{"file without state_dir: environment", "env", "home", skillhost.Config{}, noState, in("env")},
		{"file without state_dir: user folders", "", "home", skillhost.Config{}, noState, user},
		{"no file: environment", "env", "home", skillhost.Config{}, packs.DefaultConfig(), in("env")},
		{"nothing at all: user folders", "", "home", skillhost.Config{}, nil, user},
		{"index path wins", "", "home", skillhost.Config{IndexPath: "x.db"}, nil, skillhost.StateFolders{Cache: user.Cache, Index: "x.db"}},
		{"no home folder", "", "", skillhost.Config{}, nil, in(".skillhost")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(skillhost.StateDirEnv, tc.env)
			t.Setenv("HOME", "")
			t.Setenv("XDG_CACHE_HOME", "")
			t.Setenv("XDG_DATA_HOME", "")
			if tc.home != "" {
				t.Setenv("HOME", filepath.Join(dir, tc.home))
				t.Setenv("XDG_CACHE_HOME", cache)
				t.Setenv("XDG_DATA_HOME", data)
			}
			if got := skillhost.StateDir(tc.cfg, tc.op); got != tc.want {
				t.Errorf("StateDir = %+v, want %+v", got, tc.want)
			}
		})
	}
	// Without the XDG variables, ~/.cache and ~/.local/share.
	t.Setenv(skillhost.StateDirEnv, "")
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	want := skillhost.StateFolders{Cache: filepath.Join(dir, ".cache", "skillhost"), Index: filepath.Join(dir, ".local", "share", "skillhost", "index.db")}
	if got := skillhost.StateDir(skillhost.Config{}, nil); got != want {
		t.Errorf("StateDir = %+v, want %+v", got, want)
	}
}
