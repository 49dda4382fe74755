package sandboxfs_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sysfs"

	"github.com/skillhost/skillhost/host/internal/sandboxfs"
)

// A mount whose host directory holds a link to /etc: the guest can read the
// mount but not through the link, whatever path it tries.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "sandboxfs-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello"), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "etc")); err != nil {
		log.Fatal(err)
	}

	fsys, err := sandboxfs.New(dir, true)
	if err != nil {
		log.Fatal(err)
	}
	defer fsys.Close()
	// This is how the host mounts it for a module instance.
	_ = wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(fsys, "/data")

	for _, p := range []string{"hello.txt", "etc/passwd", "../etc/passwd", "/etc/passwd"} {
		_, errno := fsys.Stat(p)
		fmt.Printf("stat %s: %v\n", p, errno)
	}
	fmt.Printf("symlink: %v\n", fsys.Symlink("/", "root"))
	fmt.Printf("mkdir: %v\n", fsys.Mkdir("new", 0o755))
	// Output:
	// stat hello.txt: success
	// stat etc/passwd: operation not permitted
	// stat ../etc/passwd: operation not permitted
	// stat /etc/passwd: operation not permitted
	// symlink: operation not permitted
	// mkdir: read-only file system
}
