package host_test

import (
	"os"
	"testing"

	"github.com/skillhost/skillhost/host"
)

// TestMain lets the test binary serve as the worker process of the calls
// that run under process isolation.
func TestMain(m *testing.M) {
	if mode := os.Getenv(host.HostileWorkerEnv); mode != "" {
		if _, ok := os.LookupEnv("SKILLHOST_WORKER"); ok {
			host.ServeHostileWorker(mode)
		}
	}
	host.ServeWorkerIfChild()
	os.Exit(m.Run())
}
