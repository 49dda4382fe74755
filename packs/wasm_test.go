package packs_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/packs"
)

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestModuleExports(t *testing.T) {
	got, err := packs.ModuleExports(readFixture(t, "testdata/guests/wat/command.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"_start", "run"}, got); d != "" {
		t.Errorf("exports (-want +got):\n%s", d)
	}
	text, err := packs.ModuleExports(readFixture(t, "packs/bundled/modules/text/text.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"_initialize", "describe", "slugify", "word_count"} {
		if !strings.Contains(" "+strings.Join(text, " ")+" ", " "+want+" ") {
			t.Errorf("text.wasm exports %v, no %s", text, want)
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReadSeeker
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Seek(off int64, whence int) (int64, error) { return c.r.Seek(off, whence) }

// ReadModuleExports finds the exports ModuleExports does, reading the
// framing and the export section only: of the bundled text module
// (4.5 MB), a few kilobytes. A reader that cannot seek reads through.
func TestReadModuleExports(t *testing.T) {
	wasm := readFixture(t, "packs/bundled/modules/text/text.wasm")
	want, err := packs.ModuleExports(wasm)
	if err != nil {
		t.Fatal(err)
	}
	r := &countingReader{r: bytes.NewReader(wasm)}
	got, err := packs.ReadModuleExports(r, int64(len(wasm)))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("exports (-ModuleExports +ReadModuleExports):\n%s", d)
	}
	if r.n > int64(len(wasm))/20 {
		t.Errorf("read %d of the module's %d bytes; want only its framing and export section", r.n, len(wasm))
	}
	got, err = packs.ReadModuleExports(iotest.HalfReader(bytes.NewReader(wasm)), int64(len(wasm)))
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("without Seek: %v, %v", got, err)
	}
	// A module that starts past the reader's beginning.
	f := bytes.NewReader(append([]byte("prefix"), wasm...))
	f.Seek(6, io.SeekStart)
	if got, err = packs.ReadModuleExports(f, int64(len(wasm))); err != nil || !slices.Equal(got, want) {
		t.Errorf("from offset 6: %v, %v", got, err)
	}
}

func TestModuleExportsRefusesBrokenModules(t *testing.T) {
	valid := readFixture(t, "testdata/guests/wat/command.wasm")
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"empty", nil, "no \\0asm magic"},
		{"text", []byte("hello, world"), "no \\0asm magic"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), "version"},
		{"section past the end", []byte("\x00asm\x01\x00\x00\x00\x07\x7f"), "claims 127 bytes"},
		{"long number", []byte("\x00asm\x01\x00\x00\x00\x07\xff\xff\xff\xff\xff\x01"), "longer than 5 bytes"},
		{"export name past the end", []byte("\x00asm\x01\x00\x00\x00\x07\x02\x01\x09"), "claims 9 bytes"},
		{"truncated", valid[:len(valid)-3], ""},
		{"bytes after the exports", []byte("\x00asm\x01\x00\x00\x00\x07\x06\x01\x01a\x00\x00\x00"), "1 bytes left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := packs.ModuleExports(tt.wasm)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

// The messages name what is wrong and what fixes it.
func TestCheckModule(t *testing.T) {
	command := readFixture(t, "testdata/guests/wat/command.wasm")
	echo := readFixture(t, "testdata/guests/wat/echo.wasm")
	text := readFixture(t, "packs/bundled/modules/text/text.wasm")
	tool := func(name, export string) *packs.ToolSpec { return &packs.ToolSpec{Name: name, Export: export} }
	tests := []struct {
		name  string
		wasm  []byte
		tools []*packs.ToolSpec
		want  []string // each in the error; none: no error
	}{
		{"command module", command, []*packs.ToolSpec{tool("run", "run")},
			[]string{"WASI command module", "exports _start and no _initialize", "-buildmode=c-shared", "unreachable"}},
		{"no tools and no describe", echo, nil,
			[]string{"no tools: entry in pack.yaml and no describe export", "exports found: config, echo, fail"}},
		{"entry naming a missing export", echo, []*packs.ToolSpec{tool("e", "echo"), tool("x", "nope")},
			[]string{`no export "nope" for tool "x"`}},
		{"not wasm", []byte("#!/bin/sh"), nil, []string{"not a WebAssembly module"}},
		{"listed tools", echo, []*packs.ToolSpec{tool("e", "echo")}, nil},
		{"describe export", text, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := packs.CheckModule(&packs.Module{Name: "m", Path: "m.wasm", Tools: tt.tools}, tt.wasm)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := packs.ErrModule; !errors.Is(err, want) && !errors.Is(err, packs.ErrNoExport) {
				t.Fatalf("error %v matches neither ErrModule nor ErrNoExport", err)
			}
			if strings.Contains(tt.name, "missing export") != errors.Is(err, packs.ErrNoExport) {
				t.Errorf("error %v: matches ErrNoExport %v", err, errors.Is(err, packs.ErrNoExport))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), "module m (m.wasm)") {
				t.Errorf("error %q does not name the module", err)
			}
		})
	}
}

func FuzzModuleExports(f *testing.F) {
	f.Add(readFixture(f, "testdata/guests/wat/command.wasm"))
	f.Add(readFixture(f, "testdata/guests/wat/echo.wasm"))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x07\x05\x01\x01a\x00\x00"))
	f.Fuzz(func(t *testing.T, wasm []byte) {
		names, err := packs.ModuleExports(wasm)
		if err == nil && len(wasm) < 8 {
			t.Fatalf("%d bytes read as a module with exports %v", len(wasm), names)
		}
		// Read without seeking, byte by byte, the same exports and errors.
		for _, r := range []io.Reader{iotest.OneByteReader(bytes.NewReader(wasm)), iotest.HalfReader(bytes.NewReader(wasm))} {
			got, gotErr := packs.ReadModuleExports(r, int64(len(wasm)))
			if fmt.Sprint(gotErr) != fmt.Sprint(err) || !slices.Equal(got, names) {
				t.Fatalf("ReadModuleExports = %v, %v; ModuleExports = %v, %v", got, gotErr, names, err)
			}
		}
	})
}
