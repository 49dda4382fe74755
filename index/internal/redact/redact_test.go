package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// Emails.
		{"email", "Write to jane.doe+ops@example.co.uk for access.", "Write to [REDACTED_EMAIL] for access."},
		{"two emails", "a@b.io, c_d@e-f.org", "[REDACTED_EMAIL], [REDACTED_EMAIL]"},
		{"not an email", "use @mentions and user@localhost", "use @mentions and user@localhost"},
		{"mailto", "mailto:john@example.com", "mailto:[REDACTED_EMAIL]"},
		{"retina file", "use logo@2x.png and icon@3X.webp", "use logo@2x.png and icon@3X.webp"},
		{"file name", "save chart@home.svg", "save chart@home.svg"},
		{"git remote", "git clone git@github.com:org/repo.git", "git clone git@github.com:org/repo.git"},
		{"git user address", "mail git@example.com about it", "mail [REDACTED_EMAIL] about it"},
		{"scoped package", "npm i @scope/pkg@1.2.3", "npm i @scope/pkg@1.2.3"},

		// Phones that must go.
		{"intl spaced", "Call +44 20 7946 0958 now", "Call [REDACTED_PHONE] now"},
		{"intl compact", "sms +14155552671.", "sms [REDACTED_PHONE]."},
		{"intl trunk", "Tel: +49 (0)30 123456", "Tel: [REDACTED_PHONE]"},
		{"intl french", "+33 1 23 45 67 89", "[REDACTED_PHONE]"},
		{"nanp dashes", "phone 555-123-4567.", "phone [REDACTED_PHONE]."},
		{"nanp parens", "(555) 123-4567", "[REDACTED_PHONE]"},
		{"nanp dots", "555.123.4567", "[REDACTED_PHONE]"},
		{"nanp colon", "Phone:555-123-4567", "Phone:[REDACTED_PHONE]"},
		{"national uk", "ring 020 7946 0958 today", "ring [REDACTED_PHONE] today"},
		{"national fr", "06 12 34 56 78", "[REDACTED_PHONE]"},
		{"national de", "030-1234567", "[REDACTED_PHONE]"},
		{"nanp country code", "call 1-800-555-0199 or 1 (800) 555-0199", "call [REDACTED_PHONE] or [REDACTED_PHONE]"},
		{"intl nanp", "+1-555-123-4567", "[REDACTED_PHONE]"},
		{"tel uri", "tel:+15551234567", "tel:[REDACTED_PHONE]"},

		// Numbers that must stay.
		{"iso date", "on 2024-01-15 at 10:30", "on 2024-01-15 at 10:30"},
		{"dotted date", "15.01.2024 and 01-02-2024 and 01/02/2024", "15.01.2024 and 01-02-2024 and 01/02/2024"},
		{"version", "requires v1.12.0 or 10.0.19041.1", "requires v1.12.0 or 10.0.19041.1"},
		{"ip", "connect to 192.168.100.200:8080", "connect to 192.168.100.200:8080"},
		{"port", "listen on :8080, or port 443", "listen on :8080, or port 443"},
		{"year", "since 2019, in 2024", "since 2019, in 2024"},
		{"plain id", "order 1234567890 shipped", "order 1234567890 shipped"},
		{"long dotted", "1.555.123.4567.8", "1.555.123.4567.8"},
		{"mixed seps", "555-123 4567", "555-123 4567"},
		{"sum", "x+12345678", "x+12345678"},
		{"time", "between 09:30:00 and 17 30 00", "between 09:30:00 and 17 30 00"},
		{"uuid", "id 123e4567-e89b-12d3-a456-426614174000", "id 123e4567-e89b-12d3-a456-426614174000"},
		{"iso times", "at 2024-01-15T10:30:00Z or 2024-01-15T10:30:00+02:00", "at 2024-01-15T10:30:00Z or 2024-01-15T10:30:00+02:00"},
		{"log time", "2024-01-15 10:30:00.123456", "2024-01-15 10:30:00.123456"},
		{"git hash", "commit 3f2a1c9b8e7d6c5b4a3928170615243342516070", "commit 3f2a1c9b8e7d6c5b4a3928170615243342516070"},
		{"digit hash", "md5 12345678901234567890123456789012", "md5 12345678901234567890123456789012"},
		{"digest", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
		{"semver build", "v1.2.3-rc.1+20240115 and 1.0.0+build.5", "v1.2.3-rc.1+20240115 and 1.0.0+build.5"},
		{"epoch", "at 1700000000 (ms 1700000000000)", "at 1700000000 (ms 1700000000000)"},
		{"dotted build", "build 20240115.1", "build 20240115.1"},
		{"isbn", "ISBN 978-3-16-148410-0", "ISBN 978-3-16-148410-0"},
		{"ipv6", "2001:db8::1 and 10.0.0.1", "2001:db8::1 and 10.0.0.1"},
		{"coordinates", "lat 48.8566, lon 2.3522", "lat 48.8566, lon 2.3522"},

		// Tokens.
		{"auth header", "Authorization: Bearer abc123.DEF-456_ghi", "Authorization: Bearer [REDACTED_TOKEN]"},
		{"auth basic", `"Authorization": "Basic dXNlcjpwYXNz"`, `"Authorization": "Basic [REDACTED_TOKEN]"`},
		{"auth no scheme", "Authorization=tok_9f8e7d6c5b", "Authorization=[REDACTED_TOKEN]"},
		{"auth placeholder", "Authorization: Bearer <token>", "Authorization: Bearer <token>"},
		{"bearer", "send bearer eyJhbGciOi.payload.sig", "send bearer [REDACTED_TOKEN]"},
		{"bearer prose", "Bearer authentication is used; bearer tokens expire", "Bearer authentication is used; bearer tokens expire"},
		{"openai key", "key sk-proj-abcdefghijklmnop1234", "key [REDACTED_TOKEN]"},
		{"anthropic key", "sk-ant-api03-AbCdEfGhIjKlMnOp", "[REDACTED_TOKEN]"},
		{"github", "ghp_0123456789abcdefghijABCDEFGHIJ012345", "[REDACTED_TOKEN]"},
		{"github pat", "github_pat_11ABCDEFG0123456789_abcdefghij", "[REDACTED_TOKEN]"},
		{"aws", "AKIAIOSFODNN7EXAMPLE is the id", "[REDACTED_TOKEN] is the id"},
		{"slack", "xoxb-123456789012-abcdefABCDEF", "[REDACTED_TOKEN]"},
		{"slack user", "xoxp-1234-5678-abcdef", "[REDACTED_TOKEN]"},
		{"slack app", "xapp-1-A0123-4567-abcdef0123456789", "[REDACTED_TOKEN]"},
		{"sk prose", "the sk-learn library and risk-assessment-framework-for-teams", "the sk-learn library and risk-assessment-framework-for-teams"},
		{"aws secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED_TOKEN]"},
		{"api key header", "X-Api-Key: 0123456789abcdef0123456789abcdef", "X-Api-Key: [REDACTED_TOKEN]"},
		{"session cookie", "Cookie: JSESSIONID=1a2b3c4d5e; sid=31d4d96e407aad42", "Cookie: JSESSIONID=[REDACTED_TOKEN]; sid=[REDACTED_TOKEN]"},
		{"sid prose", "consider=yes", "consider=yes"},
		{"stripe", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED_TOKEN]"},
		{"google", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED_TOKEN]"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "[REDACTED_TOKEN]"},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----", "[REDACTED_TOKEN]"},
		{"api_key=", "curl ...?x=1 with api_key=abcdef123456 set", "curl ...?x=1 with api_key=[REDACTED_TOKEN] set"},
		{"env token", "export GITHUB_TOKEN=foobar42", "export GITHUB_TOKEN=[REDACTED_TOKEN]"},
		{"password=", "password=hunter2 and pwd=s3cr3t", "password=[REDACTED_TOKEN] and pwd=[REDACTED_TOKEN]"},
		{"quoted json", `{"client_secret": "abcd-efgh"}`, `{"client_secret": "[REDACTED_TOKEN]"}`},
		{"yaml secret", "secret: Zx9!kLmn0pQ", "secret: [REDACTED_TOKEN]"},
		{"prose token colon", "Token: authentication happens first", "Token: authentication happens first"},
		{"placeholder", "api_key=<YOUR_KEY> or token=${TOKEN} or password=***", "api_key=<YOUR_KEY> or token=${TOKEN} or password=***"},
		{"short value", "token=abc", "token=abc"},
		{"word tokens", "tokenization of the input", "tokenization of the input"},

		// URLs.
		{"url session", "open https://app.example.com/inbox?session_id=abc123&page=2 then", "open https://app.example.com/inbox then"},
		{"url token frag", "https://example.com/cb#access_token=xyz&expires=3600", "https://example.com/cb"},
		{"url email value", "https://example.com/invite?to=bob%40example.com.", "https://example.com/invite."},
		{"url harmless", "see https://docs.example.com/api?page=2&sort=name#section", "see https://docs.example.com/api?page=2&sort=name#section"},
		{"url userinfo", "git clone https://bob:pa55w0rd@git.example.com/repo.git", "git clone https://[REDACTED_TOKEN]@git.example.com/repo.git"},
		{"url uid", "(https://x.io/u?uid=42)", "(https://x.io/u)"},
		{"url signed", "https://bucket.s3.amazonaws.com/f?X-Amz-Signature=abcdef&X-Amz-Expires=60", "https://bucket.s3.amazonaws.com/f"},

		// Structure kept.
		{"markdown", "1. Click **Sign in**\n2. Wait for `#dashboard`", "1. Click **Sign in**\n2. Wait for `#dashboard`"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Text(tt.in)
			if got != tt.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := Text(got); again != got {
				t.Errorf("Redact is not idempotent: %q → %q", got, again)
			}
		})
	}
}

func TestToolRedactor(t *testing.T) {
	known := []string{"web_search", "github.list_issues", "fetch", "read_file", "browser.click", "tool_search", "mcp/FS_write"}
	visible := func(name string) bool { return name == "read_file" || name == "tool_search" }
	r := NewToolRefs(visible, known)

	tests := []struct {
		name, in, want string
	}{
		{"backticked", "Call `web_search` with the query.", "Call " + ToolGuidance + " with the query."},
		{"bare", "Use web_search, then read_file.", "Use " + ToolGuidance + ", then read_file."},
		{"dotted", "Run github.list_issues.", "Run " + ToolGuidance + "."},
		{"qualified", "Run pack.gh.github.list_issues now", "Run " + ToolGuidance + " now"},
		{"call span", "Try `web_search(query=\"x\")` first", "Try " + ToolGuidance + " first"},
		{"case", "WEB_SEARCH is handy", ToolGuidance + " is handy"},
		{"single word prose", "fetch the page", "fetch the page"},
		{"single word code", "use `fetch` here", "use " + ToolGuidance + " here"},
		{"holding ident", "my_web_search_helper and 0github.list_issues", ToolGuidance + " and " + ToolGuidance},
		{"other ident", "websearch and web-search stay", "websearch and web-search stay"},
		{"slash name", "then mcp/fs_WRITE the file", "then " + ToolGuidance + " the file"},
		{"visible", "`read_file` and tool_search stay", "`read_file` and tool_search stay"},
		{"browser", "browser.click on Submit", ToolGuidance + " on Submit"},
		{"no tools", "plain text", "plain text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Rewrite(tt.in)
			if got != tt.want {
				t.Errorf("rewrite(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := r.Rewrite(got); again != got {
				t.Errorf("rewrite is not idempotent: %q → %q", got, again)
			}
		})
	}

	if NewToolRefs(nil, known) != nil {
		t.Error("a nil visibility test must give a nil redactor")
	}
	if NewToolRefs(func(string) bool { return true }, known) != nil {
		t.Error("all tools visible must give a nil redactor")
	}
	var none *ToolRefs
	if got := none.Rewrite("web_search"); got != "web_search" {
		t.Errorf("nil redactor rewrote %q", got)
	}

	// With tool_search itself hidden, the guidance must not name it.
	hidden := NewToolRefs(func(string) bool { return false }, known)
	if got := hidden.Rewrite("use web_search"); strings.Contains(got, "tool_search") {
		t.Errorf("guidance names a hidden tool: %q", got)
	}
}

func FuzzRedact(f *testing.F) {
	seeds := []string{
		"", "jane@example.com", "+44 20 7946 0958", "555-123-4567", "Authorization: Bearer abc123def",
		"api_key=abcdef123456", "https://x.io/?token=abc&email=a@b.co", "2024-01-15 v1.2.3 :8080",
		"a@b.co555-123-4567", "x@y.zz@q.rr", "token=[REDACTED_TOKEN]x@y.com", "https://u:p@h.com/?sid=1#a=b",
		"-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----", "sk-aaaaaaaaaaaaaaaaaaaa@b.cc",
		"\xff\xfe@\x00.com", "06 12 34 56 78 +1 (555) 123-4567", "git@github.com:o/r a@2x.png b@c.d.png",
		"1-800-555-0199 1 (800) 555-0199", "JSESSIONID=abcdef; sid=1234",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Text(in)
		for _, m := range emailRe.FindAllStringIndex(out, -1) {
			if !notEmail(out, m[0], m[1]) {
				t.Fatalf("Text(%q) = %q still holds email %q", in, out, out[m[0]:m[1]])
			}
		}
		if again := Text(out); again != out {
			t.Fatalf("not idempotent:\n in  %q\n out %q\n out2 %q", in, out, again)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("Text(%q) made invalid UTF-8 %q", in, out)
		}
	})
}

func FuzzToolRedactor(f *testing.F) {
	f.Add("Call `web_search` then github.list_issues and fetch")
	f.Add("`fetch(` web_search. WEB_SEARCH-x")
	f.Add("srv/Tool_X:srv/tool_x")
	denied := []string{"web_search", "github.list_issues", "srv/tool_x"}
	r := NewToolRefs(func(n string) bool { return n == "read_file" }, append([]string{"fetch", "read_file"}, denied...))
	f.Fuzz(func(t *testing.T, in string) {
		out := r.Rewrite(in)
		low := lowerASCII(out)
		for _, d := range denied {
			if strings.Contains(low, d) {
				t.Fatalf("rewrite(%q) = %q still names %s", in, out, d)
			}
		}
		if again := r.Rewrite(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", in, out, again)
		}
	})
}

func BenchmarkRedact(b *testing.B) {
	text := strings.Repeat("1. Open https://app.example.com/login?next=/home and sign in as the user.\n"+
		"2. If asked, enter the code sent to the phone; do not paste api keys.\n", 20)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Text(text)
	}
}

// BenchmarkRedactProse redacts skill text with nothing to redact, the
// common case.
func BenchmarkRedactProse(b *testing.B) {
	text := strings.Repeat("Step 3: open the settings page, check that the token field is empty and "+
		"confirm the change; if the page shows error 502, wait 30 seconds and retry.\n", 20)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Text(text)
	}
}
