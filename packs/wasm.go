package packs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Exports a module may define that decide how the host treats it. They
// repeat the abi package's names, which packs may import but keeps as the
// contract's.
const (
	exportDescribe   = "describe"
	exportInitialize = "_initialize"
	exportStart      = "_start"
)

var (
	// ErrModule is matched by the errors of CheckModule that keep a
	// module's tools from loading.
	ErrModule = errors.New("module cannot serve its tools")
	// ErrNoExport is matched by the errors of CheckModule about a tool
	// entry naming an export the module does not have: the other tools
	// load, and a call of that one fails.
	ErrNoExport = errors.New("tool has no export")
)

// ModuleExports lists the function exports of a WebAssembly module, sorted,
// reading only the module's section framing and its export section:
// nothing is compiled or run. Bytes that are not a WebAssembly module, or
// an export section that does not parse, are an error saying where.
func ModuleExports(wasm []byte) ([]string, error) {
	return ReadModuleExports(bytes.NewReader(wasm), int64(len(wasm)))
}

// ReadModuleExports is ModuleExports reading the module from r, which
// holds size bytes from r's current offset: only the sections' framing and
// the export section are read, and the rest is skipped (with Seek when r
// is an io.Seeker), so that a module's code is not: a Go guest's export
// section ends within its first few hundred kilobytes of several
// megabytes.
func ReadModuleExports(r io.Reader, size int64) ([]string, error) {
	sr := &streamReader{src: r, size: size}
	if seeker, ok := r.(io.Seeker); ok {
		if base, err := seeker.Seek(0, io.SeekCurrent); err == nil {
			sr.seeker, sr.base = seeker, base
		}
	}
	sr.r = bufio.NewReaderSize(r, 4096)
	var head [8]byte
	n, err := io.ReadFull(sr.r, head[:])
	sr.off += int64(n)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if n < 8 || string(head[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly module (no \\0asm magic)")
	}
	if string(head[4:8]) != "\x01\x00\x00\x00" {
		return nil, fmt.Errorf("WebAssembly version %x is not 1", head[4:8])
	}
	var names []string
	for sr.off < size {
		id, err := sr.byte()
		if err != nil {
			return nil, err
		}
		secSize, err := sr.u32()
		if err != nil {
			return nil, fmt.Errorf("section %d: %v", id, err)
		}
		if int64(secSize) > size-sr.off {
			return nil, fmt.Errorf("section %d at byte %d claims %d bytes, %d remain", id, sr.off, secSize, size-sr.off)
		}
		if id != 7 {
			if err := sr.skip(int64(secSize)); err != nil {
				return nil, err
			}
			continue
		}
		body := make([]byte, secSize)
		if _, err := io.ReadFull(sr.r, body); err != nil {
			return nil, err
		}
		at := sr.off
		sr.off += int64(secSize)
		if names, err = (&wasmReader{b: body, base: int(at)}).exports(); err != nil {
			return nil, fmt.Errorf("export section: %v", err)
		}
	}
	slices.Sort(names)
	return names, nil
}

// streamReader reads a module's framing from src through r, at offset off
// of size; src's offset base is the module's first byte when it seeks.
type streamReader struct {
	src             io.Reader
	r               *bufio.Reader
	seeker          io.Seeker
	base, off, size int64
}

func (s *streamReader) byte() (byte, error) {
	c, err := s.r.ReadByte()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("unexpected end at byte %d", s.off)
		}
		return 0, err
	}
	s.off++
	return c, nil
}

func (s *streamReader) u32() (uint32, error) {
	return leb32(s.byte, func() int64 { return s.off })
}

// leb32 reads an unsigned LEB128 number of at most 32 bits with next; pos
// is where the reader is, for the error.
func leb32(next func() (byte, error), pos func() int64) (uint32, error) {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c, err := next()
		if err != nil {
			return 0, err
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("number at byte %d is longer than 5 bytes", pos())
}

// skip passes n bytes, which the caller checked are there: past what is
// buffered with Seek when it can, else by reading them.
func (s *streamReader) skip(n int64) error {
	s.off += n
	if buffered := int64(s.r.Buffered()); n <= buffered || s.seeker == nil {
		_, err := s.r.Discard(int(min(n, buffered)))
		if n > buffered {
			_, err = io.CopyN(io.Discard, s.r, n-buffered)
		}
		return err
	}
	if _, err := s.seeker.Seek(s.base+s.off, io.SeekStart); err != nil {
		return err
	}
	s.r.Reset(s.src)
	return nil
}

// wasmReader reads b from off; base is b's offset in the module, for
// errors.
type wasmReader struct {
	b         []byte
	off, base int
}

func (r *wasmReader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, fmt.Errorf("unexpected end at byte %d", r.base+r.off)
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *wasmReader) u32() (uint32, error) {
	return leb32(r.byte, func() int64 { return int64(r.base + r.off) })
}

func (r *wasmReader) exports() ([]string, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	var names []string
	for i := uint32(0); i < n; i++ {
		l, err := r.u32()
		if err != nil {
			return nil, err
		}
		if uint64(l) > uint64(len(r.b)-r.off) {
			return nil, fmt.Errorf("export %d's name claims %d bytes, %d remain", i, l, len(r.b)-r.off)
		}
		name := string(r.b[r.off : r.off+int(l)])
		r.off += int(l)
		if !utf8.ValidString(name) {
			return nil, fmt.Errorf("export %d's name is not UTF-8", i)
		}
		kind, err := r.byte()
		if err != nil {
			return nil, err
		}
		if _, err := r.u32(); err != nil {
			return nil, err
		}
		if kind == 0 {
			names = append(names, name)
		}
	}
	if r.off != len(r.b) {
		return nil, fmt.Errorf("%d bytes left after %d exports", len(r.b)-r.off, n)
	}
	return names, nil
}

// CheckModule judges, from its exports alone, whether module m of a pack
// can serve tools as the registry loads them, given its bytes: the module
// must be WebAssembly; a WASI command module (it exports _start and no
// _initialize, which is what Go and TinyGo build without
// -buildmode=c-shared) is refused, since its exports trap before its
// runtime is set up; a module whose manifest lists no tools needs a
// describe export (each an error matching ErrModule); and every export the
// manifest names should exist (an error matching ErrNoExport). Every
// error names the module.
func CheckModule(m *Module, wasm []byte) error {
	exports, err := ModuleExports(wasm)
	return CheckModuleExports(m, exports, err)
}

// CheckModuleExports is CheckModule for a module whose exports were read
// already (ModuleExports, ReadModuleExports), or whose reading failed with
// readErr.
func CheckModuleExports(m *Module, exports []string, readErr error) error {
	if readErr != nil {
		return fmt.Errorf("%w: module %s (%s): %v", ErrModule, m.Name, m.Path, readErr)
	}
	has := func(name string) bool { _, ok := slices.BinarySearch(exports, name); return ok }
	var errs []error
	if has(exportStart) && !has(exportInitialize) {
		errs = append(errs, fmt.Errorf("%w: module %s (%s) is a WASI command module: it exports _start and no _initialize, "+
			"so its tool exports run before the guest's runtime is set up and trap (\"unreachable\"); "+
			"build it as a reactor: add -buildmode=c-shared to the go build or tinygo build command "+
			"(GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o %s .)", ErrModule, m.Name, m.Path, m.Path))
	}
	if len(m.Tools) == 0 && !has(exportDescribe) {
		errs = append(errs, fmt.Errorf("%w: module %s (%s) has no tools: entry in pack.yaml and no describe export, so no tool would load; "+
			"list its tools under modules[].tools, or build it with a skillhost SDK, which exports describe (exports found: %s)",
			ErrModule, m.Name, m.Path, exportList(exports)))
	}
	for _, t := range m.Tools {
		if !has(t.Export) {
			errs = append(errs, fmt.Errorf("%w: module %s (%s) has no export %q for tool %q, so calling it fails (exports found: %s)",
				ErrNoExport, m.Name, m.Path, t.Export, t.Name, exportList(exports)))
		}
	}
	return errors.Join(errs...)
}

// exportList shows a module's callable exports for a message, at most 12.
func exportList(exports []string) string {
	var shown []string
	for _, e := range exports {
		if e == exportInitialize || e == exportStart || strings.HasPrefix(e, "__") {
			continue
		}
		shown = append(shown, e)
	}
	if len(shown) == 0 {
		return "none"
	}
	if len(shown) > 12 {
		return strings.Join(shown[:12], ", ") + fmt.Sprintf(" and %d more", len(shown)-12)
	}
	return strings.Join(shown, ", ")
}
