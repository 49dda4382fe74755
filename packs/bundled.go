package packs

import (
	"embed"
	"io/fs"
)

//go:embed bundled/pack.yaml bundled/modules/*/*.wasm bundled/skills
var bundledFS embed.FS

// bundledRoot names the bundled source in paths and messages.
const bundledRoot = "embedded:bundled"

// Bundled returns the pack compiled into the binary: useful tools a new
// user can call with no set-up.
func Bundled() (*Pack, error) {
	sub, err := fs.Sub(bundledFS, "bundled")
	if err != nil {
		return nil, err
	}
	return Load(sub, bundledRoot, SourceBundled)
}

// BundledSource returns the source of everything compiled into the
// binary: the core pack and the skills under bundled/skills, which belong
// to it. It is searched to any depth.
func BundledSource() SourceSpec {
	sub, err := fs.Sub(bundledFS, "bundled")
	if err != nil {
		panic(err) // "bundled" is a valid path: fs.Sub cannot fail
	}
	return SourceSpec{Name: SourceBundled, FS: sub, Root: bundledRoot, MaxDepth: UnlimitedDepth}
}
