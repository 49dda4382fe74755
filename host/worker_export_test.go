package host

import (
	"bufio"
	"encoding/binary"
	"os"
	"sort"
	"time"
)

// Test hooks for the worker processes; compiled into tests only.

// WorkerPIDs returns the process ids of the host's worker processes that
// are not reaped yet.
func WorkerPIDs(h *Host) []int {
	p := h.workerPool()
	p.mu.Lock()
	defer p.mu.Unlock()
	var pids []int
	for w := range p.all {
		pids = append(pids, w.pid)
	}
	sort.Ints(pids)
	return pids
}

// WorkersStarted returns how many worker processes the host has started.
func WorkersStarted(h *Host) int {
	p := h.workerPool()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// WorkersIgnoreDeadlines makes the workers the host starts from now on
// run guests with no interruption at all, as if it had failed.
func WorkersIgnoreDeadlines(h *Host) {
	p := h.workerPool()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.testNoInterrupt = true
}

// HostileWorkerEnv, set in the environment of a test binary started as a
// worker, makes TestMain run ServeHostileWorker with its value as the mode.
const HostileWorkerEnv = "SKILLHOST_TEST_HOSTILE_WORKER"

// ServeHostileWorker plays a worker that completes the handshake and loads
// modules, then breaks the protocol in the given way at the first call,
// and exits.
func ServeHostileWorker(mode string) {
	in := bufio.NewReader(os.NewFile(3, "in"))
	out := os.NewFile(4, "out")
	if _, _, _, err := readFrame(in, maxControlFrame); err != nil {
		os.Exit(3)
	}
	writeFrame(out, frameReady, readyMsg{Protocol: workerProtocol}, nil)
	for {
		kind, body, _, err := readFrame(in, maxWorkerInFrame)
		if err != nil {
			os.Exit(0)
		}
		switch kind {
		case frameLoad:
			var lm loadMsg
			decodeBody(body, &lm)
			writeFrame(out, frameLoaded, loadedMsg{Sum: lm.Sum}, nil)
			continue
		case frameCall:
		default:
			continue
		}
		switch mode {
		case "huge-frame": // announces a frame above any call's cap
			out.Write(binary.BigEndian.AppendUint32(nil, maxFrameLimit))
		case "stalled-frame": // announces 100 MB, sends 1 KiB, stalls
			out.Write(binary.BigEndian.AppendUint32(nil, 100<<20))
			out.Write(make([]byte, 1<<10))
		case "bad-log":
			writeFrame(out, frameLog, logMsg{Level: 99, Source: "log", Message: []byte("x")}, nil)
		case "log-flood": // more log bytes than the call may keep
			for range 64 {
				writeFrame(out, frameLog, logMsg{Level: 2, Source: "log", Message: make([]byte, 64<<10)}, nil)
			}
		case "tool-not-granted":
			writeFrame(out, frameTool, toolMsg{Seq: 1, Kind: toolKindTool, Name: []byte("rm_rf"), Args: []byte("{}")}, nil)
		case "big-output":
			writeFrame(out, frameResult, resultMsg{HasOutput: true}, make([]byte, 2<<20))
		case "bad-kind":
			writeFrame(out, frameResult, resultMsg{Error: &wireError{Kind: "everything", Message: []byte("x")}}, nil)
		case "unknown-frame":
			writeFrame(out, 'Z', struct{}{}, nil)
		case "exit":
			os.Exit(7)
		}
		time.Sleep(time.Minute)
		os.Exit(0)
	}
}
