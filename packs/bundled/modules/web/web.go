package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/skillhost/skillhost/guests/go/skill"
)

// Seams for tests: the host services this module uses.
var (
	doHTTP    = skill.HTTP
	getConfig = skill.Config
)

const (
	defaultMaxBytes  = 100_000
	maxMaxBytes      = 2_000_000
	defaultUserAgent = "skillhost-web/1.0"
)

type HTTPFetchIn struct {
	URL      string            `json:"url" desc:"Absolute http or https URL. The host only reaches hosts the operator allowed." jsonschema:"format=uri,minLength=1"`
	Method   string            `json:"method,omitempty" jsonschema:"enum=GET|POST|PUT|PATCH|DELETE|HEAD,default=GET"`
	Headers  map[string]string `json:"headers,omitempty" desc:"Request headers, e.g. {\"Accept\": \"application/json\"}"`
	Body     string            `json:"body,omitempty" desc:"Request body for POST, PUT and PATCH"`
	JSON     json.RawMessage   `json:"json,omitempty" desc:"A JSON request body; sets Content-Type: application/json. Use instead of body."`
	MaxBytes int               `json:"max_bytes,omitempty" desc:"Return at most this many bytes of the body (after text extraction)" jsonschema:"minimum=1,maximum=2000000,default=100000"`
	Format   string            `json:"format,omitempty" desc:"raw returns the body as received; text turns an HTML page into readable text (scripts, styles and tags removed, entities decoded); auto does that only for HTML responses" jsonschema:"enum=auto|raw|text,default=auto"`
}

type HTTPFetchOut struct {
	Status      int               `json:"status" desc:"HTTP status code; 4xx and 5xx are results, not errors"`
	OK          bool              `json:"ok" desc:"Status is 2xx"`
	URL         string            `json:"url"`
	ContentType string            `json:"content_type,omitempty"`
	Headers     map[string]string `json:"headers,omitempty" desc:"Response headers, lower-case names (when the host reports them)"`
	Body        string            `json:"body" desc:"The body as text (empty for binary bodies, see body_base64)"`
	BodyBase64  string            `json:"body_base64,omitempty" desc:"A binary (non-UTF-8) body, base64"`
	Bytes       int               `json:"bytes" desc:"Size of the body as received"`
	Truncated   bool              `json:"truncated" desc:"The body was cut at max_bytes"`
	Extracted   bool              `json:"extracted" desc:"HTML was turned into text"`
}

var httpFetchTool = skill.Tool("http_fetch", httpFetch,
	skill.Category("web"), skill.SideEffects(), skill.RequiresNetwork(),
	skill.Describe("Fetch a URL over HTTP(S) with GET (default), POST, PUT, PATCH, DELETE or HEAD and return the status, headers and body text (HTML pages turned into readable text by default, bodies cut at max_bytes). Only hosts the operator allowed can be reached; redirects are followed by the host."),
	skill.Tags("web", "http", "fetch", "download", "api"))

func httpFetch(in HTTPFetchIn) (HTTPFetchOut, error) {
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return HTTPFetchOut{}, skill.InvalidInput(fmt.Sprintf("url %q must be an absolute http or https URL", in.URL))
	}
	method := strings.ToUpper(in.Method)
	if method == "" {
		method = "GET"
	}
	maxBytes := in.MaxBytes
	if maxBytes <= 0 {
		maxBytes = defaultMaxBytes
	}
	maxBytes = min(maxBytes, maxMaxBytes)

	headers := map[string]string{}
	for k, v := range in.Headers {
		headers[k] = v
	}
	if !hasHeader(headers, "User-Agent") {
		ua, ok := getConfig("user_agent")
		if !ok || ua == "" {
			ua = defaultUserAgent
		}
		headers["User-Agent"] = ua
	}
	body := []byte(in.Body)
	if len(in.JSON) > 0 {
		if in.Body != "" {
			return HTTPFetchOut{}, skill.InvalidInput("give body or json, not both")
		}
		body = in.JSON
		if !hasHeader(headers, "Content-Type") {
			headers["Content-Type"] = "application/json"
		}
	}
	if len(body) > 0 && (method == "GET" || method == "HEAD") {
		return HTTPFetchOut{}, skill.InvalidInput(method + " requests cannot have a body; use POST, PUT or PATCH")
	}

	resp, err := doHTTP(skill.HTTPRequest{Method: method, URL: u.String(), Headers: headers, Body: body})
	if err != nil {
		return HTTPFetchOut{}, err
	}
	out := HTTPFetchOut{
		Status: resp.Status, OK: resp.Status >= 200 && resp.Status < 300, URL: u.String(),
		Bytes: len(resp.Body),
	}
	if len(resp.Headers) > 0 {
		out.Headers = map[string]string{}
		for k, v := range resp.Headers {
			out.Headers[strings.ToLower(k)] = v
		}
		out.ContentType = out.Headers["content-type"]
	}
	data := resp.Body
	isHTML := strings.Contains(out.ContentType, "html") ||
		(out.ContentType == "" && looksLikeHTML(data))
	switch in.Format {
	case "text":
		data, out.Extracted = []byte(htmlToText(string(data))), true
	case "", "auto":
		if isHTML && utf8.Valid(data) {
			data, out.Extracted = []byte(htmlToText(string(data))), true
		}
	}
	if len(data) > maxBytes {
		cut := maxBytes
		// Do not end inside a UTF-8 character.
		for cut > 0 && cut > maxBytes-utf8.UTFMax && !utf8.RuneStart(data[cut]) {
			cut--
		}
		data = data[:cut]
		out.Truncated = true
	}
	if utf8.Valid(data) {
		out.Body = string(data)
	} else {
		out.BodyBase64 = base64.StdEncoding.EncodeToString(data)
	}
	return out, nil
}

func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

func looksLikeHTML(b []byte) bool {
	head := strings.ToLower(strings.TrimSpace(string(b[:min(len(b), 512)])))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}

var (
	titleTag   = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	dropBlocks = regexp.MustCompile(`(?is)<(script|style|noscript|template|svg|head)\b.*?</(script|style|noscript|template|svg|head)\s*>`)
	comments   = regexp.MustCompile(`(?s)<!--.*?-->`)
	blockTags  = regexp.MustCompile(`(?i)<\s*/?\s*(p|div|br|hr|li|ul|ol|tr|table|h[1-6]|section|article|header|footer|nav|main|aside|blockquote|pre|dd|dt|dl|title|form|figure|figcaption)\b[^>]*>`)
	cellTags   = regexp.MustCompile(`(?i)<\s*(td|th)\b[^>]*>`)
	anyTag     = regexp.MustCompile(`(?s)<[^>]*>`)
	spaces     = regexp.MustCompile(`[ \f\v\r\x{00a0}]+`)
	blankRuns  = regexp.MustCompile(`\n\s*\n`)
)

// htmlToText reduces an HTML page to readable text: invisible blocks and
// comments dropped, block elements turned into line breaks, tags removed,
// entities decoded, table cells separated by tabs, whitespace and blank
// lines collapsed (compact text costs a model fewer tokens).
func htmlToText(s string) string {
	title := ""
	if m := titleTag.FindStringSubmatch(s); m != nil {
		title = strings.TrimSpace(html.UnescapeString(anyTag.ReplaceAllString(m[1], "")))
	}
	s = comments.ReplaceAllString(s, "")
	s = dropBlocks.ReplaceAllString(s, "")
	s = blockTags.ReplaceAllString(s, "\n")
	s = cellTags.ReplaceAllString(s, "\t")
	s = anyTag.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = spaces.ReplaceAllString(s, " ")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	s = strings.Join(lines, "\n")
	s = blankRuns.ReplaceAllString(s, "\n")
	s = strings.TrimSpace(s)
	if title != "" && !strings.HasPrefix(s, title) {
		s = title + "\n\n" + s
	}
	return s
}
