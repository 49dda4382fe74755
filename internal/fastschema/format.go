package fastschema

import "strings"

// format is a format the fast path asserts.
type format uint8

const (
	fmtNone format = iota
	fmtDateTime
	fmtDate
	fmtTime
	fmtUUID
	fmtEmail
	fmtHostname
	fmtIPv4
	fmtURI // also iri: the validator checks both the same way
)

// assertedFormats are the formats jsonschema/v6 (v6.0.3) asserts when
// formats are asserted: any other name is an annotation. A test keeps the
// list in step with the validator.
var assertedFormats = map[string]format{
	"date-time": fmtDateTime,
	"date":      fmtDate,
	"time":      fmtTime,
	"uuid":      fmtUUID,
	"email":     fmtEmail,
	"hostname":  fmtHostname,
	"ipv4":      fmtIPv4,
	"uri":       fmtURI,
	"iri":       fmtURI,
	// Asserted by the validator, not by the fast path: a schema that uses
	// them has no plan.
	"ipv6": fmtNone, "duration": fmtNone, "period": fmtNone,
	"json-pointer": fmtNone, "relative-json-pointer": fmtNone,
	"uri-reference": fmtNone, "iri-reference": fmtNone, "uri-template": fmtNone,
	"semver": fmtNone, "regex": fmtNone,
}

// formatOf returns the format the fast path checks for name, fmtNone for
// an annotation, and false for a format only the validator checks.
func formatOf(name string) (format, bool) {
	f, known := assertedFormats[name]
	if !known {
		return fmtNone, true
	}
	return f, f != fmtNone
}

// check decides whether s (a decoded string, valid UTF-8) has format f,
// as the validator would.
func (f format) check(s []byte) verdict {
	switch f {
	case fmtDateTime:
		return dateTimeVerdict(s)
	case fmtDate:
		return dateVerdict(s)
	case fmtTime:
		return timeVerdict(s)
	case fmtUUID:
		return uuidVerdict(s)
	case fmtEmail:
		return emailVerdict(s)
	case fmtHostname:
		return hostnameVerdict(s)
	case fmtIPv4:
		return ipv4Verdict(s)
	case fmtURI:
		return uriVerdict(s)
	}
	return valid
}

func verdictOf(ok bool) verdict {
	if ok {
		return valid
	}
	return invalid
}

// dateVerdict is time.Parse("2006-01-02", s) succeeding: four digits of
// year, two of month (1-12), two of day (1 to the month's length).
func dateVerdict(s []byte) verdict {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return invalid
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9} {
		if !isDigit(s[i]) {
			return invalid
		}
	}
	year := num2(s[0:2])*100 + num2(s[2:4])
	month, day := num2(s[5:7]), num2(s[8:10])
	if month < 1 || month > 12 || day < 1 {
		return invalid
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month-1]
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		days = 29
	}
	return verdictOf(day <= days)
}

func num2(s []byte) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

func digits2(s []byte) bool { return isDigit(s[0]) && isDigit(s[1]) }

// timeVerdict follows the validator's time check (hh:mm:ss, an optional
// fraction, Z or ±hh:mm, a leap second only at 23:59 UTC). The validator
// reads each two-character number with strconv.Atoi, which also takes
// "+1"; numbers not written as two digits are left to it.
func timeVerdict(s []byte) verdict {
	if len(s) < 9 || s[2] != ':' || s[5] != ':' {
		return invalid
	}
	if !digits2(s[0:2]) || !digits2(s[3:5]) || !digits2(s[6:8]) {
		return unsure
	}
	h, m, sec := num2(s[0:2]), num2(s[3:5]), num2(s[6:8])
	if h > 23 || m > 59 || sec > 60 {
		return invalid
	}
	s = s[8:]
	if len(s) > 0 && s[0] == '.' {
		n := 1
		for n < len(s) && isDigit(s[n]) {
			n++
		}
		if n == 1 {
			return invalid
		}
		s = s[n:]
	}
	if !(len(s) == 1 && (s[0] == 'z' || s[0] == 'Z')) {
		if len(s) != 6 {
			return invalid
		}
		var sign int
		switch s[0] {
		case '+':
			sign = -1
		case '-':
			sign = +1
		default:
			return invalid
		}
		s = s[1:]
		if s[2] != ':' {
			return invalid
		}
		if !digits2(s[0:2]) || !digits2(s[3:5]) {
			return unsure
		}
		zh, zm := num2(s[0:2]), num2(s[3:5])
		if zh > 23 || zm > 59 {
			return invalid
		}
		hm := (h*60 + m) + sign*(zh*60+zm)
		if hm < 0 {
			hm += 24 * 60
		}
		h, m = hm/60, hm%60
	}
	if sec >= 60 && (h != 23 || m != 59) {
		return invalid
	}
	return valid
}

// dateTimeVerdict is a date, t or T, and a time.
func dateTimeVerdict(s []byte) verdict {
	if len(s) < 20 || (s[10] != 't' && s[10] != 'T') {
		return invalid
	}
	if v := dateVerdict(s[:10]); v != valid {
		return v
	}
	return timeVerdict(s[11:])
}

// uuidVerdict: five groups of 8, 4, 4, 4 and 12 hex digits joined by '-'.
func uuidVerdict(s []byte) verdict {
	if len(s) != 36 {
		return invalid
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return invalid
			}
		default:
			if !isHex(c) {
				return invalid
			}
		}
	}
	return valid
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// hostnameVerdict: at most 253 characters without a final dot, labels of
// 1 to 63 letters, digits and hyphens, not starting or ending with one.
func hostnameVerdict(s []byte) verdict {
	if len(s) > 0 && s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	if len(s) > 253 {
		return invalid
	}
	for {
		end := 0
		for end < len(s) && s[end] != '.' {
			end++
		}
		label := s[:end]
		if len(label) < 1 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return invalid
		}
		for _, c := range label {
			if !isAlnum(c) && c != '-' {
				return invalid
			}
		}
		if end == len(s) {
			return valid
		}
		s = s[end+1:]
	}
}

// emailVerdict follows the validator's email check; a domain in brackets
// (an address literal) is left to it.
func emailVerdict(s []byte) verdict {
	if len(s) > 254 {
		return invalid
	}
	at := -1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '@' {
			at = i
			break
		}
	}
	if at < 0 {
		return invalid
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > 64 {
		return invalid
	}
	if len(local) > 1 && local[0] == '"' && local[len(local)-1] == '"' {
		for _, c := range local[1 : len(local)-1] {
			if c == '\\' || c == '"' {
				return invalid
			}
		}
	} else {
		if len(local) > 0 && (local[0] == '.' || local[len(local)-1] == '.') {
			return invalid
		}
		for i, c := range local {
			if c == '.' && i > 0 && local[i-1] == '.' {
				return invalid
			}
			if !isAlnum(c) && !isEmailSymbol(c) {
				return invalid
			}
		}
	}
	if len(domain) > 0 && domain[0] == '[' && domain[len(domain)-1] == ']' {
		return unsure
	}
	return hostnameVerdict(domain)
}

func isEmailSymbol(c byte) bool {
	switch c {
	case '.', '!', '#', '$', '%', '&', '\'', '*', '+', '-', '/', '=', '?', '^', '_', '`', '{', '|', '}', '~':
		return true
	}
	return false
}

// ipv4Verdict: four decimals 0-255 without leading zeros, read by
// strconv.Atoi, which also takes a sign: signed numbers are left to the
// validator.
func ipv4Verdict(s []byte) verdict {
	groups := 0
	for {
		end := 0
		for end < len(s) && s[end] != '.' {
			end++
		}
		g := s[:end]
		groups++
		if groups > 4 {
			return invalid
		}
		if len(g) > 1 && g[0] == '0' {
			return invalid
		}
		if len(g) > 0 && (g[0] == '+' || g[0] == '-') {
			return unsure
		}
		if len(g) == 0 || len(g) > 3 {
			return invalid
		}
		v := 0
		for _, c := range g {
			if !isDigit(c) {
				return invalid
			}
			v = v*10 + int(c-'0')
		}
		if v > 255 {
			return invalid
		}
		if end == len(s) {
			return verdictOf(groups == 4)
		}
		s = s[end+1:]
	}
}

// uriVerdict decides the validator's uri check (net/url.Parse succeeds,
// the host is not a bad IPv6 literal, the URL is absolute) for the URIs
// it can decide without net/url: a scheme, and then printable ASCII with
// well-formed %-escapes, an authority (if any) being a plain host name
// with an optional port. A string without a scheme is never absolute.
// Anything else (user info, IP literals, spaces, non-ASCII…) is left to
// the validator.
func uriVerdict(s []byte) verdict {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		case isDigit(c) || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return invalid // no scheme: relative
			}
		case c == ':':
			if i == 0 {
				return invalid // missing scheme
			}
			goto scheme
		default:
			return invalid // no scheme: relative
		}
	}
	return invalid // no scheme: relative
scheme:
	for j := 0; j < len(s); j++ {
		if c := s[j]; !uriChar[c] {
			return unsure
		} else if c == '%' && (j+2 >= len(s) || !isHex(s[j+1]) || !isHex(s[j+2])) {
			return unsure
		}
	}
	rest := s[i+1:]
	for j, c := range rest {
		if c == '#' || c == '?' {
			rest = rest[:j]
			break
		}
	}
	if len(rest) >= 2 && rest[0] == '/' && rest[1] == '/' {
		auth := rest[2:]
		for j, c := range auth {
			if c == '/' {
				auth = auth[:j]
				break
			}
		}
		j := 0
		for j < len(auth) && hostChar[auth[j]] {
			j++
		}
		if j < len(auth) {
			if auth[j] != ':' {
				return unsure
			}
			for j++; j < len(auth); j++ {
				if !isDigit(auth[j]) {
					return unsure
				}
			}
		}
	}
	return valid
}

// uriChar holds the bytes uriVerdict decides on: printable ASCII but
// space and "<>\^`{|}.
var uriChar = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`"<>\^`+"`"+`{|}`, rune(c))
	}
	return t
}()

// hostChar holds the bytes of a plain host name: letters, digits and
// "-._~".
var hostChar = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = isAlnum(byte(c)) || strings.IndexByte("-._~", byte(c)) >= 0
	}
	return t
}()
