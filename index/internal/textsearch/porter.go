package textsearch

// The Porter stemmer (M. F. Porter, 1980, in the form of its reference
// implementation), as SQLite's FTS5 "porter" tokenizer applies it: tokens
// shorter than 3 bytes or longer than 64 are left alone, and every byte that
// is not a, e, i, o or u (or a y after a consonant) counts as a consonant.
// The in-memory text index stems with it so that its words are the ones
// FTS5 indexes; a test of the index package (TestTextIndexMatchesFTS5)
// checks the two agree on the evaluation catalogues.

const (
	porterMinLen = 3
	porterMaxLen = 64
)

// porterStem returns the stem of a lower-case token.
func porterStem(w string) string {
	if len(w) < porterMinLen || len(w) > porterMaxLen {
		return w
	}
	b := []byte(w)
	b = porterStep1ab(b)
	b = porterStep1c(b)
	b = porterStep2(b)
	b = porterStep3(b)
	b = porterStep4(b)
	b = porterStep5(b)
	return string(b)
}

// isCons reports whether b[i] is a consonant.
func isCons(b []byte, i int) bool {
	switch b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !isCons(b, i-1)
	}
	return true
}

// measure is m, the number of vowel-consonant sequences of b.
func measure(b []byte) int {
	n, i := 0, 0
	for i < len(b) && isCons(b, i) {
		i++
	}
	for i < len(b) {
		for i < len(b) && !isCons(b, i) {
			i++
		}
		if i >= len(b) {
			break
		}
		for i < len(b) && isCons(b, i) {
			i++
		}
		n++
	}
	return n
}

func hasVowel(b []byte) bool {
	for i := range b {
		if !isCons(b, i) {
			return true
		}
	}
	return false
}

// endsDoubleCons reports whether b ends with two equal consonants.
func endsDoubleCons(b []byte) bool {
	n := len(b)
	return n >= 2 && b[n-1] == b[n-2] && isCons(b, n-1)
}

// endsCVC reports whether b ends consonant-vowel-consonant, the last not w,
// x or y.
func endsCVC(b []byte) bool {
	n := len(b)
	if n < 3 || !isCons(b, n-3) || isCons(b, n-2) || !isCons(b, n-1) {
		return false
	}
	switch b[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

func hasSuffix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[len(b)-len(s):]) == s
}

// replaceIf replaces suffix s by r when the stem before s has measure > m.
// It reports whether b ended with s (replaced or not).
func replaceIf(b *[]byte, s, r string, m int) bool {
	if !hasSuffix(*b, s) {
		return false
	}
	stem := (*b)[:len(*b)-len(s)]
	if measure(stem) > m {
		*b = append(stem, r...)
	}
	return true
}

func porterStep1ab(b []byte) []byte {
	switch {
	case hasSuffix(b, "sses"), hasSuffix(b, "ies"):
		b = b[:len(b)-2]
	case hasSuffix(b, "ss"):
	case hasSuffix(b, "s"):
		b = b[:len(b)-1]
	}
	if hasSuffix(b, "eed") {
		if measure(b[:len(b)-3]) > 0 {
			b = b[:len(b)-1]
		}
		return b
	}
	var stem []byte
	switch {
	case hasSuffix(b, "ed") && hasVowel(b[:len(b)-2]):
		stem = b[:len(b)-2]
	case hasSuffix(b, "ing") && hasVowel(b[:len(b)-3]):
		stem = b[:len(b)-3]
	default:
		return b
	}
	b = stem
	switch {
	case hasSuffix(b, "at"), hasSuffix(b, "bl"), hasSuffix(b, "iz"):
		b = append(b, 'e')
	case endsDoubleCons(b):
		switch b[len(b)-1] {
		case 'l', 's', 'z':
		default:
			b = b[:len(b)-1]
		}
	case measure(b) == 1 && endsCVC(b):
		b = append(b, 'e')
	}
	return b
}

func porterStep1c(b []byte) []byte {
	if hasSuffix(b, "y") && hasVowel(b[:len(b)-1]) {
		b[len(b)-1] = 'i'
	}
	return b
}

var porterStep2Rules = [][2]string{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"},
	{"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

var porterStep3Rules = [][2]string{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

var porterStep4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou",
	"ism", "ate", "iti", "ous", "ive", "ize",
}

// applyRules applies the first rule whose suffix b ends with, if the stem's
// measure exceeds 0. Rules are tried longest match first where suffixes
// overlap ("ational" before "tional" is the table's order).
func applyRules(b []byte, rules [][2]string) []byte {
	best := -1
	for i, r := range rules {
		if hasSuffix(b, r[0]) && (best < 0 || len(r[0]) > len(rules[best][0])) {
			best = i
		}
	}
	if best >= 0 {
		replaceIf(&b, rules[best][0], rules[best][1], 0)
	}
	return b
}

func porterStep2(b []byte) []byte { return applyRules(b, porterStep2Rules) }

func porterStep3(b []byte) []byte { return applyRules(b, porterStep3Rules) }

func porterStep4(b []byte) []byte {
	best := ""
	for _, s := range porterStep4Suffixes {
		if hasSuffix(b, s) && len(s) > len(best) {
			best = s
		}
	}
	if best == "" {
		return b
	}
	stem := b[:len(b)-len(best)]
	if measure(stem) <= 1 {
		return b
	}
	if best == "ion" && (len(stem) == 0 || (stem[len(stem)-1] != 's' && stem[len(stem)-1] != 't')) {
		return b
	}
	return stem
}

func porterStep5(b []byte) []byte {
	if hasSuffix(b, "e") {
		stem := b[:len(b)-1]
		if m := measure(stem); m > 1 || (m == 1 && !endsCVC(stem)) {
			b = stem
		}
	}
	if measure(b) > 1 && endsDoubleCons(b) && b[len(b)-1] == 'l' {
		b = b[:len(b)-1]
	}
	return b
}
