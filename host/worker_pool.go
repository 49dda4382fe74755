package host

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillhost/skillhost/abi"
)

// Supervised worker processes (IsolationProcess).
//
// A call under IsolationProcess runs in a child process of the host program
// that serves the worker protocol (see ServeWorkerIfChild and
// worker_proto.go): a full in-process Host built from the parent's Config,
// which loads the module from the bytes the parent sends and runs the call
// under the grant, limits and input the parent sends. tool_call and
// capability_call come back to the parent, which serves them with the
// call's ToolDispatcher and ServiceProvider; log entries are streamed to
// the parent as they are written.
//
// The parent keeps up to Config.WithWorkers workers per tool_call depth
// busy, each serving one call at a time, and as many idle. A call that finds
// none free waits (as long as its context lets it). The worker stops its
// guest at the deadline as an in-process call would; the parent only steps
// in when it does not answer by the deadline plus Config.WithWorkerGrace:
// then the worker is killed and reaped, the call ends with ErrTimeout, and
// a new worker is started for the next call. A worker that dies during a
// call fails it with ErrTrap and is replaced; when workers keep failing
// the parent waits longer and longer (up to maxWorkerBackoff) before it
// starts the next one.

const (
	defaultWorkerGrace = time.Second
	// workerHandshakeTimeout bounds a new worker's start-up: a program that
	// does not call ServeWorkerIfChild never answers.
	workerHandshakeTimeout = 10 * time.Second
	// workerLoadTimeout bounds how long a worker may take to compile a
	// module (from the shared cache, usually milliseconds).
	workerLoadTimeout = 2 * time.Minute
	// maxWorkerModules is how many distinct modules a worker loads before
	// it is retired, bounding its memory.
	maxWorkerModules = 64
	// Worker restarts back off from firstWorkerBackoff, doubling per
	// consecutive failure, up to maxWorkerBackoff.
	firstWorkerBackoff = 10 * time.Millisecond
	maxWorkerBackoff   = 5 * time.Second
)

var errWorkerDied = errors.New("worker process died")

// workerPool supervises a Host's worker processes; Host.workerPool sets
// it up on first use.
type workerPool struct {
	initOnce sync.Once
	h        *Host
	size     int
	grace    time.Duration
	// slots bound the busy workers per tool_call depth: a call waits only
	// for calls at its own depth, so calls waiting on their nested tool
	// calls cannot starve those of a worker.
	slots    []chan struct{}
	closing  chan struct{}
	spawnSem chan struct{}

	mu        sync.Mutex
	closed    bool
	idle      []*worker
	all       map[*worker]struct{}
	failures  int
	nextSpawn time.Time
	cacheDir  string
	tempDir   string
	cacheSet  bool
	started   int

	reap sync.WaitGroup

	// testNoInterrupt makes new workers run guests without interruption
	// (see workerTestNoInterruptEnv); set by tests only.
	testNoInterrupt bool
}

// worker is one worker process as its parent sees it.
type worker struct {
	pool *workerPool
	cmd  *exec.Cmd
	pid  int
	in   *os.File // to the worker
	out  *os.File // from the worker
	rd   *bufio.Reader
	wmu  sync.Mutex
	tail *tailBuffer

	done    chan struct{} // closed once the process is reaped
	exitErr error         // what cmd.Wait returned, once done is closed

	modules map[[32]byte]bool
	callID  uint64
}

func (h *Host) workerPool() *workerPool {
	p := &h.workers
	p.initOnce.Do(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.h = h
		p.size = h.cfg.workers
		if p.size == 0 {
			p.size = runtime.GOMAXPROCS(0)
		}
		p.grace = h.cfg.workerGrace
		if p.grace == 0 {
			p.grace = defaultWorkerGrace
		}
		p.slots = make([]chan struct{}, h.cfg.maxToolDepth+1)
		for i := range p.slots {
			p.slots[i] = make(chan struct{}, p.size)
		}
		p.closing = make(chan struct{})
		if p.closed {
			close(p.closing)
		}
		p.spawnSem = make(chan struct{}, 1)
		p.all = map[*worker]struct{}{}
	})
	return p
}

// isolation returns where a call under g runs.
func (m *Module) isolation(g Grant) Isolation {
	switch {
	case g.Isolation != IsolationDefault:
		return g.Isolation
	case m.h.cfg.isolation != IsolationDefault:
		return m.h.cfg.isolation
	}
	return IsolationInProcess
}

// runsInWorker reports whether a call under g is to run in a worker
// process: its isolation says so and this process is not a worker itself.
func (m *Module) runsInWorker(g Grant) bool {
	return m.isolation(g) != IsolationInProcess && !isWorker.Load()
}

// callInWorker is Module.Call for calls under IsolationProcess.
func (m *Module) callInWorker(ctx context.Context, export string, input []byte, opts *CallOptions) (*Result, error) {
	start := time.Now()
	res := &Result{}
	if iso := m.isolation(opts.Grant); iso != IsolationProcess {
		return res, &CallError{Export: export, Kind: ErrBadConfig, Code: abi.CodeInternal,
			Message: fmt.Sprintf("isolation %q is not one of %q and %q", iso, IsolationInProcess, IsolationProcess)}
	}
	if m.h.closed.Load() {
		return res, ErrClosed
	}
	if err := m.callable(export); err != nil {
		return res, err
	}
	if !workersSupported {
		return res, &CallError{Export: export, Kind: ErrBadConfig, Code: abi.CodeInternal,
			Message: fmt.Sprintf("worker processes are not supported on %s", runtime.GOOS)}
	}
	if _, ok := os.LookupEnv(workerEnv); ok {
		// Started as a worker, yet serving a call of its own: the program
		// did not call ServeWorkerIfChild, and must not start workers in
		// turn.
		return res, &CallError{Export: export, Kind: ErrBadConfig, Code: abi.CodeInternal,
			Message: "this process was started as a skillhost worker but does not serve as one: the program must call host.ServeWorkerIfChild first thing in main"}
	}
	p := m.h.workerPool()
	limits := m.h.cfg.resolve(opts.Grant.Limits)
	depth := CallDepth(ctx)
	slot := p.slots[min(depth, len(p.slots)-1)]
	select {
	case slot <- struct{}{}:
	case <-ctx.Done():
		return res, ctxCallError(ctx, export, limits)
	case <-p.closing:
		return res, ErrClosed
	}
	defer func() { <-slot }()
	w, err := p.get(ctx, export, limits)
	if err != nil {
		res.Duration = time.Since(start)
		return res, err
	}
	reusable, err := w.call(ctx, m, export, input, opts, limits, res)
	p.put(w, reusable)
	res.Duration = time.Since(start)
	return res, err
}

// get returns an idle worker, or starts one.
func (p *workerPool) get(ctx context.Context, export string, limits Limits) (*worker, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if w.alive() {
			return w, nil
		}
		p.failed() // it died while idle
	}
	return p.start(ctx, export, limits)
}

// put takes a worker back after a call, or retires it.
func (p *workerPool) put(w *worker, reusable bool) {
	p.mu.Lock()
	if reusable && !p.closed && len(p.idle) < p.size && len(w.modules) < maxWorkerModules && w.alive() {
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	w.kill()
}

func (p *workerPool) failed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failures++
	p.nextSpawn = time.Now().Add(min(firstWorkerBackoff<<min(p.failures-1, 20), maxWorkerBackoff))
}

func (p *workerPool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// start starts a worker and completes its handshake. While workers keep
// failing, starts are made one at a time and each waits out the back-off.
func (p *workerPool) start(ctx context.Context, export string, limits Limits) (*worker, error) {
	p.mu.Lock()
	failing := p.failures > 0
	p.mu.Unlock()
	if failing {
		select {
		case p.spawnSem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctxCallError(ctx, export, limits)
		case <-p.closing:
			return nil, ErrClosed
		}
		defer func() { <-p.spawnSem }()
		p.mu.Lock()
		wait := time.Until(p.nextSpawn)
		p.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, ctxCallError(ctx, export, limits)
			case <-p.closing:
				t.Stop()
				return nil, ErrClosed
			}
		}
	}
	w, err := p.spawn()
	if err != nil {
		p.failed()
		return nil, err
	}
	if err := w.handshake(ctx); err != nil {
		w.kill()
		switch {
		case p.isClosed():
			return nil, ErrClosed
		case ctx.Err() != nil:
			return nil, ctxCallError(ctx, export, limits)
		}
		p.failed()
		<-w.done
		return nil, &CallError{Export: export, Kind: ErrTrap, Code: abi.CodeInternal,
			Message: fmt.Sprintf("the worker process %s did not start (%v); a program running calls under process isolation must call host.ServeWorkerIfChild first thing in main", w.cmd.Path, err),
			Cause:   fmt.Errorf("%w: %v: %s; its last output: %q", errWorkerDied, err, exitText(w.exitErr), w.tail.String())}
	}
	p.mu.Lock()
	p.failures = 0
	p.mu.Unlock()
	return w, nil
}

// spawn starts a worker process.
func (p *workerPool) spawn() (*worker, error) {
	cfg := p.h.cfg
	var path string
	var args []string
	if len(cfg.workerCmd) > 0 {
		path, args = cfg.workerCmd[0], cfg.workerCmd[1:]
	} else {
		exe, err := os.Executable()
		if err != nil {
			return nil, &CallError{Kind: ErrBadConfig, Code: abi.CodeInternal, Message: fmt.Sprintf("finding the program to run as a worker: %v", err), Cause: err}
		}
		path = exe
	}
	p.prepareCache()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, &CallError{Kind: ErrTrap, Code: abi.CodeInternal, Message: fmt.Sprintf("starting a worker process: %v", err), Cause: err}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, &CallError{Kind: ErrTrap, Code: abi.CodeInternal, Message: fmt.Sprintf("starting a worker process: %v", err), Cause: err}
	}
	p.mu.Lock()
	noInterrupt := p.testNoInterrupt
	p.mu.Unlock()
	cmd := exec.Command(path, args...)
	cmd.Env = workerEnviron(noInterrupt)
	cmd.ExtraFiles = []*os.File{inR, outW}
	tail := &tailBuffer{}
	cmd.Stdout, cmd.Stderr = tail, tail
	cmd.SysProcAttr = workerSysProcAttr()
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, &CallError{Kind: ErrBadConfig, Code: abi.CodeInternal, Message: fmt.Sprintf("starting the worker process %s: %v", path, err), Cause: err}
	}
	w := &worker{pool: p, cmd: cmd, pid: cmd.Process.Pid, in: inW, out: outR, rd: bufio.NewReaderSize(outR, 64<<10),
		tail: tail, done: make(chan struct{}), modules: map[[32]byte]bool{}}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		cmd.Process.Kill()
		cmd.Wait()
		inW.Close()
		outR.Close()
		return nil, ErrClosed
	}
	p.reap.Add(1)
	p.all[w] = struct{}{}
	p.started++
	p.mu.Unlock()
	go w.wait()
	return w, nil
}

// prepareCache picks the compilation cache the workers share: the host's,
// or else a folder of their own that Close removes.
func (p *workerPool) prepareCache() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cacheSet {
		return
	}
	p.cacheSet = true
	p.cacheDir = p.h.cfg.cacheDir
	if p.cacheDir == "" {
		if dir, err := os.MkdirTemp("", "skillhost-worker-cache-"); err == nil {
			p.cacheDir, p.tempDir = dir, dir
		}
	}
}

// workerEnviron is the environment of a worker: this process's, marked.
func workerEnviron(noInterrupt bool) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, workerEnv+"=") && !strings.HasPrefix(kv, workerTestNoInterruptEnv+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, workerEnv+"="+workerProtocol)
	if noInterrupt {
		env = append(env, workerTestNoInterruptEnv+"=1")
	}
	return env
}

// wait reaps the process and releases its pipes.
func (w *worker) wait() {
	defer w.pool.reap.Done()
	w.exitErr = w.cmd.Wait()
	w.in.Close()
	w.out.Close()
	w.pool.mu.Lock()
	delete(w.pool.all, w)
	w.pool.mu.Unlock()
	close(w.done)
}

func (w *worker) alive() bool {
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

// kill ends the process at once (SIGKILL). A worker starts no processes
// of its own, so there is no process group to kill.
func (w *worker) kill() { w.cmd.Process.Kill() }

func (w *worker) send(kind byte, v any, blob []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return writeFrame(w.in, kind, v, blob)
}

func (w *worker) handshake(ctx context.Context) error {
	t := time.AfterFunc(workerHandshakeTimeout, w.kill)
	defer t.Stop()
	defer context.AfterFunc(ctx, w.kill)()
	p := w.pool
	if err := w.send(frameInit, initMsg{Protocol: workerProtocol, Config: p.workerConfig()}, nil); err != nil {
		return err
	}
	kind, body, _, err := readFrame(w.rd, maxControlFrame)
	if err != nil {
		return fmt.Errorf("no handshake: %w", err)
	}
	var rm readyMsg
	if kind != frameReady {
		return fmt.Errorf("handshake answered with frame %q", kind)
	}
	if err := decodeBody(body, &rm); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if rm.Error != "" {
		return fmt.Errorf("the worker could not start a host: %s", rm.Error)
	}
	if rm.Protocol != workerProtocol {
		return fmt.Errorf("the worker speaks protocol %q, not %q", rm.Protocol, workerProtocol)
	}
	return nil
}

// supervisor kills a worker that overruns its call and says why.
type supervisor struct {
	w      *worker
	mu     sync.Mutex
	ended  bool
	reason killReason
	timers []*time.Timer
}

type killReason int

const (
	notKilled killReason = iota
	killedAtDeadline
	killedAfterCancel
	killedLoading
	killedForProtocol
)

// after kills the worker in d unless the call has ended by then.
func (s *supervisor) after(d time.Duration, why killReason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.timers = append(s.timers, time.AfterFunc(d, func() { s.kill(why) }))
}

// kill kills the worker now unless the call has ended.
func (s *supervisor) kill(why killReason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	if s.reason == notKilled {
		s.reason = why
	}
	s.w.kill()
}

// end stops the timers; after it nothing kills the worker for this call.
// It returns why the worker was killed, if it was.
func (s *supervisor) end() killReason {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	for _, t := range s.timers {
		t.Stop()
	}
	return s.reason
}

// load sends the module's bytes to the worker and waits until it has
// compiled them. It reports whether the worker can serve another call.
func (w *worker) load(ctx context.Context, m *Module, export string, limits Limits) (bool, error) {
	sv := &supervisor{w: w}
	sv.after(workerLoadTimeout, killedLoading)
	stop := context.AfterFunc(ctx, func() { sv.kill(killedAfterCancel) })
	defer stop()
	sum := sumHex(m.sum)
	err := w.send(frameLoad, loadMsg{Sum: sum, Name: m.name}, m.c.wasm)
	var kind byte
	var body []byte
	if err == nil {
		kind, body, _, err = readFrame(w.rd, maxControlFrame)
	}
	var lm loadedMsg
	if err == nil {
		if kind != frameLoaded {
			err = fmt.Errorf("load answered with frame %q", kind)
		} else if err = decodeBody(body, &lm); err == nil && lm.Sum != sum {
			err = fmt.Errorf("load answered for module %.64s", lm.Sum)
		}
		if err != nil {
			sv.kill(killedForProtocol)
			sv.end()
			return false, w.broke(export, err.Error())
		}
	}
	why := sv.end()
	if err != nil {
		return false, w.lost(ctx, why, export, limits, time.Time{}, time.Time{}, err)
	}
	if lm.Error != "" {
		return true, &CallError{Export: export, Kind: ErrTrap, Code: abi.CodeInternal,
			Message: fmt.Sprintf("the worker process could not load %s: %s", m.name, firstLine(lm.Error))}
	}
	w.modules[m.sum] = true
	return true, nil
}

// callFrameLimit is the largest frame a worker may send during a call
// under limits: a result carries at most the output and, for an error,
// two copies of a message from kernel memory; a log entry at most the log
// cap; a tool request at most kernel memory. Base64 adds a third to what
// is not sent raw.
func callFrameLimit(l Limits) int {
	clamp := func(n int64) int64 { return min(max(n, 0), maxFrameLimit) }
	data := 2*clamp(l.MaxKernelBytes) + clamp(l.MaxOutputBytes) + clamp(l.MaxLogBytes)
	return int(min(data/3*4+(1<<20), maxFrameLimit))
}

// call runs one call in the worker. It reports whether the worker can
// serve another.
func (w *worker) call(ctx context.Context, m *Module, export string, input []byte, opts *CallOptions, limits Limits, res *Result) (reusable bool, err error) {
	if !w.modules[m.sum] {
		if ok, err := w.load(ctx, m, export, limits); err != nil {
			return ok, err
		}
	}
	p := w.pool
	depth := CallDepth(ctx)
	grant := opts.Grant
	grant.Limits = limits
	started := time.Now()
	deadline := started.Add(limits.Timeout)
	var remaining int64
	if d, ok := ctx.Deadline(); ok {
		deadline = minTime(deadline, d)
		remaining = max(int64(time.Until(d)), 1)
	}
	sv := &supervisor{w: w}
	sv.after(time.Until(deadline)+p.grace, killedAtDeadline)
	callCtx, cancelCall := context.WithDeadline(ctx, deadline)
	var tools sync.WaitGroup
	defer func() {
		cancelCall()
		tools.Wait()
	}()

	w.callID++
	id := w.callID
	if err := w.send(frameCall, callMsg{ID: id, Sum: sumHex(m.sum), Name: m.name, Export: export, Grant: grant,
		Depth: depth, Deadline: remaining, HasTools: opts.Tools != nil, HasServices: opts.Services != nil, CountFuel: opts.CountFuel}, input); err != nil {
		return false, w.lost(ctx, sv.end(), export, limits, started, deadline, err)
	}
	stopCancel := context.AfterFunc(ctx, func() {
		w.send(frameCancel, cancelMsg{ID: id}, nil)
		sv.after(p.grace, killedAfterCancel)
	})
	defer stopCancel()

	exports := append([]string{"", export, "instantiate"}, m.c.init...)
	frameLimit := callFrameLimit(limits)
	var logBytes int64
	var toolBusy atomic.Bool
	violation := func(format string, args ...any) (bool, error) {
		sv.kill(killedForProtocol)
		sv.end()
		return false, w.broke(export, fmt.Sprintf(format, args...))
	}
	for {
		kind, body, blob, err := readFrame(w.rd, frameLimit)
		if errors.Is(err, errFrameTooLarge) {
			return violation("%v", err)
		}
		if err != nil {
			why := sv.end()
			res.LogsTruncated = logBytes+logEntryOverhead >= limits.MaxLogBytes
			return false, w.lost(ctx, why, export, limits, started, deadline, err)
		}
		if len(blob) > 0 && kind != frameResult {
			return violation("frame %q with bulk bytes", kind)
		}
		switch kind {
		case frameLog:
			var lm logMsg
			if err := decodeBody(body, &lm); err != nil {
				return violation("log frame: %v", err)
			}
			if lm.Level < abi.LogTrace || lm.Level > abi.LogError || !slices.Contains([]string{"log", "stdout", "stderr"}, lm.Source) ||
				len(lm.Message) == 0 || logBytes+int64(len(lm.Message))+logEntryOverhead > limits.MaxLogBytes {
				return violation("log entry outside what a call may log (level %d, source %.16q, %d bytes after %d)", lm.Level, lm.Source, len(lm.Message), logBytes)
			}
			logBytes += int64(len(lm.Message)) + logEntryOverhead
			e := LogEntry{Level: lm.Level, Source: lm.Source, Message: string(lm.Message)}
			res.Logs = append(res.Logs, e)
			if opts.OnLog != nil {
				opts.OnLog(e)
			}
		case frameTool:
			var tm toolMsg
			if err := decodeBody(body, &tm); err != nil {
				return violation("tool frame: %v", err)
			}
			if msg := checkToolRequest(tm, opts, depth, p.h.cfg.maxToolDepth); msg != "" {
				return violation("%s", msg)
			}
			if toolBusy.Swap(true) {
				return violation("a second tool request while one is being served")
			}
			tools.Add(1)
			go func() {
				defer tools.Done()
				reply := serveToolRequest(callCtx, tm, opts, depth)
				toolBusy.Store(false)
				w.send(frameToolReply, reply, nil)
			}()
		case frameResult:
			var rm resultMsg
			if err := decodeBody(body, &rm); err != nil {
				return violation("result frame: %v", err)
			}
			if int64(len(blob)) > limits.MaxOutputBytes || (len(blob) > 0 && !rm.HasOutput) || rm.Fuel < 0 || rm.Instantiate < 0 || rm.Execute < 0 {
				return violation("result outside the call's limits (%d output bytes, fuel %d)", len(blob), rm.Fuel)
			}
			if rm.HasOutput {
				rm.Output = blob
			}
			var callErr error
			if rm.Error != nil {
				if callErr, err = rm.Error.decode(exports); err != nil {
					return violation("result error: %v", err)
				}
			}
			why := sv.end()
			res.Output, res.ReturnCode, res.LogsTruncated, res.Fuel = rm.Output, rm.ReturnCode, rm.LogsTruncated, rm.Fuel
			res.FuelCounted = rm.FuelCounted
			res.Instantiate, res.Execute = time.Duration(rm.Instantiate), time.Duration(rm.Execute)
			return why == notKilled, callErr
		default:
			return violation("unexpected frame %q during a call", kind)
		}
	}
}

// checkToolRequest says what is wrong with a tool request, or "": a worker
// asks only for what the grant allows (the worker checks it first, but the
// parent does not trust it).
func checkToolRequest(tm toolMsg, opts *CallOptions, depth, maxDepth int) string {
	name := string(tm.Name)
	switch tm.Kind {
	case toolKindTool:
		if opts.Tools == nil || !allowedName(opts.Grant.Tools, name) || depth+1 > maxDepth {
			return fmt.Sprintf("tool request for %.64q, which the call may not make", name)
		}
	case toolKindCapability:
		if opts.Services == nil || !allowedName(opts.Grant.Capabilities, name) {
			return fmt.Sprintf("capability request for %.64q, which the call may not make", name)
		}
	default:
		return fmt.Sprintf("tool request of kind %.16q", tm.Kind)
	}
	if !json.Valid(tm.Args) {
		return "tool request with arguments that are not JSON"
	}
	return ""
}

// serveToolRequest runs a worker's tool_call or capability_call with the
// call's dispatcher, as the host function would in-process.
func serveToolRequest(ctx context.Context, tm toolMsg, opts *CallOptions, depth int) (reply toolReplyMsg) {
	reply.Seq = tm.Seq
	defer func() {
		if p := recover(); p != nil {
			reply.Result, reply.Panic = nil, fmt.Sprint(p)
			if reply.Panic == "" {
				reply.Panic = "panic"
			}
		}
	}()
	if tm.Kind == toolKindTool {
		reply.Result = toolResultDocument(opts.Tools.CallTool(withDepth(ctx, depth+1), string(tm.Name), json.RawMessage(tm.Args)))
	} else {
		reply.Result = toolResultDocument(serviceResult(opts.Services.CallService(ctx, string(tm.Name), json.RawMessage(tm.Args))))
	}
	return reply
}

// lost reports a call whose worker stopped answering: killed by its
// supervisor, by Close, or dead on its own.
func (w *worker) lost(ctx context.Context, why killReason, export string, limits Limits, started, deadline time.Time, err error) error {
	w.kill()
	w.reaped()
	p := w.pool
	switch {
	case p.isClosed():
		return ErrClosed
	case why == killedAtDeadline || why == killedAfterCancel || why == killedLoading:
		ce := ctxCallError(ctx, export, limits)
		if ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			ce = &CallError{Export: export, Kind: ErrTimeout, Code: abi.CodeTimeout, Message: timeoutMessage(limits, started, deadline)}
		}
		if why == killedLoading {
			ce.Message = fmt.Sprintf("the worker process did not load the module within %v", workerLoadTimeout)
		}
		ce.Cause = fmt.Errorf("the worker process did not answer within the deadline and its %v grace, and was killed (%s)", p.grace, exitText(w.exitErr))
		return ce
	}
	p.failed()
	exit := exitText(w.exitErr)
	return &CallError{Export: export, Kind: ErrTrap, Code: abi.CodeInternal,
		Message: fmt.Sprintf("the worker process running the call died (%s)", exit),
		Cause:   fmt.Errorf("%w: %s, reading from it: %v; its last output: %q", errWorkerDied, exit, err, w.tail.String())}
}

// broke reports a call whose worker broke the protocol; it was killed.
func (w *worker) broke(export, detail string) error {
	w.reaped()
	w.pool.failed()
	return &CallError{Export: export, Kind: ErrTrap, Code: abi.CodeInternal,
		Message: "the worker process running the call broke the worker protocol and was killed",
		Cause:   fmt.Errorf("%w: %s", errWorkerDied, detail)}
}

// reaped waits until the killed worker is reaped, so that its exit state
// is known and no zombie is left when the call returns.
func (w *worker) reaped() {
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	}
}

// timeoutMessage is the message of a call that timed out, worded as an
// in-process call words it.
func timeoutMessage(limits Limits, started, deadline time.Time) string {
	return (&instance{limits: limits, started: started, deadline: deadline}).timeoutMessage()
}

// ctxCallError is the error of a call whose context ended before it got
// to run in a worker.
func ctxCallError(ctx context.Context, export string, limits Limits) *CallError {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &CallError{Export: export, Kind: ErrTimeout, Code: abi.CodeTimeout, Message: timeoutMessage(limits, time.Time{}, time.Time{}), Cause: ctx.Err()}
	}
	return &CallError{Export: export, Kind: ErrCanceled, Code: abi.CodeTimeout, Message: "canceled by the caller", Cause: ctx.Err()}
}

func exitText(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &ee):
		return ee.ProcessState.String()
	}
	return err.Error()
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// close kills every worker and waits until all are reaped.
func (p *workerPool) close() {
	p.mu.Lock()
	if p.closing == nil || p.closed {
		p.closed = true
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.closing)
	all := make([]*worker, 0, len(p.all))
	for w := range p.all {
		all = append(all, w)
	}
	p.idle = nil
	tempDir := p.tempDir
	p.mu.Unlock()
	for _, w := range all {
		w.kill()
	}
	p.reap.Wait()
	if tempDir != "" {
		os.RemoveAll(tempDir)
	}
}

// tailBuffer keeps the last bytes a worker wrote to stdout and stderr.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const maxTail = 4 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > maxTail {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-maxTail:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// workerConfig is the configuration a worker's host runs with: the
// parent's, with an equal share of its memory budget, so that what the
// workers hold together stays within it.
func (p *workerPool) workerConfig() wireConfig {
	wc := p.h.cfg.wire(p.cacheDir)
	if wc.MemBudget > 0 {
		wc.MemBudget = max(1, wc.MemBudget/uint64(max(1, p.size)))
	}
	return wc
}
