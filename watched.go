package skillhost

import "context"

// SourceDirs returns the folders on disk the engine reads packs and
// skills from, in precedence order: every configured source and every
// folder of Config.PackDirs, whether or not it holds a pack yet. Embedded
// sources are left out. A server watches them to reload on change.
func (e *Engine) SourceDirs() []string {
	var dirs []string
	for _, sp := range e.specs {
		if sp.FS == nil && sp.Dir != "" {
			dirs = append(dirs, sp.Dir)
		}
	}
	return dirs
}

// CompileModules compiles every module of the current packs, as the
// first call of each would, from the compilation cache when it holds
// them; see registry.Registry.CompileModules. A server calls it before
// it says it is ready, and after a reload.
func (e *Engine) CompileModules(ctx context.Context, progress func(name string, size int) (done func())) (compiled int, failed []error, err error) {
	return e.now().reg.CompileModules(ctx, progress)
}
