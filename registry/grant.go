package registry

import (
	"time"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
)

// grants turns manifests and the operator's configuration into the grant
// each Wasm tool runs with: one function over one limits type.
type grants struct {
	op *packs.Config
	// embedder are Options.Grants, replacing the config's sections.
	embedder map[string]host.Grant
	// adjust is Options.GrantFor.
	adjust func(pack string, tools []string, operator host.Grant) (host.Grant, bool)
	// defaults are Options.DefaultLimits, the embedder's ceilings.
	defaults host.Limits
	// resolve fills a grant's zero limits from the host's defaults (the
	// operator's [limits] and the embedder's, over the built-in ones).
	resolve func(host.Limits) host.Limits
	// isolation is the host's default isolation.
	isolation host.Isolation
	// defaultSet says, per field of host.Limits, whether the operator's
	// defaults ([limits] or the embedder's) set it; filled on first use.
	defaultSet []bool
}

// of returns the requested, operator and effective grants of module m of
// pack p, where the operator's grant comes from and which side set each
// effective limit. The operator's limits are ceilings: the grant's own,
// else the operator's defaults, else the built-in ones; a manifest can
// lower a limit, never raise it (host.Intersect takes the smaller).
func (g *grants) of(t *Tool, p *packs.Pack, m *packs.Module) {
	req := requestGrant(m)
	op, from := g.operatorGrant(p, m)
	if g.adjust != nil {
		names := make([]string, len(m.Tools))
		for i, tl := range m.Tools {
			names[i] = tl.Name
		}
		if adj, ok := g.adjust(p.Name, names, op); ok {
			op, from = adj, GrantFromEmbedder
		}
	}
	granted := op.Limits
	op.Limits = g.resolve(granted)
	// Isolation is the operator's alone: the pack's section or the
	// embedder's grant, else the config's [sandbox] default, else the
	// host's.
	isoFrom := OriginOperator
	if op.Isolation == host.IsolationDefault {
		op.Isolation, isoFrom = host.Isolation(g.op.Sandbox.Isolation), OriginOperatorDefault
		if op.Isolation == host.IsolationDefault {
			isoFrom = OriginDefault
		}
	}
	eff := host.Intersect(req, op)
	iso := eff.Isolation
	if iso == host.IsolationDefault {
		iso = g.isolation
	}
	t.Requested, t.Operator, t.Effective, t.GrantFrom = req, op, eff, from
	t.LimitFrom = g.limitSources(req.Limits, granted, eff.Limits)
	t.Isolation, t.IsolationFrom = iso, isoFrom
}

// limitSources says which side set each effective limit: the pack, when
// its own value held (at or below the ceiling); else the operator's grant
// for the pack, when it sets the limit; else the operator's defaults, when
// they set it; else the built-in default.
func (g *grants) limitSources(req, granted, eff host.Limits) map[string]Origin {
	r, gr := req.Fields(), granted.Fields()
	if g.defaultSet == nil {
		file, embedder := g.op.Limits.Fields(), g.defaults.Fields()
		g.defaultSet = make([]bool, len(file))
		for i := range file {
			g.defaultSet[i] = file[i].Value != 0 || embedder[i].Value != 0
		}
	}
	out := make(map[string]Origin, len(r))
	for i, f := range eff.Fields() {
		switch {
		case r[i].Value != 0 && r[i].Value == f.Value:
			out[f.Name] = OriginPack
		case gr[i].Value != 0:
			out[f.Name] = OriginOperator
		case g.defaultSet[i]:
			out[f.Name] = OriginOperatorDefault
		default:
			out[f.Name] = OriginDefault
		}
	}
	return out
}

// requestGrant turns a manifest's request and limits into a Grant. Its
// config holds the defaults: request.config and the config params'
// defaults.
func requestGrant(m *packs.Module) host.Grant {
	r := m.Request
	g := host.Grant{
		AllowedHosts: r.AllowedHosts,
		Config:       m.ConfigDefaults(),
		Tools:        r.Tools,
		Capabilities: r.Services,
		Limits:       m.Limits,
	}
	for _, mr := range r.Mounts {
		g.Mounts = append(g.Mounts, host.Mount{GuestPath: mr.Guest, ReadOnly: mr.ReadOnly})
	}
	if len(r.Env) > 0 {
		g.Env = map[string]string{}
		for _, name := range r.Env {
			g.Env[name] = ""
		}
	}
	return g
}

// operatorGrant returns the operator's grant for module m of pack p, and
// where it comes from: the embedder's grants, else the operator config's
// [packs.<name>] section, else nothing. The bundled pack is no exception:
// its modules request no tools or services, and its folders, hosts and
// env values are the operator's to give. The limits are the grant's own,
// not yet resolved against the defaults.
func (g *grants) operatorGrant(p *packs.Pack, m *packs.Module) (host.Grant, string) {
	if eg, ok := g.embedder[p.Name]; ok {
		return eg, GrantFromEmbedder
	}
	if pg, ok := g.op.Packs[p.Name]; ok {
		return packGrant(pg, m), GrantFromConfig
	}
	return host.Grant{}, GrantFromNone
}

// packGrant turns a [packs.<name>] section into module m's Grant. Of the
// config values, m gets those of the keys it declares.
func packGrant(pg packs.PackGrant, m *packs.Module) host.Grant {
	g := host.Grant{
		Config:              pg.ModuleConfig(m),
		AllowedHosts:        pg.AllowedHosts,
		AllowPrivateNetwork: pg.AllowPrivateNetwork,
		Capabilities:        pg.Services,
		Tools:               pg.Tools,
		Limits:              pg.Limits,
		Isolation:           host.Isolation(pg.Isolation),
		Mounts:              pg.Mounts,
	}
	if len(pg.Env) > 0 {
		g.Env = make(map[string]string, len(pg.Env))
		for k, v := range pg.Env {
			g.Env[k] = v.Value()
		}
	}
	return g
}

// defaultTimeout is the timeout of a Wasm tool that neither its manifest
// nor its pack's grant limits: the embedder's default limits, else the
// operator's [limits], else the host's default (host.DefaultTimeout
// unless the host was configured otherwise).
func (g *grants) defaultTimeout() time.Duration {
	for _, d := range []time.Duration{g.defaults.Timeout, g.op.Limits.Timeout, g.resolve(host.Limits{}).Timeout} {
		if d > 0 {
			return d
		}
	}
	return host.DefaultTimeout
}

// builtinTimeout is how long a call of built-in n may run (see
// builtinTool): the default timeout of a Wasm tool, so that one setting
// bounds every call a model makes. run_skill_script runs a skill's .wasm
// script under the grant of the skill's pack, whose timeout may be longer:
// its calls get the longest timeout any grant gives, on top of the default
// for finding, reading and compiling the script.
func (g *grants) builtinTimeout(n Native) time.Duration {
	d := g.defaultTimeout()
	if b, ok := n.(*builtin); !ok || !b.runsScripts {
		return d
	}
	longest := d
	for _, eg := range g.embedder {
		longest = max(longest, eg.Limits.Timeout)
	}
	for _, pg := range g.op.Packs {
		longest = max(longest, pg.Limits.Timeout)
	}
	return d + longest
}
