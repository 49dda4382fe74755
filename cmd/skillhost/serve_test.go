package main

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/server/serveconf"
)

// lineWriter is an io.Writer whose lines reach a channel.
type lineWriter struct{ lines chan string }

func (w lineWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		select {
		case w.lines <- l:
		default:
		}
	}
	return len(p), nil
}

// skillhost serve --http serves MCP until its context ends, then drains
// and exits 0.
func TestServeHTTP(t *testing.T) {
	t.Setenv("SKILLHOST_CONFIG", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := lineWriter{make(chan string, 1000)}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--state-dir", stateDir, "--no-user-sources", "serve", "--http", "127.0.0.1:0", "--watch", "0"}, strings.NewReader(""), io.Discard, errs)
	}()
	addrRE := regexp.MustCompile(`serving MCP at (http://\S+)`)
	var url string
	deadline := time.After(60 * time.Second)
	for url == "" {
		select {
		case l := <-errs.lines:
			if m := addrRE.FindStringSubmatch(l); m != nil {
				url = m[1]
			}
		case code := <-done:
			t.Fatalf("serve exited %d before serving", code)
		case <-deadline:
			t.Fatal("serve did not start")
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "Served by the CLI"}})
	if err != nil || res.IsError {
		t.Fatalf("slugify: %+v, %v", res, err)
	}
	cs.Close()
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("serve exited %d after its context ended", code)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// Serving a public address without tenants is refused with what to add;
// keygen prints a key and the hash of exactly that key.
func TestServeRefusesAndKeygen(t *testing.T) {
	t.Setenv("SKILLHOST_CONFIG", "")
	r := cli(t, "", "--no-user-sources", "serve", "--http", "0.0.0.0:0")
	if r.code != exitUsage || !strings.Contains(r.stderr, "api_keys") {
		t.Errorf("serve on 0.0.0.0 without tenants: %+v", r)
	}
	r = cli(t, "", "serve", "--stdio", "--http", "127.0.0.1:1")
	if r.code != exitUsage {
		t.Errorf("--stdio with --http: %+v", r)
	}
	r = cli(t, "", "serve", "keygen")
	m := regexp.MustCompile(`key:  (\S+)\nhash: (sha256:[0-9a-f]{64})`).FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil || serveconf.HashKey(m[1]) != m[2] {
		t.Errorf("keygen: %+v", r)
	}
}

// skillhost serve --stdio serves one client on its standard input and
// output and exits when the client closes it.
func TestServeStdio(t *testing.T) {
	t.Setenv("SKILLHOST_CONFIG", "")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--state-dir", stateDir, "--no-user-sources", "serve", "--stdio"}, inR, outW, io.Discard)
		outW.Close()
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "word_count", Arguments: map[string]any{"text": "one two three"}})
	if err != nil || res.IsError {
		t.Fatalf("word_count: %+v, %v", res, err)
	}
	inW.Close()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("serve --stdio exited %d", code)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve --stdio did not stop when its input closed")
	}
}
