package host

import (
	"errors"
	"fmt"
)

// moduleInfo is what the host reads from a module's binary before
// compiling it: every import (all kinds, which wazero's API does not list)
// and the declared minimum of its own memory.
type moduleInfo struct {
	imports []wasmImport
	// memMinPages is the minimum of the module's own memory, if it has one.
	memMinPages uint64
	hasMemory   bool
}

type wasmImport struct {
	module, name string
	kind         byte // 0 func, 1 table, 2 memory, 3 global, 4 tag
}

func (i wasmImport) String() string {
	kinds := [...]string{"function", "table", "memory", "global", "tag"}
	k := "import"
	if int(i.kind) < len(kinds) {
		k = kinds[i.kind]
	}
	return fmt.Sprintf("%s %s.%s", k, i.module, i.name)
}

var errMalformed = errors.New("malformed wasm binary")

// scanModule reads the import and memory sections of a wasm binary. It
// checks only what it reads; wazero validates the rest when compiling.
func scanModule(b []byte) (moduleInfo, error) {
	var info moduleInfo
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return info, fmt.Errorf("%w: missing the \\0asm magic header", errMalformed)
	}
	if b[4] != 1 || b[5] != 0 || b[6] != 0 || b[7] != 0 {
		return info, fmt.Errorf("%w: unsupported binary version (a component, or not core wasm 1)", errMalformed)
	}
	r := reader{b: b, pos: 8}
	for r.pos < len(r.b) {
		id := r.byte()
		size := r.u32()
		if r.err != nil {
			return info, r.err
		}
		if uint64(size) > uint64(len(r.b)-r.pos) {
			return info, fmt.Errorf("%w: section %d of %d bytes runs past the end", errMalformed, id, size)
		}
		sec := reader{b: r.b[r.pos : r.pos+int(size)]}
		r.pos += int(size)
		switch id {
		case 2: // import
			n := sec.u32()
			for i := uint32(0); i < n && sec.err == nil; i++ {
				imp := wasmImport{module: sec.name(), name: sec.name(), kind: sec.byte()}
				switch imp.kind {
				case 0:
					sec.u32()
				case 1:
					sec.byte()
					sec.limits()
				case 2:
					sec.limits()
				case 3:
					sec.byte()
					sec.byte()
				case 4:
					sec.byte()
					sec.u32()
				default:
					return info, fmt.Errorf("%w: unknown import kind %d", errMalformed, imp.kind)
				}
				info.imports = append(info.imports, imp)
			}
		case 5: // memory
			if n := sec.u32(); n > 0 {
				info.memMinPages, _ = sec.limits()
				info.hasMemory = true
			}
		}
		if sec.err != nil {
			return info, fmt.Errorf("section %d: %w", id, sec.err)
		}
	}
	return info, r.err
}

type reader struct {
	b   []byte
	pos int
	err error
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.pos >= len(r.b) {
		r.err = fmt.Errorf("%w: unexpected end", errMalformed)
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *reader) uleb(maxBits uint) uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= maxBits+7 {
			r.err = fmt.Errorf("%w: LEB128 too long", errMalformed)
			return 0
		}
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) u32() uint32 { return uint32(r.uleb(32)) }

func (r *reader) name() string {
	n := r.u32()
	if r.err != nil {
		return ""
	}
	if uint64(n) > uint64(len(r.b)-r.pos) {
		r.err = fmt.Errorf("%w: name runs past the end", errMalformed)
		return ""
	}
	s := string(r.b[r.pos : r.pos+int(n)])
	r.pos += int(n)
	return s
}

// limits reads a limits record (memory or table) and returns min and max.
func (r *reader) limits() (minimum, maximum uint64) {
	flags := r.byte()
	bits := uint(32)
	if flags&0x04 != 0 {
		bits = 64
	}
	minimum = r.uleb(bits)
	if flags&0x01 != 0 {
		maximum = r.uleb(bits)
	}
	return minimum, maximum
}
