package registry

import (
	"context"
	"io/fs"
)

// CompileModules compiles the module of every pack of the registry, as
// the first call of one of its tools would, so that no call waits on a
// compiler: a server does it before it says it is ready. progress, when
// not nil, is called before each module with its name ("pack/path") and
// size, and returns the function to call once the module is compiled. A
// module that does not compile is reported in failed and, as before,
// fails the calls of its tools; compiling stops early, with ctx's error,
// when ctx ends.
func (r *Registry) CompileModules(ctx context.Context, progress func(name string, size int) (done func())) (compiled int, failed []error, err error) {
	for _, p := range r.packs {
		for _, m := range p.Modules {
			if err := ctx.Err(); err != nil {
				return compiled, failed, err
			}
			done := func() {}
			if progress != nil {
				size := 0
				if info, err := fs.Stat(p.FS, m.Path); err == nil {
					size = int(info.Size())
				}
				done = progress(p.Name+"/"+m.Path, size)
			}
			_, err := r.module(ctx, p, m)
			done()
			switch {
			case err == nil:
				compiled++
			case ctx.Err() != nil:
				return compiled, failed, ctx.Err()
			default:
				failed = append(failed, err)
			}
		}
	}
	return compiled, failed, nil
}
