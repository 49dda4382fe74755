package packs

import (
	"embed"
	"io/fs"
)

//go:embed bundled/pack.yaml bundled/modules/*/*.wasm
var bundledFS embed.FS

// Bundled returns the pack compiled into the binary: useful tools a new
// user can call with no set-up.
func Bundled() (*Pack, error) {
	sub, err := fs.Sub(bundledFS, "bundled")
	if err != nil {
		return nil, err
	}
	return Load(sub, "embedded:bundled", "bundled")
}
