package host

import (
	"errors"
	"testing"
)

func TestKernelAllocFreeReuse(t *testing.T) {
	k := newKernel(1 << 16)
	a, err := k.alloc(10)
	if err != nil || a == 0 {
		t.Fatalf("alloc(10) = %d, %v", a, err)
	}
	if got := k.length(a); got != 10 {
		t.Errorf("length = %d, want 10", got)
	}
	b, _ := k.alloc(100)
	if b <= a || b%8 != 0 {
		t.Errorf("second block at %d, want an aligned offset after %d", b, a)
	}
	if err := k.storeU64(a, 0x0102030405060708); err != nil {
		t.Fatal(err)
	}
	if v, _ := k.loadU64(a); v != 0x0102030405060708 {
		t.Errorf("loadU64 = %#x", v)
	}
	k.freeBlock(a)
	if k.length(a) != 0 {
		t.Error("freed block still has a length")
	}
	c, _ := k.alloc(8)
	if c != a {
		t.Errorf("alloc after free = %d, want reuse of %d", c, a)
	}
	if v, _ := k.loadU64(c); v != 0 {
		t.Errorf("reused block not zeroed: %#x", v)
	}
	k.freeBlock(b) // the top block: the bump pointer moves back
	if d, _ := k.alloc(100); d != b {
		t.Errorf("alloc after freeing the top = %d, want %d", d, b)
	}
}

func TestKernelZeroAndLimits(t *testing.T) {
	k := newKernel(1024)
	if off, err := k.alloc(0); off != 0 || err != nil {
		t.Errorf("alloc(0) = %d, %v; want 0, nil", off, err)
	}
	if _, err := k.alloc(2000); !errors.Is(err, ErrLimit) {
		t.Errorf("alloc over the cap: err = %v, want ErrLimit", err)
	}
	if _, err := k.alloc(1 << 63); !errors.Is(err, ErrLimit) {
		t.Errorf("alloc(1<<63): err = %v, want ErrLimit", err)
	}
	if _, err := k.loadU64(1 << 40); !errors.Is(err, errBadPointer) {
		t.Errorf("load far out of bounds: err = %v", err)
	}
	if err := k.storeU8(^uint64(0), 1); !errors.Is(err, errBadPointer) {
		t.Errorf("store at max offset: err = %v", err)
	}
	if _, err := k.bytes(12345); !errors.Is(err, errBadPointer) {
		t.Errorf("bytes of unknown block: err = %v", err)
	}
	if _, err := k.span(8, ^uint64(0)); !errors.Is(err, errBadPointer) {
		t.Errorf("span overflow: err = %v", err)
	}
}

func TestKernelReset(t *testing.T) {
	k := newKernel(1 << 16)
	if err := k.setInput([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	k.outputOff, k.outputLen, k.errorOff = k.inputOff, 5, k.inputOff
	k.reset()
	if k.inputLen != 0 || k.outputLen != 0 || k.errorOff != 0 || len(k.blocks) != 0 || k.top != kernelBase {
		t.Errorf("reset left state: %+v", k)
	}
}

func FuzzKernel(f *testing.F) {
	f.Add([]byte{1, 10, 2, 0, 1, 200, 3, 5})
	f.Fuzz(func(t *testing.T, ops []byte) {
		k := newKernel(4096)
		var live []uint64
		for i := 0; i+1 < len(ops); i += 2 {
			arg := uint64(ops[i+1])
			switch ops[i] % 5 {
			case 0:
				off, err := k.alloc(arg * 16)
				if err == nil && off != 0 {
					live = append(live, off)
				}
			case 1:
				if len(live) > 0 {
					k.freeBlock(live[int(arg)%len(live)])
				}
			case 2:
				_ = k.storeU64(arg*8, arg)
			case 3:
				_, _ = k.loadU64(arg * 7)
			case 4:
				k.reset()
				live = live[:0]
			}
		}
		// Live blocks never overlap.
		for a, ba := range k.blocks {
			for b, bb := range k.blocks {
				if a != b && a < b+bb.cap && b < a+ba.cap {
					t.Fatalf("blocks %d(+%d) and %d(+%d) overlap", a, ba.cap, b, bb.cap)
				}
			}
		}
	})
}
