package main

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/spf13/cobra"
)

// A one-shot command collects less often; a long-running one, or a
// process whose $GOGC is set, keeps what it has.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	gogc, had := os.LookupEnv("GOGC")
	os.Unsetenv("GOGC")
	defer func() {
		if had {
			os.Setenv("GOGC", gogc)
		}
	}()

	tuneGC(&cobra.Command{Use: "serve", Annotations: map[string]string{longRunning: "yes"}})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("a long-running command set GOGC=%d", got)
	}
	tuneGC(&cobra.Command{Use: "call"})
	if got := debug.SetGCPercent(100); got != 400 {
		t.Errorf("a one-shot command left GOGC=%d, want 400", got)
	}
	t.Setenv("GOGC", "150")
	tuneGC(&cobra.Command{Use: "call"})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with $GOGC set, a one-shot command changed GOGC to %d", got)
	}
}
