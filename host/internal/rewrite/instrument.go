package rewrite

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Defaults of Options and the names Instrument gives what it adds.
const (
	DefaultImportModule = "skillhost:fuel"
	DefaultImportName   = "refuel"
	// DefaultTickImportName is the function a guest rewritten with
	// Options.Tick calls when the tick flag is set, in ImportModule.
	DefaultTickImportName = "tick"
	// TickModule and TickGlobal name the mutable i64 global, the tick
	// flag, that a module rewritten with Options.Tick imports.
	TickModule = "skillhost:tick"
	TickGlobal = "flag"
	// BudgetExport is the export name of the budget global, unless the
	// module already exports that name (Info.BudgetExport has the one used).
	BudgetExport = "__skillhost_budget"
	// GlobalExportPrefix starts the export names Options.ExportGlobals adds:
	// GlobalExportPrefix + the global's index.
	GlobalExportPrefix = "__skillhost_global_"
	// MaxLocals is the most locals a function may declare (besides its
	// parameters), the limit V8 and wasmtime share; Instrument returns
	// ErrMalformed for more. wazero v1.12.0 has no such limit: it allocates
	// a byte per declared local, so 6 bytes of input can ask it for 4 GB.
	MaxLocals = 50_000
)

// Options tune Instrument. The zero value is ready to use.
type Options struct {
	// ImportModule and ImportName name the host function of type
	// () -> i64 that the guest calls when its budget runs out; the budget
	// becomes what it returns. Empty means DefaultImportModule and
	// DefaultImportName (DefaultTickImportName with Tick).
	ImportModule, ImportName string
	// Tick makes the check at function entries and loop heads a compare
	// of an imported flag, TickModule/TickGlobal (a mutable i64), with a
	// global the module keeps, seen, instead of the budget: the guest
	// calls the import when they differ, and seen becomes what it
	// returns. Nothing is counted and no budget global is added; importing
	// the flag moves every global the module defines up by one (see the
	// package documentation).
	Tick bool
	// ExportGlobals also exports every mutable global the module defines
	// (not the imported ones), as GlobalExportPrefix + index, so that a host
	// can snapshot and restore them between calls.
	ExportGlobals bool
}

// Info describes what Instrument added.
type Info struct {
	// BudgetExport is the export name of the mutable i64 budget global,
	// normally BudgetExport. The guest calls the refuel import when the
	// budget drops below zero. It is empty with Options.Tick.
	BudgetExport string
	// Tick is set when the checks test the imported tick flag
	// (Options.Tick); TickGlobal is then the flag's global index, the
	// number of globals the input imports, and SeenGlobal that of the
	// added global the flag is compared with, the last.
	Tick       bool
	TickGlobal uint32
	SeenGlobal uint32
	// RefuelFunc is the function index of the added import: the number of
	// functions the input imports. Every function the input defines has
	// moved up by one.
	RefuelFunc uint32
	// Globals lists the exports Options.ExportGlobals added, by global index.
	Globals []GlobalExport
	// Checks is the number of budget checks inserted: one per defined
	// function and one per loop.
	Checks int
	// WritesOutsideMemory is set when the code contains an instruction that
	// can change a table or a passive segment at run time (table.set,
	// table.init, elem.drop, table.copy, table.grow, table.fill, data.drop):
	// state a snapshot of memory and globals does not cover.
	WritesOutsideMemory bool
}

// GlobalExport is a mutable global exported for Options.ExportGlobals.
type GlobalExport struct {
	// Index is the global's index in the input, which names its export:
	// the same in the output, or one more with Options.Tick.
	Index uint32
	// Export is its export name.
	Export string
	// Type is its value type's first byte: 0x7f i32, 0x7e i64, 0x7d f32,
	// 0x7c f64, 0x7b v128, 0x70 funcref, 0x6f externref, 0x63/0x64 a typed
	// reference.
	Type byte
}

// Section IDs.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionRank orders the non-custom sections as the binary format requires.
var sectionRank = [...]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secTag: 6,
	secGlobal: 7, secExport: 8, secStart: 9, secElement: 10, secDataCount: 11,
	secCode: 12, secData: 13,
}

type section struct {
	id         byte
	start, end int // the contents, after the size
}

// module holds what Instrument learned of its input.
type module struct {
	in   []byte
	opts Options

	sections []section
	present  [14]bool

	typeEntries     uint32 // entries of the type section: a rec group is one
	numTypes        uint32 // type indices: a rec group defines one per member
	refuelType      uint32 // index of a () -> i64 type, or numTypes when there is none
	importedFuncs   uint32
	importedGlobals uint32
	definedFuncs    uint32
	definedGlobals  uint32
	mutableGlobals  []GlobalExport
	exportNames     map[string]bool
	budgetGlobal    uint32 // the budget's index: the number of globals of the input
	info            Info
	events          []event
	check           []byte // the check sequence up to the cost
	checkTail       []byte // the check sequence after the cost
	funcIndexLimit  uint32 // number of functions of the input
	sawNameSection  bool
	scanOnly        bool // scanNames: check the name section without renumbering
	namesDropped    bool // the name section does not parse and is left out

	// loopCheck is the tick check at the head of a loop without
	// parameters; counting fuel, loopTail and then the cost again and
	// loopEnd follow the cost there instead of checkTail.
	loopCheck, loopTail, loopEnd []byte
}

// Instrument returns a copy of the WebAssembly binary wasm that calls the
// host function opts.ImportModule/ImportName whenever a budget global runs
// out, checked at every function entry and loop head. See the package
// documentation for the transformation. It never modifies wasm and never
// panics. On bad input it returns an error wrapping ErrMalformed (refuse
// the module), on input it cannot rewrite one wrapping ErrUnsupported (an
// *OpcodeError for an unknown instruction; fall back to close-on-context-
// done), or ErrAlreadyInstrumented. It does not validate the module beyond
// what rewriting needs: input a runtime would reject may give output it
// also rejects.
func Instrument(wasm []byte, opts Options) ([]byte, Info, error) {
	out, info, _, err := instrument(wasm, opts)
	return out, info, err
}

// instrument is Instrument, also returning what it learned of the input
// (nil if the options are invalid).
func instrument(wasm []byte, opts Options) ([]byte, Info, *module, error) {
	if opts.ImportModule == "" {
		opts.ImportModule = DefaultImportModule
	}
	if opts.ImportName == "" {
		opts.ImportName = DefaultImportName
		if opts.Tick {
			opts.ImportName = DefaultTickImportName
		}
	}
	if !utf8.ValidString(opts.ImportModule) || !utf8.ValidString(opts.ImportName) {
		return nil, Info{}, nil, ErrInvalidOptions
	}
	m := &module{in: wasm, opts: opts}
	if err := m.scan(); err != nil {
		if errors.Is(err, ErrUnsupported) {
			err = uncheckedError{err}
		}
		return nil, Info{}, m, err
	}
	out, err := m.emit()
	if err != nil {
		return nil, Info{}, m, err
	}
	return out, m.info, m, nil
}

var header = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}

// scan splits the input into sections and reads the ones whose counts and
// names the rewrite depends on.
func (m *module) scan() error {
	in := m.in
	if len(in) < 8 || string(in[:4]) != "\x00asm" {
		return malformed(0, "not a wasm binary (bad magic number)")
	}
	if string(in[4:8]) != string(header[4:]) {
		return unsupported(4, "binary version % x (only version 1 modules; components are not supported)", in[4:8])
	}
	// Sections are checked in order, as wazero decodes them, so that a
	// count wazero would allocate by is refused before it gets there.
	r := reader{b: in, pos: 8, end: len(in)}
	lastRank := 0
	for !r.done() {
		at := r.pos
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return err
		}
		if int64(size) > int64(r.end-r.pos) {
			return oversized(at, "section %d of %d bytes runs past the end", id, size)
		}
		s := section{id: id, start: r.pos, end: r.pos + int(size)}
		r.pos = s.end
		if id >= byte(len(sectionRank)) {
			return malformed(at, "unknown section id %d", id)
		}
		if id != secCustom {
			rank := sectionRank[id]
			if rank <= lastRank {
				return malformed(at, "section %d out of order or repeated", id)
			}
			lastRank = rank
			m.present[id] = true
		}
		m.sections = append(m.sections, s)
		switch s.id {
		case secType:
			err = m.scanTypes(s)
		case secImport:
			err = m.scanImports(s)
		case secFunction:
			err = m.scanFunctions(s)
		case secGlobal:
			err = m.scanGlobals(s)
		case secExport:
			err = m.scanExports(s)
		case secMemory, secTag, secData:
			err = m.scanOther(s)
		case secCode:
			err = m.scanLocals(s)
		case secCustom:
			sr := m.reader(s)
			var name []byte
			if name, err = sr.name(); err == nil && string(name) == "name" {
				if m.sawNameSection {
					err = malformed(s.start, "repeated name section")
				} else {
					err = m.scanNames(s, sr.pos)
				}
				m.sawNameSection = true
			}
		}
		if err != nil {
			return err
		}
	}
	if uint64(m.importedFuncs)+uint64(m.definedFuncs)+1 > math.MaxUint32 ||
		uint64(m.importedGlobals)+uint64(m.definedGlobals)+2 > math.MaxUint32 ||
		uint64(m.typeEntries)+1 > math.MaxUint32 {
		return malformed(0, "too many functions, globals or types")
	}
	m.funcIndexLimit = m.importedFuncs + m.definedFuncs
	m.budgetGlobal = m.importedGlobals + m.definedGlobals
	if m.exportNames == nil {
		m.exportNames = map[string]bool{}
	}
	m.info.RefuelFunc = m.importedFuncs
	if !m.opts.Tick {
		m.info.BudgetExport = m.uniqueExport(BudgetExport)
	}
	if m.opts.ExportGlobals {
		for _, g := range m.mutableGlobals {
			g.Export = m.uniqueExport(GlobalExportPrefix + strconv.FormatUint(uint64(g.Index), 10))
			m.info.Globals = append(m.info.Globals, g)
		}
	}
	if m.opts.Tick {
		// The seen global comes after the flag and the module's own.
		seen := m.budgetGlobal + 1
		m.info.Tick, m.info.TickGlobal, m.info.SeenGlobal = true, m.importedGlobals, seen
		// global.get $flag; global.get $seen; i64.ne; if; call $tick;
		// global.set $seen; end
		m.check = appendU32([]byte{0x23}, m.importedGlobals)
		m.check = append(m.check, 0x23)
		m.check = appendU32(m.check, seen)
		m.check = append(m.check, 0x52, 0x04, 0x40, 0x10)
		m.check = appendU32(m.check, m.info.RefuelFunc)
		m.check = append(m.check, 0x24)
		m.check = appendU32(m.check, seen)
		// At a loop head the call's branch goes back to the loop, which
		// checks again, instead of on into its body: the body then has the
		// check's one predecessor, so wazero keeps its values in registers
		// past the check (see the package documentation).
		m.loopCheck = append(slices.Clip(m.check), 0x0c, 0x01, 0x0b)
		m.check = append(m.check, 0x0b)
		return nil
	}

	// global.get $b; i64.const C; i64.sub; global.set $b; global.get $b;
	// i64.const 0; i64.ge_s; if; else; call $refuel; global.set $b; end
	//
	// The refuel call is in the else branch: wazero's register allocator
	// starts the block after the if from the first branch's registers, and
	// after a call those are all spilled (see RATIONALE.md).
	m.check = appendU32([]byte{0x23}, m.budgetGlobal)
	m.check = append(m.check, 0x42)
	t := []byte{0x7d, 0x24}
	t = appendU32(t, m.budgetGlobal)
	t = append(t, 0x23)
	t = appendU32(t, m.budgetGlobal)
	// At the head of a loop without parameters: ... global.get $b;
	// i64.const 0; i64.lt_s; if; call $refuel; i64.const C; i64.add;
	// global.set $b; br 1; end. Back at the loop, the check takes C
	// again, so the budget ends as refuel set it, and the loop's body is
	// reached from the not-taken branch alone (see the tick check).
	head := len(t)
	t = append(t, 0x42, 0x00, 0x59, 0x04, 0x40, 0x05, 0x10)
	t = appendU32(t, m.info.RefuelFunc)
	t = append(t, 0x24)
	t = appendU32(t, m.budgetGlobal)
	m.checkTail = append(t, 0x0b)
	m.loopTail = append(slices.Clip(t[:head]), 0x42, 0x00, 0x53, 0x04, 0x40, 0x10)
	m.loopTail = appendU32(m.loopTail, m.info.RefuelFunc)
	m.loopTail = append(m.loopTail, 0x42)
	m.loopEnd = append([]byte{0x7c, 0x24}, appendU32(nil, m.budgetGlobal)...)
	m.loopEnd = append(m.loopEnd, 0x0c, 0x01, 0x0b)
	return nil
}

func (m *module) reader(s section) reader { return reader{b: m.in, pos: s.start, end: s.end} }

// uniqueExport returns base, or base_N for the smallest N that the module
// does not export yet, and reserves it.
func (m *module) uniqueExport(base string) string {
	name := base
	for i := 1; m.exportNames[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	m.exportNames[name] = true
	return name
}

func (m *module) scanTypes(s section) error {
	r := m.reader(s)
	n, err := r.count(1)
	if err != nil {
		return err
	}
	m.typeEntries = n
	found := false
	for i := uint32(0); i < n; i++ {
		at := r.pos
		group := uint32(1)
		if r.pos < r.end && m.in[r.pos] == 0x4e { // rec group (GC proposal): several function types
			r.pos++
			if group, err = r.count(1); err != nil {
				return err
			}
		}
		for j := uint32(0); j < group; j++ {
			ft := r.pos
			if err := r.funcType(); err != nil {
				return err
			}
			if !found && m.in[at] != 0x4e && string(m.in[ft:r.pos]) == "\x60\x00\x01\x7e" {
				found = true
				m.refuelType = m.numTypes
			}
			if m.numTypes == math.MaxUint32 {
				return malformed(ft, "too many types")
			}
			m.numTypes++
		}
	}
	if !found {
		m.refuelType = m.numTypes
	}
	if !r.done() {
		return malformed(r.pos, "type section has %d bytes left over", r.end-r.pos)
	}
	return nil
}

// funcType skips a function type: 0x60 vec(valtype) vec(valtype).
func (r *reader) funcType() error {
	at := r.pos
	form, err := r.byte()
	if err != nil {
		return err
	}
	if form != 0x60 {
		return unsupported(at, "type of form %#x: only function types (0x60) are supported, not GC types", form)
	}
	for k := 0; k < 2; k++ { // params, results
		c, err := r.count(1)
		if err != nil {
			return err
		}
		for j := uint32(0); j < c; j++ {
			if err := r.valType(); err != nil {
				return err
			}
		}
	}
	return nil
}

// limits skips table or memory limits.
func (r *reader) limits() error {
	at := r.pos
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if flags&^0x03 != 0 {
		return unsupported(at, "limits flags %#x (64-bit memories and tables are not supported)", flags)
	}
	if _, err := r.u32(); err != nil {
		return err
	}
	if flags&0x01 != 0 {
		_, err = r.u32()
	}
	return err
}

// tableType skips a reference type and limits.
func (r *reader) tableType() error {
	if err := r.valType(); err != nil {
		return err
	}
	return r.limits()
}

func (m *module) scanImports(s section) error {
	r := m.reader(s)
	n, err := r.count(4)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		mod, err := r.name()
		if err != nil {
			return err
		}
		field, err := r.name()
		if err != nil {
			return err
		}
		at := r.pos
		kind, err := r.byte()
		if err != nil {
			return err
		}
		switch kind {
		case 0x00: // func
			if string(mod) == m.opts.ImportModule && (string(field) == m.opts.ImportName ||
				string(field) == DefaultImportName || string(field) == DefaultTickImportName) {
				return ErrAlreadyInstrumented
			}
			err = r.typeIndex(m.numTypes)
			m.importedFuncs++
		case 0x01: // table
			err = r.tableType()
		case 0x02: // memory
			err = r.limits()
		case 0x03: // global
			if string(mod) == TickModule {
				return ErrAlreadyInstrumented
			}
			if err = r.valType(); err == nil {
				_, err = r.byte()
			}
			m.importedGlobals++
		case 0x04: // tag
			if _, err = r.byte(); err == nil {
				err = r.typeIndex(m.numTypes)
			}
		default:
			return unsupported(at, "import kind %#x", kind)
		}
		if err != nil {
			return err
		}
	}
	if !r.done() {
		return malformed(r.pos, "import section has %d bytes left over", r.end-r.pos)
	}
	return nil
}

func (m *module) scanGlobals(s section) error {
	r := m.reader(s)
	n, err := r.count(3)
	if err != nil {
		return err
	}
	m.definedGlobals = n
	for i := uint32(0); i < n; i++ {
		typ := r.pos
		if err := r.valType(); err != nil {
			return err
		}
		mut, err := r.byte()
		if err != nil {
			return err
		}
		if mut&0x01 != 0 {
			m.mutableGlobals = append(m.mutableGlobals, GlobalExport{Index: m.importedGlobals + i, Type: m.in[typ]})
		}
		if err := r.constExpr(nil); err != nil {
			return err
		}
	}
	if !r.done() {
		return malformed(r.pos, "global section has %d bytes left over", r.end-r.pos)
	}
	return nil
}

func (m *module) scanExports(s section) error {
	r := m.reader(s)
	n, err := r.count(3)
	if err != nil {
		return err
	}
	m.exportNames = make(map[string]bool, n+1)
	for i := uint32(0); i < n; i++ {
		name, err := r.name()
		if err != nil {
			return err
		}
		m.exportNames[string(name)] = true
		at := r.pos
		kind, err := r.byte()
		if err != nil {
			return err
		}
		if kind > 0x04 {
			return unsupported(at, "export kind %#x", kind)
		}
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	if !r.done() {
		return malformed(r.pos, "export section has %d bytes left over", r.end-r.pos)
	}
	return nil
}

// typeIndex reads a type index and checks it is below n. wazero v1.12.0
// does not check the type of a function before validating the bodies that
// call it, and panics (index out of range) on a module whose function
// section names a type that does not exist.
func (r *reader) typeIndex(n uint32) error {
	at := r.pos
	idx, err := r.u32()
	if err == nil && idx >= n {
		err = malformed(at, "type index %d out of range (%d types)", idx, n)
	}
	return err
}

// scanFunctions counts the defined functions and checks their types.
func (m *module) scanFunctions(s section) error {
	r := m.reader(s)
	n, err := r.count(1)
	if err != nil {
		return err
	}
	m.definedFuncs = n
	for i := uint32(0); i < n; i++ {
		if err := r.typeIndex(m.numTypes); err != nil {
			return err
		}
	}
	if !r.done() {
		return malformed(r.pos, "function section has %d bytes left over", r.end-r.pos)
	}
	return nil
}

// scanLocals checks the function bodies' sizes and numbers of locals, so
// that a module asking wazero for gigabytes of locals is refused before
// any body is decoded.
func (m *module) scanLocals(s section) error {
	r := m.reader(s)
	n, err := r.count(1)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		at := r.pos
		size, err := r.u32()
		if err != nil {
			return err
		}
		if int64(size) > int64(r.end-r.pos) {
			return oversized(at, "body of function %d runs past the code section", m.importedFuncs+i)
		}
		br := reader{b: m.in, pos: r.pos, end: r.pos + int(size)}
		r.pos = br.end
		if _, err := br.locals(m.importedFuncs + i); err != nil {
			return err
		}
	}
	return nil
}

// locals skips the local declarations of function fn's body, refusing
// more than MaxLocals.
func (r *reader) locals(fn uint32) (uint64, error) {
	start := r.pos
	nl, err := r.count(2)
	if err != nil {
		return 0, err
	}
	var locals uint64
	for j := uint32(0); j < nl; j++ {
		n, err := r.u32()
		if err != nil {
			return 0, err
		}
		if locals += uint64(n); locals > MaxLocals {
			return 0, oversized(start, "function %d declares more than %d locals", fn, MaxLocals)
		}
		if err := r.valType(); err != nil {
			return 0, err
		}
	}
	return locals, nil
}

// scanOther checks the structure of the memory, tag and data sections,
// which are copied unchanged, so that no count or length in the output
// promises more than the bytes that follow.
func (m *module) scanOther(s section) error {
	r := m.reader(s)
	n, err := r.count(2)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n && err == nil; i++ {
		switch s.id {
		case secMemory:
			err = r.limits()
		case secTag: // attribute, type index
			if err = r.skip(1); err == nil {
				err = r.typeIndex(m.numTypes)
			}
		case secData:
			at := r.pos
			var flags uint32
			if flags, err = r.u32(); err != nil {
				return err
			}
			switch flags {
			case 0: // active, memory 0: offset, bytes
				err = r.constExpr(nil)
			case 1: // passive: bytes
			case 2: // active: memory, offset, bytes
				if _, err = r.u32(); err == nil {
					err = r.constExpr(nil)
				}
			default:
				return malformed(at, "data segment %d has unknown flags %d", i, flags)
			}
			if err == nil {
				err = r.bytes()
			}
		}
	}
	if err != nil {
		return err
	}
	if !r.done() {
		return malformed(r.pos, "section %d has %d bytes left over", s.id, r.end-r.pos)
	}
	return nil
}

// constExpr decodes a constant expression up to its end, recording the
// renumbering of each ref.func and global.get in m (when not nil).
func (r *reader) constExpr(m *module) error {
	var in inst
	for {
		if err := r.instr(&in); err != nil {
			if oe, ok := err.(*opError); ok {
				return unsupported(oe.off, "%s in a constant expression", oe.opcode)
			}
			return err
		}
		if in.fend != 0 && m != nil {
			if err := m.patchFunc(in.fpos, in.fend, in.fidx); err != nil {
				return err
			}
		}
		if in.op == 0x23 && m != nil {
			if err := m.patchGlobal(in.ipos, in.iend, in.idx); err != nil {
				return err
			}
		}
		if in.op == 0x0b {
			return nil
		}
	}
}
