package host

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gobwas/glob"
)

// Mount maps a host directory into the guest's WASI filesystem.
type Mount struct {
	// HostPath is the directory on the host.
	HostPath string `json:"host_path"`
	// GuestPath is where the guest sees it, e.g. "/data".
	GuestPath string `json:"guest_path"`
	// ReadOnly refuses every write, create, rename and delete.
	ReadOnly bool `json:"read_only,omitempty"`
}

// Limits bounds one call. A zero field means the host's default.
type Limits struct {
	// Timeout is the wall-clock limit of one call, host calls included.
	Timeout time.Duration `json:"timeout,omitempty"`
	// MaxMemoryBytes caps the guest's linear memory.
	MaxMemoryBytes uint64 `json:"max_memory_bytes,omitempty"`
	// MaxOutputBytes caps what the guest may pass to output_set.
	MaxOutputBytes int64 `json:"max_output_bytes,omitempty"`
	// MaxLogBytes caps log messages and stdout/stderr together, per call.
	MaxLogBytes int64 `json:"max_log_bytes,omitempty"`
	// MaxVarBytes caps the var store (keys and values).
	MaxVarBytes int64 `json:"max_var_bytes,omitempty"`
	// MaxHTTPResponseBytes caps one HTTP response body.
	MaxHTTPResponseBytes int64 `json:"max_http_response_bytes,omitempty"`
	// MaxKernelBytes caps the host-owned memory the guest allocates through
	// alloc (input, output, messages, HTTP bodies).
	MaxKernelBytes int64 `json:"max_kernel_bytes,omitempty"`
	// MaxFuel caps the instructions one call may run, counted the same on
	// any machine: a call that runs out ends with ErrLimit. 0 is no cap.
	// Only metered modules (see Config.WithMetering) can be held to it.
	MaxFuel int64 `json:"max_fuel,omitempty"`
	// MaxWriteBytes caps what one call may write to its read-write mounts:
	// bytes written, file growth by truncate, and a fixed charge for each
	// file, directory or link it creates.
	MaxWriteBytes int64 `json:"max_write_bytes,omitempty"`
	// MaxOpenFiles caps the files and directories a guest may hold open at
	// once through its mounts, the mount roots included.
	MaxOpenFiles int64 `json:"max_open_files,omitempty"`
}

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
	// Tools are the tools the module may call through tool_call ("*" in an
	// operator grant allows whatever the request names).
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
type Isolation string

// Isolation modes. The zero value takes the host's default
// (Config.WithIsolation), which is IsolationInProcess unless set.
const (
	// IsolationDefault takes the host's configured default.
	IsolationDefault Isolation = ""
	// IsolationInProcess runs guests on goroutines of this process.
	IsolationInProcess Isolation = "in-process"
	// IsolationProcess runs guests in supervised child processes of the
	// host binary: a worker that does not return within the deadline and a
	// grace period is killed and replaced, so even a guest that defeated
	// interruption cannot stall the host.
	IsolationProcess Isolation = "process"
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
//   - Tools and capabilities: names in both ("*" on the operator side means
//     whatever the request names).
//   - Limits: the smaller non-zero value of each.
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
	g.Limits = Limits{
		Timeout:              minNonZero(req.Limits.Timeout, op.Limits.Timeout),
		MaxMemoryBytes:       minNonZero(req.Limits.MaxMemoryBytes, op.Limits.MaxMemoryBytes),
		MaxOutputBytes:       minNonZero(req.Limits.MaxOutputBytes, op.Limits.MaxOutputBytes),
		MaxLogBytes:          minNonZero(req.Limits.MaxLogBytes, op.Limits.MaxLogBytes),
		MaxVarBytes:          minNonZero(req.Limits.MaxVarBytes, op.Limits.MaxVarBytes),
		MaxHTTPResponseBytes: minNonZero(req.Limits.MaxHTTPResponseBytes, op.Limits.MaxHTTPResponseBytes),
		MaxKernelBytes:       minNonZero(req.Limits.MaxKernelBytes, op.Limits.MaxKernelBytes),
		MaxFuel:              minNonZero(req.Limits.MaxFuel, op.Limits.MaxFuel),
		MaxWriteBytes:        minNonZero(req.Limits.MaxWriteBytes, op.Limits.MaxWriteBytes),
		MaxOpenFiles:         minNonZero(req.Limits.MaxOpenFiles, op.Limits.MaxOpenFiles),
	}
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

func intersectNames(req, op []string) []string {
	var out []string
	for _, r := range req {
		if (slices.Contains(op, "*") || slices.Contains(op, r)) && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func minNonZero[T int64 | uint64 | time.Duration](a, b T) T {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	case a < b:
		return a
	}
	return b
}
