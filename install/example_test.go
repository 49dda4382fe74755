package install_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillhost/skillhost/install"
)

// Install a skill folder, then check the installed folder against the
// lock, as every command that loads skills does.
func ExampleInstaller_Install() {
	ws, _ := os.MkdirTemp("", "skillhost-example-")
	defer os.RemoveAll(ws)
	src := filepath.Join(ws, "src", "tidy")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: tidy\ndescription: Tidy a folder of notes.\n---\nSort the notes by date.\n"), 0o644)

	in := &install.Installer{Dir: filepath.Join(ws, ".skillhost", "installed"), LockFile: filepath.Join(ws, install.LockFile)}
	got, err := in.Install(context.Background(), install.Request{Source: src})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got[0].Kind, got[0].Name, got[0].Digest)

	lock, _ := install.ReadLock(in.LockFile)
	fmt.Println("intact:", lock.Check(in.Dir) == nil)
	os.WriteFile(filepath.Join(in.Dir, "tidy", "SKILL.md"), []byte("changed"), 0o644)
	fmt.Println("intact after a change:", lock.Check(in.Dir) == nil)
	// Output:
	// skill tidy sha256:8c16b547b3cca257e1c37cafd5b12b6ed581a4ce3adb96c386809cfd66eee968
	// intact: true
	// intact after a change: false
}
