package host

import (
	"encoding/binary"
	"fmt"
)

// kernel is the host-owned memory a guest addresses through the Extism
// kernel functions (alloc, load_u64, output_set, ...). Extism keeps it in a
// second Wasm module; here it is a plain byte slice with a block table,
// which makes every load and store a bounds-checked slice access.
//
// Offsets start at kernelBase so that 0 always means "no block". Blocks are
// 8-byte aligned. Freed blocks are kept on a free list and reused first-fit.
// A kernel belongs to one instance and is used by one goroutine at a time.
type kernel struct {
	mem []byte
	// top is the end of the highest live block; hi is the end of the
	// highest byte allocated or stored since the last reset: kernel memory
	// past hi is all zero.
	top    uint64
	hi     uint64
	max    uint64
	blocks map[uint64]block // live blocks by start offset
	free   []freeBlock

	inputOff, inputLen   uint64
	outputOff, outputLen uint64
	errorOff             uint64
}

type block struct{ len, cap uint64 }

type freeBlock struct{ off, cap uint64 }

const (
	kernelBase = 8
	// maxFreeScan bounds the first-fit search, keeping alloc O(1) amortised
	// for guests that free many small blocks.
	maxFreeScan = 64
	// kernelKeep is the most kernel memory kept from one call to the next.
	kernelKeep = 1 << 20
	// blockOverhead is what the host spends on a block besides its bytes
	// (its entry in the block table), counted against the kernel cap so
	// that a million one-byte blocks cannot cost the host more than it.
	blockOverhead = 48
)

func newKernel(max int64) *kernel {
	return &kernel{max: uint64(max), top: kernelBase, blocks: make(map[uint64]block)}
}

// reset drops every block and the input, output and error, and zeroes
// what the blocks held: load_u8 and load_u64 may read anywhere in kernel
// memory, and the next call must find nothing of this one's input, output
// or messages. A large kernel memory is dropped rather than kept.
func (k *kernel) reset() {
	if len(k.mem) > kernelKeep {
		k.mem = nil
	} else {
		clear(k.mem[:min(k.hi, uint64(len(k.mem)))])
	}
	k.top, k.hi = kernelBase, kernelBase
	if len(k.blocks) > 1024 {
		k.blocks = make(map[uint64]block)
	} else {
		clear(k.blocks)
	}
	k.free = k.free[:0]
	k.inputOff, k.inputLen, k.outputOff, k.outputLen, k.errorOff = 0, 0, 0, 0, 0
}

// alloc returns the offset of a new block of n bytes (zeroed), 0 for n == 0,
// or a *limitError when the kernel cap would be passed.
func (k *kernel) alloc(n uint64) (uint64, error) {
	if n == 0 {
		return 0, nil
	}
	size := (n + 7) &^ 7
	for i, f := range k.free {
		if i == maxFreeScan {
			break
		}
		if f.cap >= size {
			k.free[i] = k.free[len(k.free)-1]
			k.free = k.free[:len(k.free)-1]
			k.blocks[f.off] = block{len: n, cap: f.cap}
			clear(k.mem[f.off : f.off+n])
			return f.off, nil
		}
	}
	overhead := min(uint64(len(k.blocks)+1)*blockOverhead, k.max)
	if size > k.max || k.top+size > k.max-overhead {
		return 0, &limitError{what: "kernel memory", limit: int64(k.max),
			detail: fmt.Sprintf("alloc of %d bytes with %d in use in %d blocks", n, k.top-kernelBase, len(k.blocks))}
	}
	off := k.top
	k.top += size
	k.hi = max(k.hi, k.top)
	if k.top > uint64(len(k.mem)) {
		newLen := max(uint64(len(k.mem))*2, k.top, 4096)
		newLen = min(newLen, k.max+kernelBase)
		grown := make([]byte, newLen)
		copy(grown, k.mem)
		k.mem = grown
	}
	k.blocks[off] = block{len: n, cap: size}
	clear(k.mem[off : off+n])
	return off, nil
}

// allocBytes copies b into a new block and returns its offset.
func (k *kernel) allocBytes(b []byte) (uint64, error) {
	off, err := k.alloc(uint64(len(b)))
	if err != nil || off == 0 {
		return off, err
	}
	copy(k.mem[off:], b)
	return off, nil
}

// freeBlock releases the block at off; unknown offsets are ignored, as
// Extism's kernel does.
func (k *kernel) freeBlock(off uint64) {
	b, ok := k.blocks[off]
	if !ok {
		return
	}
	delete(k.blocks, off)
	if off+b.cap == k.top {
		k.top = off
		return
	}
	k.free = append(k.free, freeBlock{off: off, cap: b.cap})
}

// length returns the length of the block starting at off, 0 if none does.
func (k *kernel) length(off uint64) uint64 { return k.blocks[off].len }

// bytes returns the live block at off. The slice aliases kernel memory.
func (k *kernel) bytes(off uint64) ([]byte, error) {
	if off == 0 {
		return nil, nil
	}
	b, ok := k.blocks[off]
	if !ok {
		return nil, fmt.Errorf("%w: offset %d is not the start of an allocated block", errBadPointer, off)
	}
	return k.mem[off : off+b.len], nil
}

// span returns kernel memory [off, off+n), for output_set and input_set,
// which Extism allows on any in-bounds range.
func (k *kernel) span(off, n uint64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if off > uint64(len(k.mem)) || n > uint64(len(k.mem))-off {
		return nil, fmt.Errorf("%w: range [%d, %d) is outside kernel memory of %d bytes", errBadPointer, off, off+n, len(k.mem))
	}
	return k.mem[off : off+n], nil
}

func (k *kernel) loadU8(off uint64) (uint32, error) {
	if off >= uint64(len(k.mem)) {
		return 0, fmt.Errorf("%w: load_u8 at %d is outside kernel memory", errBadPointer, off)
	}
	return uint32(k.mem[off]), nil
}

func (k *kernel) loadU64(off uint64) (uint64, error) {
	if off > uint64(len(k.mem)) || uint64(len(k.mem))-off < 8 {
		return 0, fmt.Errorf("%w: load_u64 at %d is outside kernel memory", errBadPointer, off)
	}
	return binary.LittleEndian.Uint64(k.mem[off:]), nil
}

func (k *kernel) storeU8(off uint64, v uint32) error {
	if off >= uint64(len(k.mem)) {
		return fmt.Errorf("%w: store_u8 at %d is outside kernel memory", errBadPointer, off)
	}
	k.mem[off] = byte(v)
	k.hi = max(k.hi, off+1)
	return nil
}

func (k *kernel) storeU64(off, v uint64) error {
	if off > uint64(len(k.mem)) || uint64(len(k.mem))-off < 8 {
		return fmt.Errorf("%w: store_u64 at %d is outside kernel memory", errBadPointer, off)
	}
	binary.LittleEndian.PutUint64(k.mem[off:], v)
	k.hi = max(k.hi, off+8)
	return nil
}

// setInput copies the call's input into a fresh block.
func (k *kernel) setInput(in []byte) error {
	off, err := k.allocBytes(in)
	if err != nil {
		return err
	}
	k.inputOff, k.inputLen = off, uint64(len(in))
	return nil
}
