package skillhost

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
