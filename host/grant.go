package host

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/gobwas/glob"

	"github.com/skillhost/skillhost/grant"
)

// Mount maps a host directory into the guest's WASI filesystem.
type Mount = grant.Mount

// Limits bounds one call. A zero field means the host's default.
type Limits = grant.Limits

// LimitField is one field of Limits: its name as Limits encodes it in JSON
// and its value (a Timeout in nanoseconds).
type LimitField = grant.LimitField

// Grant is a set of capabilities and limits. A manifest's request and an
// operator's grant are both Grants; the one a module runs under is their
// intersection (see Intersect). The zero Grant allows nothing.
type Grant struct {
	// Mounts are the directories the guest may see.
	Mounts []Mount `json:"mounts,omitempty"`
	// AllowedHosts are hostname globs ("api.example.com", "*.example.com")
	// the guest may reach over HTTP; every redirect hop is checked again.
	AllowedHosts []string `json:"allowed_hosts,omitempty"`
	// AllowPrivateNetwork lets HTTP reach loopback, private, link-local and
	// cloud-metadata addresses. Only an operator sets it; it is refused by
	// default even for allowed hosts, so DNS cannot point a name inside.
	AllowPrivateNetwork bool `json:"allow_private_network,omitempty"`
	// Env holds the environment variables the guest sees, by name. In a
	// request only the names matter; values come from the operator.
	Env map[string]string `json:"env,omitempty"`
	// Config holds the values config_get returns. In a request they are
	// defaults; the operator's values win.
	Config map[string]string `json:"config,omitempty"`
	// Tools are the tools the module may call through tool_call. "*" on
	// one side of Intersect stands for every name the other side lists;
	// "*" in an effective grant allows every tool.
	Tools []string `json:"tools,omitempty"`
	// Capabilities are the host services (namespaced ids such as
	// "mail.send") the module may ask through capability_call.
	Capabilities []string `json:"capabilities,omitempty"`
	// Limits bound each call.
	Limits Limits `json:"limits,omitzero"`
	// Isolation says where the module's calls run: in this process, or in
	// a supervised worker process (see Isolation). Only the operator's side
	// counts; the stricter of the two sides wins in Intersect.
	Isolation Isolation `json:"isolation,omitempty"`
}

// Isolation says where a module's calls run.
type Isolation = grant.Isolation

// Isolation modes. The zero value takes the host's default
// (Config.WithIsolation), which is IsolationInProcess unless set.
const (
	// IsolationDefault takes the host's configured default.
	IsolationDefault = grant.IsolationDefault
	// IsolationInProcess runs guests on goroutines of this process.
	IsolationInProcess = grant.IsolationInProcess
	// IsolationProcess runs guests in supervised child processes of the
	// host binary (see grant.IsolationProcess).
	IsolationProcess = grant.IsolationProcess
)

// Intersect returns the effective grant of a module that requests req under
// an operator who grants op: only what both allow, with the smaller limit.
//
//   - A mount survives when the operator grants the same guest path over a
//     host directory that contains the requested one (a request that names
//     only the guest path gets the operator's directory); it is read-only
//     when either side says so.
//   - A host glob survives when the other side's glob matches it as text
//     (op "*.example.com" keeps req "api.example.com"); a host that only both
//     globs together would match is refused, never widened.
//   - Env names survive when the operator supplies a value.
//   - Config: the request's defaults overlaid by the operator's values.
//   - Tools and capabilities: the names both sides allow. "*" on one side
//     stands for every name the other side lists, so a request "*" under
//     an operator list gets that list, and an operator "*" gets what the
//     request lists; "*" survives only when both sides say "*". A side
//     that lists nothing allows nothing.
//   - Limits: req.Limits.Cap(op.Limits): each the smaller of the two where
//     both are set, the one set where only one is. A zero operator field
//     sets no ceiling, so a request could then go past the host's default:
//     a caller that holds requests to the defaults passes op.Limits
//     resolved against them (Config.Resolve), as skillhost's registry does.
func Intersect(req, op Grant) Grant {
	var g Grant
	for _, rm := range req.Mounts {
		for _, om := range op.Mounts {
			if cleanGuest(rm.GuestPath) != cleanGuest(om.GuestPath) {
				continue
			}
			hostPath := rm.HostPath
			if hostPath == "" {
				hostPath = om.HostPath // the request names only the guest path
			}
			if om.HostPath == "" || !within(om.HostPath, hostPath) {
				continue
			}
			g.Mounts = append(g.Mounts, Mount{
				HostPath:  filepath.Clean(hostPath),
				GuestPath: cleanGuest(rm.GuestPath),
				ReadOnly:  rm.ReadOnly || om.ReadOnly,
			})
			break
		}
	}
	for _, rh := range req.AllowedHosts {
		for _, oh := range op.AllowedHosts {
			if h, ok := narrowerGlob(rh, oh); ok && !slices.Contains(g.AllowedHosts, h) {
				g.AllowedHosts = append(g.AllowedHosts, h)
			}
		}
	}
	g.AllowPrivateNetwork = op.AllowPrivateNetwork
	for name := range req.Env {
		if v, ok := op.Env[name]; ok {
			if g.Env == nil {
				g.Env = map[string]string{}
			}
			g.Env[name] = v
		}
	}
	if len(req.Config)+len(op.Config) > 0 {
		g.Config = map[string]string{}
		for k, v := range req.Config {
			g.Config[k] = v
		}
		for k, v := range op.Config {
			g.Config[k] = v
		}
	}
	g.Tools = intersectNames(req.Tools, op.Tools)
	g.Capabilities = intersectNames(req.Capabilities, op.Capabilities)
	g.Limits = req.Limits.Cap(op.Limits)
	g.Isolation = op.Isolation
	if req.Isolation == IsolationProcess {
		g.Isolation = IsolationProcess
	}
	return g
}

func cleanGuest(p string) string {
	p = filepath.ToSlash(filepath.Clean("/" + p))
	return p
}

// within reports whether dir child is parent or lies below it, lexically.
func within(parent, child string) bool {
	rel, err := filepath.Rel(filepath.Clean(parent), filepath.Clean(child))
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

func narrowerGlob(a, b string) (string, bool) {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if a == b {
		return a, true
	}
	if g, err := glob.Compile(b); err == nil && g.Match(a) {
		return a, true
	}
	if g, err := glob.Compile(a); err == nil && g.Match(b) {
		return b, true
	}
	return "", false
}

// intersectNames returns the names both req and op allow, those of req
// first. "*" on one side allows every name; it survives only when both
// sides hold it.
func intersectNames(req, op []string) []string {
	reqAll, opAll := slices.Contains(req, "*"), slices.Contains(op, "*")
	if reqAll && opAll {
		return []string{"*"}
	}
	var out []string
	for _, n := range slices.Concat(req, op) {
		if n != "*" && (reqAll || slices.Contains(req, n)) && (opAll || slices.Contains(op, n)) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
