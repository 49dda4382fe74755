package server

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/skillhost/skillhost/server/serveconf"
)

// HTTPServer returns an http.Server for the server's Handler with the
// [server] timeouts: headers within 10 s, a body within read_timeout (see
// readBody), each write within write_timeout, and a keep-alive connection
// closed after idle_timeout without a request. Serve it on a listener from
// Listener.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: min(10*time.Second, s.limits.ReadTimeout),
		IdleTimeout:       s.limits.IdleTimeout,
		// No ReadTimeout or WriteTimeout here: both would end an event
		// stream or a long call's answer. readBody bounds the body and
		// deadlines each write instead.
	}
}

// withDeadlines gives each write of an answer (and each flush)
// write_timeout to complete: a client that stops reading loses its
// connection, while an event stream it keeps reading may last as long as
// its session. The deadline is armed when a request starts and again when
// its handler returns, so that the answer's last flush, and the next
// request on a kept-alive connection, never meet a deadline long past.
func (s *Server) withDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: s.limits.WriteTimeout, s: s}
		dw.arm()
		defer dw.arm()
		next.ServeHTTP(dw, r)
	})
}

type deadlineWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	d    time.Duration
	s    *Server
	once sync.Once
}

func (dw *deadlineWriter) arm() {
	dw.rc.SetWriteDeadline(time.Now().Add(dw.d))
}

func (dw *deadlineWriter) check(err error) {
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		dw.once.Do(func() { dw.s.ops.limitRefused(noTenant, "write_timeout") })
	}
}

func (dw *deadlineWriter) WriteHeader(code int) {
	dw.arm()
	dw.ResponseWriter.WriteHeader(code)
}

func (dw *deadlineWriter) Write(p []byte) (int, error) {
	dw.arm()
	n, err := dw.ResponseWriter.Write(p)
	dw.check(err)
	return n, err
}

// Flush flushes with the write deadline armed.
func (dw *deadlineWriter) Flush() {
	dw.arm()
	dw.check(dw.rc.Flush())
}

// FlushError is Flush that reports the error, for http.ResponseController.
func (dw *deadlineWriter) FlushError() error {
	dw.arm()
	err := dw.rc.Flush()
	dw.check(err)
	return err
}

// Unwrap gives http.ResponseController the writer underneath.
func (dw *deadlineWriter) Unwrap() http.ResponseWriter { return dw.ResponseWriter }

var _ http.Flusher = (*deadlineWriter)(nil)

// Listener wraps ln so that one client address holds at most
// max_client_conns connections (no bound when it is 0): a connection past
// it is closed at once. It also counts the open connections for the
// skillhost_http_connections metric.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, s: s, max: s.limits.MaxClientConns, open: map[string]int{}}
}

type limitListener struct {
	net.Listener
	s   *Server
	max int

	mu   sync.Mutex
	open map[string]int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := clientAddr(c.RemoteAddr())
		l.mu.Lock()
		if l.max > 0 && l.open[addr] >= l.max {
			l.mu.Unlock()
			l.s.ops.limitRefused(noTenant, "client_conns")
			// A short answer, so that a client sees why, then close.
			c.SetWriteDeadline(time.Now().Add(time.Second))
			bw := bufio.NewWriter(c)
			fmt.Fprintf(bw, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nRetry-After: 1\r\n\r\n"+
				"this address has %d connections open (max_client_conns)\n", l.max)
			bw.Flush()
			c.Close()
			continue
		}
		l.open[addr]++
		l.mu.Unlock()
		l.s.ops.conns.Inc()
		return &countedConn{Conn: c, release: func() {
			l.mu.Lock()
			if l.open[addr]--; l.open[addr] <= 0 {
				delete(l.open, addr)
			}
			l.mu.Unlock()
			l.s.ops.conns.Dec()
		}}, nil
	}
}

// clientAddr is the client's address without its port.
func clientAddr(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// countedConn releases its place once, when closed.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close gives the connection's place back before it closes, so that a
// client that sees its connection end may open another at once.
func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// checkOrigin refuses, with 403, a request whose Origin header names an
// origin the server does not allow: a web page of another site must not
// drive the server through a visitor's browser (the MCP transport asks
// servers to check Origin). A request without Origin (not from a browser)
// passes, and so does one whose Origin is the host the request was sent
// to, and those of [server] allowed_origins.
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origins := r.Header.Values("Origin")
		if len(origins) == 0 || s.anyOrigin || (len(origins) == 1 && s.originAllowed(origins[0], r.Host)) {
			next.ServeHTTP(w, r)
			return
		}
		s.ops.limitRefused(noTenant, "origin")
		http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed; an operator adds it to [server] allowed_origins", truncate(strings.Join(origins, ", "))), http.StatusForbidden)
	})
}

// originAllowed reports whether origin is the request's own host or one
// of allowed_origins.
func (s *Server) originAllowed(origin, host string) bool {
	norm, ok := serveconf.NormalizeOrigin(origin)
	if !ok {
		return false // "null", or not an origin at all
	}
	if s.origins[norm] {
		return true
	}
	_, h, _ := strings.Cut(norm, "://")
	host = strings.ToLower(host)
	if h == host {
		return true
	}
	// The Host header may carry the scheme's default port the origin
	// leaves out.
	for _, def := range []string{":80", ":443"} {
		if strings.HasSuffix(host, def) && h == strings.TrimSuffix(host, def) {
			return strings.HasPrefix(norm, map[string]string{":80": "http://", ":443": "https://"}[def])
		}
	}
	return false
}
