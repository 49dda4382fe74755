package host

import (
	"math"
	"path/filepath"
	"reflect"
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
	// MaxLogBytes caps log messages and stdout/stderr together, per call;
	// each entry also counts 64 bytes for what the host keeps besides it.
	MaxLogBytes int64 `json:"max_log_bytes,omitempty"`
	// MaxVarBytes caps the var store (keys and values, and 64 bytes per
	// var for what the host keeps besides them).
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
	// MaxWriteBytes caps what one call may write to its read-write mounts,
	// all together: bytes written, file growth by truncate or by writing
	// past the end, and 4 KiB for each file or directory it creates. A
	// write that would pass it fails with EDQUOT and writes nothing.
	MaxWriteBytes int64 `json:"max_write_bytes,omitempty"`
	// MaxOpenFiles caps the files and directories a guest may hold open at
	// once through its mounts, all together; the mount roots, which the
	// runtime holds open for the preopens, are not counted. An open past it
	// fails with EMFILE.
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

// Cap returns l with each limit held to ceiling's: the smaller of the two
// where both are set, the one that is set where only one is (0 is "not
// set": for MaxFuel, no cap). It is the one rule by which a request's
// limits meet an operator's, applied to every field of Limits alike.
func (l Limits) Cap(ceiling Limits) Limits {
	out := l
	lv, cv, ov := reflect.ValueOf(l), reflect.ValueOf(ceiling), reflect.ValueOf(&out).Elem()
	for i := range lv.NumField() {
		a, b := limitValue(lv.Field(i)), limitValue(cv.Field(i))
		if a == 0 || (b != 0 && b < a) {
			ov.Field(i).Set(cv.Field(i))
		}
	}
	return out
}

// LimitField is one field of Limits: its name as Limits encodes it in JSON
// and its value (a Timeout in nanoseconds).
type LimitField struct {
	Name  string
	Value int64
}

// Fields returns every field of l in declaration order, zero ones too.
func (l Limits) Fields() []LimitField {
	v := reflect.ValueOf(l)
	out := make([]LimitField, v.NumField())
	for i, f := range reflect.VisibleFields(v.Type()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out[i] = LimitField{Name: name, Value: limitValue(v.Field(i))}
	}
	return out
}

// limitValue reads a field of Limits, each an integer kind; a uint64 past
// the int64 range reads as the largest int64.
func limitValue(v reflect.Value) int64 {
	if v.CanUint() {
		return int64(min(v.Uint(), math.MaxInt64))
	}
	return v.Int()
}
