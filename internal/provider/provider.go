// Package provider runs an external capability provider: a command that
// serves the capability calls of one namespace ("mail" serves "mail.send")
// as newline-delimited JSON on its standard input and output.
//
// A request is one line {"id":N,"capability":"mail.send","args":{…},
// "tenant":"acme"}; the answer is one line {"id":N,"result":…} or
// {"id":N,"error":{"code":"…","message":"…"}}. Requests are multiplexed by
// id: a provider may answer them in any order. The command is started on
// the first call and supervised: when it exits, the calls it had not
// answered fail and it is started again after a back-off that doubles
// while it keeps exiting. Whatever it writes to standard error is reported
// line by line.
package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillhost/skillhost/abi"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds one request when Options.Timeout is zero.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxLineBytes caps one line of the provider's output.
	DefaultMaxLineBytes = 1 << 20
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait before a
	// provider that exited is started again.
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	// DefaultStopGrace is how long Close lets a provider exit after its
	// standard input closed before it is killed.
	DefaultStopGrace = 2 * time.Second
)

// maxStderrLine caps one reported line of standard error; the rest of a
// longer line is dropped.
const maxStderrLine = 4 << 10

// drainGrace is how long, after the process exited, its output is still
// read: lines it wrote just before exiting are answers too. A pipe still
// open after it (a child of the provider holds it) is closed.
const drainGrace = 500 * time.Millisecond

// Event names reported through Options.OnEvent; every event has the field
// namespace.
const (
	// EventStarted: the command started. Fields: pid.
	EventStarted = "capability_provider_started"
	// EventStartFailed: the command could not be started. Fields: error.
	EventStartFailed = "capability_provider_start_failed"
	// EventExited: the command exited. Fields: pid, error (how it ended),
	// failed (calls in flight that failed with it), restart_in (the
	// back-off before the next start, as a duration string).
	EventExited = "capability_provider_exited"
	// EventStderr: one line the command wrote to standard error. Fields:
	// line.
	EventStderr = "capability_provider_stderr"
	// EventBadOutput: a line on standard output that is not an answer to
	// a call in flight (not JSON, too long, no or unknown id). Fields:
	// problem.
	EventBadOutput = "capability_provider_bad_output"
)

// errNotReady says the command was still starting when a call's time ran
// out.
var errNotReady = errors.New("provider: not started in time")

// Options configure a Process.
type Options struct {
	// Namespace is the part of the capability ids before the first dot.
	Namespace string
	// Command is the program and its arguments. Required.
	Command []string
	// Env are variables set for the command on top of the process's own
	// environment.
	Env map[string]string
	// Timeout bounds one request, from the call to its answer (default
	// DefaultTimeout). A call's own context may end it sooner.
	Timeout time.Duration
	// MaxLineBytes caps one line of output (default DefaultMaxLineBytes).
	MaxLineBytes int
	// MinBackoff, MaxBackoff and StopGrace default to the Default*
	// constants.
	MinBackoff, MaxBackoff, StopGrace time.Duration
	// OnEvent, when set, receives the events named by the Event*
	// constants. It is called from the process's goroutines and must be
	// quick and safe for concurrent use.
	OnEvent func(name string, fields map[string]any)
}

// Process is one supervised provider command. It is safe for concurrent
// use; the command starts on the first Call.
type Process struct {
	opts   Options
	nextID atomic.Uint64

	mu      sync.Mutex
	running bool          // the supervisor goroutine was started
	closed  bool          // Close was called
	cur     *child        // the live command, or nil
	lastErr error         // how the last command ended, or why it did not start
	spawnOK bool          // the last start attempt succeeded
	ready   chan struct{} // closed when cur is set; replaced after
	done    chan struct{} // closed by Close
	stopped chan struct{} // closed when the supervisor returned
}

// New returns a Process for opts; nothing is started until the first Call.
func New(opts Options) (*Process, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return nil, fmt.Errorf("capability provider %q: no command", opts.Namespace)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = DefaultStopGrace
	}
	return &Process{opts: opts, ready: make(chan struct{}), done: make(chan struct{}), stopped: make(chan struct{}), spawnOK: true}, nil
}

// Namespace returns the namespace the process serves.
func (p *Process) Namespace() string { return p.opts.Namespace }

// request and response are the lines of the protocol.
type request struct {
	ID         uint64          `json:"id"`
	Capability string          `json:"capability"`
	Args       json.RawMessage `json:"args"`
	Tenant     string          `json:"tenant"`
}

type response struct {
	ID     *uint64         `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// reply is what a call waits for.
type reply struct {
	result json.RawMessage
	err    error
}

// Call sends one request and waits for its answer, at most the request
// timeout and never past ctx. A failure is an *abi.Error: the provider's
// own error (its code when it is one of abi's, else unavailable), or
// unavailable or timeout when the provider could not answer.
func (p *Process) Call(ctx context.Context, capability string, args json.RawMessage, tenant string) (json.RawMessage, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	line, err := json.Marshal(request{Capability: capability, Args: args, Tenant: tenant})
	if err != nil {
		return nil, p.errorf(abi.CodeInvalidInput, "arguments of %q are not valid JSON", capability)
	}
	rctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	c, err := p.live(rctx, capability)
	if errors.Is(err, errNotReady) {
		return nil, p.timeout(ctx, capability)
	}
	if err != nil {
		return nil, err
	}
	id := p.nextID.Add(1)
	// The id is the line's first field: {"id":N,… — set it without a
	// second encoding.
	line = append([]byte(`{"id":`+strconv.FormatUint(id, 10)+`,`), line[len(`{"id":0,`):]...)
	line = append(line, '\n')
	ch := make(chan reply, 1)
	if !c.register(id, ch) {
		return nil, p.errorf(abi.CodeUnavailable, "capability provider %q exited before %q was sent", p.opts.Namespace, capability)
	}
	select {
	case c.queue <- line:
	case r := <-ch: // the command died before the line could be queued
		return r.result, r.err
	case <-rctx.Done():
		c.unregister(id)
		return nil, p.timeout(ctx, capability)
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-rctx.Done():
		c.unregister(id)
		return nil, p.timeout(ctx, capability)
	}
}

// timeout is the error of a request whose context ended: the caller's
// (its deadline, or cancelled) or the request timeout.
func (p *Process) timeout(ctx context.Context, capability string) error {
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return p.errorf(abi.CodeTimeout, "capability provider %q did not answer %q before the call's deadline", p.opts.Namespace, capability)
		}
		return p.errorf(abi.CodeUnavailable, "call of %q cancelled while waiting for capability provider %q", capability, p.opts.Namespace)
	}
	return p.errorf(abi.CodeTimeout, "capability provider %q did not answer %q within %s", p.opts.Namespace, capability, p.opts.Timeout)
}

func (p *Process) errorf(code abi.Code, format string, args ...any) *abi.Error {
	return &abi.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// live returns the running command, starting the supervisor on first use
// and waiting (within ctx) while the command is being started again. A
// command that could not be started at all fails the call at once.
func (p *Process) live(ctx context.Context, capability string) (*child, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, p.errorf(abi.CodeUnavailable, "capability provider %q is stopped", p.opts.Namespace)
		}
		if !p.running {
			p.running = true
			go p.supervise()
		}
		c, ready, lastErr, spawnOK := p.cur, p.ready, p.lastErr, p.spawnOK
		p.mu.Unlock()
		if c != nil {
			return c, nil
		}
		if !spawnOK {
			return nil, p.errorf(abi.CodeUnavailable, "capability provider %q cannot be started: %v", p.opts.Namespace, lastErr)
		}
		select {
		case <-ready:
		case <-ctx.Done():
			if lastErr != nil {
				return nil, p.errorf(abi.CodeUnavailable, "capability provider %q is not running (it ended: %v) and was not started again in time for %q", p.opts.Namespace, lastErr, capability)
			}
			return nil, errNotReady
		case <-p.done:
		}
	}
}

// supervise starts the command, waits for it to end and starts it again
// after a back-off, until Close.
func (p *Process) supervise() {
	defer close(p.stopped)
	backoff := p.opts.MinBackoff
	for {
		c, err := p.spawn()
		var ran time.Duration
		if err != nil {
			p.event(EventStartFailed, map[string]any{"error": err.Error()})
			p.mu.Lock()
			p.lastErr, p.spawnOK = err, false
			close(p.ready) // the calls waiting for a start fail now
			p.ready = make(chan struct{})
			p.mu.Unlock()
		} else {
			start := time.Now()
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				c.stop(p.opts.StopGrace)
				c.end(p.errorf(abi.CodeUnavailable, "capability provider %q is stopped", p.opts.Namespace))
				return
			}
			p.cur, p.spawnOK = c, true
			close(p.ready)
			p.ready = make(chan struct{})
			p.mu.Unlock()
			p.event(EventStarted, map[string]any{"pid": c.cmd.Process.Pid})

			var exit error
			select {
			case exit = <-c.exited:
			case <-p.done:
				exit = c.stop(p.opts.StopGrace)
			}
			ran = time.Since(start)
			p.mu.Lock()
			p.cur, p.lastErr = nil, exitError(exit)
			closed := p.closed
			p.mu.Unlock()
			var failed int
			if closed {
				failed = c.end(p.errorf(abi.CodeUnavailable, "capability provider %q was stopped with the call in flight", p.opts.Namespace))
			} else {
				failed = c.end(p.errorf(abi.CodeUnavailable, "capability provider %q exited (%v) with the call in flight", p.opts.Namespace, exitError(exit)))
			}
			if ran > 10*backoff {
				backoff = p.opts.MinBackoff // it ran well: a new failure starts over
			}
			p.event(EventExited, map[string]any{"pid": c.cmd.Process.Pid, "error": exitError(exit).Error(), "failed": failed, "restart_in": backoff.String()})
		}
		select {
		case <-p.done:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, p.opts.MaxBackoff)
	}
}

// exitError describes how a command ended.
func exitError(err error) error {
	if err == nil {
		return errors.New("exit status 0")
	}
	return err
}

// Close stops the command (its standard input is closed; it is killed if
// it has not exited after the stop grace) and fails the calls in flight.
// Later calls fail.
func (p *Process) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	running := p.running
	p.mu.Unlock()
	if running {
		<-p.stopped
	}
	return nil
}

func (p *Process) event(name string, fields map[string]any) {
	if p.opts.OnEvent == nil {
		return
	}
	fields["namespace"] = p.opts.Namespace
	p.opts.OnEvent(name, fields)
}

// child is one run of the command.
type child struct {
	p     *Process
	cmd   *exec.Cmd
	stdin *os.File
	queue chan []byte
	gone  chan struct{} // closed by end
	// exited receives how the command ended, once, after its output was
	// read.
	exited chan error

	mu      sync.Mutex
	pending map[uint64]chan reply
	dead    bool
}

// spawn starts the command with its three pipes and the goroutines that
// serve them.
func (p *Process) spawn() (*child, error) {
	cmd := exec.Command(p.opts.Command[0], p.opts.Command[1:]...)
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(p.opts.Env))
	for k := range p.opts.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+p.opts.Env[k])
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("starting %q: %w", p.opts.Command[0], err)
	}
	c := &child{p: p, cmd: cmd, stdin: inW, queue: make(chan []byte), gone: make(chan struct{}), exited: make(chan error, 1), pending: map[uint64]chan reply{}}
	outDone, errDone := make(chan struct{}), make(chan struct{})
	go func() { defer close(outDone); c.readOutput(outR) }()
	go func() { defer close(errDone); c.readStderr(errR) }()
	go c.write()
	go func() {
		err := cmd.Wait()
		// Lines written just before the exit are still read; a pipe a
		// grandchild keeps open is closed after the grace.
		t := time.NewTimer(drainGrace)
		defer t.Stop()
		for _, d := range []chan struct{}{outDone, errDone} {
			select {
			case <-d:
			case <-t.C:
				outR.Close()
				errR.Close()
				<-d
			}
		}
		outR.Close()
		errR.Close()
		c.stdin.Close()
		c.exited <- err
	}()
	return c, nil
}

// write sends the queued request lines until the command ends. After a
// failed write (the command closed its input or died) lines are taken and
// dropped: their calls fail when the command's end is seen.
func (c *child) write() {
	failed := false
	for {
		select {
		case line := <-c.queue:
			if failed {
				continue
			}
			if _, err := c.stdin.Write(line); err != nil {
				failed = true
				c.stdin.Close()
			}
		case <-c.gone:
			return
		}
	}
}

// register records a request in flight; false when the command ended.
func (c *child) register(id uint64, ch chan reply) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return false
	}
	c.pending[id] = ch
	return true
}

func (c *child) unregister(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// answer delivers a reply to the request id; false when none waits.
func (c *child) answer(id uint64, r reply) bool {
	c.mu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ok {
		ch <- r
	}
	return ok
}

// end fails every request in flight with err and reports how many there
// were; nothing is accepted after it.
func (c *child) end(err error) int {
	c.mu.Lock()
	pending := c.pending
	c.pending, c.dead = nil, true
	c.mu.Unlock()
	close(c.gone)
	for _, ch := range pending {
		ch <- reply{err: err}
	}
	return len(pending)
}

// stop closes the command's input, lets it exit within grace, kills it
// otherwise, and returns how it ended.
func (c *child) stop(grace time.Duration) error {
	c.stdin.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-c.exited:
		return err
	case <-t.C:
		c.cmd.Process.Kill()
		return <-c.exited
	}
}

// idPrefix finds the id of an answer from the start of a line too long to
// decode.
var idPrefix = regexp.MustCompile(`^\s*\{\s*"id"\s*:\s*([0-9]{1,20})\s*[,}]`)

// readOutput reads answer lines until the output ends.
func (c *child) readOutput(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	max := c.p.opts.MaxLineBytes
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > max {
			head := append([]byte(nil), buf[:min(len(buf), 64)]...)
			head = append(head, chunk[:min(len(chunk), 64-len(head))]...)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			c.tooLong(head)
			buf = buf[:0]
		} else {
			buf = append(buf, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if line := bytes.TrimSpace(buf); len(line) > 0 {
				c.handle(line)
			}
			buf = buf[:0]
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// tooLong refuses a line past the cap: the request it answers, when its
// start names one, fails.
func (c *child) tooLong(head []byte) {
	p := c.p
	msg := fmt.Sprintf("an output line longer than %d bytes was refused", p.opts.MaxLineBytes)
	if m := idPrefix.FindSubmatch(head); m != nil {
		if id, err := strconv.ParseUint(string(m[1]), 10, 64); err == nil &&
			c.answer(id, reply{err: p.errorf(abi.CodeLimitExceeded, "capability provider %q answered with more than %d bytes", p.opts.Namespace, p.opts.MaxLineBytes)}) {
			p.event(EventBadOutput, map[string]any{"problem": msg + " (request " + strconv.FormatUint(id, 10) + ")"})
			return
		}
	}
	p.event(EventBadOutput, map[string]any{"problem": msg})
}

// handle delivers one answer line.
func (c *child) handle(line []byte) {
	p := c.p
	var resp response
	if err := json.Unmarshal(line, &resp); err != nil {
		p.event(EventBadOutput, map[string]any{"problem": fmt.Sprintf("a line that is not a JSON answer (%v): %s", err, preview(line))})
		return
	}
	if resp.ID == nil {
		p.event(EventBadOutput, map[string]any{"problem": "an answer without an id: " + preview(line)})
		return
	}
	var r reply
	switch {
	case resp.Error != nil:
		code := abi.Code(resp.Error.Code)
		msg := resp.Error.Message
		if msg == "" {
			msg = "capability provider " + strconv.Quote(p.opts.Namespace) + " failed without a message"
		}
		if !code.Known() {
			if code != "" {
				msg = resp.Error.Code + ": " + msg
			}
			code = abi.CodeUnavailable
		}
		r.err = &abi.Error{Code: code, Message: msg}
	case len(resp.Result) == 0:
		r.err = p.errorf(abi.CodeUnavailable, "capability provider %q answered request %d with neither result nor error", p.opts.Namespace, *resp.ID)
	default:
		r.result = append(json.RawMessage(nil), resp.Result...)
	}
	if !c.answer(*resp.ID, r) {
		p.event(EventBadOutput, map[string]any{"problem": fmt.Sprintf("an answer to request %d, which is not waiting (it timed out or never was)", *resp.ID)})
	}
}

// readStderr reports each line of standard error.
func (c *child) readStderr(r io.Reader) {
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, err := br.ReadSlice('\n')
		text := string(bytes.TrimRight(line, "\r\n")) // copied: ReadSlice reuses its buffer
		truncated := errors.Is(err, bufio.ErrBufferFull)
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n')
		}
		if len(text) > 0 {
			if truncated {
				text += " …"
			}
			c.p.event(EventStderr, map[string]any{"line": text})
		}
		if err != nil {
			return
		}
	}
}

// preview is the start of a line, for a message.
func preview(line []byte) string {
	const n = 120
	if len(line) > n {
		return strconv.Quote(string(line[:n])) + "…"
	}
	return strconv.Quote(string(line))
}
