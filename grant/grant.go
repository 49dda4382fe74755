// Package grant holds what a Wasm module is allowed, as every layer names
// it: the Limits that bound one call and the Mounts of host folders it
// sees, and the rule by which files write limits (ParseLimits; the [limits]
// table of skillhost.toml is read with it). It imports no other layer, so
// that a manifest's limits (packs), an operator's [limits] and
// [packs.<name>] sections, the registry's grants and the host that
// enforces them share one type, and reading a file needs no runtime. The
// host's Grant holds these; host.Limits and host.Mount are these types.
package grant

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
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

// Limits bounds one call. A zero field means "not set": the host's
// default, or the operator's when the operator sets one. It is also the
// [limits] section of skillhost.toml and the limits of a [packs.<name>]
// section, by its toml tags (sizes as "64MiB" or bytes, the timeout as
// "5s"), read by ParseLimits's rule; MaxKernelBytes has no key.
type Limits struct {
	// Timeout is the wall-clock limit of one call, host calls included.
	Timeout time.Duration `json:"timeout,omitempty" toml:"timeout"`
	// MaxMemoryBytes caps the guest's linear memory.
	MaxMemoryBytes uint64 `json:"max_memory_bytes,omitempty" toml:"max_memory"`
	// MaxOutputBytes caps what the guest may pass to output_set.
	MaxOutputBytes int64 `json:"max_output_bytes,omitempty" toml:"max_output"`
	// MaxLogBytes caps log messages and stdout/stderr together, per call;
	// each entry also counts 64 bytes for what the host keeps besides it.
	MaxLogBytes int64 `json:"max_log_bytes,omitempty" toml:"max_log"`
	// MaxVarBytes caps the var store (keys and values, and 64 bytes per
	// var for what the host keeps besides them).
	MaxVarBytes int64 `json:"max_var_bytes,omitempty" toml:"max_var"`
	// MaxHTTPResponseBytes caps one HTTP response body.
	MaxHTTPResponseBytes int64 `json:"max_http_response_bytes,omitempty" toml:"max_http_response"`
	// MaxKernelBytes caps the host-owned memory the guest allocates through
	// alloc (input, output, messages, HTTP bodies).
	MaxKernelBytes int64 `json:"max_kernel_bytes,omitempty" toml:"-"`
	// MaxFuel caps the instructions one call may run, counted the same on
	// any machine: a call that runs out ends with ErrLimit. 0 is no cap.
	// Only metered modules (see Config.WithMetering) can be held to it.
	MaxFuel int64 `json:"max_fuel,omitempty" toml:"max_fuel"`
	// MaxWriteBytes caps what one call may write to its read-write mounts,
	// all together: bytes written, file growth by truncate or by writing
	// past the end, and 4 KiB for each file or directory it creates. A
	// write that would pass it fails with EDQUOT and writes nothing.
	MaxWriteBytes int64 `json:"max_write_bytes,omitempty" toml:"max_write"`
	// MaxOpenFiles caps the files and directories a guest may hold open at
	// once through its mounts, all together; the mount roots, which the
	// runtime holds open for the preopens, are not counted. An open past it
	// fails with EMFILE.
	MaxOpenFiles int64 `json:"max_open_files,omitempty" toml:"max_open_files"`
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

// Sandbox is the [sandbox] section of skillhost.toml: the operator's
// defaults for how every pack's calls are run.
type Sandbox struct {
	// Isolation is where the calls of a pack whose section sets no
	// isolation run: IsolationInProcess or IsolationProcess;
	// IsolationDefault ("") leaves it to the host's default (in-process).
	Isolation Isolation `json:"isolation,omitempty" toml:"isolation"`
}

// ParseIsolation reads an isolation mode as a file writes it: "in-process"
// or "process".
func ParseIsolation(s string) (Isolation, error) {
	if s != string(IsolationInProcess) && s != string(IsolationProcess) {
		return "", fmt.Errorf("%q must be \"in-process\" (the default) or \"process\"", s)
	}
	return Isolation(s), nil
}
