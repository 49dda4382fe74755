package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
)

// The skill tools report their failures with these messages' first words
// (the error kinds of skill toolsets) and these abi codes:
//
//   - "skill not found" (not_found): no skill of that name for the run;
//   - "resource not found" (not_found): the skill has no such file;
//   - "script not found" (not_found): the skill has no such script;
//   - "script failed" (guest_error, or the code of the script's
//     *ToolError): the script ran and reported an error;
//   - "invalid resource path" (invalid_input): a path that could leave the
//     skill folder;
//   - "resource too large" (limit_exceeded): past the resource cap;
//   - "resource unreadable" (unavailable): the file changed or went since
//     the skill was loaded, or could not be read;
//   - "script cannot run" (unavailable): a file script that is not a
//     .wasm WASI command module, or no host to run it (see script.go).

// scriptsDir is the folder of a file skill whose files are its scripts.
const scriptsDir = "scripts/"

var skillNameProp = `"skill_name":{"type":"string","minLength":1,"description":"The skill's name, as list_skills gives it."}`

var listSkillsDesc = packs.ToolSpec{
	Name: ListSkillsName,
	Description: "List the skills you can use: each one's name, what it is for, and its scripts. " +
		"Read a skill's instructions with load_skill before following it. " +
		"Answers {skills: [{name, description, scripts}]}.",
	InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
	OutputSchema: json.RawMessage(`{"type":"object","required":["skills"],"properties":{"skills":{"type":"array","items":{` +
		`"type":"object","required":["name","description"],"properties":{"name":{"type":"string"},"description":{"type":"string"},` +
		`"scripts":{"type":"array","items":{"type":"string"}}}}}}}`),
	Category:   "skills",
	Tags:       []string{"skills"},
	Idempotent: true,
	Loading:    packs.LoadingAlways,
}

var loadSkillDesc = packs.ToolSpec{
	Name: LoadSkillName,
	Description: "Load a skill: its instructions, and the files and scripts it brings (names and sizes). " +
		"Read a file with read_skill_resource; run a script marked runnable with run_skill_script. " +
		"Answers {name, description, license, compatibility, metadata, instructions, resources: [{name, size, sha256, description}], " +
		"scripts: [{name, size, description, input_schema, runnable}]}. " +
		"Errors: not_found \"skill not found\".",
	InputSchema: json.RawMessage(`{"type":"object","required":["skill_name"],"additionalProperties":false,"properties":{` + skillNameProp + `}}`),
	OutputSchema: json.RawMessage(`{"type":"object","required":["name","description","instructions","resources","scripts"],"properties":{` +
		`"name":{"type":"string"},"description":{"type":"string"},"instructions":{"type":"string"},` +
		`"resources":{"type":"array","items":{"type":"object","required":["name"]}},` +
		`"scripts":{"type":"array","items":{"type":"object","required":["name","runnable"]}}}}`),
	Category:   "skills",
	Tags:       []string{"skills"},
	Idempotent: true,
	Loading:    packs.LoadingAlways,
}

var readSkillResourceDesc = packs.ToolSpec{
	Name: ReadSkillResourceName,
	Description: "Read one file of a skill by its path in the skill, as load_skill lists it (\"references/guide.md\"). " +
		"Answers {skill_name, resource_name, size, sha256, encoding, content}: text comes as it is (encoding utf-8), " +
		"other bytes as base64. Errors: not_found \"skill not found\" or \"resource not found\"; " +
		"invalid_input \"invalid resource path\" (a path with \"..\", a leading \"/\" or a backslash); " +
		"limit_exceeded \"resource too large\"; unavailable \"resource unreadable\".",
	InputSchema: json.RawMessage(`{"type":"object","required":["skill_name","resource_name"],"additionalProperties":false,"properties":{` +
		skillNameProp + `,"resource_name":{"type":"string","minLength":1,"description":"The file's path in the skill, as load_skill lists it."}}}`),
	OutputSchema: json.RawMessage(`{"type":"object","required":["skill_name","resource_name","size","encoding","content"],"properties":{` +
		`"skill_name":{"type":"string"},"resource_name":{"type":"string"},"size":{"type":"integer","minimum":0},` +
		`"sha256":{"type":"string"},"encoding":{"type":"string","enum":["utf-8","base64"]},"content":{"type":"string"}}}`),
	Category:   "skills",
	Tags:       []string{"skills"},
	Idempotent: true,
	Loading:    packs.LoadingAlways,
}

var runSkillScriptDesc = packs.ToolSpec{
	Name: RunSkillScriptName,
	Description: "Run one of a skill's scripts with arguments (an object; see the script's input_schema in load_skill). " +
		"Only scripts load_skill marks runnable can run. A .wasm script runs sandboxed as a command: each argument becomes a flag " +
		"({\"query\": \"x\"} → --query x; a list repeats the flag; true → a bare flag; false and null are left out), " +
		"stdin is empty unless given. Answers {skill_name, script_name, output} (a .wasm script's output is its stdout, " +
		"with stderr and truncated when a cap cut them). " +
		"Errors: not_found \"skill not found\" or \"script not found\"; invalid_input for arguments the script refuses; " +
		"guest_error \"script failed\" (a non-zero exit, with the end of stderr); timeout; unavailable \"script cannot run\".",
	InputSchema: json.RawMessage(`{"type":"object","required":["skill_name","script_name"],"additionalProperties":false,"properties":{` +
		skillNameProp + `,"script_name":{"type":"string","minLength":1,"description":"The script's name, as load_skill lists it."},` +
		`"args":{"type":"object","default":{},"description":"The script's arguments."},` +
		`"stdin":{"type":"string","description":"Standard input for a .wasm script; empty when left out."}}}`),
	OutputSchema: json.RawMessage(`{"type":"object","required":["skill_name","script_name","output"],"properties":{` +
		`"skill_name":{"type":"string"},"script_name":{"type":"string"},` +
		`"output":{"description":"What the script returned: any JSON value; a .wasm script's stdout as a string."},` +
		`"stderr":{"type":"string"},"truncated":{"type":"boolean"}}}`),
	Category: "skills",
	Tags:     []string{"skills"},
	// A script may do anything its skill's grant allows, and calling it
	// twice may do it twice: the tool is none of read-only, idempotent or
	// safe (and Builtins marks it RunsCode, which its renderings follow).
	SideEffects: true,
	RiskLevel:   "DANGEROUS",
	Loading:     packs.LoadingAlways,
}

// skillTexts cleans skill text for one run: references to tools the run
// may not find are rewritten, and personal data redacted unless the set
// turns redaction off. Files (read_skill_resource) are served as they
// are.
type skillTexts struct {
	rw     *index.ToolRefRewriter
	redact bool
}

func (set *SkillSet) texts(run *Run) skillTexts {
	return skillTexts{rw: index.NewToolRefRewriter(run.Findable, registryToolNames(run)), redact: !set.opts.DisableRedaction}
}

func (t skillTexts) clean(s string) string {
	s = t.rw.Rewrite(s)
	if t.redact {
		s = index.Redact(s)
	}
	return s
}

func skillNotFound(name string) error {
	return builtinError(abi.CodeNotFound, "skill not found: there is no skill %q (list_skills lists the skills you can use)", name)
}

// find returns the skill name for run, or "skill not found".
func (set *SkillSet) find(run *Run, name string) (skillRef, error) {
	s, ok := set.lookup(run.Context(), name)
	if !ok {
		return skillRef{}, skillNotFound(name)
	}
	return s, nil
}

// fileScripts returns the names of a file skill's scripts: its files
// under scripts/.
func fileScripts(sk *packs.SkillSpec) []string {
	var out []string
	for _, r := range sk.Resources {
		if strings.HasPrefix(r.Path, scriptsDir) {
			out = append(out, r.Path)
		}
	}
	return out
}

// ---- list_skills -----------------------------------------------------

type skillListing struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Scripts     []string `json:"scripts,omitempty"`
}

func (set *SkillSet) listSkills(_ context.Context, run *Run, _ json.RawMessage) (any, error) {
	tx := set.texts(run)
	out := []skillListing{}
	for _, s := range set.forRun(run.Context()) {
		l := skillListing{Name: s.name, Description: tx.clean(s.description())}
		if s.code != nil {
			for _, sc := range s.code.Scripts {
				l.Scripts = append(l.Scripts, sc.Name)
			}
		} else {
			l.Scripts = fileScripts(s.file.Skill)
		}
		out = append(out, l)
	}
	return map[string]any{"skills": out}, nil
}

// ---- load_skill ------------------------------------------------------

type loadedSkill struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	Instructions  string            `json:"instructions"`
	Resources     []resourceInfo    `json:"resources"`
	Scripts       []scriptInfo      `json:"scripts"`
}

type resourceInfo struct {
	Name        string `json:"name"`
	Size        *int64 `json:"size,omitempty"`
	SHA256      string `json:"sha256,omitempty"`
	Description string `json:"description,omitempty"`
}

type scriptInfo struct {
	Name        string          `json:"name"`
	Size        *int64          `json:"size,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Runnable says whether run_skill_script can run the script now.
	Runnable bool `json:"runnable"`
}

func (set *SkillSet) loadSkill(_ context.Context, run *Run, args json.RawMessage) (any, error) {
	var in struct {
		SkillName string `json:"skill_name"`
	}
	if err := decodeBuiltinArgs(args, &in); err != nil {
		return nil, err
	}
	s, err := set.find(run, in.SkillName)
	if err != nil {
		return nil, err
	}
	tx := set.texts(run)
	out := loadedSkill{Name: s.name, Description: tx.clean(s.description()), Resources: []resourceInfo{}, Scripts: []scriptInfo{}}
	var md map[string]string
	if c := s.code; c != nil {
		out.License, out.Compatibility, md = c.License, c.Compatibility, c.Metadata
		out.Instructions = tx.clean(c.Instructions)
		for _, r := range c.Resources {
			ri := resourceInfo{Name: r.Name, Description: tx.clean(r.Description)}
			if r.Load == nil {
				n := int64(len(r.Content))
				ri.Size = &n
				ri.SHA256 = skillSHA256(r.Content)
			}
			out.Resources = append(out.Resources, ri)
		}
		for _, sc := range c.Scripts {
			out.Scripts = append(out.Scripts, scriptInfo{Name: sc.Name, Description: tx.clean(sc.Description), InputSchema: sc.InputSchema, Runnable: true})
		}
	} else {
		sk := s.file.Skill
		out.License, out.Compatibility, md = sk.License, sk.Compatibility, sk.Metadata
		out.Instructions = tx.clean(skillInstructions(sk))
		for _, r := range sk.Resources {
			size := r.Size
			if strings.HasPrefix(r.Path, scriptsDir) {
				out.Scripts = append(out.Scripts, scriptInfo{Name: r.Path, Size: &size, Runnable: run.runsWasmScripts() && path.Ext(r.Path) == ".wasm"})
				continue
			}
			out.Resources = append(out.Resources, resourceInfo{Name: r.Path, Size: &size, SHA256: r.SHA256})
		}
	}
	if len(md) > 0 {
		out.Metadata = make(map[string]string, len(md))
		for k, v := range md {
			out.Metadata[k] = tx.clean(v)
		}
	}
	return out, nil
}

// skillInstructions returns what a file skill asks of the model: a SKILL.md
// body as written, or a playbook skill's fields as Markdown.
func skillInstructions(sk *packs.SkillSpec) string {
	if sk.Kind != packs.KindPlaybook {
		return sk.Instructions
	}
	var b strings.Builder
	if sk.Title != "" {
		fmt.Fprintf(&b, "# %s\n\n", sk.Title)
	}
	if sk.Trigger != "" {
		fmt.Fprintf(&b, "Use when: %s\n\n", sk.Trigger)
	}
	list := func(title string, items []string, numbered bool) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "## %s\n\n", title)
		for i, it := range items {
			if numbered {
				fmt.Fprintf(&b, "%d. %s\n", i+1, it)
			} else {
				fmt.Fprintf(&b, "- %s\n", it)
			}
		}
		b.WriteString("\n")
	}
	list("Preconditions", sk.Preconditions, false)
	list("Steps", sk.Steps, true)
	list("Failure modes", sk.FailureModes, false)
	if sk.Instructions != "" {
		b.WriteString(sk.Instructions)
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func skillSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ---- read_skill_resource ---------------------------------------------

type resourceContent struct {
	SkillName    string `json:"skill_name"`
	ResourceName string `json:"resource_name"`
	Size         int    `json:"size"`
	SHA256       string `json:"sha256"`
	Encoding     string `json:"encoding"`
	Content      string `json:"content"`
}

func resourceNotFound(skill, name string) error {
	return builtinError(abi.CodeNotFound, "resource not found: skill %q has no file %q (load_skill lists its files)", skill, name)
}

func (set *SkillSet) readSkillResource(ctx context.Context, run *Run, args json.RawMessage) (any, error) {
	var in struct {
		SkillName    string `json:"skill_name"`
		ResourceName string `json:"resource_name"`
	}
	if err := decodeBuiltinArgs(args, &in); err != nil {
		return nil, err
	}
	s, err := set.find(run, in.SkillName)
	if err != nil {
		return nil, err
	}
	name, err := cleanResourcePath(in.ResourceName)
	if err != nil {
		return nil, builtinError(abi.CodeInvalidInput, "invalid resource path %q: %v", in.ResourceName, err)
	}
	var data []byte
	if s.code != nil {
		data, err = set.codeResource(ctx, s, name)
	} else {
		data, err = set.fileResource(s, name)
	}
	if err != nil {
		return nil, err
	}
	out := resourceContent{SkillName: s.name, ResourceName: name, Size: len(data), SHA256: skillSHA256(data), Encoding: "utf-8"}
	if utf8.Valid(data) && !bytes.ContainsRune(data, 0) {
		out.Content = string(data)
	} else {
		out.Encoding, out.Content = "base64", base64.StdEncoding.EncodeToString(data)
	}
	return out, nil
}

func (set *SkillSet) tooLarge(skill, name string, size int64) error {
	return builtinError(abi.CodeLimitExceeded, "resource too large: %q of skill %q holds %d bytes; read_skill_resource returns at most %d",
		name, skill, size, set.opts.MaxResourceBytes)
}

// codeResource returns the content of a programmatic skill's resource.
func (set *SkillSet) codeResource(ctx context.Context, s skillRef, name string) ([]byte, error) {
	for _, r := range s.code.Resources {
		if r.Name != name {
			continue
		}
		data := r.Content
		if r.Load != nil {
			var err error
			if data, err = r.Load(ctx); err != nil {
				var te *ToolError
				if errors.As(err, &te) {
					return nil, te
				}
				return nil, builtinError(abi.CodeUnavailable, "resource unreadable: %q of skill %q: %v", name, s.name, err)
			}
		}
		if int64(len(data)) > set.opts.MaxResourceBytes {
			return nil, set.tooLarge(s.name, name, int64(len(data)))
		}
		return data, nil
	}
	return nil, resourceNotFound(s.name, name)
}

// fileResource reads a file skill's file: only a file listed when the
// skill was loaded, read through the skill's folder (an os.Root for a
// folder on disk), and only when its size and sha256 are still those
// listed, so a file swapped for a link or changed since is refused.
func (set *SkillSet) fileResource(s skillRef, name string) ([]byte, error) {
	var res *packs.Resource
	for i := range s.file.Skill.Resources {
		if s.file.Skill.Resources[i].Path == name {
			res = &s.file.Skill.Resources[i]
			break
		}
	}
	if res == nil {
		return nil, resourceNotFound(s.name, name)
	}
	if res.Size > set.opts.MaxResourceBytes {
		return nil, set.tooLarge(s.name, name, res.Size)
	}
	return set.readListed(s, res)
}

// readListed reads a file skill's listed file res, whatever its size,
// refusing it when it changed since the skill was loaded.
func (set *SkillSet) readListed(s skillRef, res *packs.Resource) ([]byte, error) {
	name := res.Path
	unreadable := func(format string, args ...any) error {
		return builtinError(abi.CodeUnavailable, "resource unreadable: %q of skill %q: %s", name, s.name, fmt.Sprintf(format, args...))
	}
	fsys, closeDir, err := set.opts.OpenDir(s.file)
	if err != nil {
		return nil, unreadable("the skill folder cannot be opened")
	}
	if closeDir != nil {
		defer closeDir()
	}
	f, err := fsys.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, unreadable("the file is gone since the skill was loaded")
		}
		return nil, unreadable("%v", withoutPath(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, res.Size+1))
	if err != nil {
		return nil, unreadable("%v", withoutPath(err))
	}
	if int64(len(data)) != res.Size || skillSHA256(data) != res.SHA256 {
		return nil, unreadable("the file changed since the skill was loaded (its sha256 no longer matches); reload the skills")
	}
	return data, nil
}

// withoutPath returns the cause of a file error without the path it
// names, which may be the host's.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ---- run_skill_script ------------------------------------------------

type scriptOutput struct {
	SkillName  string          `json:"skill_name"`
	ScriptName string          `json:"script_name"`
	Output     json.RawMessage `json:"output"`
	// A .wasm script's output is its stdout; Stderr is what it wrote
	// there, and Truncated says one of the two was cut at its cap.
	Stderr    string `json:"stderr,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

func scriptNotFound(skill, name string, have []string) error {
	list := "it has none"
	if len(have) > 0 {
		list = "its scripts are " + strings.Join(have, ", ")
	}
	return builtinError(abi.CodeNotFound, "script not found: skill %q has no script %q (%s)", skill, name, list)
}

func (set *SkillSet) runSkillScript(ctx context.Context, run *Run, args json.RawMessage) (any, error) {
	var in struct {
		SkillName  string          `json:"skill_name"`
		ScriptName string          `json:"script_name"`
		Args       json.RawMessage `json:"args"`
		Stdin      *string         `json:"stdin"`
	}
	if err := decodeBuiltinArgs(args, &in); err != nil {
		return nil, err
	}
	s, err := set.find(run, in.SkillName)
	if err != nil {
		return nil, err
	}
	if s.file != nil {
		return set.runFileScript(ctx, run, s, in.ScriptName, in.Args, in.Stdin)
	}
	var sc *SkillScript
	var have []string
	for i := range s.code.Scripts {
		have = append(have, s.code.Scripts[i].Name)
		if s.code.Scripts[i].Name == in.ScriptName {
			sc = &s.code.Scripts[i]
		}
	}
	if sc == nil {
		return nil, scriptNotFound(s.name, in.ScriptName, have)
	}
	raw := bytes.TrimSpace(in.Args)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if sc.input != nil {
		vs, err := packs.ValidateJSON(sc.input, raw)
		if err != nil {
			return nil, builtinError(abi.CodeInvalidInput, "arguments for script %q: %v", sc.Name, err)
		}
		if len(vs) > 0 {
			return nil, &ToolError{Code: abi.CodeInvalidInput,
				Message: violationsMessage(fmt.Sprintf("arguments for script %q of skill %q do not match its input schema", sc.Name, s.name), vs)}
		}
	}
	var argv map[string]any
	if err := json.Unmarshal(raw, &argv); err != nil {
		return nil, builtinError(abi.CodeInvalidInput, "arguments for script %q: %v", sc.Name, err)
	}
	if argv == nil {
		argv = map[string]any{}
	}
	v, err := sc.Run(ctx, argv)
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) {
			return nil, te
		}
		return nil, builtinError(abi.CodeGuestError, "script failed: script %q of skill %q: %v", sc.Name, s.name, err)
	}
	var out json.RawMessage
	switch x := v.(type) {
	case string:
		out, err = json.Marshal(x)
	case json.RawMessage:
		if !json.Valid(x) {
			err = errors.New("not valid JSON")
		}
		out = x
	default:
		out, err = json.Marshal(x)
	}
	if err != nil {
		return nil, builtinError(abi.CodeInternal, "script failed: script %q of skill %q returned a value that cannot be encoded as JSON: %v", sc.Name, s.name, err)
	}
	return scriptOutput{SkillName: s.name, ScriptName: sc.Name, Output: out}, nil
}
