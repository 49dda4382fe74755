package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
)

func newShowCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a tool (descriptor, requested and effective grant) or a skill",
		Long: `Show a tool: its description, input, config, the grant its pack requests,
the grant and limits its calls run with and who set each; or a skill: its
settings, steps, files and env status. A playbook skill is found by its
canonical name (pack.<pack>.<slug>), its file's name without .skill.<ext>
or its title. show creates no file.`,
		Example: `  skillhost show slugify
  skillhost show slugify --json
  skillhost show cursor-pagination`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("show needs exactly one tool or skill NAME")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			e, done, err := openReadOnly(cmd.Context(), g)
			if err != nil {
				return err
			}
			defer done()
			t, err := e.Tool(args[0])
			if err != nil {
				se, alias, serr := findSkill(e, args[0])
				if ee := (*exitError)(nil); errors.As(serr, &ee) {
					return serr
				}
				if serr != nil {
					return usageErr("no tool or skill is called %q%s (skillhost list shows them)", args[0], didYouMean(args[0], knownNames(e, true, true)))
				}
				return showSkill(g, e, se, alias, asJSON)
			}
			if asJSON {
				return printToolJSON(g, t)
			}
			printTool(g, t)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

type toolJSON struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Pack         string          `json:"pack"`
	PackVersion  string          `json:"pack_version,omitempty"`
	Source       string          `json:"source"`
	Module       string          `json:"module"`
	Export       string          `json:"export"`
	Risk         string          `json:"risk_level"`
	SideEffects  bool            `json:"side_effects"`
	Idempotent   bool            `json:"idempotent"`
	Hidden       bool            `json:"hidden,omitempty"`
	Tags         []string        `json:"tags,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Config       []configJSON    `json:"config,omitempty"`
	Requested    host.Grant      `json:"requested"`
	// Operator is the operator's side, its limits the resolved ceilings;
	// GrantFrom says where it comes from ("config", "embedder", "none").
	Operator  host.Grant `json:"operator"`
	GrantFrom string     `json:"grant_from"`
	Effective host.Grant `json:"effective"`
	// Limits are the effective limits, LimitSources which side set each:
	// "pack", "operator", "operator default" or "default".
	Limits       host.Limits                 `json:"limits"`
	LimitSources map[string]skillhost.Origin `json:"limit_sources"`
	// Isolation is where the tool's calls run ("in-process" or
	// "process"), IsolationSource who chose it: "operator" (the pack's
	// section), "operator default" ([sandbox]) or "default".
	Isolation       host.Isolation   `json:"isolation"`
	IsolationSource skillhost.Origin `json:"isolation_source"`
	// Ceiling says what the trust policy took from the grant of an
	// installed pack no trusted signer signed, and why.
	Ceiling []string `json:"ceiling,omitempty"`
}

// configJSON is one config param of a tool with its effective value.
type configJSON struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Required bool     `json:"required,omitempty"`
	Unit     string   `json:"unit,omitempty"`
	Options  []string `json:"options,omitempty"`
	// Value is the text config_get returns, "***" for a secret; absent
	// when the param has no value.
	Value *string `json:"value,omitempty"`
	// From is "operator", "default" or "unset".
	From string `json:"from"`
}

// toolConfig lists the tool's config params with their effective values,
// a secret param's value as "***".
func toolConfig(t *skillhost.Tool) []configJSON {
	out := make([]configJSON, 0, len(t.ConfigParams))
	for _, p := range t.ConfigParams {
		c := configJSON{Name: p.Name, Type: p.Type, Required: p.Required, Unit: p.Unit, Options: p.Options, From: "unset"}
		if v, ok := t.Effective.Config[p.Name]; ok {
			if p.Type == packs.ParamSecret {
				v = "***"
			}
			c.Value = &v
			c.From = "default"
			if _, ok := t.Operator.Config[p.Name]; ok {
				c.From = "operator"
			}
		}
		out = append(out, c)
	}
	return out
}

// describeConfig prints the tool's config params, one a line.
func describeConfig(t *skillhost.Tool) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
	for _, c := range toolConfig(t) {
		val := "not set"
		if c.Required && c.Value == nil {
			val = "missing (required)"
		}
		if c.Value != nil {
			val = *c.Value
			if c.Type != packs.ParamSecret && c.Type != packs.ParamNumber && c.Type != packs.ParamBoolean {
				val = strconv.Quote(val)
			}
			if c.Unit != "" {
				val += " " + c.Unit
			}
			val += " (" + c.From + ")"
		}
		extra := ""
		if len(c.Options) > 0 {
			extra = "one of " + strings.Join(c.Options, ", ")
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\n", c.Name, c.Type, val, extra)
	}
	tw.Flush()
	lines := strings.SplitAfter(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \n")
		if l != lines[i] {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}

// redacted returns g with env and config values hidden: they may be secrets.
func redacted(g host.Grant) host.Grant {
	hide := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for k := range m {
			out[k] = "***"
		}
		return out
	}
	g.Env, g.Config = hide(g.Env), hide(g.Config)
	return g
}

func printToolJSON(g *globals, t *skillhost.Tool) error {
	b, err := json.MarshalIndent(toolJSON{
		Name: t.Name, Description: t.Description, Pack: t.Pack, PackVersion: t.PackVersion, Source: t.Source,
		Module: t.Module, Export: t.Export, Risk: t.Risk(), SideEffects: t.SideEffects, Idempotent: t.Idempotent,
		Hidden: t.Hidden, Tags: t.Tags, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		Config: toolConfig(t), Requested: redacted(t.Requested), Operator: redacted(t.Operator), GrantFrom: t.GrantFrom,
		Effective: redacted(t.Effective), Limits: t.Effective.Limits, LimitSources: t.LimitFrom,
		Isolation: t.Isolation, IsolationSource: t.IsolationFrom, Ceiling: g.ceilings[t.Pack],
	}, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, string(b))
	return nil
}

func printTool(g *globals, t *skillhost.Tool) {
	w := g.stdout
	fmt.Fprintf(w, "%s\n", t.Name)
	if t.Description != "" {
		fmt.Fprintf(w, "  %s\n", t.Description)
	}
	fmt.Fprintf(w, "\n  pack:    %s %s (%s)\n  module:  %s, export %s\n", t.Pack, t.PackVersion, t.Source, t.Module, t.Export)
	fmt.Fprintf(w, "  risk:    %s (side effects: %s, idempotent: %s)\n", t.Risk(), yesNo(t.SideEffects), yesNo(t.Idempotent))
	if len(t.Tags) > 0 {
		fmt.Fprintf(w, "  tags:    %s\n", strings.Join(t.Tags, ", "))
	}
	if len(t.InputSchema) > 0 {
		fmt.Fprintf(w, "\n  input:\n%s", schemaSummary(t.InputSchema))
	}
	if len(t.ConfigParams) > 0 {
		fmt.Fprintf(w, "\n  config (set in [packs.%s.config]):\n%s", t.Pack, describeConfig(t))
	}
	fmt.Fprintf(w, "\n  requested:\n%s", describeGrant(t.Requested, ""))
	fmt.Fprintf(w, "\n  effective grant (%s):\n%s", grantFrom(t), describeGrant(t.Effective, toolsNote(t)))
	if c := g.ceilings[t.Pack]; len(c) > 0 {
		fmt.Fprintf(w, "\n  held to the unknown signers' ceiling ([trust] restrict_unknown_signers):\n")
		for _, l := range c {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	fmt.Fprintf(w, "\n  limits:\n%s", describeLimits(t))
	fmt.Fprintf(w, "\n  isolation: %s (%s)\n", t.Isolation, isolationFrom(t))
}

// isolationFrom says who chose where t's calls run.
func isolationFrom(t *skillhost.Tool) string {
	switch t.IsolationFrom {
	case skillhost.OriginOperator:
		if t.GrantFrom == skillhost.GrantFromConfig {
			return fmt.Sprintf("operator, [packs.%s] isolation", t.Pack)
		}
		return "operator"
	case skillhost.OriginOperatorDefault:
		return "operator default, [sandbox] isolation"
	}
	return "default"
}

// grantFrom says where the operator's side of t's grant comes from.
func grantFrom(t *skillhost.Tool) string {
	switch t.GrantFrom {
	case skillhost.GrantFromConfig:
		return fmt.Sprintf("[packs.%s] of the operator config", t.Pack)
	case skillhost.GrantFromEmbedder:
		return "the grant given on the command line"
	}
	return fmt.Sprintf("no [packs.%s] section: nothing but the default limits", t.Pack)
}

// toolsNote says where the effective tools come from, or how to grant the
// requested ones when none are granted.
func toolsNote(t *skillhost.Tool) string {
	switch {
	case len(t.Effective.Tools) > 0 && t.GrantFrom == skillhost.GrantFromConfig:
		return fmt.Sprintf("listed in [packs.%s] tools", t.Pack)
	case len(t.Effective.Tools) > 0:
		return "listed in the grant"
	case len(t.Requested.Tools) > 0:
		return fmt.Sprintf("requested %s; the operator grants tools with tools = [...] in [packs.%s]", listOrNone(t.Requested.Tools), t.Pack)
	}
	return ""
}

// limitLabels names the limits the text output shows, by their JSON names,
// in the order of host.Limits; the kernel limit is left to --json.
var limitLabels = map[string]string{
	"timeout": "timeout", "max_memory_bytes": "memory", "max_output_bytes": "output", "max_log_bytes": "logs",
	"max_var_bytes": "vars", "max_http_response_bytes": "http response", "max_fuel": "fuel",
	"max_write_bytes": "writes", "max_open_files": "open files",
}

// describeLimits lists the effective limits, one a line, each with the side
// that set it.
func describeLimits(t *skillhost.Tool) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
	for _, f := range t.Effective.Limits.Fields() {
		label, ok := limitLabels[f.Name]
		if !ok {
			continue
		}
		var val string
		switch f.Name {
		case "timeout":
			val = time.Duration(f.Value).Round(time.Millisecond).String()
		case "max_fuel":
			val = "unlimited"
			if f.Value > 0 {
				val = fmt.Sprintf("%d instructions", f.Value)
			}
		case "max_open_files":
			val = strconv.FormatInt(f.Value, 10)
		default:
			val = size(f.Value)
		}
		from := string(t.LimitFrom[f.Name])
		switch t.LimitFrom[f.Name] {
		case skillhost.OriginOperator:
			if t.GrantFrom == skillhost.GrantFromConfig {
				from += fmt.Sprintf(" ([packs.%s] limits)", t.Pack)
			}
		case skillhost.OriginOperatorDefault:
			from += " ([limits])"
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s\n", label, val, from)
	}
	tw.Flush()
	return b.String()
}

// schemaSummary lists an object schema's properties, one a line.
func schemaSummary(raw json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil || len(s.Properties) == 0 {
		return "    " + string(raw) + "\n"
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
	for _, n := range names {
		p := s.Properties[n]
		opt := "optional"
		if req[n] {
			opt = "required"
		}
		fmt.Fprintf(tw, "    %s\t%v\t%s\t%s\n", n, p.Type, opt, p.Description)
	}
	tw.Flush()
	return b.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
