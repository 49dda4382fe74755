package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost/abi"
)

// terminal stands in for a terminal: stdin that must not be read, or
// stderr that collects what is written.
type terminal struct {
	bytes.Buffer
	read bool
}

func (t *terminal) IsTerminal() bool { return true }

func (t *terminal) Read(p []byte) (int, error) {
	t.read = true
	return 0, io.EOF
}

// lockedTerminal is a terminal stderr that a test may read while another
// goroutine writes to it.
type lockedTerminal struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *lockedTerminal) IsTerminal() bool { return true }

func (t *lockedTerminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.Write(p)
}

func (t *lockedTerminal) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// cliWith runs the CLI with the tests' state folder and the given stdin
// and stderr.
func cliWith(t *testing.T, stdin io.Reader, stderr io.Writer, args ...string) (code int, stdout string) {
	t.Helper()
	var out bytes.Buffer
	code = run(context.Background(), append([]string{"--state-dir", stateDir, "--no-user-sources"}, args...), stdin, &out, stderr)
	return code, out.String()
}

// TestInputRules: the JSON argument, else --input, else stdin when it is
// not a terminal; "-" and --stdin read stdin even from a terminal; an
// empty argument or an empty --input is an explicit empty input, and stdin is
// then not read.
func TestInputRules(t *testing.T) {
	piped := func(s string) io.Reader { return strings.NewReader(s) }
	echo := fixture("wat/echo.wasm")
	for _, tc := range []struct {
		name     string
		stdin    io.Reader
		args     []string
		code     int
		stdout   string // substring
		readsTTY bool   // stdin is a terminal and is read
	}{
		{"piped, no argument", piped(`{"text":"From Pipe"}`), []string{"call", "slugify"}, 0, "from-pipe", false},
		{"terminal, no argument: no input", &terminal{}, []string{"call", "slugify"}, 1, "", false},
		{"terminal, -", &terminal{}, []string{"call", "slugify", "-"}, 1, "", true},
		{"terminal, --stdin", &terminal{}, []string{"call", "slugify", "--stdin"}, 1, "", true},
		{"piped, -", piped(`{"text":"Dash"}`), []string{"call", "slugify", "-"}, 0, "dash", false},
		{"piped, --stdin", piped(`{"text":"Flag"}`), []string{"call", "slugify", "--stdin"}, 0, "flag", false},
		{"--input", piped(`{"text":"not read"}`), []string{"call", "slugify", "--input", `{"text":"By Flag"}`}, 0, "by-flag", false},
		{"explicit empty argument", piped(`{"text":"not read"}`), []string{"call", "slugify", ""}, 1, "", false},
		{"module, piped", piped("bytes in"), []string{"call", "--module", echo, "--export", "echo"}, 0, "bytes in", false},
		{"module, --input ''", piped("not read"), []string{"call", "--module", echo, "--export", "echo", "--input", ""}, 0, "", false},
		{"module, -i", piped("not read"), []string{"call", "--module", echo, "--export", "echo", "-i", "short"}, 0, "short", false},
		{"module, terminal", &terminal{}, []string{"call", "--module", echo, "--export", "echo"}, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errOut bytes.Buffer
			code, out := cliWith(t, tc.stdin, &errOut, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.stdout) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q", code, out, errOut.String(), tc.code, tc.stdout)
			}
			if tc.stdout == "" && code == 0 && out != "" {
				t.Errorf("stdout %q, want the empty output", out)
			}
			if term, ok := tc.stdin.(*terminal); ok && term.read != tc.readsTTY {
				t.Errorf("stdin read: %v, want %v", term.read, tc.readsTTY)
			}
			if tc.code == 1 && !strings.Contains(errOut.String(), `missing required field "text"`) {
				t.Errorf("stderr %q; want the empty arguments refused", errOut.String())
			}
		})
	}
}

// TestReadOnlyVerbsCreateNothing runs the verbs that only read in an
// empty working folder with an empty home and temporary folder: none of
// them may create a file or folder anywhere there.
func TestReadOnlyVerbsCreateNothing(t *testing.T) {
	root := t.TempDir()
	home, work, tmp := filepath.Join(root, "home"), filepath.Join(root, "work"), filepath.Join(root, "tmp")
	for _, d := range []string{home, work, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bundled, err := filepath.Abs(filepath.Join("..", "..", "packs", "bundled"))
	if err != nil {
		t.Fatal(err)
	}
	echo, err := filepath.Abs(fixture("wat/echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("TMPDIR", tmp)
	t.Setenv("SKILLHOST_STATE_DIR", "")
	t.Setenv("SKILLHOST_CONFIG", "")
	t.Chdir(work)
	for _, args := range [][]string{
		{"list"},
		{"list", "--json"},
		{"show", "slugify"},
		{"show", "tool_search"},
		{"show", "cursor-pagination", "--json"},
		{"show", "nope"},
		{"call", "slugify", `{"text":"x"}`, "--dry-run"},
		{"validate", bundled},
		{"describe", echo}, // fails (no describe export) after loading the module
		{"version"},
		{"--version"},
		{"cache", "info"},
		{"--help"},
		{"call", "--help"},
		{"completion", "bash"},
	} {
		r := runIn(t, args...)
		if r.code == exitOK && strings.Contains(r.stderr, "skillhost:") || r.code != exitOK && !strings.Contains(r.stderr, "skillhost: ") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		var made []string
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if path != root && path != home && path != work && path != tmp {
				made = append(made, path)
			}
			return nil
		})
		if len(made) > 0 {
			t.Fatalf("%v created %v", args, made)
		}
	}
	// A verb that writes puts its state in the user's folders, not in the
	// working folder.
	if r := runIn(t, "search", "slug"); r.code != 0 {
		t.Fatalf("search: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "skillhost", "index.db")); err != nil && runtime.GOOS == "linux" {
		t.Errorf("search made no index in the user's data folder: %v", err)
	}
	if entries, _ := os.ReadDir(work); len(entries) > 0 {
		t.Errorf("search wrote into the working folder: %v", entries)
	}
}

// TestCacheInfoAndClean: cache info counts the entries and bytes of the
// compilation cache and says where the index is; cache clean deletes the
// cache and leaves the index.
func TestCacheInfoAndClean(t *testing.T) {
	state := t.TempDir()
	cache := filepath.Join(state, "cache")
	if err := os.MkdirAll(filepath.Join(cache, "valid"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int{"a": 1000, "valid/b": 24} {
		if err := os.WriteFile(filepath.Join(cache, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index := filepath.Join(state, "index.db")
	if err := os.WriteFile(index, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, "--state-dir", state, "cache", "info")
	if r.code != 0 || !strings.Contains(r.stdout, cache) || !strings.Contains(r.stdout, "2 entries, 1.0 KiB") || !strings.Contains(r.stdout, index) {
		t.Errorf("cache info: %+v", r)
	}
	r = runIn(t, "--state-dir", state, "cache", "info", "--json")
	var info struct {
		Cache   string `json:"cache"`
		Entries int    `json:"entries"`
		Bytes   int64  `json:"bytes"`
		Index   string `json:"index"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil || info.Entries != 2 || info.Bytes != 1024 || info.Cache != cache || info.Index != index {
		t.Errorf("cache info --json: %+v (%v)", info, err)
	}
	r = runIn(t, "--state-dir", state, "cache", "clean")
	if r.code != 0 || !strings.Contains(r.stdout, "deleted "+cache+": 2 entries") {
		t.Errorf("cache clean: %+v", r)
	}
	if _, err := os.Stat(cache); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the cache is still there: %v", err)
	}
	if _, err := os.Stat(index); err != nil {
		t.Errorf("cache clean removed the index: %v", err)
	}
	r = runIn(t, "--state-dir", state, "cache", "info")
	if r.code != 0 || !strings.Contains(r.stdout, "0 entries, 0 B") {
		t.Errorf("cache info after clean: %+v", r)
	}
}

// TestVersion: version prints skillhost's version, commit, Go, wazero and
// ABI versions; --version the same on one line.
func TestVersion(t *testing.T) {
	r := runIn(t, "version")
	for _, want := range []string{"skillhost ", "commit:", "go:       " + runtime.Version(), "wazero:   v1.", "abi:      " + abi.Version} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("version lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	r = runIn(t, "version", "--json")
	var v versionInfo
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.ABI != abi.Version || v.Go != runtime.Version() || !strings.HasPrefix(v.Wazero, "v1.") || v.Version == "" {
		t.Errorf("version --json: %+v (%v)", v, err)
	}
	for _, flag := range []string{"--version", "-v"} {
		r = runIn(t, flag)
		if r.code != 0 || strings.Count(r.stdout, "\n") != 1 || !strings.HasPrefix(r.stdout, "skillhost ") || !strings.Contains(r.stdout, "wazero v1.") ||
			!strings.Contains(r.stdout, "ABI "+abi.Version) {
			t.Errorf("%s: %+v", flag, r)
		}
	}
}

// TestProgress: a compilation that takes long shows a progress line on a
// terminal's stderr (name, size, time so far) and erases it when done; on
// anything else, nothing.
func TestProgress(t *testing.T) {
	defer func(d time.Duration) { progressDelay = d }(progressDelay)
	progressDelay = 0
	term := &lockedTerminal{}
	g := &globals{stderr: term, stderrTTY: isTerminal(term)}
	done := g.compiling("text.wasm", 4510252)
	// Wait for the line before done: a done that came first would, rightly,
	// leave nothing to see.
	const line = "\r\x1b[Kskillhost: compiling text.wasm (4.3 MiB) 0."
	for end := time.Now().Add(10 * time.Second); !strings.Contains(term.String(), line) && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	done()
	out := term.String()
	if !strings.Contains(out, line) || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("progress on a terminal: %q", out)
	}
	var plain bytes.Buffer
	g = &globals{stderr: &plain, stderrTTY: isTerminal(&plain)}
	done = g.compiling("text.wasm", 4510252)
	time.Sleep(50 * time.Millisecond)
	done()
	if plain.Len() != 0 {
		t.Errorf("progress on a pipe: %q", plain.String())
	}
	// A call whose stderr is a terminal shows it while its module
	// compiles (here from the cache, so quickly), then only the result.
	var errOut terminal
	code, out := cliWith(t, strings.NewReader(""), &errOut, "call", "--module", fixture("wat/echo.wasm"), "--export", "echo", "--input", "hi")
	if code != 0 || out != "hi" || strings.Contains(strings.ReplaceAll(errOut.String(), "\r\x1b[K", ""), "\n") {
		t.Errorf("call with progress: exit %d, stdout %q, stderr %q", code, out, errOut.String())
	}
	code, out = cliWith(t, strings.NewReader(""), &errOut, "call", "slugify", `{"text":"A B"}`)
	if code != 0 || !strings.Contains(out, "a-b") {
		t.Errorf("pack call with progress: exit %d, stdout %q, stderr %q", code, out, errOut.String())
	}
}

// TestDryRun: call TOOL --dry-run prints the grant and limits the call
// would run with, the flags' included (an env var the module does not ask
// for is not granted, and no value is shown), and calls nothing.
func TestDryRun(t *testing.T) {
	r := cli(t, "", "--no-user-sources", "call", "slugify", `{"text":"x"}`, "--dry-run", "--timeout", "2s", "--env", "TOKEN=secret-value")
	for _, want := range []string{"slugify would run (dry run: nothing was called)", "module:  text, export slugify", "limits:", "timeout", "2s",
		"grant (the grant given on the command line)", "isolation:"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("dry run lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "secret-value") || strings.Contains(r.stdout, "x-") {
		t.Errorf("dry run shows a value or ran the tool:\n%s", r.stdout)
	}
	r = cli(t, "", "--no-user-sources", "call", "slugify", "--dry-run", "--json")
	var v struct {
		Name   string         `json:"name"`
		Limits map[string]any `json:"limits"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Name != "slugify" || v.Limits["timeout"] == nil {
		t.Errorf("dry run --json: %+v (%v) %s", v, err, r.stderr)
	}
	// The arguments are still checked as JSON.
	if r := cli(t, "", "--no-user-sources", "call", "slugify", "{bad", "--dry-run"); r.code != exitToolError {
		t.Errorf("dry run with malformed arguments: %+v", r)
	}
}
