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

// capTables returns wasm with the maximum of every table it defines set so
// that the tables together can never hold more than ceiling elements: a
// table keeps its declared maximum when that fits, and otherwise gets its
// minimum plus an equal share of what the minimums leave. table.grow past
// the new maximum returns -1, as the WebAssembly spec says for any failed
// grow, so a guest cannot make the host allocate table space beyond the
// ceiling. A module whose declared minimums together pass the ceiling is
// refused with a *limitError. A module with no table section is returned
// as it is. wasm must already be valid: capTables reads only the sections'
// framing and the table section.
func capTables(wasm []byte, ceiling uint64) ([]byte, error) {
	r := reader{b: wasm, pos: 8}
	for r.pos < len(r.b) {
		start := r.pos
		id := r.byte()
		size := r.u32()
		if r.err != nil {
			return nil, r.err
		}
		body := r.pos
		if uint64(size) > uint64(len(r.b)-body) {
			return nil, fmt.Errorf("%w: section %d of %d bytes runs past the end", errMalformed, id, size)
		}
		r.pos += int(size)
		if id != 4 {
			continue
		}
		sec, err := cappedTableSection(wasm[body:r.pos], ceiling)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(wasm)+len(sec))
		out = append(out, wasm[:start]...)
		out = append(out, 4)
		out = appendULEB(out, uint64(len(sec)))
		out = append(out, sec...)
		return append(out, wasm[r.pos:]...), nil
	}
	return wasm, r.err
}

// cappedTableSection rewrites the body of a table section.
func cappedTableSection(b []byte, ceiling uint64) ([]byte, error) {
	type table struct {
		ref      []byte // the reference type's bytes
		min, max uint64
		hasMax   bool
		newMax   uint64
	}
	r := reader{b: b}
	n := r.u32()
	if r.err != nil {
		return nil, r.err
	}
	if uint64(n) > uint64(len(b)) {
		return nil, fmt.Errorf("%w: table count %d runs past the section", errMalformed, n)
	}
	tables := make([]table, 0, n)
	var sumMin uint64
	for i := uint32(0); i < n; i++ {
		at := r.pos
		switch r.byte() {
		case 0x70, 0x6f: // funcref, externref
		case 0x63, 0x64: // (ref null ht), (ref ht): a heap type follows
			r.uleb(33)
		default:
			if r.err == nil {
				return nil, fmt.Errorf("%w: table %d has a type form the host cannot bound", ErrInvalidModule, i)
			}
		}
		ref := b[at:r.pos]
		flags := r.byte()
		if r.err == nil && flags > 1 {
			return nil, fmt.Errorf("%w: table %d has limits flags %#x; only 32-bit tables are supported", ErrInvalidModule, i, flags)
		}
		t := table{ref: ref, min: r.uleb(32)}
		if flags == 1 {
			t.max, t.hasMax = r.uleb(32), true
		}
		if r.err != nil {
			return nil, r.err
		}
		sumMin += t.min
		tables = append(tables, t)
	}
	if r.pos != len(b) {
		return nil, fmt.Errorf("%w: table section has %d bytes left over", errMalformed, len(b)-r.pos)
	}
	if sumMin > ceiling {
		return nil, &limitError{what: "table elements", unit: "elements", limit: int64(ceiling),
			detail: fmt.Sprintf("the module's %d table(s) declare %d elements at least", len(tables), sumMin)}
	}
	share := (ceiling - sumMin) / uint64(max(len(tables), 1))
	out := appendULEB(nil, uint64(n))
	for _, t := range tables {
		t.newMax = t.min + share
		if t.hasMax && t.max < t.newMax {
			t.newMax = t.max
		}
		out = append(out, t.ref...)
		out = append(out, 1)
		out = appendULEB(out, t.min)
		out = appendULEB(out, t.newMax)
	}
	return out, nil
}

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}
