package fastschema

// maxNumberLen is the longest number text the fast path reads. Longer
// numbers (and numbers whose exponent is far from zero, see maxExp) go to
// the full validator: math/big refuses to build a rational from a decimal
// exponent beyond ±1e6 counted in its own way (the exponent written minus
// the digits after the point), so near that edge the outcome depends on
// how the number is written, not only on its value. Well inside the
// limits, the value alone decides, and exactly.
const (
	maxNumberLen = 128
	maxExp       = 1000
)

// decimal is a JSON number held exactly: ±0.d₁d₂…dₙ × 10^exp with
// d₁ ≠ 0 and dₙ ≠ 0, or zero (n == 0). The same value written differently
// (1, 1.0, 10e-1, 0.1e1) has the same decimal, and -0 is zero.
type decimal struct {
	neg bool
	n   int
	exp int
	d   [maxNumberLen]byte
}

// parse reads the text of a JSON number, which the scanner has already
// checked against the JSON grammar. It reports false for numbers beyond
// maxNumberLen or maxExp.
func (x *decimal) parse(b []byte) bool {
	if len(b) == 0 || len(b) > maxNumberLen {
		return false
	}
	x.neg, x.n, x.exp = false, 0, 0 // d[:n] is all that is read
	i := 0
	if b[0] == '-' {
		x.neg = true
		i++
	}
	point := 0 // digits before the point, leading zeros left out
	leading := true
	for ; i < len(b) && isDigit(b[i]); i++ {
		if leading && b[i] == '0' {
			continue
		}
		leading = false
		x.d[x.n] = b[i]
		x.n++
		point++
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && isDigit(b[i]); i++ {
			if leading && b[i] == '0' {
				point--
				continue
			}
			leading = false
			x.d[x.n] = b[i]
			x.n++
		}
	}
	e := 0
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if b[i] == '+' || b[i] == '-' {
			eneg = b[i] == '-'
			i++
		}
		for ; i < len(b); i++ {
			e = e*10 + int(b[i]-'0')
			if e > 1_000_000 {
				return false
			}
		}
		if eneg {
			e = -e
		}
	}
	for x.n > 0 && x.d[x.n-1] == '0' {
		x.n--
	}
	if x.n == 0 {
		x.neg, x.exp = false, 0
		return true
	}
	x.exp = point + e
	return x.exp >= -maxExp && x.exp <= maxExp
}

// isInt reports whether x is an integer, as JSON Schema counts them (1.0
// is one).
func (x *decimal) isInt() bool { return x.n == 0 || x.n <= x.exp }

// cmp compares x and y: -1, 0 or +1.
func (x *decimal) cmp(y *decimal) int {
	switch {
	case x.n == 0 && y.n == 0:
		return 0
	case x.n == 0:
		if y.neg {
			return 1
		}
		return -1
	case y.n == 0:
		if x.neg {
			return -1
		}
		return 1
	case x.neg != y.neg:
		if x.neg {
			return -1
		}
		return 1
	}
	c := x.cmpAbs(y)
	if x.neg {
		return -c
	}
	return c
}

// cmpAbs compares |x| and |y|, both non-zero.
func (x *decimal) cmpAbs(y *decimal) int {
	if x.exp != y.exp {
		if x.exp < y.exp {
			return -1
		}
		return 1
	}
	m := min(x.n, y.n)
	for i := 0; i < m; i++ {
		if x.d[i] != y.d[i] {
			if x.d[i] < y.d[i] {
				return -1
			}
			return 1
		}
	}
	// The last digit of each is non-zero: more digits is more.
	switch {
	case x.n < y.n:
		return -1
	case x.n > y.n:
		return 1
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
