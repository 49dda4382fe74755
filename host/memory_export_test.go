package host

// Test hooks for memory restores; compiled into tests only.

// SetProtectAlways makes every restore of a tracked memory protect again
// the pages it copied back (on), or leave them writable while the next
// call is likely to write them (off, the default); it returns the previous
// setting.
func SetProtectAlways(on bool) bool { return protectAlways.Swap(on) }
