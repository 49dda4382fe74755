package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/tenancy"
)

// SkillsExtension is the identifier of the MCP Skills extension, under
// which the server's capabilities advertise skills/list and skills/get.
const SkillsExtension = "io.modelcontextprotocol/skills"

// The extension's limits on one skill: the entries of its manifest
// (SKILL.md included) and the sum of their sizes. A skill past either is
// not served through the extension (its files stay readable as
// resources).
const (
	maxSkillEntries = 512
	maxSkillBytes   = 16 << 20
)

// skillsPage is how many skills one skills/list page holds.
const skillsPage = 50

// withSkills adds what the server serves of skills to its capabilities:
// resources (the skill files) and the Skills extension.
func withSkills(c *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	c.Resources = &mcp.ResourceCapabilities{}
	c.AddExtension(SkillsExtension, map[string]any{"directoryRead": true})
	return c
}

// addSkills makes the session serve its tenant's skills: resources/list,
// resources/templates/list and resources/read of skill files, and the
// extension's skills/list, skills/get and resources/directory/read.
func (ss *session) addSkills() {
	ss.srv.AddReceivingMiddleware(ss.resourcesMiddleware)
	// Both names are outside the protocol's own methods, so adding them
	// cannot fail.
	if err := mcp.AddReceivingCustomMethod(ss.srv, "skills/list", ss.listSkills); err != nil {
		panic(err)
	}
	if err := mcp.AddReceivingCustomMethod(ss.srv, "skills/get", ss.getSkill); err != nil {
		panic(err)
	}
	if err := mcp.AddReceivingCustomMethod(ss.srv, "resources/directory/read", ss.readDirectory); err != nil {
		panic(err)
	}
}

// resourcesMiddleware answers the resource methods from the session's
// run; everything else goes on.
func (ss *session) resourcesMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "resources/list":
			r, _ := req.(*mcp.ListResourcesRequest)
			return ss.listResources(r)
		case "resources/templates/list":
			return ss.listResourceTemplates(), nil
		case "resources/read":
			r, _ := req.(*mcp.ReadResourceRequest)
			return ss.readResource(ctx, r)
		case "resources/subscribe", "resources/unsubscribe":
			return nil, invalidParams("%s: skill files change only when the operator reloads the skills; this server takes no subscriptions", method)
		}
		return next(ctx, method, req)
	}
}

// listSkillsParams are the params of skills/list.
type listSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// getSkillParams are the params of skills/get.
type getSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

// skillEntry is one skill as the extension describes it.
type skillEntry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	// Resources is a []skillFile, or "dynamic" when some file's content
	// is made when it is read.
	Resources any `json:"resources"`
}

// skillFile is one entry of a skill's manifest.
type skillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// listSkillsResult is the result of skills/list.
type listSkillsResult struct {
	mcp.ResultBase
	ResultType string        `json:"resultType"`
	Skills     []*skillEntry `json:"skills"`
	NextCursor string        `json:"nextCursor,omitempty"`
	mcp.Cacheable
}

// getSkillResult is the result of skills/get.
type getSkillResult struct {
	mcp.ResultBase
	ResultType string      `json:"resultType"`
	Skill      *skillEntry `json:"skill"`
	mcp.Cacheable
}

// entry describes skill d for the extension, or says why it exceeds the
// extension's limits.
func entry(d *registry.SkillFiles) (*skillEntry, error) {
	e := &skillEntry{URI: skillURI(d.Name, registry.SkillMDFile), Frontmatter: d.Frontmatter}
	if n := 1 + len(d.Files); n > maxSkillEntries {
		return nil, fmt.Errorf("skill %q has %d files with its SKILL.md; the skills extension serves a skill of at most %d (read its files with resources/read)", d.Name, n, maxSkillEntries)
	}
	if d.Dynamic() {
		e.Resources = "dynamic"
		return e, nil
	}
	files := make([]skillFile, 0, 1+len(d.Files))
	md, _ := d.File(registry.SkillMDFile)
	total := md.Size
	files = append(files, skillFile{URI: e.URI, Digest: "sha256:" + md.SHA256, Size: md.Size})
	for _, f := range d.Files {
		total += f.Size
		files = append(files, skillFile{URI: skillURI(d.Name, f.Path), Digest: "sha256:" + f.SHA256, Size: f.Size})
	}
	if total > maxSkillBytes {
		return nil, fmt.Errorf("skill %q holds %d bytes; the skills extension serves a skill of at most %d (16 MiB; read its files with resources/read)", d.Name, total, maxSkillBytes)
	}
	e.Resources = files
	return e, nil
}

// listSkills answers skills/list: the skills the session's tenant may
// use, by name, page by page; a skill past the extension's limits is left
// out (and logged).
func (ss *session) listSkills(_ context.Context, _ *mcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
	after := ""
	if p != nil && p.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		if err != nil || len(b) > maxURIBytes || !utf8.Valid(b) {
			return nil, invalidParams("skills/list: the cursor %q is not one this server gave; pass back the nextCursor of the page before", truncate(p.Cursor))
		}
		after = string(b)
	}
	res := &listSkillsResult{ResultType: "complete", Skills: []*skillEntry{}}
	res.TTLMs, res.CacheScope = listTTL, "private"
	for _, d := range ss.skillDocs() { // sorted by name
		if after != "" && d.Name <= after {
			continue
		}
		e, err := entry(d)
		if err != nil {
			ss.s.log.Warn("skills/list: leaving a skill out", "tenant", ss.t.ID, "skill", d.Name, "err", err)
			continue
		}
		if len(res.Skills) == skillsPage {
			res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(last(res.Skills)))
			break
		}
		res.Skills = append(res.Skills, e)
	}
	return res, nil
}

// last returns the skill name of the last entry.
func last(es []*skillEntry) string {
	name, _, _ := parseSkillURI(es[len(es)-1].URI)
	return name
}

// getSkill answers skills/get: the entry of the skill whose SKILL.md URI
// is given. A skill the tenant may not use is "no skill is served", as a
// missing one is.
func (ss *session) getSkill(_ context.Context, _ *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("skills/get needs params.uri, the URI of a skill's SKILL.md (skill://<skill>/SKILL.md)")
	}
	name, file, err := parseSkillURI(p.URI)
	if err != nil {
		return nil, invalidParams("skills/get: %v", err)
	}
	if file != registry.SkillMDFile {
		return nil, invalidParams("skills/get: %q is not the URI of a SKILL.md; a skill is named by skill://<skill>/SKILL.md", truncate(p.URI))
	}
	d, err := ss.skillDoc(name)
	if errors.Is(err, registry.ErrNoSkillDoc) {
		return nil, invalidParams("no skill is served at %s", truncate(p.URI))
	} else if err != nil {
		return nil, err
	}
	e, err := entry(d)
	if err != nil {
		return nil, invalidParams("skills/get: %v", err)
	}
	res := &getSkillResult{ResultType: "complete", Skill: e}
	res.TTLMs, res.CacheScope = listTTL, "private"
	return res, nil
}

// checkSkillTenants checks that the engine keeps each pack's skills where
// the server's tenants say the pack's tools go: an owned pack's skills at
// its tenant's scope, and, with [server] shared_packs set, a pack neither
// shared nor owned out of every tenant's sight. An engine opened with
// other tenants would let one tenant find another's skills.
func checkSkillTenants(e Engine, set *tenancy.Set) error {
	const fix = "open the engine with the server's operator config (skillhost.Config.Operator) or its tenants (skillhost.Config.Tenants)"
	engine := e.Tenants()
	for _, t := range set.Tenants() {
		for _, p := range t.Packs {
			if got := engine.Owner(p); got != tenancy.OwnedBy(t.ID) {
				return fmt.Errorf("%w: pack %q is tenant %q's, but the engine keeps its skills for %v; %s", ErrBadTenants, p, t.ID, got, fix)
			}
		}
	}
	if set.Len() == 0 {
		return nil
	}
	for _, se := range e.Skills() {
		p := se.Skill.Pack
		if p == "" {
			continue
		}
		if want, got := set.Owner(p), engine.Owner(p); got != want {
			return fmt.Errorf("%w: the skills of pack %q are for %v, but the engine keeps them for %v; %s", ErrBadTenants, p, want, got, fix)
		}
	}
	return nil
}
