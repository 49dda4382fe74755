//go:build linux

package host

// sysMemfdCreate is memfd_create, which package syscall does not name on
// amd64.
const sysMemfdCreate = 319
