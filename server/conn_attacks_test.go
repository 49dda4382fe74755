package server_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/server"
)

// liveServer serves f's engine with toml's [server] and [tenants] on a
// loopback listener through Server.HTTPServer and Server.Listener, as
// `skillhost serve` does, and returns its address.
func liveServer(t *testing.T, f *fixture, toml string) string {
	t.Helper()
	srv, err := server.New(f.e, &server.Options{Config: mustConfig(t, toml), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer()
	go hs.Serve(srv.Listener(ln))
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// closedWithin reads c until the server closes it, answering what it
// wrote, or fails after limit (a bound for a stuck test, far above the
// timeout that should close it).
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(limit))
	b, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server kept the connection open past %s; it wrote %q", limit, b)
	}
	return string(b)
}

// A client that sends nothing, half its headers, or headers without the
// body they announce, or keeps a connection idle after a 401, loses the
// connection; one address may hold only max_client_conns. Before, only
// ReadHeaderTimeout was set: a body that never came and an idle
// keep-alive connection were held for good.
func TestSlowClientsLoseTheirConnections(t *testing.T) {
	f := newFixture(t, twoTenants)
	addr := liveServer(t, f, strings.Replace(twoTenants, "[server]\n",
		"[server]\nread_timeout = \"1s\"\nidle_timeout = \"1s\"\nmax_client_conns = 3\n", 1))
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	t.Run("half the headers", func(t *testing.T) {
		c := dial()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		closedWithin(t, c, 20*time.Second)
	})
	t.Run("a body that never arrives", func(t *testing.T) {
		c := dial()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", keyA)
		if got := closedWithin(t, c, 20*time.Second); !strings.HasPrefix(got, "HTTP/1.1 408") {
			t.Errorf("a body that never came: %q, want 408", got)
		}
	})
	t.Run("idle after a 401", func(t *testing.T) {
		c := dial()
		fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("no key: %v %v", resp, err)
		}
		resp.Body.Close()
		closedWithin(t, c, 20*time.Second)
	})
	t.Run("connections of one address", func(t *testing.T) {
		held := []net.Conn{dial(), dial(), dial()}
		for _, c := range held {
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("a connection within the bound: %v %v", resp, err)
			}
		}
		extra := dial()
		if got := closedWithin(t, extra, 20*time.Second); !strings.HasPrefix(got, "HTTP/1.1 429") || !strings.Contains(got, "max_client_conns") {
			t.Errorf("a fourth connection: %q, want 429 naming max_client_conns", got)
		}
	})
}

// rawRequest sends one request as written and returns the status.
func rawRequest(t *testing.T, addr, request string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, request)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A browser page of another origin gets 403, whatever key it holds (the
// MCP transport asks servers to check Origin); the server's own origin
// and allowed_origins pass. A Host header is read strictly: a port that
// is not a number, or an address that is neither loopback nor allowed,
// is 403.
func TestOriginAndHost(t *testing.T) {
	f := newFixture(t, twoTenants)
	addr := liveServer(t, f, strings.Replace(twoTenants, "[server]\n",
		"[server]\nallowed_origins = [\"https://app.example.com\"]\n", 1))
	_, port, _ := net.SplitHostPort(addr)
	hdrs, ping := rawStatelessCall(1, "slugify")
	req := func(host, origin string) string {
		h := ""
		if origin != "" {
			h = "Origin: " + origin + "\r\n"
		}
		return fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\n%sAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			host, h, keyA, hdrs["Mcp-Name"], len(ping), ping)
	}
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:" + port, "", http.StatusOK},
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, "http://localhost:" + port, http.StatusOK},
		{"127.0.0.1:" + port, "https://app.example.com", http.StatusOK},
		{"127.0.0.1:" + port, "https://APP.example.com:443", http.StatusOK},
		{"127.0.0.1:" + port, "http://evil.example.com", http.StatusForbidden},
		{"127.0.0.1:" + port, "https://app.example.com.evil.com", http.StatusForbidden},
		{"127.0.0.1:" + port, "http://127.0.0.1:1", http.StatusForbidden},
		{"127.0.0.1:" + port, "null", http.StatusForbidden},
		{"127.0.0.1:" + port, "https://app.example.com\r\nOrigin: http://evil.example.com", http.StatusForbidden},
		{"127.0.0.1:evil.com", "", http.StatusForbidden},
		{"127.0.0.1:0" + port, "", http.StatusForbidden},
		{"127.0.0.1:99999", "", http.StatusForbidden},
		{"10.0.0.5", "", http.StatusForbidden},
		{"10.0.0.5:" + port, "", http.StatusForbidden},
		{"evil.example.com", "", http.StatusForbidden},
		{"[::1]:" + port, "", http.StatusOK},
		{"[127.0.0.1]:" + port, "", http.StatusForbidden},
		{"::1", "", http.StatusForbidden},
	} {
		if got := rawRequest(t, addr, req(tc.host, tc.origin)); got != tc.want {
			t.Errorf("Host %q Origin %q: %d, want %d", tc.host, tc.origin, got, tc.want)
		}
	}
}

// A client that stops reading an answer loses its connection after
// write_timeout, however long the answer: each write of it must complete
// within the timeout, and the handler is told its write failed.
func TestWriteTimeout(t *testing.T) {
	f := newFixture(t, "")
	srv, err := server.New(f.e, &server.Options{Config: mustConfig(t, "[server]\nwrite_timeout = \"1s\"\n"), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	// An answer of 1 GiB in 32 KiB writes, far more than the socket
	// buffers hold, as an event stream of a long session would be.
	hs := &http.Server{Handler: srv.WithDeadlines(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 32<<10)
		for range 1 << 15 {
			if _, err := w.Write(chunk); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}))}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	defer hs.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4 << 10)
	io.WriteString(c, "GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") // and never read
	select {
	case err := <-wrote:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the answer's write: %v, want its deadline exceeded", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a write to a client that never reads waited a minute")
	}
}
