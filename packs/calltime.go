package packs

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// CheckToolConfig checks config values given for one call of tool t (a
// tenant's settings, or `skillhost call --config K=V`), as text, against
// the tool's config params, with the messages CheckPackConfig uses: a key
// the tool does not declare, a number or boolean that does not parse, a
// value out of range or not among the options. It returns nil or every
// problem joined, each a *ConfigError naming the key; a secret's value is
// never quoted.
func CheckToolConfig(t *ToolSpec, values map[string]string) error {
	params := map[string]ConfigParam{}
	var names []string
	for _, p := range t.ConfigParams {
		params[p.Name] = p
		names = append(names, p.Name)
	}
	sort.Strings(names)
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, key := range keys {
		path := "config " + key
		p, ok := params[key]
		if !ok {
			msg := fmt.Sprintf("unknown config key %s: tool %q declares no setting %q", key, t.Name, key)
			if len(names) > 0 {
				msg += "; its settings are " + strings.Join(names, ", ")
			} else {
				msg += "; it has no settings"
			}
			errs = append(errs, &ConfigError{Key: path, Msg: msg})
			continue
		}
		v := textConfigValue(p, values[key])
		if msg := checkParamValue(p, v, path, p.Type == ParamSecret); msg != "" {
			errs = append(errs, &ConfigError{Key: path, Msg: fmt.Sprintf("%s (tool %q declares %s as a %s setting)", msg, t.Name, key, p.Type)})
		}
	}
	return errors.Join(errs...)
}

// textConfigValue reads a value given as text the way the param's type
// wants it: a number or boolean when it parses as one, else text, which
// the check then reports as the wrong type.
func textConfigValue(p ConfigParam, s string) ConfigValue {
	switch p.Type {
	case ParamNumber:
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return ConfigValue{raw: i}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return ConfigValue{raw: f}
		}
	case ParamBoolean:
		if b, err := strconv.ParseBool(s); err == nil {
			return ConfigValue{raw: b}
		}
	}
	return ConfigValue{raw: s}
}
