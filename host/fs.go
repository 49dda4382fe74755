package host

import (
	"fmt"
	"io"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sysfs"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host/internal/sandboxfs"
)

// mountFS builds the WASI filesystem of a grant: one preopen per mount,
// each contained in its host folder by sandboxfs (no escape by "..",
// absolute paths or symlinks; read-only mounts refuse every change). No
// mount, no filesystem. The closers release the folder handles.
func mountFS(mounts []Mount) (wazero.FSConfig, []io.Closer, error) {
	fsc := wazero.NewFSConfig()
	if len(mounts) == 0 {
		return fsc, nil, nil
	}
	var closers []io.Closer
	for _, m := range mounts {
		fs, err := sandboxfs.New(m.HostPath, m.ReadOnly)
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
