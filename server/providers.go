package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
)

// DefaultProviderTimeout bounds one call of a provider command whose
// section sets no timeout.
const DefaultProviderTimeout = 30 * time.Second

// Bounds of the provider protocol: one line of a provider's output, and
// how long a provider that failed waits before it is started again.
const (
	maxProviderLine   = 16 << 20
	providerBackoff   = time.Second
	maxProviderStderr = 4 << 10
)

// providers serve a guest's capability_call: each namespace ("mail" for
// "mail.send") by a provider registered in Go (Options.Providers) or a
// command of a [server.providers.<namespace>] section.
type providers struct {
	byNS map[string]host.ServiceProvider
	cmds []*commandProvider
	// observe, when set, is told of every call a provider answered.
	observe func(tenant, namespace string, err error, d time.Duration)
}

func newProviders(cfg []packs.ProviderConfig, inGo map[string]host.ServiceProvider, log *slog.Logger) (*providers, error) {
	p := &providers{byNS: map[string]host.ServiceProvider{}}
	for ns, sp := range inGo {
		if sp == nil || ns == "" || strings.Contains(ns, ".") {
			return nil, fmt.Errorf("%w: Options.Providers[%q]: a provider needs a namespace without dots and a non-nil ServiceProvider", ErrBadTenants, ns)
		}
		p.byNS[ns] = sp
	}
	for _, c := range cfg {
		if _, dup := p.byNS[c.Namespace]; dup {
			return nil, fmt.Errorf("%w: [server.providers.%s]: a provider of namespace %q is also registered in Go", ErrBadTenants, c.Namespace, c.Namespace)
		}
		cp := &commandProvider{ns: c.Namespace, argv: c.Command, timeout: c.Timeout, log: log}
		if cp.timeout <= 0 {
			cp.timeout = DefaultProviderTimeout
		}
		p.byNS[c.Namespace] = cp
		p.cmds = append(p.cmds, cp)
	}
	return p, nil
}

// forTenant is what the runs of tenant id ask their services of; nil
// when no provider is configured.
func (p *providers) forTenant(id string) host.ServiceProvider {
	if p == nil || len(p.byNS) == 0 {
		return nil
	}
	return tenantServices{p: p, tenant: id}
}

// close stops the provider commands.
func (p *providers) close() {
	if p == nil {
		return
	}
	for _, c := range p.cmds {
		c.stop()
	}
}

// tenantServices routes one tenant's capability calls by namespace.
type tenantServices struct {
	p      *providers
	tenant string
}

type providerTenantKey struct{}

// ProviderTenant returns the tenant a capability call is made for, in a
// provider registered in Go.
func ProviderTenant(ctx context.Context) string {
	id, _ := ctx.Value(providerTenantKey{}).(string)
	return id
}

func (ts tenantServices) CallService(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
	ns, _, _ := strings.Cut(id, ".")
	sp := ts.p.byNS[ns]
	if sp == nil {
		return nil, &abi.Error{Code: abi.CodeUnavailable, Message: fmt.Sprintf("no provider serves %q on this server", id)}
	}
	start := time.Now()
	out, err := sp.CallService(context.WithValue(ctx, providerTenantKey{}, ts.tenant), id, args)
	if ts.p.observe != nil {
		ts.p.observe(ts.tenant, ns, err, time.Since(start))
	}
	return out, err
}

// commandProvider is a provider command the server starts on its first
// call and keeps running. It writes one JSON request a line on the
// command's standard input,
//
//	{"id":1,"capability":"mail.send","tenant":"acme","args":{...}}
//
// and reads one answer a line from its standard output, in any order:
//
//	{"id":1,"result":{...}}   or   {"id":1,"error":{"code":"...","message":"..."}}
//
// A command that exits, or writes a line that is not such an answer, is
// stopped; the calls waiting on it fail with code unavailable, and the
// next call starts it again, no sooner than a second after it last
// started. Its standard error is logged, line by line.
type commandProvider struct {
	ns      string
	argv    []string
	timeout time.Duration
	log     *slog.Logger

	mu      sync.Mutex
	proc    *providerProc
	started time.Time
	lastErr error // why the last start failed
	closed  bool
}

// providerProc is one run of the command.
type providerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	wmu   sync.Mutex // one request line at a time

	mu      sync.Mutex
	next    uint64
	waiting map[uint64]chan providerAnswer
	dead    error // set once the process is gone
	done    chan struct{}
}

type providerAnswer struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *abi.Error      `json:"error"`
}

var _ host.ServiceProvider = (*commandProvider)(nil)

// CallService sends the call to the command and waits for its answer,
// the call's context or the provider's timeout.
func (c *commandProvider) CallService(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
	p, err := c.process()
	if err != nil {
		return nil, &abi.Error{Code: abi.CodeUnavailable, Message: fmt.Sprintf("provider %s: %v", c.ns, err)}
	}
	ch := make(chan providerAnswer, 1)
	p.mu.Lock()
	if p.dead != nil {
		p.mu.Unlock()
		return nil, &abi.Error{Code: abi.CodeUnavailable, Message: fmt.Sprintf("provider %s: %v", c.ns, p.dead)}
	}
	p.next++
	n := p.next
	p.waiting[n] = ch
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waiting, n)
		p.mu.Unlock()
	}()
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	line, err := json.Marshal(map[string]any{"id": n, "capability": id, "tenant": ProviderTenant(ctx), "args": args})
	if err != nil {
		return nil, &abi.Error{Code: abi.CodeInvalidInput, Message: fmt.Sprintf("the arguments for %s are not JSON: %v", id, err)}
	}
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	// A command that stops reading its input would block the write, and
	// every call after it: past the timeout it is killed, which ends the
	// write.
	written := make(chan error, 1)
	go func() {
		p.wmu.Lock()
		_, err := p.stdin.Write(append(line, '\n'))
		p.wmu.Unlock()
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			return nil, &abi.Error{Code: abi.CodeUnavailable, Message: fmt.Sprintf("provider %s: writing the request: %v", c.ns, err)}
		}
	case <-timer.C:
		p.cmd.Process.Kill()
		return nil, &abi.Error{Code: abi.CodeTimeout, Message: fmt.Sprintf("provider %s did not read the request for %s within %s; it is stopped", c.ns, id, c.timeout)}
	case <-ctx.Done():
		return nil, &abi.Error{Code: abi.CodeTimeout, Message: fmt.Sprintf("the call ended before provider %s read %s", c.ns, id)}
	}
	select {
	case a := <-ch:
		if a.Error != nil {
			if a.Error.Code == "" {
				a.Error.Code = abi.CodeGuestError
			}
			return nil, a.Error
		}
		if len(a.Result) == 0 {
			return json.RawMessage("null"), nil
		}
		return a.Result, nil
	case <-p.done:
		return nil, &abi.Error{Code: abi.CodeUnavailable, Message: fmt.Sprintf("provider %s: %v", c.ns, p.deadErr())}
	case <-timer.C:
		return nil, &abi.Error{Code: abi.CodeTimeout, Message: fmt.Sprintf("provider %s did not answer %s within %s", c.ns, id, c.timeout)}
	case <-ctx.Done():
		return nil, &abi.Error{Code: abi.CodeTimeout, Message: fmt.Sprintf("the call ended before provider %s answered %s", c.ns, id)}
	}
}

// process returns the running command, starting it when it is not.
func (c *commandProvider) process() (*providerProc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("the server is shutting down")
	}
	if c.proc != nil && c.proc.deadErr() == nil {
		return c.proc, nil
	}
	if wait := providerBackoff - time.Since(c.started); !c.started.IsZero() && wait > 0 {
		why := c.lastErr
		if c.proc != nil {
			why = c.proc.deadErr()
		}
		return nil, fmt.Errorf("it stopped (%v) and is started again in %s", why, wait.Round(time.Millisecond))
	}
	c.started, c.proc, c.lastErr = time.Now(), nil, nil
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = &stderrLog{c: c}
	cmd.WaitDelay = time.Second // a child the command left holding stderr does not hold Wait
	if err := cmd.Start(); err != nil {
		stdin.Close()
		stdout.Close()
		c.lastErr = fmt.Errorf("starting %s: %w", c.argv[0], err)
		return nil, c.lastErr
	}
	p := &providerProc{cmd: cmd, stdin: stdin, waiting: map[uint64]chan providerAnswer{}, done: make(chan struct{})}
	c.proc = p
	c.log.Info("capability provider started", "namespace", c.ns, "pid", cmd.Process.Pid)
	go c.read(p, stdout)
	return p, nil
}

// read hands each answer to its call until the command's output ends or
// breaks the protocol, then stops the command.
func (c *commandProvider) read(p *providerProc, stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), maxProviderLine)
	var why error
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var a providerAnswer
		if err := json.Unmarshal(line, &a); err != nil || a.ID == 0 || (a.Error == nil && len(a.Result) > 0 && !json.Valid(a.Result)) {
			why = fmt.Errorf("it wrote a line that is not an answer {\"id\":…,\"result\":…}: %.80q", line)
			break
		}
		p.mu.Lock()
		ch := p.waiting[a.ID]
		delete(p.waiting, a.ID) // a second answer to the same id finds no one
		p.mu.Unlock()
		if ch != nil {
			ch <- a // buffered, and sent once
		}
	}
	if why == nil {
		why = sc.Err()
	}
	p.stdin.Close()
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
	}
	werr := p.cmd.Wait()
	if why == nil {
		why = fmt.Errorf("it exited (%v)", werr)
		if werr == nil {
			why = errors.New("it exited")
		}
	}
	p.mu.Lock()
	p.dead = why
	p.mu.Unlock()
	close(p.done)
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if !closed {
		c.log.Warn("capability provider stopped", "namespace", c.ns, "err", why)
	}
}

// stderrLog logs a provider command's standard error a line at a time,
// each line capped.
type stderrLog struct {
	c       *commandProvider
	partial []byte
}

func (w *stderrLog) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if room := maxProviderStderr - len(w.partial); room > 0 {
				w.partial = append(w.partial, b[:min(room, len(b))]...)
			}
			break
		}
		line := append(w.partial, b[:min(i, max(0, maxProviderStderr-len(w.partial)))]...)
		w.c.log.Info("capability provider", "namespace", w.c.ns, "stderr", string(line))
		w.partial = w.partial[:0]
		b = b[i+1:]
	}
	return n, nil
}

func (p *providerProc) deadErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead
}

// stop ends the command: its standard input is closed, and it is killed
// if it has not exited a second later.
func (c *commandProvider) stop() {
	c.mu.Lock()
	c.closed = true
	p := c.proc
	c.mu.Unlock()
	if p == nil {
		return
	}
	p.wmu.Lock()
	p.stdin.Close()
	p.wmu.Unlock()
	select {
	case <-p.done:
	case <-time.After(time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}
