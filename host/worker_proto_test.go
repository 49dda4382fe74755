package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/skillhost/skillhost/abi"
)

// Every Config field either travels to the workers or is one of the
// parent's own worker settings: a field added to Config must be added to
// wireConfig (or to localConfigFields) for workers to run modules as the
// parent would.
func TestWireConfigCoversConfig(t *testing.T) {
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Config]()) {
		if !slices.Contains(wireConfigFields, f.Name) && !slices.Contains(localConfigFields, f.Name) {
			t.Errorf("Config.%s is neither sent to worker processes (wireConfig) nor listed as local", f.Name)
		}
	}
	cfg := NewConfig().WithCacheDir("/c").WithDefaultLimits(Limits{Timeout: time.Second, MaxFuel: 7}).WithMaxToolDepth(3).
		WithLogLevel(abi.LogWarn).WithMetering(false).WithMaxTableElements(99).WithMaxInitFuel(1234).WithMemoryBudget(1 << 20)
	got := cfg.wire("/c").config()
	got.isolation, got.workers, got.workerGrace, got.workerCmd = cfg.isolation, cfg.workers, cfg.workerGrace, cfg.workerCmd
	if !reflect.DeepEqual(cfg, got) {
		t.Errorf("config after the wire %+v, want %+v", got, cfg)
	}
}

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	msg := resultMsg{HasOutput: true, ReturnCode: 3, Fuel: 9, Error: encodeError(&CallError{Export: "run", Kind: ErrDenied, Code: abi.CodePermissionDenied,
		Message: "network capability denied: x", Cause: &CapabilityError{Capability: "network", Detail: "x"}})}
	if err := writeFrame(&buf, frameResult, msg, []byte("out\x00put")); err != nil {
		t.Fatal(err)
	}
	kind, body, blob, err := readFrame(&buf, 1<<20)
	if err != nil || kind != frameResult || string(blob) != "out\x00put" {
		t.Fatalf("kind %q, blob %q, err %v", kind, blob, err)
	}
	var got resultMsg
	if err := decodeBody(body, &got); err != nil {
		t.Fatal(err)
	}
	callErr, err := got.Error.decode([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	var capErr *CapabilityError
	if !errors.Is(callErr, ErrDenied) || !errors.As(callErr, &capErr) || capErr.Detail != "x" {
		t.Errorf("decoded error %v", callErr)
	}
	// A frame above the cap is refused before its body is read.
	buf.Reset()
	buf.Write(binary.BigEndian.AppendUint32(nil, 1<<30))
	if _, _, _, err := readFrame(&buf, 1<<20); !errors.Is(err, errFrameTooLarge) {
		t.Errorf("oversized frame: %v", err)
	}
	// A frame cut short is an error, not a short body.
	buf.Reset()
	buf.Write(binary.BigEndian.AppendUint32(nil, 100))
	buf.WriteString("Exyz")
	if _, _, _, err := readFrame(&buf, 1<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated frame: %v", err)
	}
}

// FuzzWorkerFrame feeds the parent's frame reader and message checks
// anything a broken or hostile worker could send: nothing panics, no frame
// passes the cap, and what is accepted is within what the call allows.
func FuzzWorkerFrame(f *testing.F) {
	seed := func(kind byte, v any, blob ...byte) {
		var buf bytes.Buffer
		writeFrame(&buf, kind, v, blob)
		f.Add(buf.Bytes())
	}
	seed(frameReady, readyMsg{Protocol: workerProtocol})
	seed(frameLoaded, loadedMsg{Sum: "ab"})
	seed(frameLog, logMsg{Level: abi.LogInfo, Source: "stdout", Message: []byte("hi")})
	seed(frameTool, toolMsg{Seq: 1, Kind: toolKindTool, Name: []byte("slugify"), Args: []byte(`{"x":1}`)})
	seed(frameResult, resultMsg{HasOutput: true}, 'x')
	seed(frameResult, resultMsg{Error: encodeError(&CallError{Export: "run", Kind: ErrGuest, Code: abi.CodeGuestError, Message: "m",
		Guest: &abi.Error{Code: abi.CodeGuestError, Message: "m", Details: []byte(`{"a":1}`)}})})
	seed(frameResult, resultMsg{Error: encodeError(ErrExportNotFound)})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 'E'})
	f.Add([]byte{0, 0, 0, 6, 'E', 0xff, 0xff, 0xff, 0xff, '{'})
	const limit = 1 << 16
	opts := &CallOptions{Grant: Grant{Tools: []string{"slugify"}, Capabilities: []string{"mail.send"}},
		Tools: ToolDispatcherFunc(func(ctx context.Context, name string, args json.RawMessage) abi.ToolResult { return abi.ToolResult{} })}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for {
			kind, body, blob, err := readFrame(r, limit)
			if err != nil {
				return
			}
			if 5+len(body)+len(blob) > limit {
				t.Fatalf("body of %d bytes and blob of %d passed the %d cap", len(body), len(blob), limit)
			}
			switch kind {
			case frameLog:
				var lm logMsg
				decodeBody(body, &lm)
			case frameTool:
				var tm toolMsg
				if decodeBody(body, &tm) == nil && checkToolRequest(tm, opts, 0, 4) == "" {
					if tm.Kind != toolKindTool || string(tm.Name) != "slugify" || !json.Valid(tm.Args) {
						t.Fatalf("accepted tool request %+v", tm)
					}
				}
			case frameResult:
				var rm resultMsg
				if decodeBody(body, &rm) == nil && rm.Error != nil {
					if err, derr := rm.Error.decode([]string{"", "run"}); derr == nil {
						var ce *CallError
						if errors.As(err, &ce) && ce.Code != "" && !ce.Code.Known() {
							t.Fatalf("accepted unknown code %q", ce.Code)
						}
					}
				}
			default:
				var v map[string]any
				decodeBody(body, &v)
			}
		}
	})
}
