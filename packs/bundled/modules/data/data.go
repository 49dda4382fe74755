package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"html"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones without a host zoneinfo directory
	"unicode/utf8"

	"github.com/skillhost/skillhost/guests/go/skill"
)

// ---- json_query ----

type JSONQueryIn struct {
	Data       json.RawMessage `json:"data,omitempty" desc:"The JSON document to query, as a JSON value. Give this or json."`
	JSON       string          `json:"json,omitempty" desc:"The JSON document to query, as text (e.g. an HTTP response body). Give this or data."`
	Path       string          `json:"path" desc:"Path to select, e.g. .items[0].name, .items[].price, .users[-1], .a[1:3], ..id, .\"odd key\". Empty or . selects the whole document."`
	MaxResults int             `json:"max_results,omitempty" desc:"Cap on the number of values a multi-value path returns" jsonschema:"minimum=1,maximum=10000,default=1000"`
}

type JSONQueryOut struct {
	Result    any    `json:"result" desc:"The selected value; for paths with [], [*], .*, slices or .. an array of the selected values"`
	Count     int    `json:"count" desc:"Number of values selected"`
	Multiple  bool   `json:"multiple" desc:"Whether the path selects a list of values"`
	Type      string `json:"type" desc:"JSON type of result: object, array, string, number, boolean or null"`
	Truncated bool   `json:"truncated,omitempty" desc:"max_results was reached"`
}

var jsonQueryTool = skill.Tool("json_query", jsonQuery,
	skill.Category("data"), skill.Idempotent(),
	skill.Describe(`Select values from a JSON document with a path. Steps: .name member, ."any key" or ["any key"] quoted member, [N] index (negative from the end), [a:b] slice, [] or [*] or .* every element/value, ..name every member named name at any depth. A leading $ is allowed. Examples: .items[0].name, .items[].price, .data.users[-1].email, ..id. A single-value path fails with not_found naming the step that found nothing; multi-value paths skip missing members.`),
	skill.Tags("json", "query", "data", "jq", "jsonpath"))

func jsonQuery(in JSONQueryIn) (JSONQueryOut, error) {
	limit := in.MaxResults
	if limit <= 0 {
		limit = 1000
	}
	var doc any
	switch {
	case in.JSON != "" && len(in.Data) > 0:
		return JSONQueryOut{}, skill.InvalidInput("give either data or json, not both")
	case in.JSON != "":
		d := json.NewDecoder(strings.NewReader(in.JSON))
		d.UseNumber()
		if err := d.Decode(&doc); err != nil {
			return JSONQueryOut{}, skill.InvalidInput("json is not valid JSON: " + jsonErr(err, in.JSON))
		}
		if d.More() {
			return JSONQueryOut{}, skill.InvalidInput("json has data after the first value")
		}
	case len(in.Data) > 0:
		// UseNumber keeps large integers and decimals exactly as written.
		d := json.NewDecoder(bytes.NewReader(in.Data))
		d.UseNumber()
		if err := d.Decode(&doc); err != nil {
			return JSONQueryOut{}, skill.InvalidInput("data: " + err.Error())
		}
	default:
		return JSONQueryOut{}, skill.InvalidInput("give the document as data (a JSON value) or json (text)")
	}
	steps, err := parsePath(in.Path)
	if err != nil {
		return JSONQueryOut{}, skill.InvalidInput(err.Error())
	}
	multi := isMulti(steps)
	vals, truncated, err := evaluate(doc, steps, !multi, limit)
	if err != nil {
		return JSONQueryOut{}, skill.NotFound(err.Error())
	}
	out := JSONQueryOut{Count: len(vals), Multiple: multi, Truncated: truncated}
	if multi {
		if vals == nil {
			vals = []any{}
		}
		out.Result = vals
	} else {
		out.Result = vals[0]
	}
	out.Type = jsonType(out.Result)
	return out, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonErr describes a decoding error with its line and column.
func jsonErr(err error, text string) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := lineCol(text, int(syn.Offset))
		return fmt.Sprintf("%s (line %d, column %d)", strings.TrimPrefix(syn.Error(), "json: "), line, col)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func lineCol(text string, offset int) (int, int) {
	offset = min(offset, len(text))
	before := text[:offset]
	line := strings.Count(before, "\n") + 1
	col := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:])
	return line, max(col, 1)
}

// ---- json_format ----

type JSONFormatIn struct {
	JSON     string `json:"json" desc:"JSON text to check and format"`
	Indent   *int   `json:"indent,omitempty" desc:"Spaces per level; 0 gives one compact line" jsonschema:"minimum=0,maximum=8,default=2"`
	SortKeys bool   `json:"sort_keys,omitempty" desc:"Sort object keys"`
}

type JSONFormatOut struct {
	JSON string `json:"json"`
	Type string `json:"type" desc:"JSON type of the top-level value"`
}

var jsonFormatTool = skill.Tool("json_format", jsonFormat,
	skill.Category("data"), skill.Idempotent(),
	skill.Describe("Validate JSON text and pretty-print it (or minify it with indent 0), optionally sorting object keys. Invalid JSON fails with invalid_input naming the line and column."),
	skill.Tags("json", "format", "validate", "data"))

func jsonFormat(in JSONFormatIn) (JSONFormatOut, error) {
	indent := 2
	if in.Indent != nil {
		indent = *in.Indent
	}
	d := json.NewDecoder(strings.NewReader(in.JSON))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return JSONFormatOut{}, skill.InvalidInput("not valid JSON: " + jsonErr(err, in.JSON))
	}
	if d.More() {
		return JSONFormatOut{}, skill.InvalidInput("data after the first JSON value")
	}
	var src []byte
	if in.SortKeys {
		src, _ = json.Marshal(v) // maps marshal with sorted keys
	} else {
		src = []byte(in.JSON) // keep the key order
	}
	var buf bytes.Buffer
	var err error
	if indent == 0 {
		err = json.Compact(&buf, src)
	} else {
		err = json.Indent(&buf, src, "", strings.Repeat(" ", indent))
	}
	if err != nil {
		return JSONFormatOut{}, skill.InvalidInput("not valid JSON: " + jsonErr(err, in.JSON))
	}
	return JSONFormatOut{JSON: strings.TrimSpace(buf.String()), Type: jsonType(v)}, nil
}

// ---- tz_convert ----

type TZConvertIn struct {
	Time     string `json:"time" desc:"RFC 3339 (2024-05-01T14:30:00Z), a local date-time read in from_zone (2024-05-01 14:30), a date (2024-05-01: midnight), or Unix seconds" jsonschema:"minLength=1"`
	FromZone string `json:"from_zone,omitempty" desc:"IANA zone of a time without an offset, e.g. Europe/Paris" jsonschema:"default=UTC"`
	ToZone   string `json:"to_zone" desc:"IANA zone to convert to, e.g. America/New_York, Asia/Kolkata, UTC"`
}

type TZConvertOut struct {
	Time         string `json:"time" desc:"RFC 3339 in to_zone"`
	Zone         string `json:"zone"`
	Abbreviation string `json:"abbreviation" desc:"e.g. EDT, CET"`
	UTCOffset    string `json:"utc_offset" desc:"e.g. -04:00"`
	DST          bool   `json:"dst" desc:"Daylight saving time is in effect"`
	Weekday      string `json:"weekday"`
	Readable     string `json:"readable" desc:"e.g. Wed, 01 May 2024 10:30 EDT"`
	Unix         int64  `json:"unix"`
	Source       string `json:"source" desc:"The input as understood, RFC 3339"`
}

var tzConvertTool = skill.Tool("tz_convert", tzConvert,
	skill.Category("data"), skill.Idempotent(),
	skill.Describe("Convert a date and time between IANA time zones (daylight saving aware). Accepts RFC 3339, local date-times read in from_zone, dates, or Unix seconds; returns the time in to_zone with its offset, abbreviation, weekday and Unix time."),
	skill.Tags("time", "timezone", "date", "convert"))

var localLayouts = []string{
	"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02",
}

func loadZone(name, field string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(name, "utc") || strings.EqualFold(name, "z") || strings.EqualFold(name, "gmt") {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, skill.InvalidInput(fmt.Sprintf("%s %q is not an IANA time zone name (e.g. Europe/Berlin)", field, name))
	}
	return loc, nil
}

func tzConvert(in TZConvertIn) (TZConvertOut, error) {
	from, err := loadZone(in.FromZone, "from_zone")
	if err != nil {
		return TZConvertOut{}, err
	}
	to, err := loadZone(in.ToZone, "to_zone")
	if err != nil {
		return TZConvertOut{}, err
	}
	s := strings.TrimSpace(in.Time)
	var t time.Time
	parsed := false
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		t, parsed = time.Unix(n, 0).In(from), true
	}
	if !parsed {
		if v, err := time.Parse(time.RFC3339Nano, s); err == nil {
			t, parsed = v, true
		}
	}
	for _, l := range localLayouts {
		if parsed {
			break
		}
		if v, err := time.ParseInLocation(l, s, from); err == nil {
			t, parsed = v, true
		}
	}
	if !parsed {
		return TZConvertOut{}, skill.InvalidInput(fmt.Sprintf("cannot read time %q: use RFC 3339 (2024-05-01T14:30:00Z), 2024-05-01 14:30, 2024-05-01 or Unix seconds", in.Time))
	}
	r := t.In(to)
	abbr, _ := r.Zone()
	return TZConvertOut{
		Time:         r.Format(time.RFC3339Nano),
		Zone:         to.String(),
		Abbreviation: abbr,
		UTCOffset:    r.Format("-07:00"),
		DST:          r.IsDST(),
		Weekday:      r.Weekday().String(),
		Readable:     r.Format("Mon, 02 Jan 2006 15:04 MST"),
		Unix:         r.Unix(),
		Source:       t.Format(time.RFC3339Nano),
	}, nil
}

// ---- encode / decode ----

const encodings = "base64|base64url|base64raw|hex|url|url_path|html"

type EncodeIn struct {
	Text     string `json:"text" desc:"Text to encode (UTF-8)"`
	Encoding string `json:"encoding" desc:"base64 (padded), base64url (URL-safe, padded), base64raw (URL-safe, unpadded), hex, url (query: space → +), url_path (space → %20), html (entities)" jsonschema:"enum=base64|base64url|base64raw|hex|url|url_path|html"`
}

type EncodeOut struct {
	Result string `json:"result"`
}

type DecodeIn struct {
	Text     string `json:"text" desc:"Encoded text"`
	Encoding string `json:"encoding" desc:"The encoding of text; see encode" jsonschema:"enum=base64|base64url|base64raw|hex|url|url_path|html"`
	Output   string `json:"output,omitempty" desc:"text returns the decoded bytes as UTF-8 text (fails if they are not); hex returns them as hex" jsonschema:"enum=text|hex,default=text"`
}

type DecodeOut struct {
	Result string `json:"result"`
	Bytes  int    `json:"bytes" desc:"Length of the decoded data"`
}

var encodeTool = skill.Tool("encode", encode,
	skill.Category("data"), skill.Idempotent(),
	skill.Describe("Encode text as base64, base64url, unpadded base64, hex, URL query or path escaping, or HTML entities."),
	skill.Tags("encode", "base64", "hex", "url", "html"))

var decodeTool = skill.Tool("decode", decode,
	skill.Category("data"), skill.Idempotent(),
	skill.Describe("Decode base64 (any variant, padding optional), hex, URL escaping or HTML entities back to text (or to hex for binary data)."),
	skill.Tags("decode", "base64", "hex", "url", "html"))

func encode(in EncodeIn) (EncodeOut, error) {
	b := []byte(in.Text)
	var r string
	switch in.Encoding {
	case "base64":
		r = base64.StdEncoding.EncodeToString(b)
	case "base64url":
		r = base64.URLEncoding.EncodeToString(b)
	case "base64raw":
		r = base64.RawURLEncoding.EncodeToString(b)
	case "hex":
		r = hex.EncodeToString(b)
	case "url":
		r = url.QueryEscape(in.Text)
	case "url_path":
		r = url.PathEscape(in.Text)
	case "html":
		r = html.EscapeString(in.Text)
	default:
		return EncodeOut{}, skill.InvalidInput("encoding must be one of " + encodings)
	}
	return EncodeOut{Result: r}, nil
}

func decode(in DecodeIn) (DecodeOut, error) {
	var b []byte
	var err error
	s := strings.TrimSpace(in.Text)
	switch in.Encoding {
	case "base64", "base64url", "base64raw":
		b, err = decodeBase64(s)
	case "hex":
		b, err = hex.DecodeString(strings.Join(strings.Fields(s), ""))
	case "url":
		var t string
		t, err = url.QueryUnescape(s)
		b = []byte(t)
	case "url_path":
		var t string
		t, err = url.PathUnescape(s)
		b = []byte(t)
	case "html":
		b = []byte(html.UnescapeString(in.Text))
	default:
		return DecodeOut{}, skill.InvalidInput("encoding must be one of " + encodings)
	}
	if err != nil {
		return DecodeOut{}, skill.InvalidInput(fmt.Sprintf("not valid %s: %v", in.Encoding, err))
	}
	out := DecodeOut{Bytes: len(b)}
	if in.Output == "hex" {
		out.Result = hex.EncodeToString(b)
		return out, nil
	}
	if !utf8.Valid(b) {
		return DecodeOut{}, skill.InvalidInput(fmt.Sprintf("the decoded %d bytes are not UTF-8 text; ask for output hex", len(b)))
	}
	out.Result = string(b)
	return out, nil
}

// decodeBase64 accepts the standard and URL alphabets, with or without
// padding, ignoring whitespace.
func decodeBase64(s string) ([]byte, error) {
	s = strings.Join(strings.Fields(s), "")
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// ---- hash ----

type HashIn struct {
	Text      string `json:"text" desc:"Text to hash (its UTF-8 bytes)"`
	Algorithm string `json:"algorithm,omitempty" jsonschema:"enum=sha256|sha512|sha1|md5,default=sha256"`
	HMACKey   string `json:"hmac_key,omitempty" desc:"When set, compute an HMAC with this key instead of a plain hash"`
	Encoding  string `json:"encoding,omitempty" desc:"Digest encoding" jsonschema:"enum=hex|base64,default=hex"`
}

type HashOut struct {
	Digest    string `json:"digest"`
	Algorithm string `json:"algorithm"`
	HMAC      bool   `json:"hmac"`
}

var hashTool = skill.Tool("hash", hashText,
	skill.Category("data"), skill.Idempotent(),
	skill.Describe("Compute the SHA-256 (default), SHA-512, SHA-1 or MD5 digest of a text, or an HMAC with a key, as hex or base64. Use it for checksums, cache keys or verifying signatures."),
	skill.Tags("hash", "sha256", "md5", "hmac", "checksum"))

func hashText(in HashIn) (HashOut, error) {
	alg := in.Algorithm
	if alg == "" {
		alg = "sha256"
	}
	var newHash func() hash.Hash
	switch alg {
	case "sha256":
		newHash = sha256.New
	case "sha512":
		newHash = sha512.New
	case "sha1":
		newHash = sha1.New
	case "md5":
		newHash = md5.New
	default:
		return HashOut{}, skill.InvalidInput("algorithm must be sha256, sha512, sha1 or md5")
	}
	var h hash.Hash
	if in.HMACKey != "" {
		h = hmac.New(newHash, []byte(in.HMACKey))
	} else {
		h = newHash()
	}
	h.Write([]byte(in.Text))
	sum := h.Sum(nil)
	out := HashOut{Algorithm: alg, HMAC: in.HMACKey != ""}
	if in.Encoding == "base64" {
		out.Digest = base64.StdEncoding.EncodeToString(sum)
	} else {
		out.Digest = hex.EncodeToString(sum)
	}
	return out, nil
}
