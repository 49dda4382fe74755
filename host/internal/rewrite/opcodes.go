package rewrite

import "fmt"

// Immediate kinds of single-byte opcodes.
const (
	immInvalid  uint8 = iota
	immNone           // no immediate
	immBlock          // block type (s33, typed references add a heap type)
	immU32            // one u32: label, local, global, table, tag or type index
	immU32x2          // two u32s: call_indirect, return_call_indirect
	immFunc           // a function index: call, return_call, ref.func
	immBrTable        // vec(label) label
	immSelectT        // vec(valtype)
	immMemarg         // align (bit 6: a memory index follows) offset
	immS32            // i32.const
	immS64            // i64.const
	immF32            // f32.const: 4 bytes
	immF64            // f64.const: 8 bytes
	immHeapType       // ref.null: s33 heap type
	immTryTable       // block type, vec(catch clause)
	immPrefixFC       // 0xFC u32 sub-opcode: saturating truncation, bulk memory, tables
	immPrefixFD       // 0xFD u32 sub-opcode: SIMD
	immPrefixFE       // 0xFE u32 sub-opcode: threads (atomics)
)

// Flags of single-byte opcodes.
const (
	// flagTerm ends the straight-line run that a check's cost counts: a
	// branch, a call, a block boundary other than the start of a block.
	flagTerm uint8 = 1 << iota
	// flagLoop marks loop: a check is inserted right after it.
	flagLoop
)

var (
	opImm   [256]uint8
	opFlags [256]uint8
	// simdImm gives the immediates of 0xFD sub-opcodes 0-255; immInvalid
	// for the reserved ones. Sub-opcodes from 256 (relaxed SIMD) are refused.
	simdImm [256]uint8
)

// SIMD immediate kinds beyond the shared ones.
const (
	immLane       uint8 = 100 + iota // lane index byte
	immMemargLane                    // memarg then lane index byte
	immBytes16                       // v128.const, i8x16.shuffle
)

func init() {
	set := func(imm, flags uint8, ops ...int) {
		for _, op := range ops {
			opImm[op] = imm
			opFlags[op] = flags
		}
	}
	rng := func(lo, hi int) []int {
		var ops []int
		for op := lo; op <= hi; op++ {
			ops = append(ops, op)
		}
		return ops
	}
	set(immNone, flagTerm, 0x00) // unreachable
	set(immNone, 0, 0x01)        // nop
	set(immBlock, 0, 0x02)       // block
	set(immBlock, flagTerm|flagLoop, 0x03)
	set(immBlock, flagTerm, 0x04)         // if
	set(immNone, flagTerm, 0x05)          // else
	set(immBlock, 0, 0x06)                // try (legacy exceptions)
	set(immU32, flagTerm, 0x07)           // catch (legacy)
	set(immU32, flagTerm, 0x08)           // throw
	set(immU32, flagTerm, 0x09)           // rethrow (legacy)
	set(immNone, flagTerm, 0x0a)          // throw_ref
	set(immNone, flagTerm, 0x0b)          // end
	set(immU32, flagTerm, 0x0c, 0x0d)     // br, br_if
	set(immBrTable, flagTerm, 0x0e)       // br_table
	set(immNone, flagTerm, 0x0f)          // return
	set(immFunc, flagTerm, 0x10, 0x12)    // call, return_call
	set(immU32x2, flagTerm, 0x11, 0x13)   // call_indirect, return_call_indirect
	set(immU32, flagTerm, 0x14, 0x15)     // call_ref, return_call_ref
	set(immU32, flagTerm, 0x18)           // delegate (legacy)
	set(immNone, flagTerm, 0x19)          // catch_all (legacy)
	set(immNone, 0, 0x1a, 0x1b)           // drop, select
	set(immSelectT, 0, 0x1c)              // select t*
	set(immTryTable, 0, 0x1f)             // try_table
	set(immU32, 0, rng(0x20, 0x26)...)    // local.*, global.*, table.get/set
	set(immMemarg, 0, rng(0x28, 0x3e)...) // loads and stores
	set(immU32, 0, 0x3f, 0x40)            // memory.size, memory.grow
	set(immS32, 0, 0x41)                  // i32.const
	set(immS64, 0, 0x42)                  // i64.const
	set(immF32, 0, 0x43)                  // f32.const
	set(immF64, 0, 0x44)                  // f64.const
	set(immNone, 0, rng(0x45, 0xc4)...)   // numeric, sign extension
	set(immHeapType, 0, 0xd0)             // ref.null
	set(immNone, 0, 0xd1)                 // ref.is_null
	set(immFunc, 0, 0xd2)                 // ref.func
	set(immNone, 0, 0xd4)                 // ref.as_non_null
	set(immU32, flagTerm, 0xd5, 0xd6)     // br_on_null, br_on_non_null
	set(immPrefixFC, 0, 0xfc)
	set(immPrefixFD, 0, 0xfd)
	set(immPrefixFE, 0, 0xfe)

	for op := 0; op <= 0xff; op++ {
		simdImm[op] = immNone
	}
	for op := 0x00; op <= 0x0b; op++ {
		simdImm[op] = immMemarg // v128.load*, v128.store
	}
	simdImm[0x0c] = immBytes16 // v128.const
	simdImm[0x0d] = immBytes16 // i8x16.shuffle
	for op := 0x15; op <= 0x22; op++ {
		simdImm[op] = immLane // extract_lane, replace_lane
	}
	for op := 0x54; op <= 0x5b; op++ {
		simdImm[op] = immMemargLane // v128.load*_lane, v128.store*_lane
	}
	simdImm[0x5c] = immMemarg // v128.load32_zero
	simdImm[0x5d] = immMemarg // v128.load64_zero
	for _, op := range []int{0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb,
		0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee} {
		simdImm[op] = immInvalid // reserved
	}
}

// inst is what the rewriter needs to know of one decoded instruction.
type inst struct {
	op    byte
	flags uint8
	// fpos and fend delimit a function index immediate (call,
	// return_call, ref.func); fend is 0 when there is none.
	fpos, fend int
	fidx       uint32
	// idx is the immediate of a one-u32 instruction (immU32), such as
	// the global index of global.get and global.set; ipos and iend
	// delimit it.
	idx        uint32
	ipos, iend int
}

// opError is an unknown opcode, before the caller says where it was.
type opError struct {
	off    int
	opcode string
}

func (e *opError) Error() string {
	return fmt.Sprintf("unknown opcode %s at offset %#x", e.opcode, e.off)
}

// valType skips a value type: one byte, or 0x63/0x64 (ref null? ht) and a heap type.
func (r *reader) valType() error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	if c == 0x63 || c == 0x64 {
		_, err = r.s33()
	}
	return err
}

// blockType skips a block type: 0x40, a value type or a type index, all
// read as s33 like wazero does.
func (r *reader) blockType() error {
	v, err := r.s33()
	if err != nil {
		return err
	}
	if v == -29 || v == -28 { // 0x63, 0x64: a reference type with a heap type
		_, err = r.s33()
	}
	return err
}

// memarg skips a memory argument: alignment (bit 6 set: a memory index
// follows, multi-memory) and offset.
func (r *reader) memarg() error {
	a, err := r.u32()
	if err != nil {
		return err
	}
	if a&0x40 != 0 {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	_, err = r.u32()
	return err
}

// instr decodes the instruction at r.pos into in.
func (r *reader) instr(in *inst) error {
	start := r.pos
	op, err := r.byte()
	if err != nil {
		return err
	}
	in.op = op
	in.flags = opFlags[op]
	in.fend = 0
	switch opImm[op] {
	case immNone:
		return nil
	case immBlock:
		return r.blockType()
	case immU32:
		in.ipos = r.pos
		in.idx, err = r.u32()
		in.iend = r.pos
	case immU32x2:
		if _, err = r.u32(); err == nil {
			_, err = r.u32()
		}
	case immFunc:
		in.fpos = r.pos
		in.fidx, err = r.u32()
		in.fend = r.pos
	case immBrTable:
		var n uint32
		if n, err = r.count(1); err != nil {
			return err
		}
		for i := uint32(0); i <= n && err == nil; i++ { // n labels and the default
			_, err = r.u32()
		}
	case immSelectT:
		var n uint32
		if n, err = r.count(1); err != nil {
			return err
		}
		for i := uint32(0); i < n && err == nil; i++ {
			err = r.valType()
		}
	case immMemarg:
		err = r.memarg()
	case immS32:
		_, err = r.s32()
	case immS64:
		_, err = r.s64()
	case immF32:
		err = r.skip(4)
	case immF64:
		err = r.skip(8)
	case immHeapType:
		_, err = r.s33()
	case immTryTable:
		if err = r.blockType(); err != nil {
			return err
		}
		var n uint32
		if n, err = r.count(2); err != nil {
			return err
		}
		for i := uint32(0); i < n && err == nil; i++ {
			var kind byte
			if kind, err = r.byte(); err != nil {
				return err
			}
			switch kind {
			case 0x00, 0x01: // catch, catch_ref: tag, label
				if _, err = r.u32(); err == nil {
					_, err = r.u32()
				}
			case 0x02, 0x03: // catch_all, catch_all_ref: label
				_, err = r.u32()
			default:
				return malformed(r.pos-1, "unknown try_table catch kind %#x", kind)
			}
		}
	case immPrefixFC:
		return r.instrFC(start)
	case immPrefixFD:
		return r.instrFD(start)
	case immPrefixFE:
		return r.instrFE(start)
	default:
		return &opError{off: start, opcode: fmt.Sprintf("%#02x", op)}
	}
	return err
}

func (r *reader) instrFC(start int) error {
	sub, err := r.subOpcode(start, false)
	if err != nil {
		return err
	}
	switch {
	case sub <= 7: // i32/i64.trunc_sat_f32/f64_s/u
		return nil
	case sub == 8, sub == 10, sub == 12, sub == 14: // memory.init, memory.copy, table.init, table.copy
		if _, err = r.u32(); err == nil {
			_, err = r.u32()
		}
		return err
	case sub <= 17: // data.drop, memory.fill, elem.drop, table.grow/size/fill
		_, err = r.u32()
		return err
	}
	return &opError{off: start, opcode: fmt.Sprintf("0xfc %#x", sub)}
}

// subOpcode reads the u32 sub-opcode after a prefix. With minimal set, it
// refuses a non-minimal encoding: wazero v1.12.0 reads the SIMD and atomic
// sub-opcodes as one byte, which agrees with the u32 reading only for
// minimal encodings of valid opcodes. (It reads misc sub-opcodes as u32s
// and truncates them to a byte, which agrees for the valid ones.)
func (r *reader) subOpcode(start int, minimal bool) (uint32, error) {
	at := r.pos
	sub, err := r.u32()
	if err != nil {
		return 0, err
	}
	if minimal && r.pos-at != sizeU32(sub) {
		return 0, &opError{off: start, opcode: fmt.Sprintf("%#02x %#x (padded encoding)", r.b[start], sub)}
	}
	return sub, nil
}

func (r *reader) instrFD(start int) error {
	sub, err := r.subOpcode(start, true)
	if err != nil {
		return err
	}
	imm := immInvalid
	if sub < 256 {
		imm = simdImm[sub]
	}
	switch imm {
	case immNone:
		return nil
	case immMemarg:
		return r.memarg()
	case immMemargLane:
		if err = r.memarg(); err != nil {
			return err
		}
		return r.skip(1)
	case immLane:
		return r.skip(1)
	case immBytes16:
		return r.skip(16)
	}
	return &opError{off: start, opcode: fmt.Sprintf("0xfd %#x", sub)}
}

func (r *reader) instrFE(start int) error {
	sub, err := r.subOpcode(start, true)
	if err != nil {
		return err
	}
	switch {
	case sub <= 0x02, sub >= 0x10 && sub <= 0x4e: // notify, wait32/64, loads, stores, rmw, cmpxchg
		return r.memarg()
	case sub == 0x03: // atomic.fence: a reserved byte
		return r.skip(1)
	}
	return &opError{off: start, opcode: fmt.Sprintf("0xfe %#x", sub)}
}
