package index

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// SkillContent is a skill's content as handed to a model: returned by
// GetSkills and rendered into injection blocks. Redaction and tool-reference
// rewriting have been applied to every text field except Name.
type SkillContent struct {
	Name          string   `json:"name"`
	Title         string   `json:"title"`
	Description   string   `json:"description,omitempty"`
	Trigger       string   `json:"trigger"`
	TaskType      string   `json:"task_type,omitempty"`
	Steps         []string `json:"steps"`
	Preconditions []string `json:"preconditions"`
	FailureModes  []string `json:"failure_modes"`
	Instructions  string   `json:"instructions,omitempty"`
}

// EstimateTokens is the token estimate used for every budget in the
// package: a quarter of the text's length in characters, rounded up, so
// that EstimateTokens(s) <= n exactly when s has at most 4n characters.
func EstimateTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// The skill context block. Raw output is the same text without the tags
// and the header line.
const (
	skillContextOpen  = "<skill_context>\n"
	skillContextClose = "</skill_context>"
	truncationMark    = "\n[truncated to fit the token budget]\n"
	ellipsis          = "…"
)

// renderSkill writes one skill as a Markdown section.
func renderSkill(b *strings.Builder, d SkillContent) {
	b.WriteString("## ")
	b.WriteString(d.Name)
	if d.Title != "" {
		b.WriteString(" — ")
		b.WriteString(oneLine(d.Title))
	}
	b.WriteByte('\n')
	if d.Trigger != "" {
		b.WriteString("Use when: ")
		b.WriteString(oneLine(d.Trigger))
		b.WriteByte('\n')
	}
	if d.TaskType != "" && d.TaskType != "unknown" {
		b.WriteString("Task type: ")
		b.WriteString(d.TaskType)
		b.WriteByte('\n')
	}
	if d.Description != "" && d.Description != d.Trigger {
		b.WriteString("About: ")
		b.WriteString(oneLine(d.Description))
		b.WriteByte('\n')
	}
	writeList(b, "Preconditions:", d.Preconditions, false)
	writeList(b, "Steps:", d.Steps, true)
	writeList(b, "Failure modes:", d.FailureModes, false)
	if d.Instructions != "" {
		b.WriteString("Instructions:\n")
		b.WriteString(strings.TrimSpace(d.Instructions))
		b.WriteByte('\n')
	}
}

func writeList(b *strings.Builder, head string, items []string, numbered bool) {
	if len(items) == 0 {
		return
	}
	b.WriteString(head)
	b.WriteByte('\n')
	for i, it := range items {
		if numbered {
			b.WriteString(strconv.Itoa(i + 1))
			b.WriteString(". ")
		} else {
			b.WriteString("- ")
		}
		b.WriteString(oneLine(it))
		b.WriteByte('\n')
	}
}

// oneLine folds line breaks so that a field cannot break the block's
// layout.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// contextHeader is the first line of a <skill_context> block: it tells a
// model to read other skills with readTool ("" means skill_get).
func contextHeader(readTool string) string {
	if readTool == "" {
		readTool = "skill_get"
	}
	return "Skill playbooks for this task. Follow a skill's steps when its trigger fits; fetch other skills with " + readTool + ".\n"
}

// renderSkills renders docs as an injection block under header (a
// contextHeader), or as plain Markdown sections when header is "".
func renderSkills(docs []SkillContent, header string) string {
	var b strings.Builder
	inject := header != ""
	if inject {
		b.WriteString(skillContextOpen)
		b.WriteString(header)
	}
	for i, d := range docs {
		if i > 0 || inject {
			b.WriteByte('\n')
		}
		renderSkill(&b, d)
	}
	if inject {
		b.WriteString(skillContextClose)
	}
	return b.String()
}

// budgeted is the outcome of fitting skills into a token budget.
type budgeted struct {
	Text        string
	RawTokens   int  // estimate of the uncompressed rendering
	FinalTokens int  // estimate of Text; never above the budget
	Compressed  bool // fields were dropped or shortened
	Truncated   bool // the rendering was cut at the end
}

// compressionStep shortens every doc in place, least important content
// first. fair is the number of characters each doc may use on average.
type compressionStep func(d *SkillContent, fair int)

// compressionSteps are tried in order until the rendering fits: failure
// modes beyond three, the description, failure modes beyond one, all but
// two preconditions, the remaining failure modes and preconditions, then
// the instructions (cut to an even share of the budget), then the steps
// (fewer and shorter), then the task type line.
var compressionSteps = []compressionStep{
	func(d *SkillContent, _ int) { d.FailureModes = capList(d.FailureModes, 3) },
	func(d *SkillContent, _ int) { d.Description = "" },
	func(d *SkillContent, _ int) { d.FailureModes = capList(d.FailureModes, 1) },
	func(d *SkillContent, _ int) { d.Preconditions = capList(d.Preconditions, 2) },
	func(d *SkillContent, _ int) { d.FailureModes = nil },
	func(d *SkillContent, _ int) { d.Preconditions = nil },
	func(d *SkillContent, fair int) { d.Instructions = cutText(d.Instructions, fair*3/4) },
	func(d *SkillContent, _ int) { d.Steps = cutItems(capList(d.Steps, 10), 240) },
	func(d *SkillContent, fair int) { d.Instructions = cutText(d.Instructions, fair/2) },
	func(d *SkillContent, _ int) { d.Steps = cutItems(capList(d.Steps, 6), 160) },
	func(d *SkillContent, _ int) { d.Steps = cutItems(capList(d.Steps, 3), 120) },
	func(d *SkillContent, _ int) {
		d.TaskType = ""
		d.Trigger = cutText(d.Trigger, 160)
		d.Title = cutText(d.Title, 80)
	},
}

// fitSkills renders docs within maxTokens (EstimateTokens of the result
// is at most maxTokens): structured compression first, then truncation of
// the rendering at a line boundary. It returns "" only when not even the
// empty block fits. header is renderSkills'.
func fitSkills(docs []SkillContent, maxTokens int, header string) budgeted {
	inject := header != ""
	full := renderSkills(docs, header)
	out := budgeted{RawTokens: EstimateTokens(full)}
	if out.RawTokens <= maxTokens {
		out.Text, out.FinalTokens = full, out.RawTokens
		return out
	}
	out.Compressed = true
	limit := maxTokens * 4 // characters
	work := make([]SkillContent, len(docs))
	for i, d := range docs {
		work[i] = cloneDoc(d)
	}
	fair := limit
	if len(work) > 0 {
		fair = (limit - utf8.RuneCountInString(renderSkills(nil, header))) / len(work)
	}
	text := full
	for _, step := range compressionSteps {
		for i := range work {
			step(&work[i], fair)
		}
		text = renderSkills(work, header)
		if utf8.RuneCountInString(text) <= limit {
			out.Text, out.FinalTokens = text, EstimateTokens(text)
			return out
		}
	}
	out.Truncated = true
	out.Text = truncateBlock(text, limit, inject)
	out.FinalTokens = EstimateTokens(out.Text)
	return out
}

// truncateBlock cuts a rendering to at most limit characters, keeping the
// closing tag of an injection block and marking the cut.
func truncateBlock(text string, limit int, inject bool) string {
	suffix := truncationMark
	if inject {
		text = strings.TrimSuffix(text, skillContextClose)
		suffix += skillContextClose
	} else {
		suffix = strings.TrimRight(suffix, "\n")
	}
	room := limit - utf8.RuneCountInString(suffix)
	minimum := 0
	if inject {
		minimum = utf8.RuneCountInString(skillContextOpen)
	}
	if room < minimum {
		return ""
	}
	body := cutRunes(text, room)
	// Prefer to end at a line break when one is near the cut.
	if i := strings.LastIndexByte(body, '\n'); i >= 0 && utf8.RuneCountInString(body[i:]) <= room/4 {
		body = body[:i]
	}
	return strings.TrimRight(body, "\n ") + suffix
}

// cutRunes returns the first n characters of s.
func cutRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// cutText shortens s to at most n characters, ending at a word or line
// boundary when one is near and marking the cut with an ellipsis.
func cutText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return ""
	}
	cut := cutRunes(s, n-1)
	if i := strings.LastIndexAny(cut, " \n"); i > 0 && utf8.RuneCountInString(cut[i:]) <= n/5 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " \n") + ellipsis
}

func capList(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return items[:n]
}

func cutItems(items []string, n int) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = cutText(it, n)
	}
	return out
}

func cloneDoc(d SkillContent) SkillContent {
	d.Steps = append([]string(nil), d.Steps...)
	d.Preconditions = append([]string(nil), d.Preconditions...)
	d.FailureModes = append([]string(nil), d.FailureModes...)
	return d
}
