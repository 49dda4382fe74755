package grant

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/skillhost/skillhost/internal/confwalk"
)

// LimitsText is a module's limits as a file writes them: durations and
// sizes as text, the way pack.yaml's limits and skillhost.toml's [limits]
// and [packs.<name>] limits both give them.
type LimitsText struct {
	Timeout         string
	MaxMemory       string
	MaxOutput       string
	MaxLog          string
	MaxVar          string
	MaxHTTPResponse string
	MaxFuel         int64
	MaxWrite        string
	// MaxOpenFiles is the integer as written, so that one check reports
	// a value out of range from either file.
	MaxOpenFiles string
}

// UnmarshalJSON reads limits as pack.yaml writes them (decoded to JSON):
// each size a string ("64MiB") or a byte count, kept as written.
func (t *LimitsText) UnmarshalJSON(data []byte) error {
	var raw struct {
		Timeout         string          `json:"timeout"`
		MaxMemory       json.RawMessage `json:"max_memory"`
		MaxOutput       json.RawMessage `json:"max_output"`
		MaxLog          json.RawMessage `json:"max_log"`
		MaxVar          json.RawMessage `json:"max_var"`
		MaxHTTPResponse json.RawMessage `json:"max_http_response"`
		MaxFuel         int64           `json:"max_fuel"`
		MaxWrite        json.RawMessage `json:"max_write"`
		MaxOpenFiles    json.RawMessage `json:"max_open_files"`
	}
	// A value of the wrong type is left out, as encoding/json leaves out
	// a field it cannot set, and decoding goes on: the pack's schema names
	// it.
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(data, &raw); err != nil && !errors.As(err, &typeErr) {
		return err
	}
	*t = LimitsText{
		Timeout: raw.Timeout, MaxMemory: scalarText(raw.MaxMemory), MaxOutput: scalarText(raw.MaxOutput),
		MaxLog: scalarText(raw.MaxLog), MaxVar: scalarText(raw.MaxVar), MaxHTTPResponse: scalarText(raw.MaxHTTPResponse),
		MaxFuel: raw.MaxFuel, MaxWrite: scalarText(raw.MaxWrite), MaxOpenFiles: scalarText(raw.MaxOpenFiles),
	}
	return nil
}

// scalarText returns a JSON string's text, or a number's digits as
// written; "" for null or absent.
func scalarText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

func init() {
	// [limits] is read by hand: its checks span its keys (a size or a
	// number for each, then one parse of them all).
	confwalk.Register[Limits](confwalk.Rules{Section: "limits", Read: readLimits})
	confwalk.Register[Sandbox](confwalk.Rules{
		Section: "sandbox",
		Hooks:   map[string]func(*confwalk.Walker, confwalk.Value) (any, bool){"isolation": readIsolation},
	})
}

// readIsolation reads an isolation mode: [sandbox] isolation, and a
// [packs.<name>] section's.
func readIsolation(w *confwalk.Walker, kv confwalk.Value) (any, bool) {
	s, ok := w.Str(kv)
	if !ok {
		return nil, false
	}
	iso, err := ParseIsolation(s)
	if err != nil {
		w.Errorf(kv, "%s %v", kv.Key, err)
		return nil, false
	}
	return iso, true
}

// MaxOpenFilesCeiling is the largest max_open_files a file may set: the
// most descriptors a Linux process may hold open by default (fs.nr_open),
// shared by every call the host runs. A cap above it could never be met.
const MaxOpenFilesCeiling = 1 << 20

// ParseLimits reads limits as a pack.yaml or skillhost.toml writes them:
// durations and sizes as text, checked by the one rule both files share.
func ParseLimits(r LimitsText) (Limits, error) {
	l := Limits{MaxFuel: r.MaxFuel}
	var err error
	if r.MaxFuel < 0 {
		return l, fmt.Errorf("max_fuel %d must be a positive number of instructions", r.MaxFuel)
	}
	if r.Timeout != "" {
		if l.Timeout, err = time.ParseDuration(r.Timeout); err != nil || l.Timeout <= 0 {
			return l, fmt.Errorf("timeout %q must be a positive duration such as 5s or 500ms", r.Timeout)
		}
	}
	sizes := []struct {
		name string
		text string
		dst  *int64
	}{
		{"max_output", r.MaxOutput, &l.MaxOutputBytes},
		{"max_log", r.MaxLog, &l.MaxLogBytes},
		{"max_var", r.MaxVar, &l.MaxVarBytes},
		{"max_http_response", r.MaxHTTPResponse, &l.MaxHTTPResponseBytes},
		{"max_write", r.MaxWrite, &l.MaxWriteBytes},
	}
	for _, s := range sizes {
		if s.text == "" {
			continue
		}
		n, err := confwalk.ParseSize(s.text)
		if err != nil {
			return l, fmt.Errorf("%s: %v", s.name, err)
		}
		*s.dst = int64(n)
	}
	// A zero write quota or open-file cap would read as "not set" and get
	// the ceiling, the opposite of what it says.
	if r.MaxWrite != "" && l.MaxWriteBytes == 0 {
		return l, fmt.Errorf("max_write %q must be a positive size such as 64MiB; to refuse every write, mount the folders read-only", r.MaxWrite)
	}
	if r.MaxOpenFiles != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(r.MaxOpenFiles), 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(strings.TrimSpace(r.MaxOpenFiles), "-"):
			return l, fmt.Errorf("max_open_files %s is above %d, the most files a process may hold open", r.MaxOpenFiles, MaxOpenFilesCeiling)
		case err != nil || n <= 0:
			return l, fmt.Errorf("max_open_files %s must be a positive number of files, such as 64", r.MaxOpenFiles)
		case n > MaxOpenFilesCeiling:
			return l, fmt.Errorf("max_open_files %d is above %d, the most files a process may hold open", n, MaxOpenFilesCeiling)
		}
		l.MaxOpenFiles = n
	}
	if r.MaxMemory != "" {
		n, err := confwalk.ParseSize(r.MaxMemory)
		if err != nil {
			return l, fmt.Errorf("max_memory: %v", err)
		}
		if n > 4<<30 {
			return l, fmt.Errorf("max_memory %q is above the 4 GiB a 32-bit guest can address", r.MaxMemory)
		}
		l.MaxMemoryBytes = n
	}
	return l, nil
}

// limitKeys are the keys of a limits table, in the order messages list them.
const limitKeys = "timeout, max_memory, max_output, max_log, max_var, max_http_response, max_fuel, max_write, max_open_files"

// readLimits reads a limits table, [limits] or a [packs.<name>] section's
// limits, into dst, a *Limits: every key's type first, then the values by
// ParseLimits, whose problem is put on the table's line.
func readLimits(r *confwalk.Walker, kv confwalk.Value, dst any) bool {
	keys, ok := r.Table(kv, "a table such as {timeout = \"5s\", max_memory = \"64MiB\"}")
	if !ok {
		return false
	}
	var raw LimitsText
	sizes := map[string]*string{
		"max_memory": &raw.MaxMemory, "max_output": &raw.MaxOutput, "max_log": &raw.MaxLog,
		"max_var": &raw.MaxVar, "max_http_response": &raw.MaxHTTPResponse, "max_write": &raw.MaxWrite,
	}
	good := true
	for _, k := range keys {
		name := k.Key.Last()
		switch {
		case name == "timeout":
			s, ok := r.Str(k)
			raw.Timeout, good = s, good && ok
		case name == "max_fuel":
			n, ok := r.Int(k)
			raw.MaxFuel, good = n, good && ok
		case name == "max_open_files":
			n, ok := r.Int(k)
			raw.MaxOpenFiles, good = strconv.FormatInt(n, 10), good && ok
		case sizes[name] != nil:
			switch v := k.Val.(type) {
			case string:
				*sizes[name] = v
			case int64:
				*sizes[name] = strconv.FormatInt(v, 10)
			default:
				r.WrongType(k, "a size such as \"64MiB\" or a number of bytes")
				good = false
			}
		case name == "isolation":
			r.Errorf(k, "%s is not a limit: set isolation in [sandbox] (the default for every pack) or in a [packs.<name>] section", k.Key)
			good = false
		default:
			r.Errorf(k, "unknown key %q; expected one of %s", k.Key.String(), limitKeys)
			good = false
		}
	}
	if !good {
		return false
	}
	l, err := ParseLimits(raw)
	if err != nil {
		r.Errorf(kv, "%s: %v", kv.Key, err)
		return false
	}
	*dst.(*Limits) = l
	return true
}
