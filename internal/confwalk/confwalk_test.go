package confwalk_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/internal/confwalk"
)

// section is a section as an owner package writes one: tags, and a
// Validate with one bounds table.
type section struct {
	Enabled *bool         `toml:"enabled"`
	Mode    string        `toml:"mode"`
	Max     int           `toml:"max_results"`
	Names   []string      `toml:"names"`
	Wait    time.Duration `toml:"wait"`
	Sub     subsection    `toml:"sub"`
	Custom  string        `toml:"custom"`
	// Wait2 has no tag: it is no key of the section.
	Wait2 time.Duration
}

type subsection struct {
	Entries int  `toml:"max_entries"`
	On      bool `toml:"on"`
}

const maxResults = 20

func (s section) Validate() error {
	errs := confwalk.Check(s)
	if s.Sub.Entries < 0 {
		errs = append(errs, confwalk.Invalid("sub.max_entries", "must not be negative, got %d", s.Sub.Entries))
	}
	for i, n := range s.Names {
		if n == "" {
			errs = append(errs, confwalk.Invalid("names["+string(rune('0'+i))+"]", "must not be empty"))
		}
	}
	return errors.Join(errs...)
}

func init() {
	confwalk.Register[section](confwalk.Rules{
		Hooks: map[string]func(*confwalk.Walker, confwalk.Value) (any, bool){
			"custom": func(w *confwalk.Walker, kv confwalk.Value) (any, bool) {
				s, ok := w.Str(kv)
				return strings.ToUpper(s), ok
			},
		},
		Fixed:   []confwalk.FixedKey{{Key: "fallback", Want: true, Why: "always on"}},
		Refused: map[string]string{"cache_dir": "is not a setting: one index"},
		Bounds:  map[string]confwalk.Bound{"max_results": {Lo: 1, Hi: maxResults}},
		Enums:   map[string][]string{"mode": {"run", "session"}},
	})
	confwalk.Register[subsection](confwalk.Rules{
		Bounds: map[string]confwalk.Bound{"max_entries": {Lo: -5, Hi: 200}},
	})
}

// decode parses src and decodes its [s] section.
func decode(t *testing.T, src string) (section, []string) {
	t.Helper()
	w, top, err := confwalk.Parse("f.toml", []byte(src), 1<<20)
	if err != nil {
		return section{}, []string{err.Error()}
	}
	var s section
	for _, kv := range top {
		w.Decode(kv, &s)
	}
	var msgs []string
	if err := w.Err(); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			msgs = append(msgs, e.Error())
			if !errors.Is(e, confwalk.ErrBadConfig) {
				t.Errorf("%v does not match ErrBadConfig", e)
			}
		}
	}
	return s, msgs
}

func TestDecode(t *testing.T) {
	s, msgs := decode(t, `
[s]
enabled = false
mode = "session"
max_results = 5
names = ["a", "b"]
wait = "2s"
custom = "x"
fallback = true

[s.sub]
max_entries = 7
on = true
`)
	if len(msgs) > 0 {
		t.Fatal(msgs)
	}
	f := false
	want := section{Enabled: &f, Mode: "session", Max: 5, Names: []string{"a", "b"}, Wait: 2 * time.Second,
		Custom: "X", Sub: subsection{Entries: 7, On: true}}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// Every problem is reported in file order, each on the line of its key,
// with the key's whole path; Validate's errors land on their keys' lines
// too.
func TestDecodeErrorLines(t *testing.T) {
	_, msgs := decode(t, `
[s]
enabled = "yes"
mode = "forever"
max_results = 50
names = ["a", ""]
wait = "5"
colour = "red"
cache_dir = "/tmp"
fallback = false

[s.sub]
max_entries = -1
on = 3
`)
	want := []string{
		`f.toml:3: s.enabled must be true or false, got string`,
		`f.toml:4: s.mode "forever" must be one of run, session`,
		`f.toml:5: s.max_results must be from 1 to 20, got 50`,
		`f.toml:6: s.names[1] must not be empty`,
		`f.toml:7: s.wait "5" has no unit; write "5s"`,
		`f.toml:8: unknown key "s.colour"; expected one of enabled, mode, max_results, names, wait, sub, custom, fallback`,
		`f.toml:9: s.cache_dir is not a setting: one index`,
		`f.toml:10: s.fallback cannot be false: always on`,
		`f.toml:13: s.sub.max_entries must not be negative, got -1`,
		`f.toml:14: s.sub.on must be true or false, got integer`,
	}
	if d := cmp.Diff(want, msgs); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestSyntaxErrorLines(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"a = 1\na = 2\n", `f.toml:2: key "a" is defined twice; each key and table may appear once`},
		{"a = 1\nb = \xff\n", `f.toml:2: invalid UTF-8 byte 0xff; the config must be UTF-8 text`},
		{"a = 1\n\n[b\n", "f.toml:3: invalid TOML: "},
	} {
		_, _, err := confwalk.Parse("f.toml", []byte(tc.src), 1<<20)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %s…", tc.src, err, tc.want)
		}
		if !errors.Is(err, confwalk.ErrBadConfig) {
			t.Errorf("%q: %v does not match ErrBadConfig", tc.src, err)
		}
	}
	if _, _, err := confwalk.Parse("f.toml", make([]byte, 11), 10); !errors.Is(err, confwalk.ErrBadConfig) {
		t.Errorf("too large: %v", err)
	}
}

// A table created by a deeper header ([a.b] makes a) has a line: the
// header's.
func TestImplicitTableLine(t *testing.T) {
	w, top, err := confwalk.Parse("f.toml", []byte("x = 1\n\n[a.b]\nc = 1\n"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got := top[1].Line; top[1].Key.String() != "a" || got != 3 {
		t.Errorf("a: line %d, want 3", got)
	}
	keys, _ := w.Table(top[1], "a table")
	if keys[0].Key.String() != "a.b" || keys[0].Line != 3 {
		t.Errorf("a.b: %v line %d, want line 3", keys[0].Key, keys[0].Line)
	}
}

// An embedder's value checked by Validate alone names the key without a
// file, and matches ErrBadConfig.
func TestInvalidWithoutFile(t *testing.T) {
	err := section{Max: 99}.Validate()
	if !errors.Is(err, confwalk.ErrBadConfig) || err.Error() != "max_results must be from 1 to 20, got 99" {
		t.Errorf("got %v", err)
	}
}

// Check holds Go values to the same bounds and enums as the file, 0 and
// "" being "not set".
func TestCheck(t *testing.T) {
	var got []string
	for _, err := range confwalk.Check(section{Max: 21, Mode: "x", Sub: subsection{Entries: 300}}) {
		got = append(got, err.Error())
	}
	want := []string{
		`mode "x" must be one of run, session`,
		`max_results must be from 1 to 20, got 21`,
		`sub.max_entries must be from -5 to 200, got 300`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if errs := confwalk.Check(section{}); len(errs) > 0 {
		t.Errorf("the zero section: %v", errs)
	}
}

// What the embedder sets wins, a switch set to false included; the file
// fills what it leaves zero, in sub-tables too.
func TestFill(t *testing.T) {
	f, tr := false, true
	mine := section{Enabled: &f, Names: []string{}, Sub: subsection{On: true}}
	file := section{Enabled: &tr, Mode: "run", Max: 3, Names: []string{"a"}, Sub: subsection{Entries: 9}}
	confwalk.Fill(&mine, file)
	want := section{Enabled: &f, Mode: "run", Max: 3, Names: []string{}, Sub: subsection{Entries: 9, On: true}}
	if d := cmp.Diff(want, mine); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestKeys(t *testing.T) {
	want := []string{"enabled", "mode", "max_results", "names", "wait", "sub", "custom", "fallback"}
	if d := cmp.Diff(want, confwalk.Keys(reflect.TypeFor[section]())); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestKeyString(t *testing.T) {
	k := confwalk.Key{"packs", "my pack"}.Child("mounts").Index(1).Child("guest")
	if got, want := k.String(), `packs."my pack".mounts[1].guest`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestSize(t *testing.T) {
	for s, want := range map[string]uint64{"64MiB": 64 << 20, "1k": 1024, "2KB": 2000, "7": 7} {
		if n, err := confwalk.ParseSize(s); err != nil || n != want {
			t.Errorf("%s: %d, %v; want %d", s, n, err, want)
		}
	}
	for _, s := range []string{"", "MiB", "5 parsecs", "99999999999999999999"} {
		if _, err := confwalk.ParseSize(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

// FuzzDecode reads whatever a file may hold: nothing panics, every
// problem is an *Error that matches ErrBadConfig and has a line inside
// the file when it names one.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		"[s]\nenabled = true\nmax_results = 3\n",
		"[s]\nnames = [1, 2]\n[s.sub]\nmax_entries = \"x\"\n",
		"s = 1\n",
		"[s.sub.deeper]\nx = 1\n",
		"[[s]]\na = 1\n",
		"[s]\nwait = 5\ncustom = []\nfallback = false\n",
		"a = 1\na = 2\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		w, top, err := confwalk.Parse("f.toml", []byte(src), 1<<16)
		if err != nil {
			checkErr(t, src, err)
			return
		}
		for _, kv := range top {
			var s section
			w.Decode(kv, &s)
			if kv.Line < 0 {
				t.Fatalf("line %d", kv.Line)
			}
		}
		if err := w.Err(); err != nil {
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				checkErr(t, src, e)
			}
		}
	})
}

func checkErr(t *testing.T, src string, err error) {
	t.Helper()
	var ce *confwalk.Error
	if !errors.As(err, &ce) || !errors.Is(err, confwalk.ErrBadConfig) {
		t.Fatalf("%v: not a *confwalk.Error matching ErrBadConfig", err)
	}
	if lines := strings.Count(src, "\n") + 1; ce.Line < 0 || ce.Line > lines {
		t.Fatalf("%v: line %d outside the file's %d lines", err, ce.Line, lines)
	}
}
