package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/skillhost/skillhost/internal/confwalk"
)

// ConfigValue is one value of a [packs.<name>.config] table: a string, a
// number or a boolean, as the operator wrote it. Whether it is a secret
// depends on the config params that declare it, which the config file
// alone does not know, so every way of printing or encoding a ConfigValue
// (fmt verbs, JSON, text, slog) gives "[redacted]"; only Text returns the
// value.
type ConfigValue struct {
	raw any // string, int64, float64 (finite) or bool
	// Line is the line of the key in the config file.
	Line int
}

// NewConfigValue returns the value v, which must be a string, an int64, a
// finite float64 or a bool; ok is false otherwise.
func NewConfigValue(v any) (cv ConfigValue, ok bool) {
	switch x := v.(type) {
	case string, int64, bool:
		return ConfigValue{raw: v}, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ConfigValue{}, false
		}
		return ConfigValue{raw: v}, true
	}
	return ConfigValue{}, false
}

// Text returns the value as config_get hands it to a module: a string as
// written, a number or a boolean as its JSON text ("20", "0.5", "true").
// Call it only to hand the value on, never to print it.
func (v ConfigValue) Text() string {
	switch x := v.raw.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return floatText(x)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// Type names the value's TOML type: string, integer, float or boolean.
func (v ConfigValue) Type() string { return confwalk.TypeName(v.raw) }

// String returns "[redacted]".
func (v ConfigValue) String() string { return redacted }

// GoString returns "[redacted]".
func (v ConfigValue) GoString() string { return redacted }

// Format writes "[redacted]" whatever the verb.
func (v ConfigValue) Format(f fmt.State, verb rune) { io.WriteString(f, redacted) }

// MarshalJSON encodes the value as "[redacted]".
func (v ConfigValue) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText encodes the value as "[redacted]".
func (v ConfigValue) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue logs the value as "[redacted]".
func (v ConfigValue) LogValue() slog.Value { return slog.StringValue(redacted) }

var (
	_ fmt.Formatter  = ConfigValue{}
	_ slog.LogValuer = ConfigValue{}
)

// floatText writes a float as encoding/json does: whole numbers without a
// fraction ("20"), exponents only for very large or small magnitudes.
func floatText(f float64) string {
	b, err := json.Marshal(f)
	if err != nil {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return string(b)
}

// configValue reads one key of a [packs.<name>.config] table.
func (r *tomlReader) configValue(kv tomlValue) (ConfigValue, bool) {
	cv, ok := NewConfigValue(kv.Val)
	if !ok {
		if f, isFloat := kv.Val.(float64); isFloat {
			r.Errorf(kv, "%s must be a finite number, got %v", kv.Key, f)
		} else {
			r.WrongType(kv, "a string, a number or true or false")
		}
		return ConfigValue{}, false
	}
	cv.Line = kv.Line
	return cv, true
}

// MissingConfigError says that a tool's required config param has neither
// a default in the manifest nor a value in the operator's config, and
// where to add one. It matches ErrInvalidConfig.
type MissingConfigError struct {
	Pack  string
	Tool  string
	Param ConfigParam
	// File is the config file the value belongs in; Line is the line of
	// the pack's [packs.<name>] section (0 when it has none).
	File string
	Line int
}

func (e *MissingConfigError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	section := toml.Key{"packs", e.Pack, "config"}.String()
	return fmt.Sprintf("%s: tool %q of pack %q needs the %s setting %s, which has no default: add %s = %s under [%s]",
		loc, e.Tool, e.Pack, e.Param.Type, e.Param.Name, toml.Key{e.Param.Name}.String(), exampleValue(e.Param), section)
}

// Is makes a *MissingConfigError match ErrInvalidConfig.
func (e *MissingConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// exampleValue is a value of the param's type for a message.
func exampleValue(p ConfigParam) string {
	switch p.Type {
	case ParamNumber:
		switch {
		case p.Min != nil:
			return floatText(*p.Min)
		case p.Max != nil && *p.Max < 0:
			return floatText(*p.Max)
		}
		return "0"
	case ParamBoolean:
		return "true"
	case ParamSelect:
		if len(p.Options) > 0 {
			return strconv.Quote(p.Options[0])
		}
	case ParamURL:
		return `"https://…"`
	}
	return `"…"`
}

// configDecl is one declaration of a config key in a pack: a tool's config
// param, or (Param nil) a key of a module's request.config.
type configDecl struct {
	Tool   string
	Module *Module
	Param  *ConfigParam
}

// configDecls lists the config keys the pack's modules declare, by key,
// in manifest order.
func configDecls(p *Pack) (map[string][]configDecl, []string) {
	decls := map[string][]configDecl{}
	var order []string
	add := func(key string, d configDecl) {
		if _, ok := decls[key]; !ok {
			order = append(order, key)
		}
		decls[key] = append(decls[key], d)
	}
	for _, m := range p.Modules {
		for _, t := range m.Tools {
			for i := range t.ConfigParams {
				add(t.ConfigParams[i].Name, configDecl{Tool: t.Name, Module: m, Param: &t.ConfigParams[i]})
			}
		}
		for _, k := range confwalk.SortedNames(m.Request.Config) {
			add(k, configDecl{Module: m})
		}
	}
	return decls, order
}

// isSecretKey reports whether any tool declares key as a secret param.
func isSecretKey(ds []configDecl) bool {
	return slices.ContainsFunc(ds, func(d configDecl) bool { return d.Param != nil && d.Param.Type == ParamSecret })
}

// CheckPackConfig checks the [packs.<name>.config] values of pack p
// against the config params its tools declare (and the keys its modules'
// request.config names):
//
//   - every key must be declared by some module of the pack;
//   - a value must have the param's type: a string for string, text,
//     code, secret, path, select and url params, a number for number, true
//     or false for boolean;
//   - a number must lie within min and max and on the step (counted from
//     min, else from 0), a select value must be one of the options, a url
//     must be an absolute http or https URL, a path must not be empty;
//   - a required param needs a default in the manifest or a value here.
//
// It returns nil or every problem joined, each a *ConfigError naming the
// file, line and key, or a *MissingConfigError naming the key to add and
// where. Messages never hold the value of a key any tool declares secret.
func (c *Config) CheckPackConfig(p *Pack) error {
	if p == nil {
		return nil
	}
	g := c.Pack(p.Name)
	decls, order := configDecls(p)
	file := c.fileName()
	var errs []error
	for _, key := range confwalk.SortedNames(g.Config) {
		v := g.Config[key]
		path := toml.Key{"packs", p.Name, "config", key}.String()
		ds, ok := decls[key]
		if !ok {
			msg := fmt.Sprintf("unknown config key %s: pack %q declares no setting %q", path, p.Name, key)
			if len(order) > 0 {
				msg += "; its settings are " + strings.Join(order, ", ")
			} else {
				msg += "; it has no settings, remove the key"
			}
			errs = append(errs, &ConfigError{File: file, Line: v.Line, Key: path, Msg: msg})
			continue
		}
		secret := isSecretKey(ds)
		seen := map[string]bool{}
		for _, d := range ds {
			if d.Param == nil {
				continue
			}
			msg := checkParamValue(*d.Param, v, path, secret)
			if msg == "" || seen[msg] {
				continue
			}
			seen[msg] = true
			errs = append(errs, &ConfigError{File: file, Line: v.Line, Key: path,
				Msg: fmt.Sprintf("%s (tool %q declares %s as a %s setting)", msg, d.Tool, key, d.Param.Type)})
		}
	}
	for _, key := range order {
		if _, ok := g.Config[key]; ok {
			continue
		}
		for _, d := range decls[key] {
			if d.Param == nil || !d.Param.Required || len(d.Param.Default) > 0 {
				continue
			}
			if _, ok := d.Module.Request.Config[key]; ok {
				continue // the module's request.config gives a default
			}
			errs = append(errs, &MissingConfigError{Pack: p.Name, Tool: d.Tool, Param: *d.Param, File: file, Line: g.Line})
			break
		}
	}
	sortConfigErrors(errs)
	return errors.Join(errs...)
}

// checkParamValue returns what is wrong with v as a value of param p, or
// "" when it fits. path is the key as written in messages; when secret,
// the value is never quoted.
func checkParamValue(p ConfigParam, v ConfigValue, path string, secret bool) string {
	quoted := func(s string) string {
		if secret {
			return ""
		}
		return " " + strconv.Quote(s)
	}
	switch p.Type {
	case ParamNumber:
		var f float64
		switch x := v.raw.(type) {
		case int64:
			f = float64(x)
		case float64:
			f = x
		default:
			return fmt.Sprintf("%s must be a number, such as %s, got %s", path, exampleValue(p), v.Type())
		}
		shown := v.Text()
		if secret {
			shown = "out of range"
		}
		switch {
		case p.Min != nil && f < *p.Min:
			return fmt.Sprintf("%s is %s; it must be at least %s", path, shown, floatText(*p.Min))
		case p.Max != nil && f > *p.Max:
			return fmt.Sprintf("%s is %s; it must be at most %s", path, shown, floatText(*p.Max))
		case p.Step != nil && *p.Step > 0:
			base := 0.0
			if p.Min != nil {
				base = *p.Min
			}
			q := (f - base) / *p.Step
			if math.Abs(q-math.Round(q)) > 1e-9*math.Max(1, math.Abs(q)) {
				steps := make([]string, 3)
				for i := range steps {
					steps[i] = floatText(base + float64(i)**p.Step)
				}
				if secret {
					shown = "off the step"
				}
				return fmt.Sprintf("%s is %s; it must be %s plus a multiple of the step %s (%s, …)",
					path, shown, floatText(base), floatText(*p.Step), strings.Join(steps, ", "))
			}
		}
		return ""
	case ParamBoolean:
		if _, ok := v.raw.(bool); !ok {
			return fmt.Sprintf("%s must be true or false (without quotes), got %s", path, v.Type())
		}
		return ""
	}
	s, ok := v.raw.(string)
	if !ok {
		if p.Type == ParamSelect {
			return fmt.Sprintf("%s must be one of the strings %s, got %s", path, quoteAll(p.Options), v.Type())
		}
		return fmt.Sprintf("%s must be a string, got %s", path, v.Type())
	}
	switch p.Type {
	case ParamSelect:
		if !slices.Contains(p.Options, s) {
			return fmt.Sprintf("%s%s must be one of %s", path, quoted(s), quoteAll(p.Options))
		}
	case ParamURL:
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			shown := ""
			if !secret {
				shown = s
				if err == nil {
					shown = u.Redacted()
				}
				shown = " " + strconv.Quote(shown)
			}
			return fmt.Sprintf("%s%s must be an absolute http:// or https:// URL, such as \"https://api.example.com/v1\"", path, shown)
		}
	case ParamPath:
		if s == "" {
			return fmt.Sprintf("%s must not be empty; give a path", path)
		}
	}
	return ""
}

func quoteAll(opts []string) string {
	q := make([]string, len(opts))
	for i, o := range opts {
		q[i] = strconv.Quote(o)
	}
	return strings.Join(q, ", ")
}

// ConfigDefaults returns the values config_get gives module m when the
// operator sets none: its request.config, overlaid by the defaults of its
// tools' config params (strings as written, numbers and booleans as their
// JSON text). It is nil when there are none.
func (m *Module) ConfigDefaults() map[string]string {
	if m == nil {
		return nil
	}
	var out map[string]string
	set := func(k, v string) {
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	for k, v := range m.Request.Config {
		set(k, v)
	}
	for _, t := range m.Tools {
		for _, p := range t.ConfigParams {
			if v, ok := jsonDefaultText(p.Default); ok {
				set(p.Name, v)
			}
		}
	}
	return out
}

// jsonDefaultText turns a param's JSON default into config_get's form.
func jsonDefaultText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return strconv.FormatInt(n, 10), true
		}
		if f, err := x.Float64(); err == nil {
			return floatText(f), true
		}
		return x.String(), true
	}
	return "", false
}

// ModuleConfig returns the operator's [packs.<name>.config] values that
// module m may read: those of the keys its tools declare as config params
// or its request.config names. A key only other modules of the pack
// declare stays invisible to m. It is nil when there are none.
func (g PackGrant) ModuleConfig(m *Module) map[string]string {
	if m == nil || len(g.Config) == 0 {
		return nil
	}
	var out map[string]string
	give := func(k string) {
		v, ok := g.Config[k]
		if !ok {
			return
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v.Text()
	}
	for k := range m.Request.Config {
		give(k)
	}
	for _, t := range m.Tools {
		for _, p := range t.ConfigParams {
			give(p.Name)
		}
	}
	return out
}

// sortConfigErrors orders problems by line, for stable messages.
func sortConfigErrors(errs []error) {
	line := func(e error) int {
		var ce *ConfigError
		if errors.As(e, &ce) {
			return ce.Line
		}
		return math.MaxInt
	}
	sort.SliceStable(errs, func(i, j int) bool { return line(errs[i]) < line(errs[j]) })
}
