package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// tsClientDir is where scripts/setup.sh installs the MCP TypeScript SDK:
// $SKILLHOST_MCP_TS_CLIENT_DIR, else skillhost/node-mcp-client in the
// user's cache folder.
func tsClientDir() (string, error) {
	if dir := os.Getenv("SKILLHOST_MCP_TS_CLIENT_DIR"); dir != "" {
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "skillhost", "node-mcp-client"), nil
}

// tsClient returns node and the node_modules folder holding the SDK at
// the version testdata/mcp-ts-client/package-lock.json pins. Without them
// the test is skipped, or fails when SKILLHOST_REQUIRE_TOOLCHAINS is set
// (make test sets it).
func tsClient(t *testing.T) (node, modules string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...) + " (make setup installs it)"
		if os.Getenv("SKILLHOST_REQUIRE_TOOLCHAINS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	dir, err := tsClientDir()
	if err != nil {
		missing("no cache folder for the MCP TypeScript SDK: %v", err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mcp-ts-client", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "installed-package-lock.json")); err != nil || !bytes.Equal(got, want) {
		missing("the MCP TypeScript SDK of testdata/mcp-ts-client/package-lock.json is not installed in %s", dir)
	}
	return node, filepath.Join(dir, "node_modules")
}

// tsClientOutput is what client.cjs prints.
type tsClientOutput struct {
	Server struct {
		Name string `json:"name"`
	} `json:"server"`
	Tools []struct {
		Name         string `json:"name"`
		OutputSchema bool   `json:"outputSchema"`
	} `json:"tools"`
	Call struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			SkillName  string `json:"skill_name"`
			ScriptName string `json:"script_name"`
			Output     string `json:"output"`
		} `json:"structuredContent"`
	} `json:"call"`
}

// The official MCP TypeScript SDK's client, which most desktop and editor
// clients build on, lists skillhost's tools and calls one, over stdio
// (spawning skillhost serve --stdio) and over streamable HTTP on
// loopback. listTools checks every tool with the SDK's own schemas and
// refuses the whole list when one breaks them; callTool checks the
// structured content against the tool's output schema. Every tool is
// listed (always_loaded_patterns = ["*"]), the bundled pack's included,
// and the call is run_skill_script, whose output schema once had a
// boolean property schema the SDK refused.
func TestOfficialTypeScriptClient(t *testing.T) {
	node, modules := tsClient(t)
	bin := skillhostBinary(t)
	cfg := filepath.Join(t.TempDir(), "skillhost.toml")
	if err := os.WriteFile(cfg, []byte("[tool_search]\nalways_loaded_patterns = [\"*\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--state-dir", stateDir, "--config-file", cfg, "--no-user-sources", "--pack", scriptSource(t)}
	call := `{"name":"run_skill_script","arguments":{"skill_name":"demo","script_name":"goscript.wasm","args":{"q":"x"},"stdin":"hi"}}`
	script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mcp-ts-client", "client.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	client := func(t *testing.T, args ...string) tsClientOutput {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{script, call}, args...)...)
		cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "SKILLHOST_CONFIG=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("client.cjs %s: %v\n%s", args[0], err, stderr.String())
		}
		var out tsClientOutput
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("client.cjs printed %q: %v\n%s", stdout.String(), err, stderr.String())
		}
		return out
	}
	check := func(t *testing.T, out tsClientOutput) {
		t.Helper()
		var names []string
		for _, tool := range out.Tools {
			names = append(names, tool.Name)
			if tool.Name == "run_skill_script" && !tool.OutputSchema {
				t.Error("run_skill_script is listed without its output schema")
			}
		}
		for _, want := range []string{"run_skill_script", "tool_search", "load_skill", "list_skills", "slugify", "word_count", "http_fetch"} {
			if !slices.Contains(names, want) {
				t.Errorf("listed %v; want %s among them", names, want)
			}
		}
		sc := out.Call.StructuredContent
		if out.Server.Name != "skillhost" || out.Call.IsError || sc.SkillName != "demo" || !strings.Contains(sc.Output, `"args":["--q","x"],"stdin":"hi"`) {
			t.Errorf("server %q, run_skill_script answered %+v", out.Server.Name, out.Call)
		}
	}

	t.Run("stdio", func(t *testing.T) {
		check(t, client(t, append([]string{"stdio", bin}, append(base, "serve", "--stdio")...)...))
	})

	t.Run("http", func(t *testing.T) {
		srv := exec.Command(bin, append(base, "serve", "--http", "127.0.0.1:0", "--watch", "0")...)
		srv.Env = append(os.Environ(), "SKILLHOST_CONFIG=")
		stderr, err := srv.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		// stop interrupts the server and waits for it, once its standard
		// error is read to the end.
		urls, logged := make(chan string, 1), make(chan struct{})
		var log strings.Builder
		stop := func() error {
			srv.Process.Signal(os.Interrupt)
			select {
			case <-logged:
			case <-time.After(time.Minute):
				srv.Process.Kill()
				<-logged
			}
			return srv.Wait()
		}
		go func() {
			defer close(logged)
			addr := regexp.MustCompile(`serving MCP at (http://\S+)`)
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if m := addr.FindStringSubmatch(sc.Text()); m != nil {
					select {
					case urls <- m[1]:
					default:
					}
				}
				log.WriteString(sc.Text() + "\n")
			}
			io.Copy(io.Discard, stderr)
		}()
		var url string
		select {
		case url = <-urls:
		case <-logged:
		case <-time.After(2 * time.Minute):
		}
		if url == "" {
			stop()
			t.Fatalf("skillhost serve --http did not start:\n%s", log.String())
		}
		check(t, client(t, "http", url))
		if err := stop(); err != nil {
			t.Errorf("skillhost serve --http, interrupted: %v\n%s", err, log.String())
		}
	})
}

// Two tools whose output schemas have one root $id: the TypeScript SDK
// caches output validators by $id, so without ids of their own the
// second tool's results would be checked against the first tool's
// schema and refused.
func TestTypeScriptClientTwoToolsOneSchemaID(t *testing.T) {
	node, modules := tsClient(t)
	bin := skillhostBinary(t)
	dir := t.TempDir()
	wasm, err := os.ReadFile(filepath.Join("..", "..", "packs", "bundled", "modules", "text", "text.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	pack := filepath.Join(dir, "idpack")
	os.MkdirAll(pack, 0o755)
	os.WriteFile(filepath.Join(pack, "text.wasm"), wasm, 0o644)
	os.WriteFile(filepath.Join(pack, "pack.yaml"), []byte(`name: idpack
version: 1.0.0
description: Two tools whose output schemas share an $id.
modules:
  - name: text
    path: text.wasm
    tools:
      - name: slug_a
        export: slugify
        description: Make a slug, for the schema id test.
        input_schema: {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        output_schema: {"$id": "out", "type": "object", "properties": {"slug": {"type": "string"}}, "required": ["slug"]}
      - name: count_b
        export: word_count
        description: Count words, for the schema id test.
        input_schema: {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        output_schema: {"$id": "out", "type": "object", "properties": {"words": {"type": "integer"}}, "required": ["words"]}
`), 0o644)
	cfg := filepath.Join(dir, "skillhost.toml")
	os.WriteFile(cfg, []byte("[tool_search]\nalways_loaded_patterns = [\"*\"]\n"), 0o644)
	script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mcp-ts-client", "client.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	// Listed in name order, count_b's schema is compiled first: slug_a is
	// the one whose results would be checked against another's.
	call := `{"name":"slug_a","arguments":{"text":"One Two"}}`
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := []string{script, call, "stdio", bin, "--state-dir", stateDir, "--config-file", cfg, "--no-user-sources", "--no-bundled", "--pack", pack, "serve", "--stdio"}
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "SKILLHOST_CONFIG=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.cjs: %v\n%s", err, stderr.String())
	}
	var out struct {
		Call struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"call"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("client.cjs printed %q: %v", stdout.String(), err)
	}
	if out.Call.IsError || out.Call.StructuredContent["slug"] != "one-two" {
		t.Fatalf("slug_a answered %+v", out.Call)
	}
}
