package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// Bounds of an argument shape: deeper values, further keys and further
// distinct array element shapes are summarised, so a model cannot make an
// audit line grow without bound.
const (
	shapeMaxDepth    = 6
	shapeMaxKeys     = 64
	shapeMaxElements = 4
)

// AuditRecord is one line of the audit log: one finished call. It holds
// what the call was and how it ended, never the values it was given: the
// arguments are written as their shape (see ArgShape) and the grant as
// names of hosts, mounts, services and environment variables, never the
// variables' values. docs/serve.md documents every field.
type AuditRecord struct {
	Time       time.Time       `json:"time"`
	Tenant     string          `json:"tenant"`
	Session    string          `json:"session,omitempty"`
	Tool       string          `json:"tool"`
	Kind       string          `json:"kind"`
	Depth      int             `json:"depth"`
	Args       json.RawMessage `json:"args"`
	Outcome    string          `json:"outcome"`
	Code       string          `json:"code,omitempty"`
	DurationMS float64         `json:"duration_ms"`
	// Fuel is the instructions a Wasm tool ran, when they were counted
	// (registry.CallEvent.FuelCounted).
	Fuel   *int64       `json:"fuel,omitempty"`
	Grants *AuditGrants `json:"grants,omitempty"`
}

// AuditGrants is the effective grant a Wasm tool ran with, by name only.
type AuditGrants struct {
	Hosts          []string `json:"hosts,omitempty"`
	PrivateNetwork bool     `json:"private_network,omitempty"`
	Mounts         []string `json:"mounts,omitempty"`
	Services       []string `json:"services,omitempty"`
	Env            []string `json:"env,omitempty"`
	Tools          []string `json:"tools,omitempty"`
	Isolation      string   `json:"isolation,omitempty"`
}

// auditLog writes audit records, one JSON line each, to w. Each line is
// one Write under a lock, so concurrent calls never interleave and a file
// opened for appending gets whole lines.
type auditLog struct {
	mu     sync.Mutex
	w      io.Writer
	closer io.Closer // nil for standard output
	err    error     // the first write error, reported once

	// tools caches each tool's decoded input schema and grant summary
	// for a tenant, keyed by the registry's *Tool: a reload makes new ones.
	tools sync.Map // auditKey -> *auditTool
}

type auditKey struct {
	tenant string
	tool   *registry.Tool
}

type auditTool struct {
	schema map[string]any
	grants *AuditGrants
}

// openAuditLog opens the audit log named by [server] audit_log: "" is
// none (nil), "-" standard output, anything else a file opened for
// appending (created 0600: the log names tenants and sessions).
func openAuditLog(dest string, stdout io.Writer) (*auditLog, error) {
	switch dest {
	case "":
		return nil, nil
	case "-":
		return &auditLog{w: stdout}, nil
	}
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("server: opening the audit log ([server] audit_log): %w", err)
	}
	return &auditLog{w: f, closer: f}, nil
}

// record builds the audit record of a call event; t is the tool as the
// registry has it (nil when it is gone, after a reload), narrow the
// tenant's grant of its pack when the tenant has one
// ([tenants.<id>.grants.<pack>]), which its runs narrow the tool's grant
// to.
func (a *auditLog) record(e registry.Event, t *registry.Tool, narrow *packs.PackGrant) *AuditRecord {
	c := e.Call
	rec := &AuditRecord{
		Time: e.Time.UTC(), Tenant: e.Run.Tenant, Session: e.Run.Session, Tool: c.Tool, Kind: string(c.Kind),
		Depth: c.Depth, Outcome: c.Outcome, Code: string(c.Code),
		DurationMS: float64(c.Duration.Microseconds()) / 1000,
	}
	if c.FuelCounted {
		fuel := c.Fuel
		rec.Fuel = &fuel
	}
	var schema map[string]any
	if t != nil {
		at := a.tool(e.Run.Tenant, t, narrow)
		schema, rec.Grants = at.schema, at.grants
	}
	rec.Args = json.RawMessage("null")
	if len(c.Args) > 0 {
		rec.Args = ArgShape(c.Args, schema)
	}
	return rec
}

func (a *auditLog) tool(tenant string, t *registry.Tool, narrow *packs.PackGrant) *auditTool {
	key := auditKey{tenant, t}
	if v, ok := a.tools.Load(key); ok {
		return v.(*auditTool)
	}
	at := &auditTool{grants: grantSummary(t, narrow)}
	if t.ToolSpec != nil && len(t.InputSchema) > 0 {
		json.Unmarshal(t.InputSchema, &at.schema) // a schema that does not decode names no keys
	}
	v, _ := a.tools.LoadOrStore(key, at)
	return v.(*auditTool)
}

// write appends one record.
func (a *auditLog) write(rec *AuditRecord) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.w.Write(line); err != nil {
		if a.err == nil {
			a.err = err
			return fmt.Errorf("server: writing the audit log: %w", err)
		}
	}
	return nil
}

func (a *auditLog) close() error {
	if a == nil || a.closer == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closer.Close()
}

// grantSummary names what a Wasm tool's effective grant (narrowed by
// narrow, when not nil) lets it reach: hosts, mounts (guest path, host
// path and mode), services, the names of its environment variables and
// the tools it may call. Values of variables and config are left out.
// Other kinds run in the host and have no grant (nil).
func grantSummary(t *registry.Tool, narrow *packs.PackGrant) *AuditGrants {
	if t.Kind != registry.KindWasm {
		return nil
	}
	g := t.Effective
	if narrow != nil {
		g = registry.NarrowGrant(g, *narrow, nil)
	}
	s := &AuditGrants{
		Hosts: slices.Clone(g.AllowedHosts), PrivateNetwork: g.AllowPrivateNetwork,
		Services: slices.Clone(g.Capabilities), Tools: slices.Clone(g.Tools),
		Isolation: string(t.Isolation),
	}
	for _, m := range g.Mounts {
		mode := "rw"
		if m.ReadOnly {
			mode = "ro"
		}
		s.Mounts = append(s.Mounts, m.GuestPath+"="+m.HostPath+":"+mode)
	}
	for name := range g.Env {
		s.Env = append(s.Env, name)
	}
	slices.Sort(s.Env)
	return s
}

// ArgShape returns the shape of a call's JSON arguments: every value
// replaced by its JSON type ("string", "number", "boolean", "null"), an
// object by the shapes of its keys, an array by the distinct shapes of
// its elements ([] when empty). Only keys the schema declares (its
// properties, at every level) are written by name: any other key could be
// data a model put there, so they are counted under "*" ("2 keys"). Past
// a depth of six levels a value is "…"; past 64 keys or four distinct
// element shapes the rest are counted too. Text that is not JSON is
// "invalid". No value of the arguments is ever part of the result.
func ArgShape(args json.RawMessage, schema map[string]any) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage(`"invalid"`)
	}
	out, err := json.Marshal(shape(v, schema, 0))
	if err != nil {
		return json.RawMessage(`"invalid"`)
	}
	return out
}

func shape(v any, schema map[string]any, depth int) any {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case map[string]any:
		if depth >= shapeMaxDepth {
			return "…"
		}
		props, _ := schema["properties"].(map[string]any)
		out := map[string]any{}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		other := 0
		for _, k := range keys {
			sub, declared := props[k].(map[string]any)
			if !declared || len(out) >= shapeMaxKeys {
				other++
				continue
			}
			out[k] = shape(v[k], sub, depth+1)
		}
		if other > 0 {
			out["*"] = plural(other, "key")
		}
		return out
	case []any:
		if depth >= shapeMaxDepth {
			return "…"
		}
		items, _ := schema["items"].(map[string]any)
		out := []any{}
		seen := map[string]bool{}
		more := 0
		for _, el := range v {
			s := shape(el, items, depth+1)
			b, _ := json.Marshal(s)
			if seen[string(b)] {
				continue
			}
			seen[string(b)] = true
			if len(out) >= shapeMaxElements {
				more++
				continue
			}
			out = append(out, s)
		}
		if more > 0 {
			out = append(out, plural(more, "more shape"))
		}
		return out
	}
	return "invalid"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
