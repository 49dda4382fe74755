package rewrite

import (
	"errors"
	"math"
	"testing"
)

func TestLEB(t *testing.T) {
	type dec func(r *reader) (int64, error)
	u32 := func(r *reader) (int64, error) { v, err := r.u32(); return int64(v), err }
	s32 := (*reader).s32
	s33 := (*reader).s33
	s64 := (*reader).s64
	for _, tc := range []struct {
		name string
		dec  dec
		in   []byte
		want int64 // when ok
		ok   bool
	}{
		{"u32 0", u32, []byte{0x00}, 0, true},
		{"u32 127", u32, []byte{0x7f}, 127, true},
		{"u32 128", u32, []byte{0x80, 0x01}, 128, true},
		{"u32 padded 0", u32, []byte{0x80, 0x80, 0x80, 0x80, 0x00}, 0, true},
		{"u32 max", u32, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, math.MaxUint32, true},
		{"u32 overflow", u32, []byte{0xff, 0xff, 0xff, 0xff, 0x1f}, 0, false},
		{"u32 6 bytes", u32, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, false},
		{"u32 truncated", u32, []byte{0x80}, 0, false},
		{"u32 empty", u32, nil, 0, false},
		{"s32 -1", s32, []byte{0x7f}, -1, true},
		{"s32 63", s32, []byte{0x3f}, 63, true},
		{"s32 64", s32, []byte{0xc0, 0x00}, 64, true},
		{"s32 -64", s32, []byte{0x40}, -64, true},
		{"s32 min", s32, []byte{0x80, 0x80, 0x80, 0x80, 0x78}, math.MinInt32, true},
		{"s32 max", s32, []byte{0xff, 0xff, 0xff, 0xff, 0x07}, math.MaxInt32, true},
		{"s32 overflow", s32, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 0, false},
		{"s32 bad sign bits", s32, []byte{0x80, 0x80, 0x80, 0x80, 0x70}, 0, false},
		{"s32 6 bytes", s32, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 0, false},
		{"s33 0x40 (empty block)", s33, []byte{0x40}, -64, true},
		{"s33 type index 200", s33, []byte{0xc8, 0x01}, 200, true},
		{"s33 max", s33, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 1<<32 - 1, true},
		{"s33 min", s33, []byte{0x80, 0x80, 0x80, 0x80, 0x70}, -1 << 32, true},
		{"s33 overflow", s33, []byte{0xff, 0xff, 0xff, 0xff, 0x1f}, 0, false},
		{"s64 -1", s64, []byte{0x7f}, -1, true},
		{"s64 min", s64, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, math.MinInt64, true},
		{"s64 max", s64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, math.MaxInt64, true},
		{"s64 overflow", s64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 0, false},
		{"s64 11 bytes", s64, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &reader{b: tc.in, end: len(tc.in)}
			got, err := tc.dec(r)
			if !tc.ok {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("err = %v, want ErrMalformed", err)
				}
				return
			}
			if err != nil || got != tc.want || !r.done() {
				t.Fatalf("got %d, %v (consumed %d of %d), want %d", got, err, r.pos, len(tc.in), tc.want)
			}
		})
	}
}

func TestAppendLEB(t *testing.T) {
	for _, v := range []uint32{0, 1, 127, 128, 16383, 16384, math.MaxUint32} {
		b := appendU32(nil, v)
		r := &reader{b: b, end: len(b)}
		if got, err := r.u32(); err != nil || got != v || !r.done() || len(b) != sizeU32(v) {
			t.Errorf("u32 %d: encoded % x, decoded %d, %v", v, b, got, err)
		}
	}
	for _, v := range []int64{0, 1, -1, 63, 64, -64, -65, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64} {
		b := appendS64(nil, v)
		r := &reader{b: b, end: len(b)}
		if got, err := r.s64(); err != nil || got != v || !r.done() || len(b) != sizeS64(v) {
			t.Errorf("s64 %d: encoded % x, decoded %d, %v", v, b, got, err)
		}
	}
}
