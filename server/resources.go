package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/registry"
)

// skillScheme starts the URI of every skill file: skill://<name>/<path>,
// the skill's name and each path segment percent-encoded.
const skillScheme = "skill://"

// maxURIBytes bounds a resource URI a client sends.
const maxURIBytes = 4096

// resourcePage is how many resources one resources/list page holds.
const resourcePage = 500

// skillURI returns the URI of the file at p (slash-separated) of skill
// name.
func skillURI(name, p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return skillScheme + url.PathEscape(name) + "/" + strings.Join(segs, "/")
}

// parseSkillURI splits a skill file URI into the skill's name and the
// file's path, both decoded. The path is not cleaned: it is only ever
// compared with the paths the skill lists, so "..", "." or an empty
// segment name no file. An error says what is wrong with the URI's form;
// a URI of the right form that names nothing is the caller's to report as
// not found.
func parseSkillURI(uri string) (name, p string, err error) {
	switch {
	case uri == "":
		return "", "", errors.New("the uri is empty")
	case len(uri) > maxURIBytes:
		return "", "", fmt.Errorf("the uri is %d bytes long; a skill file's URI has at most %d", len(uri), maxURIBytes)
	case !utf8.ValidString(uri):
		return "", "", errors.New("the uri is not valid UTF-8")
	case !strings.HasPrefix(uri, skillScheme):
		return "", "", fmt.Errorf("%q is not a skill URI; skill files are skill://<skill>/<path>, such as skill://<skill>/SKILL.md", truncate(uri))
	}
	rest := uri[len(skillScheme):]
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		return "", "", fmt.Errorf("%q has a query or fragment; a skill file's URI has neither", truncate(uri))
	}
	rawName, rawPath, ok := strings.Cut(rest, "/")
	if !ok || rawName == "" || rawPath == "" {
		return "", "", fmt.Errorf("%q names no file; skill files are skill://<skill>/<path>, such as skill://<skill>/SKILL.md", truncate(uri))
	}
	if name, err = url.PathUnescape(rawName); err != nil {
		return "", "", fmt.Errorf("%q: the skill name is not well percent-encoded", truncate(uri))
	}
	if p, err = url.PathUnescape(rawPath); err != nil {
		return "", "", fmt.Errorf("%q: the file path is not well percent-encoded", truncate(uri))
	}
	return name, p, nil
}

// truncate shortens a client's string for an error message.
func truncate(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func internalError(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(format, args...)}
}

// mimeTypes are the media types of skill files by extension: a fixed
// table, so a listing does not depend on the machine's mime database.
var mimeTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".text": "text/plain",
	".json": "application/json", ".jsonl": "application/jsonl", ".yaml": "application/yaml", ".yml": "application/yaml",
	".toml": "application/toml", ".csv": "text/csv", ".tsv": "text/tab-separated-values", ".xml": "application/xml",
	".html": "text/html", ".htm": "text/html", ".css": "text/css", ".js": "text/javascript", ".mjs": "text/javascript",
	".ts": "text/x-typescript", ".py": "text/x-python", ".sh": "text/x-shellscript", ".bash": "text/x-shellscript",
	".go": "text/x-go", ".rs": "text/x-rust", ".rb": "text/x-ruby", ".sql": "application/sql",
	".wasm": "application/wasm", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".svg": "image/svg+xml", ".webp": "image/webp", ".pdf": "application/pdf",
	".zip": "application/zip",
}

// mimeType is the media type of a skill file at p.
func mimeType(p string) string {
	if path.Base(p) == registry.SkillMDFile {
		return "text/markdown"
	}
	if t, ok := mimeTypes[strings.ToLower(path.Ext(p))]; ok {
		return t
	}
	return "application/octet-stream"
}

// skillDocs returns the documents of the skills the session's tenant may
// use, sorted by name. A skill whose SKILL.md cannot be read now (it
// changed since it was loaded) is left out and logged.
func (ss *session) skillDocs() []*registry.SkillFiles {
	set := ss.run.Skills()
	if set == nil {
		return nil
	}
	var out []*registry.SkillFiles
	for _, name := range set.Names(ss.run) {
		d, err := set.Doc(ss.run, name)
		if err != nil {
			ss.s.log.Warn("serving skills: leaving a skill out", "tenant", ss.t.ID, "skill", name, "err", err)
			continue
		}
		out = append(out, d)
	}
	return out
}

// skillDoc returns the document of the skill called name, when the
// session's tenant may use it; an unreadable SKILL.md is an internal
// error.
func (ss *session) skillDoc(name string) (*registry.SkillFiles, error) {
	set := ss.run.Skills()
	if set == nil {
		return nil, registry.ErrNoSkillDoc
	}
	d, err := set.Doc(ss.run, name)
	if err != nil && !errors.Is(err, registry.ErrNoSkillDoc) {
		ss.s.log.Warn("serving skills: a skill cannot be read", "tenant", ss.t.ID, "skill", name, "err", err)
		return nil, internalError("skill %q cannot be read now: its SKILL.md changed since the skills were loaded; the operator reloads them", name)
	}
	return d, err
}

// keyedResource is a listed resource and its place in the listing.
type keyedResource struct {
	key string
	r   *mcp.Resource
}

// docResources are the resources of one skill: its SKILL.md first, then
// its files by path.
func docResources(d *registry.SkillFiles) []keyedResource {
	out := make([]keyedResource, 0, 1+len(d.Files))
	out = append(out, keyedResource{resourceKey(d.Name, registry.SkillMDFile), &mcp.Resource{
		URI: skillURI(d.Name, registry.SkillMDFile), Name: d.Name, Title: d.Name,
		Description: d.Description, MIMEType: "text/markdown", Size: int64(len(d.SkillMD))}})
	for _, f := range d.Files {
		r := &mcp.Resource{URI: skillURI(d.Name, f.Path), Name: d.Name + "/" + f.Path, Description: f.Description, MIMEType: mimeType(f.Path)}
		if f.Size >= 0 {
			r.Size = f.Size
		}
		out = append(out, keyedResource{resourceKey(d.Name, f.Path), r})
	}
	return out
}

// resourceKey orders a skill's resources in a listing: by skill name, its
// SKILL.md first, then its files by path. A resources/list cursor is the
// key of the last resource of the page before.
func resourceKey(skill, p string) string {
	if p == registry.SkillMDFile {
		return skill + "\x00\x00"
	}
	return skill + "\x00\x01" + p
}

func encodeCursor(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

// decodeCursor returns the key a cursor carries; a cursor this server
// cannot have given is invalid params.
func decodeCursor(c string) (string, error) {
	if len(c) > 2*maxURIBytes {
		return "", invalidParams("the cursor is %d bytes long; pass back the nextCursor of the page before", len(c))
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !utf8.Valid(b) {
		return "", invalidParams("the cursor %q is not one this server gave; pass back the nextCursor of the page before", truncate(c))
	}
	return string(b), nil
}

// listResources answers resources/list: every file of every skill the
// session's tenant may use, in a stable order, page by page.
func (ss *session) listResources(req *mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error) {
	after := ""
	if req != nil && req.Params != nil && req.Params.Cursor != "" {
		var err error
		if after, err = decodeCursor(req.Params.Cursor); err != nil {
			return nil, err
		}
	}
	var all []keyedResource
	for _, d := range ss.skillDocs() {
		all = append(all, docResources(d)...)
	}
	slices.SortFunc(all, func(a, b keyedResource) int { return strings.Compare(a.key, b.key) })
	start, _ := slices.BinarySearchFunc(all, after, func(k keyedResource, after string) int { return strings.Compare(k.key, after) })
	for start < len(all) && after != "" && all[start].key <= after {
		start++
	}
	end := min(start+resourcePage, len(all))
	res := &mcp.ListResourcesResult{Resources: make([]*mcp.Resource, 0, end-start)}
	for _, k := range all[start:end] {
		res.Resources = append(res.Resources, k.r)
	}
	if end < len(all) {
		res.NextCursor = encodeCursor(all[end-1].key)
	}
	res.TTLMs, res.CacheScope = listTTL, "private"
	return res, nil
}

// skillTemplates are the URI templates of skill files.
var skillTemplates = []*mcp.ResourceTemplate{
	{URITemplate: "skill://{skill}/SKILL.md", Name: "skill", Title: "A skill's instructions",
		Description: "The SKILL.md of a skill: YAML frontmatter (name, description), then the instructions.", MIMEType: "text/markdown"},
	{URITemplate: "skill://{skill}/{+path}", Name: "skill-file", Title: "A file of a skill",
		Description: "A file a skill brings along (references, assets, scripts), by its path in the skill; the skill's SKILL.md lists what to read."},
}

// listResourceTemplates answers resources/templates/list.
func (ss *session) listResourceTemplates() *mcp.ListResourceTemplatesResult {
	res := &mcp.ListResourceTemplatesResult{ResourceTemplates: skillTemplates}
	res.TTLMs, res.CacheScope = listTTL, "private"
	return res
}

// readResource answers resources/read of a skill file. A URI of the
// wrong form is invalid params saying what is wrong; a well-formed URI
// naming no file of a skill the tenant may use — a missing skill or file,
// another tenant's skill, a path that tries to leave the skill — is the
// same "resource not found".
func (ss *session) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if req == nil || req.Params == nil {
		return nil, invalidParams("resources/read needs params.uri, the URI of a skill file (skill://<skill>/<path>)")
	}
	uri := req.Params.URI
	name, p, err := parseSkillURI(uri)
	if err != nil {
		return nil, invalidParams("resources/read: %v", err)
	}
	d, err := ss.skillDoc(name)
	if errors.Is(err, registry.ErrNoSkillDoc) {
		return nil, mcp.ResourceNotFoundError(uri)
	} else if err != nil {
		return nil, err
	}
	var data []byte
	if p == registry.SkillMDFile {
		data = d.SkillMD
	} else {
		if _, ok := d.File(p); !ok {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		data, err = ss.run.Skills().ReadDocFile(ctx, ss.run, d, p, 0)
		switch {
		case errors.Is(err, registry.ErrNoSkillDoc), errors.Is(err, registry.ErrNoSkillFile):
			return nil, mcp.ResourceNotFoundError(uri)
		case err != nil:
			ss.s.log.Warn("serving skills: a skill file cannot be read", "tenant", ss.t.ID, "skill", name, "file", p, "err", err)
			return nil, internalError("%q cannot be read now: it changed or went since the skills were loaded, or could not be made; the operator reloads them", truncate(uri))
		}
	}
	c := &mcp.ResourceContents{URI: skillURI(name, p), MIMEType: mimeType(p)}
	if utf8.Valid(data) && !slices.Contains(data, 0) {
		c.Text = string(data)
	} else {
		c.Blob = data
	}
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}
	res.TTLMs, res.CacheScope = listTTL, "private"
	return res, nil
}

// dirMIMEType marks a directory resource: a skill's root or a folder in it.
const dirMIMEType = "inode/directory"

// readDirParams are the params of resources/directory/read.
type readDirParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// readDirResult is the result of resources/directory/read.
type readDirResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// parseSkillDir splits the URI of a directory resource into the skill's
// name and the folder's path in it ("" for the skill's root,
// skill://<skill>).
func parseSkillDir(uri string) (name, dir string, err error) {
	if strings.HasPrefix(uri, skillScheme) && !strings.Contains(uri[len(skillScheme):], "/") {
		name, _, err = parseSkillURI(uri + "/" + registry.SkillMDFile)
		return name, "", err
	}
	if strings.HasSuffix(uri, "/") && len(uri) > len(skillScheme) {
		return "", "", fmt.Errorf("%q ends in a slash; a directory's URI has none (skill://<skill>/<folder>)", truncate(uri))
	}
	return parseSkillURI(uri)
}

// readDirectory answers resources/directory/read: the files and folders
// directly in a skill's root or one of its folders, by URI, page by page.
// A URI naming no folder of a skill the tenant may use is "no directory is
// served", whether the skill is missing or another tenant's.
func (ss *session) readDirectory(_ context.Context, _ *mcp.ServerSession, p *readDirParams) (*readDirResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("resources/directory/read needs params.uri, the URI of a skill's root (skill://<skill>) or of a folder in it")
	}
	name, dir, err := parseSkillDir(p.URI)
	if err != nil {
		return nil, invalidParams("resources/directory/read: %v", err)
	}
	after := ""
	if p.Cursor != "" {
		if after, err = decodeCursor(p.Cursor); err != nil {
			return nil, err
		}
	}
	notServed := invalidParams("no directory is served at %s", truncate(p.URI))
	d, err := ss.skillDoc(name)
	if errors.Is(err, registry.ErrNoSkillDoc) {
		return nil, notServed
	} else if err != nil {
		return nil, err
	}
	prefix := ""
	if dir != "" {
		if _, isFile := d.File(dir); isFile {
			return nil, invalidParams("%s is a file, not a directory resource; read it with resources/read", truncate(p.URI))
		}
		prefix = dir + "/"
	}
	found := dir == ""
	children := map[string]*mcp.Resource{}
	for _, k := range docResources(d) {
		_, fp, _ := parseSkillURI(k.r.URI)
		rest, ok := strings.CutPrefix(fp, prefix)
		if !ok {
			continue
		}
		found = true
		if sub, _, nested := strings.Cut(rest, "/"); nested {
			uri := skillURI(name, prefix+sub)
			children[uri] = &mcp.Resource{URI: uri, Name: sub, MIMEType: dirMIMEType}
		} else {
			r := *k.r
			r.Name = rest
			children[r.URI] = &r
		}
	}
	if !found {
		return nil, notServed
	}
	uris := slices.Sorted(maps.Keys(children))
	start := 0
	for start < len(uris) && after != "" && uris[start] <= after {
		start++
	}
	end := min(start+resourcePage, len(uris))
	res := &readDirResult{ResultType: "complete", Resources: make([]*mcp.Resource, 0, end-start)}
	for _, u := range uris[start:end] {
		res.Resources = append(res.Resources, children[u])
	}
	if end < len(uris) {
		res.NextCursor = encodeCursor(uris[end-1])
	}
	return res, nil
}
