package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/packs"
)

// skillJSON is `skillhost show --json` for a skill. Env values never
// appear: only whether each declared variable has a value.
type skillJSON struct {
	*packs.SkillSpec
	// Aliases are a playbook skill's other names: its file's name and
	// its title.
	Aliases  []string          `json:"aliases,omitempty"`
	Source   string            `json:"source"`
	Path     string            `json:"path"`
	Settings settingsJSON      `json:"settings"`
	Env      map[string]string `json:"env_status,omitempty"` // name → "set" | "missing"
}

type settingsJSON struct {
	Enabled       bool     `json:"enabled"`
	Model         string   `json:"model,omitempty"`
	MaxIterations int      `json:"max_iterations,omitempty"`
	AllowChatIDs  []string `json:"allow_chat_ids,omitempty"`
}

func showSkill(g *globals, e *skillhost.Engine, se *packs.SkillEntry, alias string, asJSON bool) error {
	s := se.Skill
	aliases := packs.SkillAliases(se, e.Skills())
	op := e.Operator()
	st := op.SkillSettings(s)
	env := map[string]string{}
	var missing []error
	if s.Subagent != nil && len(s.Subagent.Env) > 0 {
		if _, err := op.SkillEnv(s); err != nil {
			missing = flatten(err)
		}
		for _, name := range s.Subagent.Env {
			env[name] = "set"
		}
		for _, m := range missing {
			var me *packs.MissingEnvError
			if errors.As(m, &me) {
				env[me.Name] = "missing"
			}
		}
	}
	if asJSON {
		b, err := json.MarshalIndent(skillJSON{SkillSpec: s, Aliases: aliases, Source: se.Source, Path: se.Path,
			Settings: settingsJSON{st.Enabled, st.Model, st.MaxIterations, st.AllowChatIDs}, Env: env}, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(g.stdout, string(b))
		return nil
	}
	w := g.stdout
	fmt.Fprintf(w, "%s\n", s.Name)
	if s.Title != "" {
		fmt.Fprintf(w, "  %s\n", s.Title)
	}
	if s.Description != "" {
		fmt.Fprintf(w, "  %s\n", s.Description)
	}
	if alias != "" {
		fmt.Fprintf(w, "  (found by its alias %q)\n", alias)
	}
	fmt.Fprintf(w, "\n  kind:    %s skill\n  pack:    %s (%s)\n  file:    %s\n", s.Kind, s.Pack, se.Source, se.Path)
	if len(aliases) > 0 {
		fmt.Fprintf(w, "  aliases: %s\n", quoteAll(aliases))
	}
	if s.License != "" {
		fmt.Fprintf(w, "  license: %s\n", s.License)
	}
	if s.Compatibility != "" {
		fmt.Fprintf(w, "  needs:   %s\n", strings.ReplaceAll(s.Compatibility, "\n", "\n           "))
	}
	if len(s.Metadata) > 0 {
		keys := make([]string, 0, len(s.Metadata))
		for k := range s.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			label := "  meta:    "
			if i > 0 {
				label = "           "
			}
			fmt.Fprintf(w, "%s%s: %s\n", label, k, s.Metadata[k])
		}
	}
	if s.Trigger != "" {
		fmt.Fprintf(w, "  trigger: %s\n", s.Trigger)
	}
	if s.TaskType != "" {
		fmt.Fprintf(w, "  task:    %s\n", s.TaskType)
	}
	if len(s.Tags) > 0 {
		fmt.Fprintf(w, "  tags:    %s\n", strings.Join(s.Tags, ", "))
	}
	if len(s.AllowedTools) > 0 {
		fmt.Fprintf(w, "  tools:   %s\n", strings.Join(s.AllowedTools, ", "))
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(w, "\n  %s:\n", title)
		for i, it := range items {
			fmt.Fprintf(w, "    %d. %s\n", i+1, it)
		}
	}
	list("preconditions", s.Preconditions)
	list("steps", s.Steps)
	list("failure modes", s.FailureModes)
	if sa := s.Subagent; sa != nil {
		model := st.Model
		if model == "" {
			model = "(default)"
		}
		fmt.Fprintf(w, "\n  subagent: model %s, at most %d iterations, enabled %s\n", model, st.MaxIterations, yesNo(st.Enabled))
		if len(sa.Capabilities) > 0 {
			fmt.Fprintf(w, "    capabilities: %s\n", strings.Join(sa.Capabilities, ", "))
		}
		if len(sa.ChatTypes) > 0 {
			fmt.Fprintf(w, "    chat types:   %s\n", strings.Join(sa.ChatTypes, ", "))
		}
		if len(st.AllowChatIDs) > 0 {
			fmt.Fprintf(w, "    chat ids:     %s\n", strings.Join(st.AllowChatIDs, ", "))
		}
		names := make([]string, 0, len(env))
		for n := range env {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "    env %s: %s\n", n, env[n])
		}
		for _, m := range missing {
			fmt.Fprintf(w, "    %v\n", m)
		}
	}
	if len(s.Resources) > 0 {
		fmt.Fprintf(w, "\n  files:\n")
		tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
		for _, r := range s.Resources {
			fmt.Fprintf(tw, "    %s\t%s\tsha256 %s\n", r.Path, size(r.Size), r.SHA256[:12])
		}
		tw.Flush()
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "\n  warning: %s\n", warn)
	}
	if s.Instructions != "" {
		n := strings.Count(s.Instructions, "\n")
		if !strings.HasSuffix(s.Instructions, "\n") {
			n++
		}
		fmt.Fprintf(w, "\n  instructions (%d lines)\n", n)
	}
	return nil
}

// quoteAll lists names, each quoted when it holds a space.
func quoteAll(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if strings.ContainsRune(n, ' ') {
			out[i] = strconv.Quote(n)
		}
	}
	return strings.Join(out, ", ")
}
