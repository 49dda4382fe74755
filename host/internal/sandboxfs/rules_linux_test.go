//go:build linux

package sandboxfs

import (
	"os"
	"testing"
)

// A file opened and then refused (a regular file asked for as a folder)
// is closed again: refusals leave no descriptor behind.
func TestRefusedOpenLeavesNoDescriptor(t *testing.T) {
	s := newFixture(t).open(t, false)
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("cannot count descriptors: %v", err)
		}
		return len(entries)
	}
	before := fds()
	for range 64 {
		if _, errno := s.OpenFile("hello.txt", rdonly|oDir, 0); errno == 0 {
			t.Fatal("a regular file opened as a folder")
		}
	}
	// Other goroutines may open a few meanwhile; 64 left open are not few.
	if after := fds(); after-before >= 32 {
		t.Errorf("%d descriptors before 64 refused opens, %d after", before, after)
	}
}
