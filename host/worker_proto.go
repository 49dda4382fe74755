package host

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/skillhost/skillhost/abi"
)

// The worker protocol.
//
// A worker process talks to its parent over two pipes it inherits as file
// descriptors 3 (parent to worker) and 4 (worker to parent); its stdout and
// stderr are kept apart from them, so nothing else the process prints can
// corrupt a frame. Every message is one frame:
//
//	length  uint32, big-endian: the bytes that follow (5 ≤ length ≤ the reader's cap)
//	kind    one byte, frame* below
//	jsonLen uint32, big-endian: the length of the JSON body
//	body    JSON
//	blob    the rest: the bulk bytes of the message (module, input, output)
//
// The bulk bytes travel raw, as JSON would spend a third more on them and
// far more time. Every other field that can carry guest-sized data is a
// []byte (base64 in JSON), so a frame is at most 4/3 of the data it carries
// plus a small constant: the parent can cap each frame by the limits of the
// call it serves, and allocates only as the bytes actually arrive.
//
// A session: the parent sends frameInit and the worker answers frameReady.
// Then, one call at a time: frameLoad (module bytes, once per module and
// worker) answered by frameLoaded; frameCall, during which the worker sends
// frameLog for each log entry and frameTool for each tool_call or
// capability_call, answered by frameToolReply, and the parent may send
// frameCancel; the call ends with the worker's frameResult. The worker
// exits when its input pipe closes.

const (
	// workerProtocol is the protocol version, passed in the environment
	// variable workerEnv and checked again in frameInit.
	workerProtocol = "1"

	// Parent to worker.
	frameInit      byte = 'I'
	frameLoad      byte = 'L'
	frameCall      byte = 'C'
	frameCancel    byte = 'X'
	frameToolReply byte = 'T'

	// Worker to parent.
	frameReady  byte = 'R'
	frameLoaded byte = 'D'
	frameLog    byte = 'G'
	frameTool   byte = 'Q'
	frameResult byte = 'E'
)

const (
	// maxControlFrame caps the frames that carry no guest data (the
	// handshake, load answers).
	maxControlFrame = 64 << 10
	// maxWorkerInFrame caps what a worker accepts from its parent (module
	// bytes, input): the parent is trusted, the cap only bounds a bug.
	maxWorkerInFrame = 1 << 30
	// maxCauseText caps the text of an error's cause sent to the parent.
	maxCauseText = 4 << 10
	// maxFrameLimit is the largest frame cap a call can have.
	maxFrameLimit = math.MaxInt32
)

var errFrameTooLarge = errors.New("frame too large")

// writeFrame writes one frame of kind with v as its JSON body and blob as
// its bulk bytes.
func writeFrame(w io.Writer, kind byte, v any, blob []byte) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	n := 5 + len(body) + len(blob)
	if n > maxFrameLimit {
		return errFrameTooLarge
	}
	buf := make([]byte, 9, 4+n)
	binary.BigEndian.PutUint32(buf, uint32(n))
	buf[4] = kind
	binary.BigEndian.PutUint32(buf[5:], uint32(len(body)))
	buf = append(append(buf, body...), blob...)
	_, err = w.Write(buf)
	return err
}

// readFrame reads one frame whose length is at most limit. It allocates
// as the bytes arrive, not by the length a frame claims, so a peer that
// announces a large frame and sends little costs little.
func readFrame(r io.Reader, limit int) (kind byte, body, blob []byte, err error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, nil, err
	}
	n := int64(binary.BigEndian.Uint32(hdr[:]))
	if n < 5 {
		return 0, nil, nil, fmt.Errorf("frame of %d bytes, shorter than its header", n)
	}
	if n > int64(limit) {
		return 0, nil, nil, fmt.Errorf("%w: %d bytes announced, at most %d allowed", errFrameTooLarge, n, limit)
	}
	var buf bytes.Buffer
	buf.Grow(int(min(n, 64<<10)))
	if _, err := io.CopyN(&buf, r, n); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, nil, err
	}
	b := buf.Bytes()
	jsonLen := int64(binary.BigEndian.Uint32(b[1:5]))
	if jsonLen > n-5 {
		return 0, nil, nil, fmt.Errorf("frame body of %d bytes in a frame of %d", jsonLen, n)
	}
	return b[0], b[5 : 5+jsonLen], b[5+jsonLen:], nil
}

// decodeBody decodes a frame body into v, refusing unknown fields and
// trailing data.
func decodeBody(body []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the frame body")
	}
	return nil
}

// wireConfig is what a worker needs of the parent's Config to build a Host
// that runs modules exactly as the parent's would. Isolation and the
// worker settings stay behind: a worker runs its calls in its own process.
type wireConfig struct {
	CacheDir     string       `json:"cache_dir,omitempty"`
	Defaults     Limits       `json:"defaults"`
	MaxToolDepth int          `json:"max_tool_depth"`
	LogLevel     abi.LogLevel `json:"log_level"`
	Metering     bool         `json:"metering"`
	TickCheck    bool         `json:"tick_check,omitempty"`
	MaxTableElem uint64       `json:"max_table_elements"`
	MaxInitFuel  int64        `json:"max_init_fuel"`
	// MemBudget is the worker's share of the parent's memory budget.
	MemBudget uint64 `json:"memory_budget,omitempty"`
}

// wireConfigFields are the Config fields wireConfig carries, and
// localConfigFields those that stay in the parent. A test checks that
// every field of Config is one or the other.
var (
	wireConfigFields  = []string{"cacheDir", "defaults", "maxToolDepth", "logLevel", "metering", "tickCheck", "maxTableElem", "maxInitFuel", "memBudget"}
	localConfigFields = []string{"isolation", "workers", "workerGrace", "workerCmd"}
)

func (c Config) wire(cacheDir string) wireConfig {
	return wireConfig{CacheDir: cacheDir, Defaults: c.defaults, MaxToolDepth: c.maxToolDepth, LogLevel: c.logLevel,
		Metering: c.metering, TickCheck: c.tickCheck, MaxTableElem: c.maxTableElem, MaxInitFuel: c.maxInitFuel, MemBudget: c.memBudget}
}

func (w wireConfig) config() Config {
	c := NewConfig().WithDefaultLimits(w.Defaults).WithMaxToolDepth(w.MaxToolDepth).WithLogLevel(w.LogLevel).
		WithMetering(w.Metering).WithTickCheck(w.TickCheck).WithMaxTableElements(w.MaxTableElem).WithMaxInitFuel(w.MaxInitFuel).WithMemoryBudget(w.MemBudget)
	if w.CacheDir != "" {
		c = c.WithCacheDir(w.CacheDir)
	}
	return c
}

type initMsg struct {
	Protocol string     `json:"protocol"`
	Config   wireConfig `json:"config"`
}

type readyMsg struct {
	Protocol string `json:"protocol"`
	// Error is set when the worker could not build its host.
	Error string `json:"error,omitempty"`
}

type loadMsg struct {
	Sum  string `json:"sum"`
	Name string `json:"name"`
	// Wasm is the frame's blob.
	Wasm []byte `json:"-"`
}

type loadedMsg struct {
	Sum   string `json:"sum"`
	Error string `json:"error,omitempty"`
}

type callMsg struct {
	ID     uint64 `json:"id"`
	Sum    string `json:"sum"`
	Name   string `json:"name"`
	Export string `json:"export"`
	// Input is the frame's blob.
	Input []byte `json:"-"`
	// Grant carries limits already resolved against the parent's defaults.
	Grant Grant `json:"grant"`
	// Depth is the tool_call depth of the call (CallDepth).
	Depth int `json:"depth"`
	// Deadline is the time left on the caller's context, 0 for none.
	Deadline    int64 `json:"deadline_ns,omitempty"`
	HasTools    bool  `json:"has_tools,omitempty"`
	HasServices bool  `json:"has_services,omitempty"`
	CountFuel   bool  `json:"count_fuel,omitempty"`
}

type cancelMsg struct {
	ID uint64 `json:"id"`
}

// Tool request kinds.
const (
	toolKindTool       = "tool"
	toolKindCapability = "capability"
)

type toolMsg struct {
	Seq  uint64 `json:"seq"`
	Kind string `json:"kind"`
	Name []byte `json:"name"`
	Args []byte `json:"args"`
}

type toolReplyMsg struct {
	Seq uint64 `json:"seq"`
	// Result is the abi.ToolResult document the guest is to receive.
	Result []byte `json:"result,omitempty"`
	// Panic is set when the parent's dispatcher panicked: the worker
	// panics with it inside the host function, as an in-process call
	// would have.
	Panic string `json:"panic,omitempty"`
}

type logMsg struct {
	Level   abi.LogLevel `json:"level"`
	Source  string       `json:"source"`
	Message []byte       `json:"message"`
}

type resultMsg struct {
	// Output is the frame's blob; HasOutput tells an empty output from
	// none (nil, on error).
	Output        []byte `json:"-"`
	HasOutput     bool   `json:"has_output,omitempty"`
	ReturnCode    int32  `json:"return_code"`
	LogsTruncated bool   `json:"logs_truncated,omitempty"`
	Fuel          int64  `json:"fuel,omitempty"`
	FuelCounted   bool   `json:"fuel_counted,omitempty"`
	// Instantiate and Execute are the worker's Result.Instantiate and
	// Result.Execute, in nanoseconds.
	Instantiate int64      `json:"instantiate_ns,omitempty"`
	Execute     int64      `json:"execute_ns,omitempty"`
	Error       *wireError `json:"error,omitempty"`
}

// wireError is a call's error: a *CallError, or a plain error matching
// one of the host's sentinels.
type wireError struct {
	// Plain is set for an error that is not a *CallError.
	Plain      bool          `json:"plain,omitempty"`
	Kind       string        `json:"kind"`
	Export     string        `json:"export,omitempty"`
	Code       string        `json:"code,omitempty"`
	Message    []byte        `json:"message"`
	ReturnCode int32         `json:"return_code,omitempty"`
	Guest      *wireGuestErr `json:"guest,omitempty"`
	Capability *wireCapErr   `json:"capability,omitempty"`
	Cause      string        `json:"cause,omitempty"`
}

type wireGuestErr struct {
	Code    string `json:"code"`
	Message []byte `json:"message"`
	Details []byte `json:"details,omitempty"`
}

type wireCapErr struct {
	Capability string `json:"capability"`
	Detail     []byte `json:"detail"`
}

// sentinels names every error a call can match, for the wire.
var sentinels = []struct {
	name string
	err  error
}{
	{"guest", ErrGuest}, {"trap", ErrTrap}, {"timeout", ErrTimeout}, {"canceled", ErrCanceled},
	{"limit", ErrLimit}, {"denied", ErrDenied}, {"bad_config", ErrBadConfig}, {"closed", ErrClosed},
	{"export_not_found", ErrExportNotFound}, {"invalid_module", ErrInvalidModule},
	{"unknown_import", ErrUnknownImport}, {"hash_mismatch", ErrHashMismatch},
}

func sentinelName(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "trap"
}

func sentinelByName(name string) (error, bool) {
	for _, s := range sentinels {
		if s.name == name {
			return s.err, true
		}
	}
	return nil, false
}

// encodeError turns a call's error into its wire form.
func encodeError(err error) *wireError {
	if err == nil {
		return nil
	}
	var ce *CallError
	if !errors.As(err, &ce) {
		msg := err.Error()
		if len(msg) > maxCauseText {
			msg = msg[:maxCauseText]
		}
		return &wireError{Plain: true, Kind: sentinelName(err), Message: []byte(msg)}
	}
	we := &wireError{
		Kind:       sentinelName(ce.Kind),
		Export:     ce.Export,
		Code:       string(ce.Code),
		Message:    []byte(ce.Message),
		ReturnCode: ce.ReturnCode,
	}
	if ce.Guest != nil {
		we.Guest = &wireGuestErr{Code: string(ce.Guest.Code), Message: []byte(ce.Guest.Message), Details: ce.Guest.Details}
	}
	var capErr *CapabilityError
	if errors.As(ce.Cause, &capErr) {
		we.Capability = &wireCapErr{Capability: capErr.Capability, Detail: []byte(capErr.Detail)}
	}
	if ce.Cause != nil {
		cause := ce.Cause.Error()
		if len(cause) > maxCauseText {
			cause = cause[:maxCauseText]
		}
		we.Cause = cause
	}
	return we
}

// decode checks a worker's error against what the call could have produced
// and rebuilds it: a *CallError whose Kind is the same sentinel, with a
// *CapabilityError in its chain when the original had one. exports are
// the export names the error may carry.
func (we *wireError) decode(exports []string) (error, error) {
	kind, ok := sentinelByName(we.Kind)
	if !ok {
		return nil, fmt.Errorf("unknown error kind %.32q", we.Kind)
	}
	if len(we.Cause) > maxCauseText {
		return nil, errors.New("error cause too long")
	}
	if we.Plain {
		if we.Guest != nil || we.Capability != nil || len(we.Message) > maxCauseText {
			return nil, errors.New("malformed plain error")
		}
		return &wireSentinelError{kind: kind, msg: string(we.Message)}, nil
	}
	if !slices.Contains(exports, we.Export) {
		return nil, fmt.Errorf("error names export %.64q, not one the call runs", we.Export)
	}
	if we.Code != "" && !abi.Code(we.Code).Known() {
		return nil, fmt.Errorf("unknown error code %.32q", we.Code)
	}
	ce := &CallError{Export: we.Export, Kind: kind, Code: abi.Code(we.Code), Message: string(we.Message), ReturnCode: we.ReturnCode}
	if g := we.Guest; g != nil {
		if kind != ErrGuest || !abi.Code(g.Code).Known() || (len(g.Details) > 0 && !json.Valid(g.Details)) {
			return nil, errors.New("malformed guest error")
		}
		ce.Guest = &abi.Error{Code: abi.Code(g.Code), Message: string(g.Message), Details: g.Details}
	}
	if we.Cause != "" {
		ce.Cause = errors.New(we.Cause)
	}
	if c := we.Capability; c != nil {
		if kind != ErrDenied || len(c.Capability) > 64 {
			return nil, errors.New("malformed capability error")
		}
		ce.Cause = &CapabilityError{Capability: c.Capability, Detail: string(c.Detail)}
	}
	return ce, nil
}

// wireSentinelError is a plain error from a worker: it matches its
// sentinel and reads as the worker's message.
type wireSentinelError struct {
	kind error
	msg  string
}

func (e *wireSentinelError) Error() string        { return e.msg }
func (e *wireSentinelError) Is(target error) bool { return target == e.kind }
