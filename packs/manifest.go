package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ManifestError is one problem in a manifest, located as precisely as the
// format allows.
type ManifestError struct {
	File  string
	Line  int    // 0 when unknown
	Field string // dotted path, e.g. "modules[0].tools[1].name"
	Msg   string
}

// Error writes the problem as "file:line: field: msg". When Msg reads as
// the rest of a sentence about the field (it starts with a quoted value,
// "is ", "has " or "must "), field and message are joined by a space
// instead:
// `skills/pdf/SKILL.md:3: name "PDF" must match ^[a-z0-9]+(-[a-z0-9]+)*$`.
func (e *ManifestError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	if strings.HasPrefix(e.Msg, `"`) || strings.HasPrefix(e.Msg, "is ") || strings.HasPrefix(e.Msg, "has ") || strings.HasPrefix(e.Msg, "must ") {
		return fmt.Sprintf("%s: %s %s", loc, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
}

// Is makes a *ManifestError match ErrInvalidManifest.
func (e *ManifestError) Is(target error) bool { return target == ErrInvalidManifest }

// maxManifestBytes bounds what is read of a manifest.
const maxManifestBytes = 1 << 20

var (
	nameRE   = regexp.MustCompile(`^[a-z0-9]+([_-][a-z0-9]+)*$`)
	exportRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
	hexRE    = regexp.MustCompile(`^[0-9a-f]{64}$`)
	envRE    = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
	// yamlLineRE splits "line N: message" off a yaml.v3 error.
	yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
)

type rawPack struct {
	Name        string      `yaml:"name"`
	Version     string      `yaml:"version"`
	Description string      `yaml:"description"`
	Modules     []rawModule `yaml:"modules"`
}

type rawModule struct {
	line    int
	Name    string    `yaml:"name"`
	Path    string    `yaml:"path"`
	SHA256  string    `yaml:"sha256"`
	Request Request   `yaml:"request"`
	Limits  rawLimits `yaml:"limits"`
	Tools   []rawTool `yaml:"tools"`
}

type rawLimits struct {
	Timeout         string `yaml:"timeout"`
	MaxMemory       string `yaml:"max_memory"`
	MaxOutput       string `yaml:"max_output"`
	MaxLog          string `yaml:"max_log"`
	MaxVar          string `yaml:"max_var"`
	MaxHTTPResponse string `yaml:"max_http_response"`
	MaxFuel         int64  `yaml:"max_fuel"`
}

type rawTool struct {
	line               int
	Name               string   `yaml:"name"`
	Export             string   `yaml:"export"`
	Description        string   `yaml:"description"`
	InputSchema        any      `yaml:"input_schema"`
	OutputSchema       any      `yaml:"output_schema"`
	Tags               []string `yaml:"tags"`
	Category           string   `yaml:"category"`
	SideEffects        bool     `yaml:"side_effects"`
	Idempotent         bool     `yaml:"idempotent"`
	RequiresNetwork    bool     `yaml:"requires_network"`
	RequiresFilesystem bool     `yaml:"requires_filesystem"`
	RiskLevel          string   `yaml:"risk_level"`
	Hidden             bool     `yaml:"hidden"`
}

// locate fills the line fields of raw from the document's node tree.
func locate(doc *yaml.Node, raw *rawPack) {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	modules := mapValue(doc, "modules")
	if modules == nil || modules.Kind != yaml.SequenceNode {
		return
	}
	for i, mn := range modules.Content {
		if i >= len(raw.Modules) {
			return
		}
		raw.Modules[i].line = mn.Line
		tools := mapValue(mn, "tools")
		if tools == nil || tools.Kind != yaml.SequenceNode {
			continue
		}
		for j, tn := range tools.Content {
			if j < len(raw.Modules[i].Tools) {
				raw.Modules[i].Tools[j].line = tn.Line
			}
		}
	}
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Load reads the pack at the root of fsys. dir names the folder in errors;
// source is recorded in Pack.Source. Every problem found is returned,
// joined (errors.Join), each a *ManifestError.
func Load(fsys fs.FS, dir, source string) (*Pack, error) {
	file := path.Join(dir, ManifestFile)
	f, err := fsys.Open(ManifestFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w in %s", ErrNoManifest, dir)
		}
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(data) > maxManifestBytes {
		return nil, &ManifestError{File: file, Msg: fmt.Sprintf("manifest is larger than %d bytes", maxManifestBytes)}
	}
	p, err := Parse(data, file)
	if err != nil {
		return nil, err
	}
	p.Source, p.Dir, p.FS = source, dir, fsys
	var errs []error
	for i, m := range p.Modules {
		if st, err := fs.Stat(fsys, m.Path); err != nil || st.IsDir() {
			errs = append(errs, &ManifestError{File: file, Field: fmt.Sprintf("modules[%d].path", i),
				Msg: fmt.Sprintf("module file %q does not exist in the pack", m.Path)})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// Parse reads a manifest's bytes; file names it in errors. It checks
// everything but the existence of module files.
func Parse(data []byte, file string) (*Pack, error) {
	var raw rawPack
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ManifestError{File: file, Msg: "manifest is empty"}
		}
		return nil, yamlError(file, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err == nil {
		locate(&doc, &raw)
	}
	var errs []error
	bad := func(line int, field, format string, args ...any) {
		errs = append(errs, &ManifestError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	p := &Pack{Name: raw.Name, Version: raw.Version, Description: raw.Description}
	if !nameRE.MatchString(raw.Name) {
		bad(0, "name", "%q must be lowercase letters and digits separated by single - or _", raw.Name)
	}
	if len(raw.Modules) == 0 {
		bad(0, "modules", "a pack needs at least one module")
	}
	moduleNames := map[string]bool{}
	toolNames := map[string]string{}
	for i, rm := range raw.Modules {
		field := fmt.Sprintf("modules[%d]", i)
		m := &Module{Name: rm.Name, Path: path.Clean(rm.Path), SHA256: strings.ToLower(strings.TrimPrefix(rm.SHA256, "sha256:")), Request: rm.Request}
		switch {
		case !nameRE.MatchString(rm.Name):
			bad(rm.line, field+".name", "%q must be lowercase letters and digits separated by single - or _", rm.Name)
		case moduleNames[rm.Name]:
			bad(rm.line, field+".name", "module %q is declared twice", rm.Name)
		}
		moduleNames[rm.Name] = true
		if rm.Path == "" || !fs.ValidPath(m.Path) || !strings.HasSuffix(m.Path, ".wasm") {
			bad(rm.line, field+".path", "%q must be a relative path to a .wasm file inside the pack (no .., no leading /)", rm.Path)
		}
		if m.SHA256 != "" && !hexRE.MatchString(m.SHA256) {
			bad(rm.line, field+".sha256", "%q must be 64 hex digits", rm.SHA256)
		}
		for j, mr := range rm.Request.Mounts {
			if !strings.HasPrefix(mr.Guest, "/") || strings.Contains(mr.Guest, "..") {
				bad(rm.line, fmt.Sprintf("%s.request.mounts[%d].guest", field, j), "%q must be an absolute guest path without ..", mr.Guest)
			}
		}
		for j, e := range rm.Request.Env {
			if !envRE.MatchString(e) {
				bad(rm.line, fmt.Sprintf("%s.request.env[%d]", field, j), "%q must be an UPPER_CASE variable name", e)
			}
		}
		var err error
		if m.Limits, err = parseLimits(rm.Limits); err != nil {
			bad(rm.line, field+".limits", "%v", err)
		}
		for j, rt := range rm.Tools {
			tf := fmt.Sprintf("%s.tools[%d]", field, j)
			t := &Tool{
				Name: rt.Name, Export: rt.Export, Description: rt.Description, Tags: rt.Tags, Category: rt.Category,
				SideEffects: rt.SideEffects, Idempotent: rt.Idempotent, RequiresNetwork: rt.RequiresNetwork,
				RequiresFilesystem: rt.RequiresFilesystem, RiskLevel: strings.ToUpper(rt.RiskLevel), Hidden: rt.Hidden,
			}
			if t.Export == "" {
				t.Export = t.Name
			}
			switch {
			case !nameRE.MatchString(rt.Name) || len(rt.Name) > 64:
				bad(rt.line, tf+".name", "%q must be 1-64 lowercase letters and digits separated by single - or _", rt.Name)
			case toolNames[rt.Name] != "":
				bad(rt.line, tf+".name", "tool %q is already declared at %s", rt.Name, toolNames[rt.Name])
			default:
				toolNames[rt.Name] = tf
			}
			if !exportRE.MatchString(t.Export) {
				bad(rt.line, tf+".export", "%q is not a valid export name", t.Export)
			}
			switch t.RiskLevel {
			case "", "AUTO", "SAFE", "MODERATE", "DANGEROUS", "CRITICAL":
			default:
				bad(rt.line, tf+".risk_level", "%q must be one of AUTO, SAFE, MODERATE, DANGEROUS, CRITICAL", rt.RiskLevel)
			}
			if t.InputSchema, err = schemaJSON(rt.InputSchema); err != nil {
				bad(rt.line, tf+".input_schema", "%v", err)
			}
			if t.OutputSchema, err = schemaJSON(rt.OutputSchema); err != nil {
				bad(rt.line, tf+".output_schema", "%v", err)
			}
			m.Tools = append(m.Tools, t)
		}
		p.Modules = append(p.Modules, m)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// yamlError turns a yaml.v3 error into ManifestErrors with line numbers.
func yamlError(file string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var errs []error
		for _, e := range te.Errors {
			me := &ManifestError{File: file, Msg: e}
			if m := yamlLineRE.FindStringSubmatch(e); m != nil {
				me.Line, _ = strconv.Atoi(m[1])
				me.Msg = m[2]
			}
			errs = append(errs, me)
		}
		return errors.Join(errs...)
	}
	me := &ManifestError{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		me.Line, _ = strconv.Atoi(m[1])
		me.Msg = m[2]
	}
	return me
}

// schemaJSON converts a schema decoded from YAML to JSON; it must be an
// object.
func schemaJSON(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("a JSON Schema must be an object, got %T", v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("not representable as JSON: %v", err)
	}
	return b, nil
}

func parseLimits(r rawLimits) (Limits, error) {
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
	}
	for _, s := range sizes {
		if s.text == "" {
			continue
		}
		n, err := ParseSize(s.text)
		if err != nil {
			return l, fmt.Errorf("%s: %v", s.name, err)
		}
		*s.dst = int64(n)
	}
	if r.MaxMemory != "" {
		n, err := ParseSize(r.MaxMemory)
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

// ParseSize reads a byte size: a number with an optional unit B, KB, MB,
// GB (powers of 1000) or KiB, MiB, GiB (powers of 1024), case-insensitive.
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q must start with a number, e.g. 64MiB", s)
	}
	n, err := strconv.ParseUint(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	units := map[string]uint64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
	mult, ok := units[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("size %q has an unknown unit; use B, KB, MB, GB, KiB, MiB or GiB", s)
	}
	if n > (1<<63)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}
