// Package redact cleans the text the index hands to a model: Text
// replaces personal data and credentials with placeholders, and ToolRefs
// rewrites references to tools the caller may not see. It is internal to
// the index, which applies both to every skill text it returns (and
// exports them as index.Redact and index.ToolRefRewriter).
package redact

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Placeholders written in place of redacted text. None of them can match
// a redaction rule, so redacting twice gives the same text as once.
const (
	redactedEmail = "[REDACTED_EMAIL]"
	redactedPhone = "[REDACTED_PHONE]"
	redactedToken = "[REDACTED_TOKEN]"
)

// redactMaxPasses bounds the fixpoint loop in Text. A pass that changes
// nothing ends the loop; in practice the second pass never changes anything.
const redactMaxPasses = 6

var (
	// urlRe finds absolute URLs; trailing sentence punctuation is trimmed
	// from each match before it is looked at.
	urlRe = regexp.MustCompile(`(?i)\b(?:https?|wss?|ftp)://[^\s<>"'\x60]+`)

	// emailRe is the email rule; the fuzz test checks redacted output
	// against it.
	emailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)

	// privateKeyRe finds PEM private key blocks.
	privateKeyRe = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`)

	// tokenFormatRes are credential formats recognisable on their own.
	tokenFormatRes = []*regexp.Regexp{
		regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`),                                      // OpenAI, Anthropic style
		regexp.MustCompile(`\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}`),                      // Stripe
		regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`),                                 // GitHub tokens
		regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`),                               // GitHub fine-grained
		regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`),                                   // GitLab
		regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),                                // AWS access key IDs
		regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{8,}|\bxapp-\d-[A-Za-z0-9-]{8,}`),   // Slack
		regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`),                                      // Google API keys
		regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}`), // JWTs
	}

	// authHeaderRe finds "Authorization: <scheme> <credential>" and
	// "Authorization=<credential>"; group 1 is kept, group 2 is the
	// optional scheme, group 3 the credential.
	authHeaderRe = regexp.MustCompile(`(?i)\b(authorization["']?\s*[:=]\s*["']?)(?:(bearer|basic|token|digest)\s+)?([A-Za-z0-9._~+/=-]+)`)

	// bearerRe finds "Bearer <credential>" anywhere; group 1 is the word
	// "Bearer" as written, group 2 the credential.
	bearerRe = regexp.MustCompile(`(?i)\b(bearer)\s+([A-Za-z0-9._~+/=-]+)`)

	// Phone number candidates; each match is then checked for digit count
	// and for the characters around it (see phoneRules).
	phoneIntlRe     = regexp.MustCompile(`\+\d{1,3}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{1,5}){1,6}`)
	phoneNANPRe     = regexp.MustCompile(`(?:\b1[ .-]?)?(?:\(\d{3}\) ?|\d{3}([ .-]))\d{3}[ .-]\d{4}`)
	phoneNationalRe = regexp.MustCompile(`\b0\d{1,4}(?:[ -]\d{2,8}){1,4}`)
)

// Text returns text with personal data and credentials replaced by
// placeholders: email addresses by [REDACTED_EMAIL], phone numbers by
// [REDACTED_PHONE], bearer tokens, API keys and secret-named values by
// [REDACTED_TOKEN], and it strips the query (and fragment) of URLs that
// carry user, session or credential parameters. The rules are conservative
// so that procedural text keeps its structure: dates, versions, ports,
// years and plain numbers are left alone. Text is idempotent and safe
// for any input.
func Text(text string) string {
	for range redactMaxPasses {
		next := redactPass(text)
		if next == text {
			break
		}
		text = next
	}
	return text
}

// redactPass applies every rule once, URLs first so that an email or a
// token inside a query string goes with the query.
//
// Go's regexp package has no DFA: a pattern without a literal prefix runs
// at a few MB/s over long text. So every rule but the PEM one (which has a
// literal prefix) runs only on short windows of the text around a literal
// it cannot match without ("://", "@", "bearer", a key name, a token
// prefix) or, for phone numbers, around runs of eight or more digits. Each
// window reaches as far as a match could, plus the bytes the rule's
// boundary checks look at, so the outcome is that of running the pattern
// over the whole text.
func redactPass(s string) string {
	if s == "" {
		return s
	}
	for i := range redactRules {
		r := &redactRules[i]
		if w := r.windows(s); len(w) > 0 {
			s = replaceWindows(s, w, r.apply)
		}
	}
	s = redactSecrets(s)
	if strings.Contains(s, "PRIVATE KEY-----") {
		s = privateKeyRe.ReplaceAllString(s, redactedToken)
	}
	if w := phoneWindows(s); len(w) > 0 {
		s = replaceWindows(s, w, redactPhones)
	}
	return s
}

// redactRule is one redaction rule and the windows it runs in.
type redactRule struct {
	// anchors are literals a match must contain; fold matches them
	// ignoring ASCII case.
	anchors []string
	fold    bool
	// left and right say which bytes a match may hold before and after
	// an anchor; span takes that many bytes after it and then runs to the
	// next space.
	left, right func(c byte) bool
	span        int
	// apply rewrites one window.
	apply func(w string) string
}

func (r *redactRule) windows(s string) [][2]int {
	hay := s
	if r.fold {
		hay = lowerASCII(s)
	}
	var wins [][2]int
	for _, a := range r.anchors {
		for from := 0; from < len(hay); {
			i := strings.Index(hay[from:], a)
			if i < 0 {
				break
			}
			i += from
			from = i + len(a)
			start, end := i, i+len(a)
			for r.left != nil && start > 0 && r.left(s[start-1]) {
				start--
			}
			if r.span > 0 {
				end = min(len(s), end+r.span)
				for end < len(s) && !isSpaceByte(s[end]) {
					end++
				}
			}
			for r.right != nil && end < len(s) && r.right(s[end]) {
				end++
			}
			// One byte of context on each side for \b and the like.
			wins = append(wins, [2]int{max(0, start-1), min(len(s), end+1)})
		}
	}
	return mergeWindows(wins)
}

// mergeWindows sorts windows and joins those that overlap or touch.
func mergeWindows(wins [][2]int) [][2]int {
	if len(wins) < 2 {
		return wins
	}
	slices.SortFunc(wins, func(a, b [2]int) int { return a[0] - b[0] })
	out := wins[:1]
	for _, w := range wins[1:] {
		last := &out[len(out)-1]
		if w[0] <= last[1] {
			last[1] = max(last[1], w[1])
			continue
		}
		out = append(out, w)
	}
	return out
}

// replaceWindows rewrites each window of s with fn.
func replaceWindows(s string, wins [][2]int, fn func(string) string) string {
	var b strings.Builder
	last := 0
	changed := false
	for _, w := range wins {
		in := s[w[0]:w[1]]
		out := fn(in)
		if out == in {
			continue
		}
		if !changed {
			b.Grow(len(s))
			changed = true
		}
		b.WriteString(s[last:w[0]])
		b.WriteString(out)
		last = w[1]
	}
	if !changed {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// phoneWindows returns the runs of digits and phone punctuation holding at
// least eight digits, with two bytes of context on each side for the
// boundary checks of redactPhones.
func phoneWindows(s string) [][2]int {
	var wins [][2]int
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		start, digits := i, 0
		for start > 0 && strings.IndexByte(" ().+-", s[start-1]) >= 0 {
			start--
		}
		j := start
		for j < len(s) && (isDigit(s[j]) || strings.IndexByte(" ().+-", s[j]) >= 0) {
			if isDigit(s[j]) {
				digits++
			}
			j++
		}
		if digits >= 8 {
			wins = append(wins, [2]int{max(0, start-2), min(len(s), j+2)})
		}
		i = j
	}
	return mergeWindows(wins)
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isKeyByte reports bytes of a secret's key name.
func isKeyByte(c byte) bool { return isWordByte(c) || c == '.' || c == '-' }

// isTokenByte reports bytes of a credential in a known format.
func isTokenByte(c byte) bool { return isWordByte(c) || c == '.' || c == '-' }

// isURLByte reports bytes urlRe accepts inside a URL.
func isURLByte(c byte) bool { return !isSpaceByte(c) && strings.IndexByte("<>\"'`", c) < 0 }

func isEmailLocalByte(c byte) bool { return isWordByte(c) || strings.IndexByte(".%+-", c) >= 0 }

func isEmailDomainByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '.' || c == '-' }

// redactRules are the window rules in the order redactPass applies them.
var redactRules = []redactRule{
	{anchors: []string{"://"}, left: isLetter, right: isURLByte, apply: func(w string) string {
		return urlRe.ReplaceAllStringFunc(w, redactURL)
	}},
	{anchors: []string{"authorization"}, fold: true, span: 48, apply: func(w string) string {
		return replaceSubmatches(w, authHeaderRe, redactAuthHeader)
	}},
	{anchors: []string{"bearer"}, fold: true, span: 16, apply: func(w string) string {
		return replaceSubmatches(w, bearerRe, func(m []string) string {
			if !looksSecret(m[2], true) {
				return m[0]
			}
			return m[1] + " " + redactedToken
		})
	}},
	tokenRule(0, "sk-"),
	tokenRule(1, "k_live_", "k_test_"),
	tokenRule(2, "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
	tokenRule(3, "github_pat_"),
	tokenRule(4, "glpat-"),
	tokenRule(5, "AKIA", "ASIA"),
	tokenRule(6, "xox", "xapp-"),
	tokenRule(7, "AIza"),
	tokenRule(8, "eyJ"),
	{anchors: []string{"@"}, left: isEmailLocalByte, right: isEmailDomainByte, apply: redactEmails},
}

// tokenRule runs tokenFormatRes[i] near its literal prefixes.
func tokenRule(i int, anchors ...string) redactRule {
	re := tokenFormatRes[i]
	return redactRule{anchors: anchors, left: isWordByte, right: isTokenByte, apply: func(w string) string {
		return re.ReplaceAllString(w, redactedToken)
	}}
}

// redactEmails replaces the e-mail addresses in s, leaving the shapes
// that only look like one (see notEmail).
func redactEmails(s string) string {
	idx := emailRe.FindAllStringIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		if notEmail(s, m[0], m[1]) {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(redactedEmail)
		last = m[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// fileSuffixes are file extensions that no top-level domain shares: an
// "address" ending in one is a file name (logo@2x.png).
var fileSuffixes = map[string]bool{
	"png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true, "webp": true, "avif": true,
	"bmp": true, "tif": true, "tiff": true, "pdf": true, "json": true, "yaml": true, "yml": true,
	"js": true, "css": true, "txt": true, "html": true, "htm": true,
}

// notEmail reports whether the emailRe match s[start:end] is something
// procedural text needs as written rather than a person's address: a
// git remote in scp form (git@github.com:org/repo.git), whose user is the
// service's, or a file name with a pixel-density suffix or a file
// extension (icon@2x.png, logo@3x.webp).
func notEmail(s string, start, end int) bool {
	m := s[start:end]
	at := strings.IndexByte(m, '@')
	local, domain := m[:at], m[at+1:]
	if local == "git" && end < len(s) && s[end] == ':' {
		return true
	}
	first, _, _ := strings.Cut(domain, ".")
	if len(first) == 2 && first[0] >= '1' && first[0] <= '9' && (first[1] == 'x' || first[1] == 'X') {
		return true
	}
	return fileSuffixes[strings.ToLower(domain[strings.LastIndexByte(domain, '.')+1:])]
}

func redactAuthHeader(m []string) string {
	scheme, cred := m[2], m[3]
	if scheme == "" && !looksSecret(cred, false) {
		return m[0]
	}
	if isPlaceholder(cred) || len(cred) < 6 {
		return m[0]
	}
	if scheme != "" {
		return m[1] + scheme + " " + redactedToken
	}
	return m[1] + redactedToken
}

// secretKeySuffixes end the key names whose values redactSecrets hides,
// with '-' and '_' removed and lowercased.
var keyFolder = strings.NewReplacer("-", "", "_", "")

var secretKeySuffixes = []string{
	"apikey", "accesskey", "secretkey", "privatekey", "clientsecret", "secret", "token",
	"password", "passwd", "pwd", "passphrase", "credential", "credentials",
	"sessionid", "sessid",
}

// secretKeyNames are whole key names (folded like the suffixes) that name a
// secret but are too short to look for at the end of other names.
var secretKeyNames = map[string]bool{"sid": true}

// isSecretKey reports whether a key name ends in a secret's name, ignoring
// case, '-' and '_' (MY_API_KEY, clientSecret, x-auth-token, JSESSIONID),
// or is one of secretKeyNames.
func isSecretKey(key string) bool {
	k := strings.ToLower(keyFolder.Replace(key))
	if secretKeyNames[k] {
		return true
	}
	for _, suf := range secretKeySuffixes {
		if strings.HasSuffix(k, suf) {
			return true
		}
	}
	return false
}

// redactSecrets hides the values of key=value and key: value pairs whose
// key names a secret (api_key=…, GITHUB_TOKEN=…, "client_secret": "…",
// password: …). After '=' or inside quotes any value of four characters or
// more goes; after a bare ':' (which prose uses too: "Token: see below")
// only a value that looks like a credential does. Placeholders such as
// <YOUR_KEY>, ${TOKEN} or *** stay.
func redactSecrets(s string) string {
	var b strings.Builder
	last := 0
	for from := 0; from < len(s); {
		i := strings.IndexAny(s[from:], ":=")
		if i < 0 {
			break
		}
		p := from + i
		from = p + 1
		sep := s[p]
		// Backwards: optional spaces, an optional quote, the key.
		ke := p
		for ke > last && isSpaceByte(s[ke-1]) {
			ke--
		}
		if ke > last && (s[ke-1] == '"' || s[ke-1] == '\'') {
			ke--
		}
		ks := ke
		for ks > last && isKeyByte(s[ks-1]) {
			ks--
		}
		if ks == ke || !isSecretKey(s[ks:ke]) {
			continue
		}
		// Forwards: optional spaces, an optional quote, the value.
		vs := p + 1
		for vs < len(s) && isSpaceByte(s[vs]) {
			vs++
		}
		quoted := vs < len(s) && (s[vs] == '"' || s[vs] == '\'')
		if quoted {
			vs++
		}
		ve := vs
		for ve < len(s) && !isSpaceByte(s[ve]) && strings.IndexByte("\"'&,;", s[ve]) < 0 {
			ve++
		}
		value := s[vs:ve]
		if value == "" || isPlaceholder(value) {
			continue
		}
		if sep == ':' && !quoted {
			if !looksSecret(value, false) {
				continue
			}
		} else if len(value) < 4 {
			continue
		}
		b.WriteString(s[last:vs])
		b.WriteString(redactedToken)
		last = ve
		from = ve
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// replaceSubmatches is regexp.ReplaceAllStringFunc with the submatches
// handed to fn.
func replaceSubmatches(s string, re *regexp.Regexp, fn func(m []string) string) string {
	idx := re.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, loc := range idx {
		m := make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = s[loc[2*i]:loc[2*i+1]]
			}
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(fn(m))
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// isPlaceholder reports whether a secret's value is a stand-in rather
// than a secret: a template variable, an angle-bracket hint, a mask or an
// earlier redaction.
func isPlaceholder(v string) bool {
	if v == "" {
		return true
	}
	switch v[0] {
	case '<', '$', '{', '[', '*', '%', '(':
		return true
	}
	switch strings.ToLower(strings.TrimRight(v, ".")) {
	case "null", "none", "nil", "true", "false", "redacted", "xxx", "xxxx", "xxxxxx", "changeme", "example", "required", "optional", "string":
		return true
	}
	return false
}

// looksSecret reports whether v, seen after a word that only sometimes
// introduces a credential ("Bearer", "token:"), looks like a credential
// rather than an ordinary word: at least 8 characters with a letter and a
// digit or symbol, or 32 characters or more without spaces. In bearer
// mode the URL-safe punctuation of tokens (. _ ~ + / = -) counts as a
// symbol.
func looksSecret(v string, bearer bool) bool {
	if len(v) >= 32 {
		return true
	}
	if len(v) < 8 {
		return false
	}
	var letter, digit, symbol bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9':
			digit = true
		case strings.IndexByte("+/=~!@#%^&*", c) >= 0:
			symbol = true
		case bearer && strings.IndexByte("._-", c) >= 0:
			symbol = true
		}
	}
	return letter && (digit || symbol)
}

// sensitiveParamExact are query parameter names (lowercased, with - and _
// removed) that identify a user, a session or a credential.
var sensitiveParamExact = map[string]bool{
	"sid": true, "uid": true, "pwd": true, "pw": true, "sig": true, "code": true,
	"state": true, "key": true, "auth": true, "pass": true, "otp": true, "jwt": true,
	"name": true, "phone": true, "login": true, "acct": true, "account": true,
	"ticket": true, "nonce": true, "id": true, "mail": true, "tel": true,
}

// sensitiveParamParts are substrings that make a parameter name sensitive.
var sensitiveParamParts = []string{
	"token", "secret", "password", "passwd", "session", "user", "email",
	"signature", "credential", "apikey", "accesskey", "auth", "customer",
	"member", "phone", "address",
}

// paramNameFolder removes the punctuation that varies between spellings
// of one parameter name (session_id, session-id, sessionId).
var paramNameFolder = strings.NewReplacer("-", "", "_", "", ".", "", "[", "", "]", "")

// sensitiveParam reports whether a query parameter name carries
// user-specific or credential data.
func sensitiveParam(name string) bool {
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	k := strings.ToLower(name)
	k = paramNameFolder.Replace(k)
	if sensitiveParamExact[k] {
		return true
	}
	for _, p := range sensitiveParamParts {
		if strings.Contains(k, p) {
			return true
		}
	}
	return false
}

// sensitiveParams reports whether a query or fragment string holds a
// sensitive parameter name, an email address, or a value that looks like a
// credential.
func sensitiveParams(q string) bool {
	for _, part := range strings.FieldsFunc(q, func(r rune) bool { return r == '&' || r == ';' }) {
		name, value, hasValue := strings.Cut(part, "=")
		if hasValue && sensitiveParam(name) {
			return true
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		if strings.Contains(value, "@") || (len(value) >= 20 && looksSecret(value, true)) {
			return true
		}
	}
	return false
}

// redactURL strips the query of a URL when it carries user-specific
// parameters, the fragment when it does, and credentials in the userinfo.
// Trailing sentence punctuation is kept outside the URL.
func redactURL(raw string) string {
	u := strings.TrimRight(raw, ".,;:!?)]}'\"")
	tail := raw[len(u):]

	scheme, rest, _ := strings.Cut(u, "://")
	// Userinfo with a password: everything before the host's '@'.
	authority := rest
	if i := strings.IndexAny(authority, "/?#"); i >= 0 {
		authority = authority[:i]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo := authority[:at]
		if strings.Contains(userinfo, ":") && !isPlaceholder(userinfo) {
			rest = redactedToken + rest[at:]
		}
	}

	base, frag, hasFrag := strings.Cut(rest, "#")
	path, query, hasQuery := strings.Cut(base, "?")
	if hasQuery && sensitiveParams(query) {
		hasQuery, query = false, ""
	}
	if hasFrag && strings.Contains(frag, "=") && sensitiveParams(frag) {
		hasFrag, frag = false, ""
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(path)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(query)
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(frag)
	}
	b.WriteString(tail)
	return b.String()
}

// redactPhones replaces phone numbers in international (+44 20 7946 0958),
// North American ((555) 123-4567, 555-123-4567, 1-800-555-0199) and trunk-prefixed
// national (020 7946 0958, 06 12 34 56 78) forms. A candidate must have a
// plausible number of digits and must not be glued to letters, digits or
// version/date punctuation, which keeps dates, versions, IP addresses,
// ports and plain numbers out.
func redactPhones(s string) string {
	s = replacePhone(s, phoneIntlRe, 8, 15, func(s string, at int) bool {
		return at == 0 || !isWordByte(s[at-1])
	})
	s = replacePhone(s, phoneNANPRe, 10, 11, okPhoneBefore)
	s = replacePhone(s, phoneNationalRe, 9, 12, okPhoneBefore)
	return s
}

// okPhoneBefore reports whether the byte before a national-form candidate
// allows a phone number to start there.
func okPhoneBefore(s string, at int) bool {
	if at == 0 {
		return true
	}
	c := s[at-1]
	return !isWordByte(c) && strings.IndexByte(".-/+:", c) < 0 || c == ':' && (at < 2 || !isDigit(s[at-2]))
}

func replacePhone(s string, re *regexp.Regexp, minDigits, maxDigits int, before func(s string, at int) bool) string {
	idx := re.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range idx {
		start, end := loc[0], loc[1]
		cand := s[start:end]
		digits := 0
		for i := 0; i < len(cand); i++ {
			if isDigit(cand[i]) {
				digits++
			}
		}
		ok := digits >= minDigits && digits <= maxDigits && before(s, start) && okPhoneAfter(s, end)
		if ok && len(loc) >= 4 && loc[2] >= 0 {
			// North American form: both separators must agree.
			sep := s[loc[2]:loc[3]]
			if s[end-5:end-4] != sep {
				ok = false
			}
		}
		if !ok {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(redactedPhone)
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// okPhoneAfter reports whether the text after a candidate ends a phone
// number: not a word character, and not a '.', '-' or '/' that continues
// a version, date or address.
func okPhoneAfter(s string, end int) bool {
	if end >= len(s) {
		return true
	}
	c := s[end]
	if isWordByte(c) {
		return false
	}
	if strings.IndexByte(".-/:", c) >= 0 && end+1 < len(s) && isDigit(s[end+1]) {
		return false
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool {
	return c == '_' || isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// ToolGuidance replaces a reference to a tool the run cannot see (and
// toolGuidanceNoSearch when tool_search is itself such a tool). It names
// no tool, so it says nothing about which tools exist.
const (
	ToolGuidance         = "a suitable tool (find one with tool_search)"
	toolGuidanceNoSearch = "a suitable tool"
)

var (
	// backtickSpanRe finds inline code spans on one line.
	backtickSpanRe = regexp.MustCompile("`[^`\n]+`")
	// identRunRe finds runs of identifier characters, which may hold a
	// bare tool name such as web_search or github.list_issues.
	identRunRe = regexp.MustCompile(`[A-Za-z0-9_.\-]+`)
)

// ToolRefs rewrites references to tools a run cannot see. It is built
// once per request from the names of all known tools and the run's
// visibility test, and is safe for concurrent use once built.
type ToolRefs struct {
	// denied holds lowercased names of known tools the run cannot see.
	denied []string
	// guidance is the text that replaces a reference.
	guidance string
}

// NewToolRefs returns a rewriter for the known tool names that visible
// rejects, or nil when visible is nil or no known tool is hidden (nil
// rewrites nothing).
func NewToolRefs(visible func(name string) bool, known []string) *ToolRefs {
	if visible == nil {
		return nil
	}
	seen := make(map[string]bool, len(known))
	t := &ToolRefs{guidance: ToolGuidance}
	for _, name := range known {
		name = strings.TrimSpace(name)
		low := lowerASCII(name)
		if name == "" || seen[low] {
			continue
		}
		seen[low] = true
		if !visible(name) {
			t.denied = append(t.denied, low)
			if strings.Contains(ToolGuidance, low) {
				t.guidance = toolGuidanceNoSearch
			}
		}
	}
	if len(t.denied) == 0 {
		return nil
	}
	return t
}

// hasSeparator reports whether a name holds '_', '.' or '-', which sets a
// tool name apart from an ordinary word.
func hasSeparator(s string) bool { return strings.ContainsAny(s, "_.-") }

// mentions reports whether token refers to a denied tool. A denied name
// with a separator ('_', '.', '-') is distinctive: any token holding it
// refers to it. A name without one ("fetch") is an ordinary word in
// running text, so it counts only as a whole identifier inside a code span
// or inside a token that has separators itself (fetch.url).
func (t *ToolRefs) mentions(token string, code bool) bool {
	low := lowerASCII(token)
	for _, d := range t.denied {
		if hasSeparator(d) {
			if strings.Contains(low, d) {
				return true
			}
			continue
		}
		if !code && !hasSeparator(low) {
			continue
		}
		for from := 0; ; {
			i := strings.Index(low[from:], d)
			if i < 0 {
				break
			}
			i += from
			j := i + len(d)
			if (i == 0 || !isWordByte(low[i-1])) && (j == len(low) || !isWordByte(low[j])) {
				return true
			}
			from = i + 1
		}
	}
	return false
}

// Rewrite returns s with every reference to a denied tool replaced by
// generic guidance: a code span that mentions one is replaced whole, and
// so is a bare identifier that holds one.
func (t *ToolRefs) Rewrite(s string) string {
	if t == nil || s == "" {
		return s
	}
	s = backtickSpanRe.ReplaceAllStringFunc(s, func(span string) string {
		inner := span[1 : len(span)-1]
		for _, tok := range identRunRe.FindAllString(inner, -1) {
			if t.mentions(strings.Trim(tok, ".-"), true) {
				return t.guidance
			}
		}
		return span
	})
	s = identRunRe.ReplaceAllStringFunc(s, func(run string) string {
		tok := strings.TrimRight(run, ".-")
		if tok == "" || !t.mentions(tok, false) {
			return run
		}
		return t.guidance + run[len(tok):]
	})
	// Names with characters no identifier run holds (server/tool,
	// ns:tool) are replaced wherever they occur.
	for _, d := range t.denied {
		if strings.IndexFunc(d, func(r rune) bool { return r >= 0x80 || !isKeyByte(byte(r)) }) >= 0 {
			s = replaceFold(s, d, t.guidance)
		}
	}
	return s
}

// replaceFold replaces every occurrence of old (lowercase ASCII or not)
// in s, ignoring ASCII case, with repl.
func replaceFold(s, old, repl string) string {
	low := lowerASCII(s)
	if !strings.Contains(low, old) {
		return s
	}
	var b strings.Builder
	last := 0
	for from := 0; ; {
		i := strings.Index(low[from:], old)
		if i < 0 {
			break
		}
		i += from
		b.WriteString(s[last:i])
		b.WriteString(repl)
		last = i + len(old)
		from = last
	}
	b.WriteString(s[last:])
	return b.String()
}
