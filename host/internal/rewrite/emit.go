package rewrite

import (
	"bytes"
	"fmt"
	"math"
)

// event is a change to the input: a function index to renumber (in[pos:end]
// becomes the LEB128 of val) or a check to insert at pos (val is its cost;
// loop is set for the check at the head of a loop that takes no
// parameters, which branches back to it after the call).
type event struct {
	pos, end int
	val      int64
	check    bool
	loop     bool
}

// newFunc maps an input function index to the output's: imports keep
// theirs, defined functions move up by one past the added import.
func (m *module) newFunc(idx uint32, at int) (uint32, error) {
	if idx >= m.funcIndexLimit {
		return 0, malformed(at, "function index %d out of range (%d functions)", idx, m.funcIndexLimit)
	}
	if idx >= m.importedFuncs {
		idx++
	}
	return idx, nil
}

// patchFunc records the renumbering of the function index in[pos:end].
func (m *module) patchFunc(pos, end int, idx uint32) error {
	n, err := m.newFunc(idx, pos)
	if err != nil {
		return err
	}
	m.events = append(m.events, event{pos: pos, end: end, val: int64(n)})
	return nil
}

// patchGlobal records the renumbering of the global index in[pos:end]:
// with Options.Tick the imported flag comes after the input's imported
// globals, and every global the input defines moves up by one.
func (m *module) patchGlobal(pos, end int, idx uint32) error {
	if idx >= m.budgetGlobal {
		return malformed(pos, "global index %d out of range (%d globals)", idx, m.budgetGlobal)
	}
	if m.opts.Tick && idx >= m.importedGlobals {
		m.events = append(m.events, event{pos: pos, end: end, val: int64(idx + 1)})
	}
	return nil
}

// newGlobal maps an input global index to the output's.
func (m *module) newGlobal(idx uint32) uint32 {
	if m.opts.Tick && idx >= m.importedGlobals {
		idx++
	}
	return idx
}

// checkSize is the size of the check e inserts.
func (m *module) checkSize(e event) int64 {
	switch {
	case e.loop && m.opts.Tick:
		return int64(len(m.loopCheck))
	case m.opts.Tick:
		return int64(len(m.check))
	case e.loop:
		return int64(len(m.check)+len(m.loopTail)+len(m.loopEnd)) + 2*int64(sizeS64(e.val))
	}
	return int64(len(m.check)+len(m.checkTail)) + int64(sizeS64(e.val))
}

// copyPatched appends in[from:to] with the recorded events applied, and
// clears them.
func (m *module) copyPatched(out []byte, from, to int) []byte {
	last := from
	for _, e := range m.events {
		out = append(out, m.in[last:e.pos]...)
		switch {
		case e.check && m.opts.Tick && e.loop:
			out = append(out, m.loopCheck...)
		case e.check && m.opts.Tick:
			out = append(out, m.check...)
		case e.check:
			out = append(out, m.check...)
			out = appendS64(out, e.val)
			if e.loop {
				out = append(out, m.loopTail...)
				out = appendS64(out, e.val)
				out = append(out, m.loopEnd...)
			} else {
				out = append(out, m.checkTail...)
			}
		default:
			out = appendU32(out, uint32(e.val))
		}
		last = e.end
	}
	m.events = m.events[:0]
	return append(out, m.in[last:to]...)
}

// beginSection appends a section id and room for a 5-byte size.
func beginSection(out []byte, id byte) ([]byte, int) {
	out = append(out, id, 0, 0, 0, 0, 0)
	return out, len(out)
}

// endSection writes the size of the contents that start at mark, shifting
// them down over the unused room.
func endSection(out []byte, mark int) ([]byte, error) {
	size := len(out) - mark
	if uint64(size) > math.MaxUint32 {
		return nil, unsupported(0, "output section of %d bytes is too large", size)
	}
	var tmp [5]byte
	l := appendU32(tmp[:0], uint32(size))
	dst := mark - 5
	copy(out[dst+len(l):], out[mark:])
	copy(out[dst:], l)
	return out[:len(out)-(5-len(l))], nil
}

func sizeU32(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func sizeS64(v int64) int {
	var tmp [10]byte
	return len(appendS64(tmp[:0], v))
}

// emit writes the output module.
func (m *module) emit() ([]byte, error) {
	out := make([]byte, 0, len(m.in)+len(m.in)/4+256)
	out = append(out, header...)
	// Sections the output needs even when the input has none, by rank.
	synth := []byte{secType, secImport, secGlobal, secExport}
	var err error
	flush := func(rank int) {
		for len(synth) > 0 && sectionRank[synth[0]] < rank && err == nil {
			if !m.present[synth[0]] {
				out, err = m.section(out, section{id: synth[0]}, true)
			}
			synth = synth[1:]
		}
	}
	for _, s := range m.sections {
		if s.id != secCustom {
			flush(sectionRank[s.id])
		}
		if err == nil {
			out, err = m.section(out, s, false)
		}
		if err != nil {
			return nil, err
		}
	}
	flush(math.MaxInt)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// section appends the rewrite of s; synthetic means the input has no such
// section and s is empty.
func (m *module) section(out []byte, s section, synthetic bool) ([]byte, error) {
	switch s.id {
	case secCustom:
		return m.customSection(out, s)
	case secType, secImport, secGlobal, secExport:
		return m.growSection(out, s, synthetic)
	case secStart:
		r := m.reader(s)
		pos := r.pos
		idx, err := r.u32()
		if err != nil {
			return nil, err
		}
		if !r.done() {
			return nil, malformed(r.pos, "start section has %d bytes left over", r.end-r.pos)
		}
		if err := m.patchFunc(pos, r.pos, idx); err != nil {
			return nil, err
		}
	case secElement:
		if err := m.scanElements(s); err != nil {
			return nil, err
		}
	case secTable:
		if err := m.scanTables(s); err != nil {
			return nil, err
		}
	case secCode:
		return m.codeSection(out, s)
	case secData:
		if err := m.scanData(s); err != nil {
			return nil, err
		}
	}
	// Unchanged but for the recorded function indices.
	out, mark := beginSection(out, s.id)
	out = m.copyPatched(out, s.start, s.end)
	return endSection(out, mark)
}

// growSection rewrites the type, import, global or export section, which
// get one or more entries at their end.
func (m *module) growSection(out []byte, s section, synthetic bool) ([]byte, error) {
	var n uint32
	entries := s.end
	if !synthetic {
		r := m.reader(s)
		var err error
		if n, err = r.u32(); err != nil {
			return nil, err
		}
		entries = r.pos
		switch s.id {
		case secGlobal:
			for i := uint32(0); i < n; i++ {
				if err := r.valType(); err != nil {
					return nil, err
				}
				if err := r.skip(1); err != nil {
					return nil, err
				}
				if err := r.constExpr(m); err != nil {
					return nil, err
				}
			}
		case secExport:
			for i := uint32(0); i < n; i++ {
				if _, err := r.name(); err != nil {
					return nil, err
				}
				kind, err := r.byte()
				if err != nil {
					return nil, err
				}
				pos := r.pos
				idx, err := r.u32()
				if err != nil {
					return nil, err
				}
				switch kind {
				case 0x00:
					if err := m.patchFunc(pos, r.pos, idx); err != nil {
						return nil, err
					}
				case 0x03:
					if err := m.patchGlobal(pos, r.pos, idx); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if synthetic && m.opts.Tick && s.id == secExport && len(m.info.Globals) == 0 {
		return out, nil // nothing to add
	}
	out, mark := beginSection(out, s.id)
	switch s.id {
	case secType:
		if m.refuelType == m.numTypes {
			out = appendU32(out, m.typeEntries+1)
			out = append(out, m.in[entries:s.end]...)
			out = append(out, 0x60, 0x00, 0x01, 0x7e)
		} else {
			out = append(out, m.in[s.start:s.end]...)
		}
	case secImport:
		added := uint32(1)
		if m.opts.Tick {
			added++
		}
		out = appendU32(out, n+added)
		out = append(out, m.in[entries:s.end]...)
		out = appendName(out, m.opts.ImportModule)
		out = appendName(out, m.opts.ImportName)
		out = append(out, 0x00)
		out = appendU32(out, m.refuelType)
		if m.opts.Tick {
			out = appendName(out, TickModule)
			out = appendName(out, TickGlobal)
			out = append(out, 0x03, 0x7e, 0x01) // mut i64
		}
	case secGlobal:
		if m.opts.Tick {
			out = appendU32(out, n+1)
			out = m.copyPatched(out, entries, s.end)
			out = append(out, 0x7e, 0x01, 0x42, 0x00, 0x0b) // seen: mut i64 = i64.const 0
			break
		}
		out = appendU32(out, n+1)
		out = m.copyPatched(out, entries, s.end)
		out = append(out, 0x7e, 0x01, 0x42, 0x00, 0x0b) // mut i64 = i64.const 0
	case secExport:
		added := uint32(len(m.info.Globals))
		if !m.opts.Tick {
			added++
		}
		out = appendU32(out, n+added)
		out = m.copyPatched(out, entries, s.end)
		if !m.opts.Tick {
			out = appendName(out, m.info.BudgetExport)
			out = append(out, 0x03)
			out = appendU32(out, m.budgetGlobal)
		}
		for _, g := range m.info.Globals {
			out = appendName(out, g.Export)
			out = append(out, 0x03)
			out = appendU32(out, m.newGlobal(g.Index))
		}
	}
	return endSection(out, mark)
}

// scanElements records the function indices of the element section:
// function index vectors (encodings 0-3) and ref.func in expressions.
func (m *module) scanElements(s section) error {
	r := m.reader(s)
	n, err := r.count(1)
	if err != nil {
		return err
	}
	funcs := func() error {
		c, err := r.count(1)
		if err != nil {
			return err
		}
		for j := uint32(0); j < c; j++ {
			pos := r.pos
			idx, err := r.u32()
			if err != nil {
				return err
			}
			if err := m.patchFunc(pos, r.pos, idx); err != nil {
				return err
			}
		}
		return nil
	}
	exprs := func() error {
		c, err := r.count(1)
		if err != nil {
			return err
		}
		for j := uint32(0); j < c; j++ {
			if err := r.constExpr(m); err != nil {
				return err
			}
		}
		return nil
	}
	for i := uint32(0); i < n; i++ {
		at := r.pos
		flags, err := r.u32()
		if err != nil {
			return err
		}
		switch flags {
		case 0: // active, table 0: offset, vec(funcidx)
			err = r.constExpr(m)
			if err == nil {
				err = funcs()
			}
		case 1, 3: // passive, declarative: elemkind, vec(funcidx)
			err = r.skip(1)
			if err == nil {
				err = funcs()
			}
		case 2: // active: table, offset, elemkind, vec(funcidx)
			if _, err = r.u32(); err == nil {
				if err = r.constExpr(m); err == nil {
					if err = r.skip(1); err == nil {
						err = funcs()
					}
				}
			}
		case 4: // active, table 0: offset, vec(expr)
			err = r.constExpr(m)
			if err == nil {
				err = exprs()
			}
		case 5, 7: // passive, declarative: reftype, vec(expr)
			err = r.valType()
			if err == nil {
				err = exprs()
			}
		case 6: // active: table, offset, reftype, vec(expr)
			if _, err = r.u32(); err == nil {
				if err = r.constExpr(m); err == nil {
					if err = r.valType(); err == nil {
						err = exprs()
					}
				}
			}
		default:
			return malformed(at, "element segment %d has unknown flags %d", i, flags)
		}
		if err != nil {
			return err
		}
	}
	if !r.done() {
		return malformed(r.pos, "element section has %d bytes left over", r.end-r.pos)
	}
	return nil
}

// scanData records the global indices in the data segments' offsets,
// which move with Options.Tick.
func (m *module) scanData(s section) error {
	if !m.opts.Tick {
		return nil
	}
	r := m.reader(s)
	n, err := r.count(2)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		flags, err := r.u32()
		if err != nil {
			return err
		}
		if flags == 2 {
			if _, err := r.u32(); err != nil {
				return err
			}
		}
		if flags != 1 {
			if err := r.constExpr(m); err != nil {
				return err
			}
		}
		if err := r.bytes(); err != nil {
			return err
		}
	}
	return nil
}

// scanTables records ref.func in table initialisers (typed function
// references: 0x40 0x00 tabletype expr).
func (m *module) scanTables(s section) error {
	r := m.reader(s)
	n, err := r.count(1)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if r.pos < r.end && m.in[r.pos] == 0x40 {
			at := r.pos
			r.pos++
			if b, err := r.byte(); err != nil {
				return err
			} else if b != 0x00 {
				return malformed(at, "table %d has initialiser prefix 0x40 %#x", i, b)
			}
			if err := r.tableType(); err != nil {
				return err
			}
			if err := r.constExpr(m); err != nil {
				return err
			}
			continue
		}
		if err := r.tableType(); err != nil {
			return err
		}
	}
	if !r.done() {
		return malformed(r.pos, "table section has %d bytes left over", r.end-r.pos)
	}
	return nil
}

// codeSection rewrites every function body.
func (m *module) codeSection(out []byte, s section) ([]byte, error) {
	r := m.reader(s)
	n, err := r.count(1)
	if err != nil {
		return nil, err
	}
	if n != m.definedFuncs {
		return nil, malformed(s.start, "code section has %d bodies for %d functions", n, m.definedFuncs)
	}
	out, mark := beginSection(out, secCode)
	out = appendU32(out, n)
	for i := uint32(0); i < n; i++ {
		at := r.pos
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		if int64(size) > int64(r.end-r.pos) {
			return nil, oversized(at, "body of function %d runs past the code section", m.importedFuncs+i)
		}
		start := r.pos
		r.pos += int(size)
		if out, err = m.body(out, start, r.pos, m.importedFuncs+i); err != nil {
			return nil, err
		}
	}
	if !r.done() {
		return nil, malformed(r.pos, "code section has %d bytes left over", r.end-r.pos)
	}
	return endSection(out, mark)
}

// body appends the rewrite of the function body in[start:end]: function
// indices renumbered, a check at the entry and after every loop.
func (m *module) body(out []byte, start, end int, fn uint32) ([]byte, error) {
	r := reader{b: m.in, pos: start, end: end}
	if _, err := r.locals(fn); err != nil {
		return nil, err
	}
	code := r.pos
	m.events = append(m.events[:0], event{pos: code, end: code, check: true})
	pending := 0 // the check whose cost is being counted, or -1
	var cost int64
	var in inst
	in.op = 0xff
	for !r.done() {
		at := r.pos
		if err := r.instr(&in); err != nil {
			if oe, ok := err.(*opError); ok {
				return nil, &OpcodeError{Func: fn, Offset: at, Opcode: oe.opcode}
			}
			return nil, err
		}
		cost++
		if (in.op == 0x23 || in.op == 0x24) && in.idx >= m.budgetGlobal {
			// Checked here too, although a host validates the module
			// first: the budget global is appended at this index, and an
			// out-of-range global.set would name it.
			return nil, malformed(at, "function %d uses global %d, but the module has %d globals", fn, in.idx, m.budgetGlobal)
		}
		if (in.op == 0x23 || in.op == 0x24) && m.opts.Tick {
			if err := m.patchGlobal(in.ipos, in.iend, in.idx); err != nil {
				return nil, err
			}
		}
		if (in.op == 0x26 || in.op == 0xfc) && writesTable(m.in, at, end, in.op) {
			m.info.WritesOutsideMemory = true
		}
		if in.fend != 0 {
			if err := m.patchFunc(in.fpos, in.fend, in.fidx); err != nil {
				return nil, err
			}
		}
		if in.flags&flagTerm != 0 && pending >= 0 {
			m.events[pending].val = cost
			pending = -1
		}
		if in.flags&flagLoop != 0 {
			pending = len(m.events)
			// A block type that is not a type index (the empty type or a
			// value type, one byte of 0x40-0x7f, or 0x63/0x64 and a heap
			// type): the loop takes no parameters, so a br to it needs
			// no operands.
			noParams := m.in[at+1]&0xc0 == 0x40
			m.events = append(m.events, event{pos: r.pos, end: r.pos, check: true, loop: noParams})
			cost = 0
		}
	}
	if in.op != 0x0b {
		return nil, malformed(end, "body of function %d does not end with end", fn)
	}
	if pending >= 0 { // unreachable: the final end is a terminator
		m.events[pending].val = max(cost, 1)
	}
	// The body's new size, so that it is written once.
	size := int64(end - start)
	for _, e := range m.events {
		if e.check {
			size += m.checkSize(e)
			m.info.Checks++
		} else {
			size += int64(sizeU32(uint32(e.val)) - (e.end - e.pos))
		}
	}
	if size > math.MaxUint32 {
		return nil, unsupported(start, "body of function %d is too large once instrumented", fn)
	}
	out = appendU32(out, uint32(size))
	want := len(out) + int(size)
	out = append(out, m.in[start:code]...)
	out = m.copyPatched(out, code, end)
	if len(out) != want { // a bug in this package, not bad input
		return nil, fmt.Errorf("rewrite: internal error: body of function %d is %d bytes, not %d", fn, len(out)-want+int(size), size)
	}
	return out, nil
}

// customSection rewrites the function indices of the "name" section (or
// drops it when it does not parse), drops DWARF sections (".debug_*"),
// whose code offsets the inserted checks would make wrong, and copies the
// others.
func (m *module) customSection(out []byte, s section) ([]byte, error) {
	r := m.reader(s)
	name, err := r.name()
	if err != nil {
		return nil, err
	}
	switch {
	case string(name) == "name":
		return m.nameSection(out, s, r.pos)
	case bytes.HasPrefix(name, []byte(".debug_")):
		return out, nil
	}
	out, mark := beginSection(out, secCustom)
	out = append(out, m.in[s.start:s.end]...)
	return endSection(out, mark)
}

// writesTable reports whether the instruction at b[at:] (opcode op) can
// change a table or a passive segment: table.set, and data.drop,
// table.init, elem.drop, table.copy, table.grow and table.fill under the
// 0xfc prefix.
func writesTable(b []byte, at, end int, op byte) bool {
	switch op {
	case 0x26:
		return true
	case 0xfc:
		r := reader{b: b, pos: at + 1, end: end}
		sub, err := r.u32()
		return err == nil && (sub == 9 || (sub >= 12 && sub <= 17 && sub != 16))
	}
	return false
}
