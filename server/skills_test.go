package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/server"
	"github.com/skillhost/skillhost/server/serveconf"
)

// The API keys of the skill tests' tenants.
const (
	skKeyA = "sk_skills_tenant_a_0123456789"
	skKeyB = "sk_skills_tenant_b_9876543210"
)

// skillTenants gives tenant a the pack alpha and tenant b the pack beta;
// the pack shared is every tenant's, and the pack hidden nobody's.
var skillTenants = `
[server]
shared_packs = ["shared"]

[tenants.a]
api_keys = ["` + serveconf.HashKey(skKeyA) + `"]
packs = ["alpha"]

[tenants.b]
api_keys = ["` + serveconf.HashKey(skKeyB) + `"]
packs = ["beta"]
`

const alphaGuideMD = `---
name: alpha-guide
description: How tenant a ships its alpha widgets.
license: Apache-2.0
metadata:
  version: "2"
  team: widgets
---

# Alpha guide

Read references/notes.md first, then docs/my file.md.
`

// skillFiles are the files of the fixture's packs, by path under the
// fixture folder: each top folder is a source, and so a pack of its name.
var skillFiles = map[string]string{
	"alpha/alpha-guide/SKILL.md":            alphaGuideMD,
	"alpha/alpha-guide/references/notes.md": "Alpha notes: ship on Tuesdays.\n",
	"alpha/alpha-guide/assets/logo.bin":     "\x89PNG\x00\x01\x02binary",
	"alpha/alpha-guide/docs/my file.md":     "A file whose name has a space.\n",
	"alpha/deploy.skill.yaml": `name: pack.alpha.deploy
title: Deploy alpha
description: Deploy the alpha service.
trigger: The user asks to deploy alpha.
steps:
  - Build it.
  - Ship it.
`,
	"beta/beta-secret/SKILL.md": `---
name: beta-secret
description: Tenant b's secret betamax procedure.
---

Only tenant b may read this.
`,
	"beta/beta-secret/references/plan.md": "Beta's plan: zebra-orchid-7.\n",
	"shared/shared-howto/SKILL.md": `---
name: shared-howto
description: A how-to every tenant shares.
---

Shared instructions.
`,
	"hidden/hidden-notes/SKILL.md": `---
name: hidden-notes
description: Notes of a pack no tenant has, about quokkas.
---

Nobody reads this.
`,
}

type skFixture struct {
	e   *skillhost.Engine
	srv *server.Server
	url string
	dir string
}

// newSkillsFixture writes skillFiles (and more), opens an engine over
// them with the operator config of skillTenants, and serves it over
// HTTP. Its runs have the default skill tool family.
func newSkillsFixture(t *testing.T, more map[string]string, goSkills ...skillhost.Skill) *skFixture {
	t.Helper()
	return newFamilyFixture(t, "", more, goSkills...)
}

// skillFamilies are the skill tool families an engine may give its runs.
var skillFamilies = []string{registry.SkillToolsLoad, registry.SkillToolsSearch}

// ofFamily reports whether a run of the skill tool family family has
// tool: a tool of no family, or one of family's.
func ofFamily(family, tool string) bool {
	for _, f := range skillFamilies {
		if f != family && slices.Contains(registry.SkillToolNames(f), tool) {
			return false
		}
	}
	return true
}

// newFamilyFixture is newSkillsFixture for an engine whose runs have the
// skill tool family family.
func newFamilyFixture(t *testing.T, family string, more map[string]string, goSkills ...skillhost.Skill) *skFixture {
	t.Helper()
	dir := t.TempDir()
	for _, files := range []map[string]string{skillFiles, more} {
		for p, content := range files {
			full := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(skillTenants))
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, s := range []string{"alpha", "beta", "shared", "hidden"} {
		sources = append(sources, filepath.Join(dir, s))
	}
	e, err := skillhost.Open(context.Background(), skillhost.Config{Operator: cfg, StateDir: testenv.StateDir(),
		IndexPath: filepath.Join(dir, "index.db"), NoBundled: true, NoUserSources: true, PackDirs: sources, GoSkills: goSkills,
		Skills: registry.SkillsConfig{Tools: family}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	if p := e.Problems(); len(p) > 0 {
		t.Fatalf("loading the fixture: %v", p)
	}
	srv, err := server.New(e, &server.Options{Config: serveconf.Of(cfg), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &skFixture{e: e, srv: srv, url: ts.URL + server.MCPPath, dir: dir}
}

type skKeyTransport struct{ key string }

func (k skKeyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// Client-side types of the skills extension.
type skListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type skGetParams struct {
	mcp.ParamsBase
	URI string `json:"uri,omitempty"`
}

type skFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

type skEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
}

type skListResult struct {
	mcp.ResultBase
	ResultType string    `json:"resultType"`
	Skills     []skEntry `json:"skills"`
	NextCursor string    `json:"nextCursor"`
	TTLMs      *int      `json:"ttlMs"`
	CacheScope string    `json:"cacheScope"`
}

type skGetResult struct {
	mcp.ResultBase
	ResultType string  `json:"resultType"`
	Skill      skEntry `json:"skill"`
	TTLMs      *int    `json:"ttlMs"`
	CacheScope string  `json:"cacheScope"`
}

// connect opens a session of the tenant of key, speaking version, with a
// client that knows the extension's methods.
func (f *skFixture) connect(t *testing.T, key, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "skills-test", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*skListParams, *skListResult](c, "skills/list"); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*skGetParams, *skGetResult](c, "skills/get"); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*skDirParams, *skDirResult](c, "resources/directory/read"); err != nil {
		t.Fatal(err)
	}
	tr := &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: &http.Client{Transport: skKeyTransport{key}}, MaxRetries: -1}
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting (%s): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

var revisions = []string{"2025-11-25", "2026-07-28"}

// listURIs lists every resource, page by page.
func listURIs(t *testing.T, cs *mcp.ClientSession) ([]*mcp.Resource, int) {
	t.Helper()
	var all []*mcp.Resource
	pages := 0
	params := &mcp.ListResourcesParams{}
	for {
		res, err := cs.ListResources(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if res.CacheScope != "private" {
			t.Errorf("resources/list cacheScope = %q, want private (the list is the tenant's)", res.CacheScope)
		}
		all = append(all, res.Resources...)
		if res.NextCursor == "" {
			return all, pages
		}
		params = &mcp.ListResourcesParams{Cursor: res.NextCursor}
	}
}

func uris(rs []*mcp.Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.URI
	}
	return out
}

func read(t *testing.T, cs *mcp.ClientSession, uri string) *mcp.ResourceContents {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %d contents, want 1", uri, len(res.Contents))
	}
	return res.Contents[0]
}

func contentBytes(c *mcp.ResourceContents) []byte {
	if c.Blob != nil {
		return c.Blob
	}
	return []byte(c.Text)
}

func rpcError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	return we
}

// Every skill the tenant may use is a resource: its SKILL.md (a playbook's
// rendered) and each file, in a stable order with MIME types and sizes,
// read back as text or blob; the templates name the URI forms; the
// capabilities advertise resources and the extension. In both revisions.
func TestSkillResources(t *testing.T) {
	f := newSkillsFixture(t, nil)
	want := []string{
		"skill://alpha-guide/SKILL.md",
		"skill://alpha-guide/assets/logo.bin",
		"skill://alpha-guide/docs/my%20file.md",
		"skill://alpha-guide/references/notes.md",
		"skill://pack.alpha.deploy/SKILL.md",
		"skill://shared-howto/SKILL.md",
	}
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			cs := f.connect(t, skKeyA, version)
			caps := cs.InitializeResult().Capabilities
			if caps.Resources == nil {
				t.Error("capabilities have no resources")
			}
			if _, ok := caps.Extensions[server.SkillsExtension]; !ok {
				t.Errorf("capabilities' extensions = %v, want %s", caps.Extensions, server.SkillsExtension)
			}
			rs, _ := listURIs(t, cs)
			if diff := cmp.Diff(want, uris(rs)); diff != "" {
				t.Errorf("resources/list (-want +got):\n%s", diff)
			}
			again, _ := listURIs(t, cs)
			if diff := cmp.Diff(uris(rs), uris(again)); diff != "" {
				t.Errorf("a second resources/list differs (-first +second):\n%s", diff)
			}
			byURI := map[string]*mcp.Resource{}
			for _, r := range rs {
				byURI[r.URI] = r
			}
			guide := byURI["skill://alpha-guide/SKILL.md"]
			if guide.MIMEType != "text/markdown" || guide.Size != int64(len(alphaGuideMD)) || guide.Name != "alpha-guide" ||
				guide.Description != "How tenant a ships its alpha widgets." {
				t.Errorf("SKILL.md resource = %+v", guide)
			}
			if r := byURI["skill://alpha-guide/assets/logo.bin"]; r.MIMEType != "application/octet-stream" || r.Size != int64(len(skillFiles["alpha/alpha-guide/assets/logo.bin"])) {
				t.Errorf("logo.bin resource = %+v", r)
			}

			if c := read(t, cs, "skill://alpha-guide/SKILL.md"); c.Text != alphaGuideMD || c.MIMEType != "text/markdown" {
				t.Errorf("SKILL.md read = %q (%s), want the file as written", c.Text, c.MIMEType)
			}
			if c := read(t, cs, "skill://alpha-guide/references/notes.md"); c.Text != skillFiles["alpha/alpha-guide/references/notes.md"] {
				t.Errorf("notes.md read = %q", c.Text)
			}
			if c := read(t, cs, "skill://alpha-guide/docs/my%20file.md"); c.Text != skillFiles["alpha/alpha-guide/docs/my file.md"] {
				t.Errorf("a percent-encoded path read = %q", c.Text)
			}
			if c := read(t, cs, "skill://alpha-guide/assets/logo.bin"); string(c.Blob) != skillFiles["alpha/alpha-guide/assets/logo.bin"] || c.Text != "" {
				t.Errorf("a binary file is read as blob %q text %q", c.Blob, c.Text)
			}
			play := read(t, cs, "skill://pack.alpha.deploy/SKILL.md").Text
			for _, s := range []string{"---\nname: pack.alpha.deploy\ndescription: Deploy the alpha service.\n---\n", "Use when: The user asks to deploy alpha.", "1. Build it.", "2. Ship it."} {
				if !strings.Contains(play, s) {
					t.Errorf("the playbook's SKILL.md lacks %q:\n%s", s, play)
				}
			}

			tpl, err := cs.ListResourceTemplates(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var forms []string
			for _, rt := range tpl.ResourceTemplates {
				forms = append(forms, rt.URITemplate)
			}
			if diff := cmp.Diff([]string{"skill://{skill}/SKILL.md", "skill://{skill}/{+path}"}, forms); diff != "" {
				t.Errorf("resources/templates/list (-want +got):\n%s", diff)
			}
		})
	}
}

// A read that could leave the skill, or names another tenant's skill or a
// hidden pack's, is "resource not found", the very error a missing file
// gets; a URI of the wrong form is invalid params saying what is wrong.
func TestSkillResourceAttacks(t *testing.T) {
	f := newSkillsFixture(t, nil)
	outside := filepath.Join(f.dir, "outside.txt")
	os.WriteFile(outside, []byte("host secret"), 0o644)
	// A link put into the skill folder after loading is no file of the
	// skill.
	if err := os.Symlink(outside, filepath.Join(f.dir, "alpha", "alpha-guide", "escape")); err != nil {
		t.Fatal(err)
	}
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			cs := f.connect(t, skKeyA, version)
			_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://alpha-guide/missing.md"})
			missing := rpcError(t, err)
			for _, uri := range []string{
				"skill://no-such-skill/SKILL.md",
				"skill://beta-secret/SKILL.md",
				"skill://beta-secret/references/plan.md",
				"skill://hidden-notes/SKILL.md",
				"skill://alpha-guide/../beta-secret/SKILL.md",
				"skill://alpha-guide/references/../references/notes.md",
				"skill://alpha-guide/./SKILL.md",
				"skill://alpha-guide//etc/passwd",
				"skill://alpha-guide/%2Fetc%2Fpasswd",
				"skill://alpha-guide/%2e%2e/%2e%2e/beta/beta-secret/SKILL.md",
				"skill://alpha-guide/%252e%252e/SKILL.md",
				"skill://alpha-guide/references%2F..%2F..%2Foutside.txt",
				"skill://alpha-guide/escape",
				"skill://%2e%2e/SKILL.md",
				"skill://beta%2Dsecret/SKILL.md",
				"skill://alpha-guide/REFERENCES/notes.md",
				"skill://alpha-guide/references/notes.md/",
			} {
				_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
				if err == nil {
					t.Errorf("%s: read, want resource not found", uri)
					continue
				}
				got := rpcError(t, err)
				if got.Code != missing.Code || got.Message != missing.Message {
					t.Errorf("%s: %d %q, want %d %q as for a missing file", uri, got.Code, got.Message, missing.Code, missing.Message)
				}
				if strings.Contains(string(got.Data), "beta") && !strings.Contains(uri, "beta") {
					t.Errorf("%s: the error's data %s names another tenant's skill", uri, got.Data)
				}
			}
			for _, tc := range []struct{ uri, says string }{
				{"", "empty"},
				{"https://example.com/SKILL.md", "not a skill URI"},
				{"skill://", "names no file"},
				{"skill://alpha-guide", "names no file"},
				{"skill://alpha-guide/", "names no file"},
				{"skill://alpha-guide/%zz", "percent-encoded"},
				{"skill://alpha-guide/SKILL.md?x=1", "query or fragment"},
				{"skill://" + strings.Repeat("a", 5000) + "/SKILL.md", "bytes long"},
			} {
				if tc.uri == "" && version >= "2026-07-28" {
					continue // the SDK's transport refuses it first: no Mcp-Name header
				}
				_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: tc.uri})
				if err == nil {
					t.Errorf("%.40q: read, want invalid params", tc.uri)
					continue
				}
				got := rpcError(t, err)
				if got.Code != jsonrpc.CodeInvalidParams || !strings.Contains(got.Message, tc.says) || len(got.Message) > 600 {
					t.Errorf("%.40q: %d %q, want invalid params saying %q", tc.uri, got.Code, got.Message, tc.says)
				}
			}
			if _, err := cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: "not a cursor!"}); err == nil ||
				rpcError(t, err).Code != jsonrpc.CodeInvalidParams {
				t.Errorf("a bad cursor: %v, want invalid params", err)
			}
		})
	}
	// A listed file swapped for a link to a host file is refused, not read.
	notes := filepath.Join(f.dir, "alpha", "alpha-guide", "references", "notes.md")
	os.Remove(notes)
	if err := os.Symlink(outside, notes); err != nil {
		t.Fatal(err)
	}
	cs := f.connect(t, skKeyA, revisions[1])
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://alpha-guide/references/notes.md"})
	if err == nil {
		t.Fatalf("a file swapped for a link was read: %q", res.Contents[0].Text)
	}
	if strings.Contains(err.Error(), "host secret") || strings.Contains(err.Error(), f.dir) {
		t.Errorf("the refusal shows the host: %v", err)
	}
}

// skills/list and skills/get serve each skill's frontmatter and a
// manifest of its files whose digests and sizes match what resources/read
// returns; another tenant's skill is "no skill is served", as a missing
// one is; bad params are invalid params naming the problem.
func TestSkillsExtension(t *testing.T) {
	f := newSkillsFixture(t, nil,
		skillhost.Skill{Name: "go-live", Description: "A Go skill whose file is made when read.",
			Instructions: "Read status.txt.", Resources: []registry.SkillResource{{Name: "status.txt",
				Load: func(context.Context) ([]byte, error) { return []byte("live"), nil }}}})
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			cs := f.connect(t, skKeyA, version)
			list, err := mcp.CallCustomMethod[*skListParams, *skListResult](ctx, cs, "skills/list", &skListParams{})
			if err != nil {
				t.Fatal(err)
			}
			if list.ResultType != "complete" || list.TTLMs == nil || list.CacheScope != "private" || list.NextCursor != "" {
				t.Errorf("skills/list: resultType %q ttlMs %v cacheScope %q nextCursor %q", list.ResultType, list.TTLMs, list.CacheScope, list.NextCursor)
			}
			var names []string
			for _, e := range list.Skills {
				names = append(names, e.Frontmatter["name"].(string))
				if want := "skill://" + e.Frontmatter["name"].(string) + "/SKILL.md"; e.URI != want {
					t.Errorf("entry uri %s, want %s (its last segment is the frontmatter's name)", e.URI, want)
				}
			}
			if diff := cmp.Diff([]string{"alpha-guide", "go-live", "pack.alpha.deploy", "shared-howto"}, names); diff != "" {
				t.Errorf("skills/list names (-want +got):\n%s", diff)
			}
			guide := list.Skills[0]
			wantFM := map[string]any{"name": "alpha-guide", "description": "How tenant a ships its alpha widgets.",
				"license": "Apache-2.0", "metadata": map[string]any{"version": "2", "team": "widgets"}}
			if diff := cmp.Diff(wantFM, guide.Frontmatter); diff != "" {
				t.Errorf("frontmatter (-want +got):\n%s", diff)
			}
			var manifest []skFile
			if err := json.Unmarshal(guide.Resources, &manifest); err != nil {
				t.Fatalf("resources %s: %v", guide.Resources, err)
			}
			var got []string
			for _, m := range manifest {
				got = append(got, m.URI)
				data := contentBytes(read(t, cs, m.URI))
				sum := sha256.Sum256(data)
				if m.Digest != "sha256:"+hex.EncodeToString(sum[:]) || m.Size != int64(len(data)) {
					t.Errorf("%s: manifest says %s %d bytes, read %x %d bytes", m.URI, m.Digest, m.Size, sum, len(data))
				}
			}
			if diff := cmp.Diff([]string{"skill://alpha-guide/SKILL.md", "skill://alpha-guide/assets/logo.bin",
				"skill://alpha-guide/docs/my%20file.md", "skill://alpha-guide/references/notes.md"}, got); diff != "" {
				t.Errorf("manifest (-want +got):\n%s", diff)
			}
			if string(list.Skills[1].Resources) != `"dynamic"` {
				t.Errorf("a skill with a made file has resources %s, want \"dynamic\"", list.Skills[1].Resources)
			}

			one, err := mcp.CallCustomMethod[*skGetParams, *skGetResult](ctx, cs, "skills/get", &skGetParams{URI: guide.URI})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(guide, one.Skill); diff != "" || one.ResultType != "complete" || one.TTLMs == nil || one.CacheScope != "private" {
				t.Errorf("skills/get differs from the listed entry (-list +get):\n%s (%q %v %q)", diff, one.ResultType, one.TTLMs, one.CacheScope)
			}

			_, err = mcp.CallCustomMethod[*skGetParams, *skGetResult](ctx, cs, "skills/get", &skGetParams{URI: "skill://no-such/SKILL.md"})
			missing := rpcError(t, err)
			if missing.Code != jsonrpc.CodeInvalidParams || !strings.Contains(missing.Message, "no skill is served at skill://no-such/SKILL.md") {
				t.Errorf("a missing skill: %d %q", missing.Code, missing.Message)
			}
			for _, uri := range []string{"skill://beta-secret/SKILL.md", "skill://hidden-notes/SKILL.md", "skill://%62eta-secret/SKILL.md"} {
				_, err := mcp.CallCustomMethod[*skGetParams, *skGetResult](ctx, cs, "skills/get", &skGetParams{URI: uri})
				got := rpcError(t, err)
				if got.Code != missing.Code || got.Message != strings.Replace(missing.Message, "skill://no-such/SKILL.md", uri, 1) {
					t.Errorf("%s: %d %q, want what a missing skill gets", uri, got.Code, got.Message)
				}
			}
			for _, tc := range []struct {
				params *skGetParams
				says   string
			}{
				{nil, "needs params.uri"},
				{&skGetParams{}, "needs params.uri"},
				{&skGetParams{URI: "skill://alpha-guide/references/notes.md"}, "not the URI of a SKILL.md"},
				{&skGetParams{URI: "file:///etc/passwd"}, "not a skill URI"},
				{&skGetParams{URI: "skill://" + strings.Repeat("x", 10000) + "/SKILL.md"}, "bytes long"},
			} {
				_, err := mcp.CallCustomMethod[*skGetParams, *skGetResult](ctx, cs, "skills/get", tc.params)
				got := rpcError(t, err)
				if got.Code != jsonrpc.CodeInvalidParams || !strings.Contains(got.Message, tc.says) {
					t.Errorf("skills/get %+v: %d %q, want invalid params saying %q", tc.params, got.Code, got.Message, tc.says)
				}
			}
			if _, err := mcp.CallCustomMethod[*skListParams, *skListResult](ctx, cs, "skills/list", &skListParams{Cursor: "%%%"}); err == nil ||
				rpcError(t, err).Code != jsonrpc.CodeInvalidParams {
				t.Errorf("skills/list with a bad cursor: %v, want invalid params", err)
			}
		})
	}
}

// A skill past the extension's limits (512 files with its SKILL.md, 16
// MiB) is left out of skills/list, and skills/get says which limit; its
// files are still resources, listed page by page.
func TestSkillsExtensionLimits(t *testing.T) {
	big := map[string]string{"shared/many-files/SKILL.md": "---\nname: many-files\ndescription: A skill of 513 files.\n---\n\nBody.\n"}
	for i := range packs.MaxSkillFiles {
		big[fmt.Sprintf("shared/many-files/data/f%03d.txt", i)] = "x"
	}
	huge := make([]byte, 16<<20)
	f := newSkillsFixture(t, big, skillhost.Skill{Name: "huge", Description: "A Go skill of 16 MiB and more.",
		Instructions: "Read blob.bin.", Resources: []registry.SkillResource{{Name: "blob.bin", Content: huge}}})
	ctx := context.Background()
	cs := f.connect(t, skKeyB, revisions[1])
	list, err := mcp.CallCustomMethod[*skListParams, *skListResult](ctx, cs, "skills/list", &skListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list.Skills {
		names = append(names, e.Frontmatter["name"].(string))
	}
	if diff := cmp.Diff([]string{"beta-secret", "shared-howto"}, names); diff != "" {
		t.Errorf("skills/list past the limits (-want +got):\n%s", diff)
	}
	for uri, says := range map[string]string{
		"skill://many-files/SKILL.md": "513 files with its SKILL.md; the skills extension serves a skill of at most 512",
		"skill://huge/SKILL.md":       "at most 16777216",
	} {
		_, err := mcp.CallCustomMethod[*skGetParams, *skGetResult](ctx, cs, "skills/get", &skGetParams{URI: uri})
		if got := rpcError(t, err); got.Code != jsonrpc.CodeInvalidParams || !strings.Contains(got.Message, says) {
			t.Errorf("skills/get %s: %d %q, want invalid params saying %q", uri, got.Code, got.Message, says)
		}
	}
	rs, pages := listURIs(t, cs)
	if pages < 2 || !slices.IsSortedFunc(rs, func(a, b *mcp.Resource) int { return strings.Compare(a.URI, b.URI) }) {
		t.Errorf("resources/list: %d resources in %d pages, want the big skill's files sorted over several pages", len(rs), pages)
	}
	seen := map[string]bool{}
	for _, r := range rs {
		if seen[r.URI] {
			t.Errorf("%s listed twice across pages", r.URI)
		}
		seen[r.URI] = true
	}
	if !seen["skill://many-files/data/f511.txt"] || !seen["skill://huge/blob.bin"] || len(rs) != 2+2+513+1 {
		t.Errorf("resources/list has %d resources, want every file of every skill of tenant b (518)", len(rs))
	}
}

// callText calls a tool and returns its text, failing on a protocol error.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// No skill tool shows a tenant another tenant's skills, nor a hidden
// pack's: skill_search (each search type), skill_get, skill_list,
// list_skills, load_skill, read_skill_resource and run_skill_script, each
// family in an engine of its own; the owner sees them.
func TestSkillToolsTenantIsolation(t *testing.T) {
	for _, family := range skillFamilies {
		t.Run(family, func(t *testing.T) { testSkillToolsTenantIsolation(t, family) })
	}
}

func testSkillToolsTenantIsolation(t *testing.T, family string) {
	f := newFamilyFixture(t, family, nil)
	type probe struct {
		tool string
		args map[string]any
	}
	probes := func(skill, word string) []probe {
		return []probe{
			{"skill_search", map[string]any{"query": word}},
			{"skill_search", map[string]any{"query": word, "search_type": "regex"}},
			{"skill_search", map[string]any{"query": skill, "search_type": "exact"}},
			{"skill_get", map[string]any{"names": []string{skill}}},
			{"skill_list", map[string]any{"page_size": 100}},
			{"list_skills", map[string]any{}},
			{"load_skill", map[string]any{"skill_name": skill}},
			{"read_skill_resource", map[string]any{"skill_name": skill, "resource_name": "references/plan.md"}},
			{"run_skill_script", map[string]any{"skill_name": skill, "script_name": "scripts/run.wasm"}},
		}
	}
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			a := f.connect(t, skKeyA, version)
			b := f.connect(t, skKeyB, version)
			for _, tc := range []struct {
				who          string
				cs           *mcp.ClientSession
				skill, word  string
				secret       string
				ownerSees    bool
				ownerSession *mcp.ClientSession
			}{
				{"a reading b's", a, "beta-secret", "betamax", "zebra-orchid", true, b},
				{"b reading a's", b, "alpha-guide", "widgets", "widgets", true, a},
				{"a reading the hidden pack's", a, "hidden-notes", "quokkas", "quokkas", false, nil},
				{"b reading the hidden pack's", b, "hidden-notes", "quokkas", "quokkas", false, nil},
			} {
				for _, p := range probes(tc.skill, tc.word) {
					if !ofFamily(family, p.tool) {
						continue
					}
					out, _ := callText(t, tc.cs, p.tool, p.args)
					out = withoutEcho(out)
					if strings.Contains(out, tc.skill) && !strings.Contains(out, "skill not found") || strings.Contains(out, tc.secret) {
						t.Errorf("%s: %s %v shows it: %.300s", tc.who, p.tool, p.args, out)
					}
				}
				if !tc.ownerSees {
					continue
				}
				// The owner's control: the same search finds it.
				if family == registry.SkillToolsSearch {
					if out, _ := callText(t, tc.ownerSession, "skill_search", map[string]any{"query": tc.word}); !strings.Contains(out, tc.skill) {
						t.Errorf("the owner's skill_search %q does not find %s: %.300s", tc.word, tc.skill, out)
					}
					continue
				}
				if out, isErr := callText(t, tc.ownerSession, "load_skill", map[string]any{"skill_name": tc.skill}); isErr || !strings.Contains(out, tc.word) {
					t.Errorf("the owner's load_skill %s: %.300s", tc.skill, out)
				}
			}
			if family == registry.SkillToolsSearch {
				return
			}
			out, isErr := callText(t, b, "read_skill_resource", map[string]any{"skill_name": "beta-secret", "resource_name": "references/plan.md"})
			if isErr || !strings.Contains(out, "zebra-orchid") {
				t.Errorf("b's read_skill_resource of its own file: %.300s", out)
			}
		})
	}
}

// withoutEcho drops from a tool's JSON answer what only repeats the
// caller's own arguments: the query searched and the names asked for.
func withoutEcho(out string) string {
	var m map[string]any
	if json.Unmarshal([]byte(out), &m) != nil {
		return out
	}
	delete(m, "query")
	delete(m, "missing")
	b, _ := json.Marshal(m)
	return string(b)
}

// Every bundled skill is served whole through the extension: its
// manifest's digests and sizes are those of what resources/read returns,
// and its SKILL.md's frontmatter is the entry's. Over stdio, a local
// tenant sees them all.
func TestBundledSkillsOverMCP(t *testing.T) {
	ctx := context.Background()
	e, err := skillhost.Open(ctx, skillhost.Config{StateDir: testenv.StateDir(), IndexPath: filepath.Join(t.TempDir(), "index.db"),
		NoUserSources: true, Operator: packs.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	srv, err := server.New(e, &server.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	go srv.ServeStdio(ctx, stdinR, stdoutW)
	t.Cleanup(func() { stdinW.Close(); stdoutW.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "skills-test", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*skListParams, *skListResult](c, "skills/list"); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: stdoutR, Writer: stdinW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	list, err := mcp.CallCustomMethod[*skListParams, *skListResult](ctx, cs, "skills/list", &skListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Skills) == 0 || len(list.Skills) != len(e.Skills()) {
		t.Errorf("skills/list has %d skills, the engine %d", len(list.Skills), len(e.Skills()))
	}
	for _, entry := range list.Skills {
		var manifest []skFile
		if err := json.Unmarshal(entry.Resources, &manifest); err != nil {
			t.Fatalf("%s: resources %s: %v", entry.URI, entry.Resources, err)
		}
		for _, m := range manifest {
			data := contentBytes(read(t, cs, m.URI))
			sum := sha256.Sum256(data)
			if m.Digest != "sha256:"+hex.EncodeToString(sum[:]) || m.Size != int64(len(data)) {
				t.Errorf("%s: manifest says %s %d bytes, read %x %d bytes", m.URI, m.Digest, m.Size, sum, len(data))
			}
		}
		md := read(t, cs, entry.URI).Text
		if !strings.HasPrefix(md, "---\n") || entry.Frontmatter["name"] == nil || entry.Frontmatter["description"] == nil {
			t.Errorf("%s: frontmatter %v of\n%.200s", entry.URI, entry.Frontmatter, md)
		}
	}
}

type skDirParams struct {
	mcp.ParamsBase
	URI    string `json:"uri,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

type skDirResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor"`
}

// resources/directory/read lists what is directly in a skill's root or
// folder, folders as inode/directory; a file, another tenant's skill or a
// path out of the skill is invalid params, the last two as for a missing
// skill.
func TestSkillDirectories(t *testing.T) {
	f := newSkillsFixture(t, nil)
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			cs := f.connect(t, skKeyA, version)
			if got := cs.InitializeResult().Capabilities.Extensions[server.SkillsExtension]; !cmp.Equal(got, map[string]any{"directoryRead": true}) {
				t.Errorf("extension settings %v, want directoryRead", got)
			}
			ls := func(uri string) ([]string, error) {
				res, err := mcp.CallCustomMethod[*skDirParams, *skDirResult](ctx, cs, "resources/directory/read", &skDirParams{URI: uri})
				if err != nil {
					return nil, err
				}
				var out []string
				for _, r := range res.Resources {
					out = append(out, r.Name+" "+r.MIMEType+" "+r.URI)
				}
				return out, nil
			}
			root, err := ls("skill://alpha-guide")
			if err != nil {
				t.Fatal(err)
			}
			want := []string{
				"SKILL.md text/markdown skill://alpha-guide/SKILL.md",
				"assets inode/directory skill://alpha-guide/assets",
				"docs inode/directory skill://alpha-guide/docs",
				"references inode/directory skill://alpha-guide/references",
			}
			if diff := cmp.Diff(want, root); diff != "" {
				t.Errorf("the root (-want +got):\n%s", diff)
			}
			refs, err := ls("skill://alpha-guide/references")
			if err != nil || !slices.Equal(refs, []string{"notes.md text/markdown skill://alpha-guide/references/notes.md"}) {
				t.Errorf("references: %v %v", refs, err)
			}
			_, err = ls("skill://no-such")
			missing := rpcError(t, err)
			if missing.Code != jsonrpc.CodeInvalidParams || !strings.Contains(missing.Message, "no directory is served at skill://no-such") {
				t.Errorf("a missing skill: %d %q", missing.Code, missing.Message)
			}
			for _, uri := range []string{"skill://beta-secret", "skill://beta-secret/references", "skill://hidden-notes",
				"skill://alpha-guide/..", "skill://alpha-guide/%2e%2e", "skill://alpha-guide/references/.."} {
				_, err := ls(uri)
				got := rpcError(t, err)
				if got.Code != missing.Code || got.Message != strings.Replace(missing.Message, "skill://no-such", uri, 1) {
					t.Errorf("%s: %d %q, want what a missing skill gets", uri, got.Code, got.Message)
				}
			}
			for uri, says := range map[string]string{
				"skill://alpha-guide/references/notes.md": "is a file, not a directory",
				"skill://alpha-guide/references/":         "ends in a slash",
				"":                                        "needs params.uri",
				"file:///etc":                             "not a skill URI",
			} {
				_, err := ls(uri)
				if got := rpcError(t, err); got.Code != jsonrpc.CodeInvalidParams || !strings.Contains(got.Message, says) {
					t.Errorf("%q: %d %q, want invalid params saying %q", uri, got.Code, got.Message, says)
				}
			}
		})
	}
}

// A SKILL.md edited after the skills were loaded is not served as the
// loaded skill's: reads are an internal error asking for a reload, and
// the listings leave the skill out, until the operator reloads.
func TestSkillChangedSinceLoad(t *testing.T) {
	f := newSkillsFixture(t, nil)
	md := filepath.Join(f.dir, "alpha", "alpha-guide", "SKILL.md")
	if err := os.WriteFile(md, []byte(strings.Replace(alphaGuideMD, "Read references", "Ignore references", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs := f.connect(t, skKeyA, revisions[0])
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://alpha-guide/SKILL.md"})
	if got := rpcError(t, err); got.Code != jsonrpc.CodeInternalError || !strings.Contains(got.Message, "reloads") {
		t.Errorf("reading a changed SKILL.md: %d %q, want an internal error asking for a reload", got.Code, got.Message)
	}
	_, err = mcp.CallCustomMethod[*skGetParams, *skGetResult](ctx, cs, "skills/get", &skGetParams{URI: "skill://alpha-guide/SKILL.md"})
	if got := rpcError(t, err); got.Code != jsonrpc.CodeInternalError {
		t.Errorf("skills/get of a changed skill: %d %q, want an internal error", got.Code, got.Message)
	}
	rs, _ := listURIs(t, cs)
	if slices.ContainsFunc(rs, func(r *mcp.Resource) bool { return strings.HasPrefix(r.URI, "skill://alpha-guide/") }) {
		t.Errorf("resources/list still lists the changed skill: %v", uris(rs))
	}
}

// A session's instructions name the skill tool family its runs have, and
// only that one.
func TestInstructionsNameTheSkillToolFamily(t *testing.T) {
	for _, c := range []struct{ family, want, not string }{
		{registry.SkillToolsLoad, "load_skill", "skill_search"},
		{registry.SkillToolsSearch, "skill_search", "load_skill"},
	} {
		t.Run(c.family, func(t *testing.T) {
			cs := newFamilyFixture(t, c.family, nil).connect(t, skKeyA, stateful)
			got := cs.InitializeResult().Instructions
			if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
				t.Errorf("instructions %q, want %s and not %s", got, c.want, c.not)
			}
		})
	}
}
