//go:build !unix

package install

// flock is a no-op where flock(2) does not exist: installs into one
// folder must not run at once there.
func flock(string) (func(), error) { return func() {}, nil }
