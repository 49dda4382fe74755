package host

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/skillhost/skillhost/abi"
)

const (
	// workerEnv marks a worker process; its value is the protocol version
	// the parent speaks.
	workerEnv = "SKILLHOST_WORKER"
	// workerTestNoInterruptEnv, set to 1 in a worker's environment, makes
	// it run guests with no interruption at all (no metering, no
	// close-on-context-done), as if interruption had failed: only tests set
	// it, to check that the parent kills such a worker at deadline + grace.
	workerTestNoInterruptEnv = "SKILLHOST_WORKER_TEST_NO_INTERRUPT"
)

// isWorker is set in a process serving the worker protocol: its own calls
// always run in-process.
var isWorker atomic.Bool

// ServeWorkerIfChild makes this process a skillhost worker when a Host
// started it as one, and otherwise returns at once.
//
// Calls under IsolationProcess run in child processes that a Host starts by
// running the host program's own executable again (or the command set with
// Config.WithWorkerCommand) with the environment variable SKILLHOST_WORKER
// set. In such a process ServeWorkerIfChild serves the worker protocol on
// the pipes the parent passed and exits; it never returns. A program that
// embeds skillhost and may run process-isolated calls must therefore call it
// first thing in main, before it parses flags or starts anything, and a
// test binary whose tests run such calls calls it in TestMain:
//
//	func main() {
//		host.ServeWorkerIfChild()
//		// ...
//	}
//
// A program that does not call it cannot serve as a worker: its workers
// fail the start-up handshake, the calls fail with ErrTrap naming the
// cause, and the Host backs off from starting more.
func ServeWorkerIfChild() {
	version, ok := os.LookupEnv(workerEnv)
	if !ok {
		return
	}
	os.Exit(serveWorkerProcess(version))
}

// serveWorkerProcess serves the worker protocol on descriptors 3 and 4 and
// returns the exit code.
func serveWorkerProcess(version string) int {
	if version != workerProtocol {
		fmt.Fprintf(os.Stderr, "skillhost worker: the parent speaks worker protocol %q, this program %q\n", version, workerProtocol)
		return 3
	}
	in, out := os.NewFile(3, "skillhost-worker-in"), os.NewFile(4, "skillhost-worker-out")
	if in == nil || out == nil {
		fmt.Fprintln(os.Stderr, "skillhost worker: descriptors 3 and 4 are not open")
		return 3
	}
	if _, err := in.Stat(); err != nil {
		fmt.Fprintf(os.Stderr, "skillhost worker: %s is set but descriptor 3 is not the parent's pipe: %v\n", workerEnv, err)
		return 3
	}
	isWorker.Store(true)
	s := &workerServer{in: bufio.NewReaderSize(in, 64<<10), out: out, modules: map[string]map[string]*Module{}, jobs: make(chan workerJob, 2)}
	return s.serve()
}

// workerServer is the worker side of the protocol: a reader goroutine
// takes frames from the parent (cancels and tool replies are handled at
// once, loads and calls are queued) and the main goroutine runs the queue,
// one job at a time.
type workerServer struct {
	in  io.Reader
	out io.Writer
	wmu sync.Mutex

	h       *Host
	modules map[string]map[string]*Module // by sum, then name
	jobs    chan workerJob

	mu      sync.Mutex
	curID   uint64
	cancel  context.CancelFunc
	seq     uint64
	pending uint64
	reply   chan toolReplyMsg
}

type workerJob struct {
	load   *loadMsg
	call   *callMsg
	ctx    context.Context
	cancel context.CancelFunc
}

func (s *workerServer) send(kind byte, v any, blob []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := writeFrame(s.out, kind, v, blob); err != nil {
		// The parent is gone or killed this worker's pipe: nothing is
		// left to serve.
		os.Exit(0)
	}
}

func (s *workerServer) serve() int {
	kind, body, _, err := readFrame(s.in, maxControlFrame)
	var im initMsg
	if err == nil && kind != frameInit {
		err = fmt.Errorf("first frame is %q, not init", kind)
	}
	if err == nil {
		err = decodeBody(body, &im)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "skillhost worker: handshake: %v\n", err)
		return 3
	}
	if im.Protocol != workerProtocol {
		s.send(frameReady, readyMsg{Protocol: workerProtocol, Error: fmt.Sprintf("protocol %q requested, this worker speaks %q", im.Protocol, workerProtocol)}, nil)
		return 3
	}
	ctx := context.Background()
	cfg := im.Config.config()
	noInterrupt := os.Getenv(workerTestNoInterruptEnv) == "1"
	if noInterrupt {
		cfg = cfg.WithMetering(false)
	}
	h, err := New(ctx, cfg)
	if err == nil && noInterrupt {
		err = disableInterruption(ctx, h)
	}
	if err != nil {
		s.send(frameReady, readyMsg{Protocol: workerProtocol, Error: err.Error()}, nil)
		return 3
	}
	s.h = h
	s.send(frameReady, readyMsg{Protocol: workerProtocol}, nil)
	go s.read()
	for job := range s.jobs {
		if job.load != nil {
			s.load(job.load)
		} else {
			s.call(job)
		}
	}
	return 0
}

// read takes frames from the parent until its pipe closes, then ends the
// process: a worker outlives no parent.
func (s *workerServer) read() {
	for {
		kind, body, blob, err := readFrame(s.in, maxWorkerInFrame)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintf(os.Stderr, "skillhost worker: reading from the parent: %v\n", err)
				os.Exit(3)
			}
			os.Exit(0)
		}
		if err := s.dispatch(kind, body, blob); err != nil {
			fmt.Fprintf(os.Stderr, "skillhost worker: frame %q: %v\n", kind, err)
			os.Exit(3)
		}
	}
}

func (s *workerServer) dispatch(kind byte, body, blob []byte) error {
	switch kind {
	case frameLoad:
		var lm loadMsg
		if err := decodeBody(body, &lm); err != nil {
			return err
		}
		lm.Wasm = blob
		s.jobs <- workerJob{load: &lm}
	case frameCall:
		var cm callMsg
		if err := decodeBody(body, &cm); err != nil {
			return err
		}
		cm.Input = blob
		// The call's context exists from the moment the frame is read, so
		// that a cancel right behind it finds it.
		ctx := withDepth(context.Background(), cm.Depth)
		var cancel context.CancelFunc
		if cm.Deadline > 0 {
			ctx, cancel = context.WithTimeout(ctx, time.Duration(cm.Deadline))
		} else {
			ctx, cancel = context.WithCancel(ctx)
		}
		s.mu.Lock()
		s.curID, s.cancel = cm.ID, cancel
		s.mu.Unlock()
		s.jobs <- workerJob{call: &cm, ctx: ctx, cancel: cancel}
	case frameCancel:
		var c cancelMsg
		if err := decodeBody(body, &c); err != nil {
			return err
		}
		s.mu.Lock()
		if s.curID == c.ID && s.cancel != nil {
			s.cancel()
		}
		s.mu.Unlock()
	case frameToolReply:
		var r toolReplyMsg
		if err := decodeBody(body, &r); err != nil {
			return err
		}
		s.mu.Lock()
		if s.pending == r.Seq && s.reply != nil {
			s.reply <- r
			s.pending, s.reply = 0, nil
		}
		s.mu.Unlock()
	default:
		return errors.New("unknown frame kind")
	}
	return nil
}

func (s *workerServer) load(lm *loadMsg) {
	m, err := s.h.Load(context.Background(), lm.Wasm, LoadOptions{Name: lm.Name, SHA256: lm.Sum})
	msg := loadedMsg{Sum: lm.Sum}
	if err != nil {
		msg.Error = err.Error()
		if len(msg.Error) > maxCauseText {
			msg.Error = msg.Error[:maxCauseText]
		}
	} else if s.modules[lm.Sum] == nil {
		s.modules[lm.Sum] = map[string]*Module{m.name: m}
	}
	s.send(frameLoaded, msg, nil)
}

// module returns the module loaded as sum under name: Modules of the same
// bytes share the compiled code, but each keeps its own name (errors name
// it) and its own restorable instances.
func (s *workerServer) module(sum, name string) *Module {
	byName := s.modules[sum]
	if m := byName[name]; m != nil {
		return m
	}
	for _, m := range byName {
		nm := &Module{h: m.h, name: name, sum: m.sum, c: m.c}
		byName[name] = nm
		return nm
	}
	return nil
}

func (s *workerServer) call(job workerJob) {
	cm := job.call
	defer func() {
		s.mu.Lock()
		if s.curID == cm.ID {
			s.cancel = nil
		}
		s.mu.Unlock()
		job.cancel()
	}()
	m := s.module(cm.Sum, cm.Name)
	if m == nil {
		s.send(frameResult, resultMsg{Error: &wireError{Kind: "trap", Export: cm.Export, Code: string(abi.CodeInternal),
			Message: []byte("the worker process has not loaded module " + cm.Name)}}, nil)
		return
	}
	opts := &CallOptions{Grant: cm.Grant, CountFuel: cm.CountFuel, OnLog: func(e LogEntry) {
		s.send(frameLog, logMsg{Level: e.Level, Source: e.Source, Message: []byte(e.Message)}, nil)
	}}
	if cm.HasTools {
		opts.Tools = workerTools{s}
	}
	if cm.HasServices {
		opts.Services = workerServices{s}
	}
	res, err := m.Call(job.ctx, cm.Export, cm.Input, opts)
	s.send(frameResult, resultMsg{HasOutput: res.Output != nil, ReturnCode: res.ReturnCode, LogsTruncated: res.LogsTruncated,
		Fuel: res.Fuel, FuelCounted: res.FuelCounted, Instantiate: int64(res.Instantiate), Execute: int64(res.Execute), Error: encodeError(err)}, res.Output)
}

// forward asks the parent to serve a tool_call or capability_call and
// waits for its answer, or for the call's end.
func (s *workerServer) forward(ctx context.Context, kind, name string, args []byte) (toolReplyMsg, bool) {
	ch := make(chan toolReplyMsg, 1)
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.pending, s.reply = seq, ch
	s.mu.Unlock()
	s.send(frameTool, toolMsg{Seq: seq, Kind: kind, Name: []byte(name), Args: args}, nil)
	select {
	case r := <-ch:
		return r, true
	case <-ctx.Done():
		s.mu.Lock()
		if s.pending == seq {
			s.pending, s.reply = 0, nil
		}
		s.mu.Unlock()
		return toolReplyMsg{}, false
	}
}

// workerTools serves a worker's tool_call through the parent's
// ToolDispatcher.
type workerTools struct{ s *workerServer }

func (t workerTools) CallTool(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
	r, ok := t.s.forward(ctx, toolKindTool, name, args)
	if !ok {
		return errResult(abi.CodeTimeout, fmt.Sprintf("tool %q did not answer before the call ended", name))
	}
	if r.Panic != "" {
		panic(r.Panic)
	}
	var tr abi.ToolResult
	if err := json.Unmarshal(r.Result, &tr); err != nil {
		return errResult(abi.CodeInternal, "tool result is not valid JSON")
	}
	return tr
}

// workerServices serves a worker's capability_call through the parent's
// ServiceProvider.
type workerServices struct{ s *workerServer }

func (p workerServices) CallService(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
	r, ok := p.s.forward(ctx, toolKindCapability, id, args)
	if !ok {
		return nil, ctx.Err()
	}
	if r.Panic != "" {
		panic(r.Panic)
	}
	var tr abi.ToolResult
	if err := json.Unmarshal(r.Result, &tr); err != nil {
		return nil, &abi.Error{Code: abi.CodeInternal, Message: "service result is not valid JSON"}
	}
	if tr.IsError {
		if tr.Error == nil {
			tr.Error = &abi.Error{Code: abi.CodeInternal, Message: "service failed without an error"}
		}
		return nil, tr.Error
	}
	return tr.Output, nil
}

// toolResultDocument is what the guest receives for res, encoded as
// instance.writeResult encodes it.
func toolResultDocument(res abi.ToolResult) []byte {
	if res.Error != nil {
		res.IsError = true
	}
	if !res.IsError && len(res.Output) == 0 {
		res.Output = json.RawMessage("null")
	}
	b, err := json.Marshal(res)
	if err != nil {
		b, _ = json.Marshal(errResult(abi.CodeInternal, "tool result is not valid JSON"))
	}
	return b
}

// serviceResult is the result capabilityCall makes of a provider's answer.
func serviceResult(out json.RawMessage, err error) abi.ToolResult {
	if err != nil {
		var ae *abi.Error
		if errors.As(err, &ae) {
			return abi.ToolResult{IsError: true, Error: ae}
		}
		return errResult(abi.CodeUnavailable, err.Error())
	}
	return abi.ToolResult{Output: out}
}

// disableInterruption replaces the runtime of unmetered modules by one
// without close-on-context-done: with metering off too, nothing stops a
// spinning guest. Only a worker started with workerTestNoInterruptEnv
// does this.
func disableInterruption(ctx context.Context, h *Host) error {
	rc := wazero.NewRuntimeConfig()
	if h.cache != nil {
		rc = rc.WithCompilationCache(h.cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := instantiateHostModules(ctx, rt); err != nil {
		rt.Close(ctx)
		return err
	}
	old := h.rtSafe
	h.rtSafe = rt
	return old.Close(ctx)
}

func sumHex(sum [32]byte) string { return hex.EncodeToString(sum[:]) }
