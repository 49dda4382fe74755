package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/guests/go/skill"
	"github.com/skillhost/skillhost/guests/go/skill/skilltest"
)

// setup makes a folder tree and points the module's root at it.
func setup(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"notes.txt":         "one\ntwo\nthree\n",
		"docs/a.md":         "# Title\nhello world\n",
		"docs/deep/b.md":    "Hello again\nbye",
		"docs/deep/c.txt":   "nothing here\n",
		".hidden/secret.md": "hello hidden\n",
		"bin.dat":           "\x00\x01hello",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := getConfig
	getConfig = func(k string) (string, bool) {
		if k == "root" {
			return dir, true
		}
		return "", false
	}
	t.Cleanup(func() { getConfig = old })
	return dir
}

func call[Out any](t *testing.T, tool string, in any) (Out, *skill.Error) {
	t.Helper()
	b, _ := json.Marshal(in)
	var out Out
	raw, err := skill.Invoke(tool, b)
	if err != nil {
		var e *skill.Error
		if !errors.As(err, &e) {
			t.Fatalf("%v is not a *skill.Error", err)
		}
		return out, e
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

func TestResolve(t *testing.T) {
	dir := setup(t)
	tests := []struct{ in, full, shown string }{
		{"notes.txt", filepath.Join(dir, "notes.txt"), "/data/notes.txt"},
		{"/data/docs/a.md", filepath.Join(dir, "docs/a.md"), "/data/docs/a.md"},
		{dir + "/docs", filepath.Join(dir, "docs"), "/data/docs"},
		{"../../etc/passwd", filepath.Join(dir, "etc/passwd"), "/data/etc/passwd"},
		{"docs/../../x", filepath.Join(dir, "x"), "/data/x"},
		{"", dir, "/data"},
	}
	for _, tt := range tests {
		full, shown, err := resolve(tt.in)
		if err != nil || full != tt.full || shown != tt.shown {
			t.Errorf("resolve(%q) = %q, %q, %v; want %q, %q", tt.in, full, shown, err, tt.full, tt.shown)
		}
	}
	if _, _, err := resolve("/etc/passwd"); err == nil {
		t.Error("absolute path outside the root accepted")
	}
}

func TestReadFile(t *testing.T) {
	setup(t)
	got, err := call[ReadFileOut](t, "read_file", map[string]any{"path": "notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := ReadFileOut{Path: "/data/notes.txt", Content: "one\ntwo\nthree\n", StartLine: 1, EndLine: 3, TotalLines: 3, Size: 14}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got, _ = call[ReadFileOut](t, "read_file", map[string]any{"path": "/data/notes.txt", "offset": 2, "limit": 1})
	want = ReadFileOut{Path: "/data/notes.txt", Content: "two\n", StartLine: 2, EndLine: 2, TotalLines: 3, Size: 14, Truncated: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("window (-want +got):\n%s", diff)
	}
	got, _ = call[ReadFileOut](t, "read_file", map[string]any{"path": "docs/deep/b.md", "offset": 9})
	if got.Content != "" || got.TotalLines != 2 || got.Truncated {
		t.Errorf("past the end: %+v", got)
	}
	errs := []struct {
		path string
		code abi.Code
	}{
		{"missing.txt", abi.CodeNotFound},
		{"docs", abi.CodeInvalidInput},
		{"bin.dat", abi.CodeInvalidInput},
		{"notes.txt/x", abi.CodeInvalidInput},
		{"/etc/passwd", abi.CodeInvalidInput},
	}
	for _, e := range errs {
		if _, err := call[ReadFileOut](t, "read_file", map[string]any{"path": e.path}); err == nil || err.Code != e.code {
			t.Errorf("read_file %s: error = %v, want %s", e.path, err, e.code)
		}
	}
}

func TestListDir(t *testing.T) {
	setup(t)
	paths := func(o ListDirOut) []string {
		var p []string
		for _, e := range o.Entries {
			p = append(p, e.Path+":"+e.Type)
		}
		return p
	}
	got, err := call[ListDirOut](t, "list_dir", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/data/bin.dat:file", "/data/docs:dir", "/data/notes.txt:file"}, paths(got)); diff != "" {
		t.Errorf("top level (-want +got):\n%s", diff)
	}
	got, _ = call[ListDirOut](t, "list_dir", map[string]any{"path": "docs", "recursive": true, "glob": "*.md"})
	if diff := cmp.Diff([]string{"/data/docs/a.md:file", "/data/docs/deep/b.md:file"}, paths(got)); diff != "" {
		t.Errorf("recursive glob (-want +got):\n%s", diff)
	}
	got, _ = call[ListDirOut](t, "list_dir", map[string]any{"recursive": true, "max_depth": 1, "include_hidden": true})
	if diff := cmp.Diff([]string{"/data/.hidden:dir", "/data/bin.dat:file", "/data/docs:dir", "/data/notes.txt:file"}, paths(got)); diff != "" {
		t.Errorf("hidden, depth 1 (-want +got):\n%s", diff)
	}
	got, _ = call[ListDirOut](t, "list_dir", map[string]any{"recursive": true, "max_entries": 2})
	if len(got.Entries) != 2 || !got.Truncated {
		t.Errorf("max_entries: %+v", got)
	}
	if got.Entries[0].Modified == "" {
		t.Error("no modification time")
	}
	if _, err := call[ListDirOut](t, "list_dir", map[string]any{"path": "notes.txt"}); err == nil || err.Code != abi.CodeInvalidInput {
		t.Errorf("file as dir: %v", err)
	}
	if _, err := call[ListDirOut](t, "list_dir", map[string]any{"path": "nope"}); err == nil || err.Code != abi.CodeNotFound {
		t.Errorf("missing dir: %v", err)
	}
}

func TestFileInfo(t *testing.T) {
	setup(t)
	got, err := call[FileInfoOut](t, "file_info", map[string]any{"path": "notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != "file" || got.Size != 14 || got.Mode != "-rw-r--r--" || got.Modified == "" {
		t.Errorf("file: %+v", got)
	}
	got, _ = call[FileInfoOut](t, "file_info", map[string]any{"path": "docs"})
	if got.Type != "dir" || got.Entries == nil || *got.Entries != 2 {
		t.Errorf("dir: %+v", got)
	}
	if _, err := call[FileInfoOut](t, "file_info", map[string]any{"path": "gone"}); err == nil || err.Code != abi.CodeNotFound {
		t.Errorf("missing: %v", err)
	}
}

func TestWriteFile(t *testing.T) {
	dir := setup(t)
	got, err := call[WriteFileOut](t, "write_file", map[string]any{"path": "out/new.txt", "content": "hi\n", "create_dirs": true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(WriteFileOut{Path: "/data/out/new.txt", BytesWritten: 3, Created: true, Size: 3}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got, _ = call[WriteFileOut](t, "write_file", map[string]any{"path": "out/new.txt", "content": "more\n", "mode": "append"})
	if got.Created || got.Size != 8 {
		t.Errorf("append: %+v", got)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out/new.txt"))
	if string(b) != "hi\nmore\n" {
		t.Errorf("file = %q", b)
	}
	tests := []struct {
		in   map[string]any
		code abi.Code
		msg  string
	}{
		{map[string]any{"path": "out/new.txt", "content": "x", "mode": "create"}, abi.CodeInvalidInput, "already exists"},
		{map[string]any{"path": "nodir/x.txt", "content": "x"}, abi.CodeNotFound, "create_dirs"},
		{map[string]any{"path": "docs", "content": "x"}, abi.CodeInvalidInput, "is a directory"},
		{map[string]any{"path": "/data", "content": "x"}, abi.CodeInvalidInput, "not the folder"},
	}
	for _, tt := range tests {
		_, err := call[WriteFileOut](t, "write_file", tt.in)
		if err == nil || err.Code != tt.code || !strings.Contains(err.Message, tt.msg) {
			t.Errorf("%v: error = %v, want %s with %q", tt.in, err, tt.code, tt.msg)
		}
	}
	if os.Getuid() != 0 { // root ignores permissions
		ro := filepath.Join(dir, "ro")
		_ = os.Mkdir(ro, 0o555)
		if _, err := call[WriteFileOut](t, "write_file", map[string]any{"path": "ro/x", "content": "x"}); err == nil || err.Code != abi.CodePermissionDenied {
			t.Errorf("read-only dir: %v", err)
		}
	}
}

func TestSearchFiles(t *testing.T) {
	setup(t)
	got, err := call[SearchFilesOut](t, "search_files", map[string]any{"pattern": "hello", "case_insensitive": true})
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchMatch{{"/data/docs/a.md", 2, "hello world"}, {"/data/docs/deep/b.md", 1, "Hello again"}}
	if diff := cmp.Diff(want, got.Matches); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got.FilesScanned != 4 {
		t.Errorf("files scanned = %d, want 4 (hidden and binary skipped)", got.FilesScanned)
	}
	got, _ = call[SearchFilesOut](t, "search_files", map[string]any{"pattern": ".", "glob": "*.txt", "max_matches": 2})
	if len(got.Matches) != 2 || !got.Truncated {
		t.Errorf("max_matches: %+v", got)
	}
	got, _ = call[SearchFilesOut](t, "search_files", map[string]any{"pattern": "two", "path": "notes.txt"})
	if len(got.Matches) != 1 || got.Matches[0].Path != "/data/notes.txt" || got.Matches[0].Line != 2 {
		t.Errorf("single file: %+v", got)
	}
	if _, err := call[SearchFilesOut](t, "search_files", map[string]any{"pattern": "("}); err == nil || err.Code != abi.CodeInvalidInput {
		t.Errorf("bad pattern: %v", err)
	}
}

// TestDescribe checks that describe lists exactly the tools exports.go
// exports, each with a description and schemas.
func TestDescribe(t *testing.T) {
	skilltest.CheckDescription(t, fileInfoTool, listDirTool, readFileTool, searchFilesTool, writeFileTool)
}
