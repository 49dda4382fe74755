package rewrite

import "unicode/utf8"

// reader decodes b[pos:end]. Positions are offsets into the whole input so
// that errors name them. Every method checks bounds: no input makes it panic.
type reader struct {
	b   []byte
	pos int
	end int
}

func (r *reader) done() bool { return r.pos >= r.end }

func (r *reader) eof() error {
	return malformed(r.pos, "unexpected end of data (limit %#x)", r.end)
}

func (r *reader) byte() (byte, error) {
	if r.pos >= r.end {
		return 0, r.eof()
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *reader) skip(n int) error {
	if n < 0 || n > r.end-r.pos {
		return r.eof()
	}
	r.pos += n
	return nil
}

// bytes skips a vec(byte).
func (r *reader) bytes() error {
	start := r.pos
	n, err := r.u32()
	if err != nil {
		return err
	}
	if int64(n) > int64(r.end-r.pos) {
		return oversized(start, "%d bytes run past the end (limit %#x)", n, r.end)
	}
	r.pos += int(n)
	return nil
}

// u32 decodes an unsigned LEB128 number of at most 5 bytes whose value fits
// in 32 bits.
func (r *reader) u32() (uint32, error) {
	if r.pos < r.end && r.b[r.pos] < 0x80 {
		c := r.b[r.pos]
		r.pos++
		return uint32(c), nil
	}
	start := r.pos
	var v uint32
	for i := 0; i < 5; i++ {
		if r.pos >= r.end {
			return 0, r.eof()
		}
		c := r.b[r.pos]
		r.pos++
		if i == 4 && c&0xf0 != 0 {
			return 0, malformed(start, "u32 LEB128 overflows or is longer than 5 bytes")
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
	panic("unreachable")
}

// signed checks a signed LEB128 number of at most maxLen bytes whose last
// byte, if it is the maxLen-th, may only hold sign bits under mask (all
// clear or all set). It returns the value for numbers up to 64 bits.
func (r *reader) signed(maxLen int, lastMask byte, what string) (int64, error) {
	start := r.pos
	var v int64
	for i := 0; i < maxLen; i++ {
		if r.pos >= r.end {
			return 0, r.eof()
		}
		c := r.b[r.pos]
		r.pos++
		if i == maxLen-1 {
			if c&0x80 != 0 || (c&lastMask != 0 && c&lastMask != lastMask) {
				return 0, malformed(start, "%s LEB128 overflows or is longer than %d bytes", what, maxLen)
			}
		}
		if s := uint(7 * i); s < 64 {
			v |= int64(c&0x7f) << s
		}
		if c < 0x80 {
			if s := uint(7 * (i + 1)); s < 64 && c&0x40 != 0 {
				v |= -1 << s
			}
			return v, nil
		}
	}
	panic("unreachable")
}

// s32 decodes a signed 32-bit LEB128 number (i32.const).
func (r *reader) s32() (int64, error) {
	if r.pos < r.end && r.b[r.pos] < 0x80 {
		c := r.b[r.pos]
		r.pos++
		return int64(int8(c<<1) >> 1), nil
	}
	// 5th byte holds bits 28-34: bit 31 is the sign (byte bit 3), bits 32-34 repeat it.
	return r.signed(5, 0x78, "s32")
}

// s33 decodes a signed 33-bit LEB128 number (block types, heap types).
func (r *reader) s33() (int64, error) {
	if r.pos < r.end && r.b[r.pos] < 0x80 {
		c := r.b[r.pos]
		r.pos++
		return int64(int8(c<<1) >> 1), nil
	}
	// 5th byte holds bits 28-34: bit 32 is the sign (byte bit 4), bits 33-34 repeat it.
	return r.signed(5, 0x70, "s33")
}

// s64 decodes a signed 64-bit LEB128 number (i64.const).
func (r *reader) s64() (int64, error) {
	if r.pos < r.end && r.b[r.pos] < 0x80 {
		c := r.b[r.pos]
		r.pos++
		return int64(int8(c<<1) >> 1), nil
	}
	// 10th byte holds bit 63 (the sign, byte bit 0); bits 64-69 repeat it.
	return r.signed(10, 0x7f, "s64")
}

// name decodes a vec(byte) that must be valid UTF-8 and returns it without copying.
func (r *reader) name() ([]byte, error) {
	start := r.pos
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	if int64(n) > int64(r.end-r.pos) {
		return nil, oversized(start, "name of %d bytes runs past the end (limit %#x)", n, r.end)
	}
	s := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	if !utf8.Valid(s) {
		return nil, malformed(start, "name is not valid UTF-8")
	}
	return s, nil
}

// count decodes a vector length, refusing one that cannot fit in what is
// left when every element takes at least minSize bytes, so that nothing
// allocates by a count the input does not back.
func (r *reader) count(minSize int) (uint32, error) {
	start := r.pos
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if int64(n)*int64(minSize) > int64(r.end-r.pos) {
		return 0, oversized(start, "vector of %d elements does not fit in %d bytes", n, r.end-r.pos)
	}
	return n, nil
}

// appendU32 appends v as unsigned LEB128.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendS64 appends v as signed LEB128.
func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// appendName appends a vec(byte).
func appendName(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}
