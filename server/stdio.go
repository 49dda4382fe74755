package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Standard input carries one JSON-RPC message (or batch) per line. The MCP
// SDK ends its session at the first line it cannot read, which would let
// one malformed line end `serve --stdio`. stdioReader stands between the
// two: it hands the SDK only lines the SDK reads as messages, and answers
// every other line itself with a JSON-RPC error, then reads on.

// stdioReader is the SDK's view of standard input: the lines of in it can
// read, each trimmed to the message and its newline.
type stdioReader struct {
	in  *bufio.Reader
	out *lockedWriter
	max int

	pending []byte
	version string // the protocol version the client's initialize asked for
}

func newStdioReader(in io.Reader, out *lockedWriter, max int) *stdioReader {
	return &stdioReader{in: bufio.NewReaderSize(in, 64<<10), out: out, max: max}
}

// Read serves the next lines the SDK can read.
func (sr *stdioReader) Read(p []byte) (int, error) {
	for len(sr.pending) == 0 {
		line, err := sr.line()
		if err != nil {
			return 0, err
		}
		sr.pending = line
	}
	n := copy(p, sr.pending)
	sr.pending = sr.pending[n:]
	return n, nil
}

// Close does nothing: standard input is the process's.
func (sr *stdioReader) Close() error { return nil }

// line returns the next line to hand the SDK, answering the ones before
// it that it could not read. At the end of the input it returns io.EOF.
func (sr *stdioReader) line() ([]byte, error) {
	for {
		line, tooLong, err := sr.readLine()
		if tooLong {
			sr.refuse(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: the line exceeds %d bytes; send each message on one line of at most that", sr.max))
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if ok := sr.check(msg); ok {
				return append(msg, '\n'), nil
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

// readLine reads one line without its newline; past sr.max bytes the rest
// of the line is skipped and tooLong is true.
func (sr *stdioReader) readLine() (line []byte, tooLong bool, err error) {
	for {
		frag, err := sr.in.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > sr.max+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && (len(line) > 0 || tooLong):
			return line, tooLong, nil
		case err != nil:
			return line, tooLong, err
		}
		return line, tooLong, nil
	}
}

// check reports whether the SDK can read msg; if not, it answers it.
func (sr *stdioReader) check(msg []byte) bool {
	if !json.Valid(msg) {
		sr.refuse(jsonrpc.ID{}, jsonrpc.CodeParseError, "Parse error: the line is not one JSON value; send each message as JSON on a line of its own")
		return false
	}
	if err := checkKeys(msg); err != nil {
		sr.refuse(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error()+"; send each key of a JSON object once")
		return false
	}
	rb := readBody(msg)
	if len(rb.msgs) == 0 {
		sr.refuse(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, `Invalid Request: the line is not a JSON-RPC 2.0 message (an object with "jsonrpc":"2.0" and a method, or a response with an id) nor a non-empty array of them`)
		return false
	}
	if rb.batch {
		if sr.version >= "2025-06-18" {
			sr.refuse(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: JSON-RPC batches are not part of protocol version %s; send one message per line", sr.version))
			return false
		}
		ids := map[jsonrpc.ID]bool{}
		for _, m := range rb.msgs {
			if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
				if ids[r.ID] {
					sr.refuse(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: the batch uses the id %v twice; give each request of a batch its own id", r.ID.Raw()))
					return false
				}
				ids[r.ID] = true
			}
		}
	}
	for _, m := range rb.msgs {
		if r, ok := m.(*jsonrpc.Request); ok && r.Method == "initialize" {
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if sdkUnmarshal(r.Params, &p) == nil {
				sr.version = p.ProtocolVersion
			}
		}
	}
	return true
}

// refuse answers a line the SDK cannot read.
func (sr *stdioReader) refuse(id jsonrpc.ID, code int64, msg string) {
	data, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id.Raw(),
		"error": map[string]any{"code": code, "message": msg},
	})
	sr.out.Write(append(data, '\n'))
}

// lockedWriter serialises whole writes: the SDK writes each message with
// one Write, and so does stdioReader's refuse, so lines never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (lw *lockedWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.Write(p)
}

// Close does nothing: standard output is the process's.
func (lw *lockedWriter) Close() error { return nil }
