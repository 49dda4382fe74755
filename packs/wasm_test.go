package packs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	tool := func(name, export string) *packs.Tool { return &packs.Tool{Name: name, Export: export} }
	tests := []struct {
		name  string
		wasm  []byte
		tools []*packs.Tool
		want  []string // each in the error; none: no error
	}{
		{"command module", command, []*packs.Tool{tool("run", "run")},
			[]string{"WASI command module", "exports _start and no _initialize", "-buildmode=c-shared", "unreachable"}},
		{"no tools and no describe", echo, nil,
			[]string{"no tools: entry in pack.yaml and no describe export", "exports found: config, echo, fail"}},
		{"entry naming a missing export", echo, []*packs.Tool{tool("e", "echo"), tool("x", "nope")},
			[]string{`no export "nope" for tool "x"`}},
		{"not wasm", []byte("#!/bin/sh"), nil, []string{"not a WebAssembly module"}},
		{"listed tools", echo, []*packs.Tool{tool("e", "echo")}, nil},
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
	})
}
