package host

import (
	"io"

	"github.com/tetratelabs/wazero"
)

// mountFS builds the WASI filesystem of a grant: one preopen per mount,
// each contained in its host directory. No mount, no filesystem.
func mountFS(mounts []Mount) (wazero.FSConfig, []io.Closer, error) {
	fsc := wazero.NewFSConfig()
	// TODO(sandboxfs): mount contained filesystems.
	return fsc, nil, nil
}
