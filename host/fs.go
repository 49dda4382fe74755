package host

import (
	"context"
	"fmt"
	"io"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host/internal/sandboxfs"
)

// mountFS builds the WASI filesystem of a grant: one preopen per mount,
// each contained in its host folder by sandboxfs (no escape by "..",
// absolute paths or symlinks; read-only mounts refuse every change). No
// mount, no filesystem. The closers release the folder handles.
//
// Every mount is metered by b, the instance's budget: the bytes a call
// writes against Limits.MaxWriteBytes and the files open at once against
// Limits.MaxOpenFiles (see sandboxfs.Budget). instance.begin sets the caps
// and resets the write count for each call.
func mountFS(mounts []Mount, b *sandboxfs.Budget) (wazero.FSConfig, []io.Closer, error) {
	fsc := wazero.NewFSConfig()
	if len(mounts) == 0 {
		return fsc, nil, nil
	}
	var closers []io.Closer
	for _, m := range mounts {
		fs, err := sandboxfs.NewWithBudget(m.HostPath, m.ReadOnly, b)
		if err != nil {
			for _, c := range closers {
				c.Close()
			}
			return nil, nil, &CallError{Kind: ErrBadConfig, Code: abi.CodeInternal,
				Message: fmt.Sprintf("mounting %s at %s: %v", m.HostPath, m.GuestPath, err), Cause: err}
		}
		closers = append(closers, fs)
		fsc = fsc.(sysfs.FSConfig).WithSysFSMount(fs, cleanGuest(m.GuestPath))
	}
	return fsc, closers, nil
}

// WASI errno values (wasi_snapshot_preview1's errno enumeration), for the
// ones wazero's WASI layer cannot produce itself.
const (
	wasiErrnoDquot = 19
	wasiErrnoIO    = 29
	wasiErrnoMfile = 33
)

// budgetWASIFuncs are the WASI functions through which a guest can meet a
// refusal of its mount budget: they open, create, write or grow files.
var budgetWASIFuncs = []string{
	"fd_allocate", "fd_filestat_set_size", "fd_pwrite", "fd_write",
	"path_create_directory", "path_filestat_set_times", "path_open",
}

// wrapBudgetErrnos replaces, in b, which holds wazero's WASI functions, the
// functions of budgetWASIFuncs with wrappers that report a budget refusal as
// WASI's dquot ("disk quota exceeded") or mfile ("too many open files").
// wazero's WASI layer knows neither errno and reports EIO for both, which
// would read as a failing disk; the wrapper asks the instance's budget
// whether an EIO was its refusal.
func wrapBudgetErrnos(ctx context.Context, rt wazero.Runtime, b wazero.HostModuleBuilder) error {
	orig := rt.NewHostModuleBuilder(abi.ModuleWASI)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(orig)
	cm, err := orig.Compile(ctx)
	if err != nil {
		return err
	}
	defer cm.Close(ctx)
	defs := cm.ExportedFunctions()
	for _, name := range budgetWASIFuncs {
		def, ok := defs[name]
		if !ok {
			return fmt.Errorf("wazero exports no WASI function %s", name)
		}
		fn, ok := def.GoFunction().(api.GoModuleFunction)
		if !ok || len(def.ResultTypes()) != 1 {
			return fmt.Errorf("WASI function %s is not a Go function returning an errno", name)
		}
		b.NewFunctionBuilder().
			WithGoModuleFunction(budgetErrnos{fn}, def.ParamTypes(), def.ResultTypes()).
			WithName(def.Name()).
			WithParameterNames(def.ParamNames()...).
			WithResultNames(def.ResultNames()...).
			Export(name)
	}
	return nil
}

// budgetErrnos wraps a WASI function whose result is an errno.
type budgetErrnos struct{ fn api.GoModuleFunction }

func (w budgetErrnos) Call(ctx context.Context, mod api.Module, stack []uint64) {
	in, _ := ctx.Value(instKey{}).(*instance)
	if in == nil || in.fsBudget == nil {
		w.fn.Call(ctx, mod, stack)
		return
	}
	in.fsBudget.TakeRefusal() // forget one the guest never saw
	w.fn.Call(ctx, mod, stack)
	if stack[0] != wasiErrnoIO {
		return
	}
	switch in.fsBudget.TakeRefusal() {
	case sandboxfs.EDQUOT:
		stack[0] = wasiErrnoDquot
	case sandboxfs.EMFILE:
		stack[0] = wasiErrnoMfile
	}
}

// mountBudget is the budget every mount of one instance shares.
type mountBudget = sandboxfs.Budget

// newMountBudget returns a budget with the caps of limits; begin sets them
// again at the start of every call.
func newMountBudget(limits Limits) *mountBudget {
	return sandboxfs.NewBudget(limits.MaxWriteBytes, limits.MaxOpenFiles)
}
