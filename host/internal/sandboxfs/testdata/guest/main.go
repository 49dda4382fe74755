// Command guest probes the sandbox from inside a WASI module. It expects a
// read-only mount at /ro and a read-write mount at /rw, both laid out like
// the test fixture in helpers_test.go, and prints one line per probe: its name
// and "ok", "ok <result>" or the errno it got.
//
// TestGuest builds it with
//
//	GOOS=wasip1 GOARCH=wasm go build -o guest.wasm ./testdata/guest
package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
)

func main() {
	// Reads, allowed then denied.
	probe("ro read", r(read("/ro/hello.txt")))
	probe("ro read through link inside", r(read("/ro/inside")))
	probe("ro read dotdot", r(read("/ro/../outside/secret.txt")))
	probe("ro read absolute", r(read("/etc/passwd")))
	probe("ro read through absolute link", r(read("/ro/abs/secret.txt")))
	probe("ro read through relative link", r(read("/ro/up/secret.txt")))
	probe("ro read through file link", r(read("/ro/dir/upup")))
	probe("ro lstat escaping link", r(stat(os.Lstat, "/ro/abs")))
	probe("ro stat escaping link", r(stat(os.Stat, "/ro/abs")))
	probe("ro list", r(list("/ro")))
	probe("ro list through escaping link", r(list("/ro/up")))

	// Changes on the read-only mount, denied.
	probe("ro write", r("", os.WriteFile("/ro/new.txt", []byte("x"), 0o644)))
	probe("ro overwrite", r("", os.WriteFile("/ro/hello.txt", []byte("x"), 0o644)))
	probe("ro open read-only truncating", r(open("/ro/hello.txt", os.O_RDONLY|os.O_TRUNC)))
	probe("ro open read-only creating", r(open("/ro/new.txt", os.O_RDONLY|os.O_CREATE)))
	probe("ro mkdir", r("", os.Mkdir("/ro/d", 0o755)))
	probe("ro remove", r("", os.Remove("/ro/hello.txt")))
	probe("ro rename", r("", os.Rename("/ro/hello.txt", "/ro/moved.txt")))

	// Changes on the read-write mount, allowed then denied.
	probe("rw write", r("", os.WriteFile("/rw/new.txt", []byte("written"), 0o644)))
	probe("rw read back", r(read("/rw/new.txt")))
	probe("rw write through escaping link", r("", os.WriteFile("/rw/up/pwned.txt", []byte("x"), 0o644)))
	probe("rw write through dangling link", r("", os.WriteFile("/rw/dangling", []byte("x"), 0o644)))
	probe("rw mkdir", r("", os.Mkdir("/rw/d", 0o755)))
	probe("rw rename", r("", os.Rename("/rw/new.txt", "/rw/d/moved.txt")))
	probe("rw remove", r("", os.Remove("/rw/hello.txt")))
	probe("rw symlink absolute", r("", os.Symlink("/etc", "/rw/evil")))
	probe("rw symlink relative", r("", os.Symlink("d/moved.txt", "/rw/friendly")))
	probe("rw hard link", r("", os.Link("/rw/d/moved.txt", "/rw/hard")))
	probe("rw readlink inside", r(readlink("/rw/inside")))
	probe("rw readlink escaping", r(readlink("/rw/abs")))
}

// result is what one probe got.
type result struct {
	value string
	err   error
}

func r(value string, err error) result { return result{value, err} }

func probe(name string, res result) {
	switch {
	case res.err != nil:
		fmt.Printf("%s: %s\n", name, errnoName(res.err))
	case res.value != "":
		fmt.Printf("%s: ok %s\n", name, res.value)
	default:
		fmt.Printf("%s: ok\n", name)
	}
}

func read(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}

func open(p string, flag int) (string, error) {
	f, err := os.OpenFile(p, flag, 0o644)
	if err != nil {
		return "", err
	}
	return "", f.Close()
}

func stat(fn func(string) (os.FileInfo, error), p string) (string, error) {
	info, err := fn(p)
	if err != nil {
		return "", err
	}
	return info.Mode().Type().String(), nil
}

func list(p string) (string, error) {
	entries, err := os.ReadDir(p)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return strings.Join(names, " "), nil
}

func readlink(p string) (string, error) {
	return os.Readlink(p)
}

func errnoName(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	names := map[syscall.Errno]string{
		syscall.EACCES: "EACCES", syscall.EBADF: "EBADF", syscall.EEXIST: "EEXIST",
		syscall.EINVAL: "EINVAL", syscall.EIO: "EIO", syscall.EISDIR: "EISDIR",
		syscall.ELOOP: "ELOOP", syscall.ENOENT: "ENOENT", syscall.ENOSYS: "ENOSYS",
		syscall.ENOTCAPABLE: "ENOTCAPABLE", syscall.ENOTDIR: "ENOTDIR",
		syscall.ENOTSUP: "ENOTSUP", syscall.EPERM: "EPERM", syscall.EROFS: "EROFS",
	}
	if name, ok := names[errno]; ok {
		return name
	}
	return fmt.Sprintf("errno %d", errno)
}
