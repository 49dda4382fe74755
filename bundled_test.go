package skillhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost"
)

// Every bundled tool does its job through the engine, with the grants the
// operator would give it.
func TestBundledTools(t *testing.T) {
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "notes.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "served to %s", r.Header.Get("User-Agent"))
	}))
	defer srv.Close()

	e := open(t, skillhost.Config{Grants: map[string]skillhost.Grant{"core": {
		Mounts:              []skillhost.Mount{{HostPath: data, GuestPath: "/data"}},
		AllowedHosts:        []string{"127.0.0.1"},
		AllowPrivateNetwork: true,
		Config:              map[string]string{"user_agent": "skillhost-test"},
	}}})
	tests := []struct{ tool, args, want string }{
		{"case_convert", `{"text":"parseHTTPResponse","to":"snake"}`, `"result":"parse_http_response"`},
		{"slugify", `{"text":"Hello, Wörld!"}`, `{"slug":"hello-world"}`},
		{"word_count", `{"text":"one two two"}`, `"words":3`},
		{"text_diff", `{"old":"x\ny\n","new":"x\nz\n"}`, `+z`},
		{"regex_extract", `{"pattern":"[0-9]+","text":"a1 b22"}`, `"text":"22"`},
		{"regex_replace", `{"pattern":"b","text":"abc","replacement":"B"}`, `"result":"aBc"`},
		{"encode", `{"text":"hello","encoding":"hex"}`, `"result":"68656c6c6f"`},
		{"decode", `{"text":"aGVsbG8=","encoding":"base64"}`, `"result":"hello"`},
		{"hash", `{"text":"abc"}`, `ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad`},
		{"json_format", `{"json":"{\"b\":1,\"a\":2}","sort_keys":true,"indent":0}`, `{\"a\":2,\"b\":1}`},
		{"json_query", `{"json":"{\"items\":[{\"name\":\"x\"}]}","path":".items[0].name"}`, `"result":"x"`},
		{"tz_convert", `{"time":"2026-06-01T12:00:00Z","to_zone":"Asia/Tokyo"}`, `21:00`},
		{"read_file", `{"path":"/data/notes.txt"}`, `beta`},
		{"list_dir", `{"path":"/data"}`, `notes.txt`},
		{"file_info", `{"path":"/data/notes.txt"}`, `"size":17`},
		{"search_files", `{"pattern":"gam+a","path":"/data"}`, `gamma`},
		{"write_file", `{"path":"/data/out.txt","content":"written"}`, `out.txt`},
		{"http_fetch", fmt.Sprintf(`{"url":%q}`, srv.URL), `served to skillhost-test`},
		{"markdown_to_text", `{"markdown":"# Title\n\nSome **bold** [link](https://x.org)."}`, `"text":"Title\n\nSome bold link (https://x.org)."`},
		{"csv_summary", `{"csv":"city,temp\nOslo,4\nLima,19\n"}`, `{"name":"temp","kind":"number","empty":0,"distinct":2,"min":4.0,"max":19.0,"mean":11.5`},
	}
	ctx := context.Background()
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			seen[tt.tool] = true
			res, err := e.Call(ctx, tt.tool, json.RawMessage(tt.args), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("%s: %+v", tt.tool, res.Error)
			}
			if !strings.Contains(string(res.Output), tt.want) {
				t.Errorf("%s output %s lacks %s", tt.tool, res.Output, tt.want)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(data, "out.txt")); err != nil || string(b) != "written" {
		t.Errorf("write_file left %q, %v", b, err)
	}
	for _, tool := range e.Tools() {
		if tool.Kind == skillhost.KindWasm && !seen[tool.Name] {
			t.Errorf("bundled tool %s has no test here", tool.Name)
		}
	}
}
