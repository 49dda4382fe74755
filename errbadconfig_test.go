package skillhost_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// Every layer's configuration error matches every layer's sentinel: one
// ErrBadConfig, whichever layer found the problem.
func TestOneErrBadConfig(t *testing.T) {
	sentinels := map[string]error{
		"skillhost.ErrBadConfig": skillhost.ErrBadConfig,
		"host.ErrBadConfig":      host.ErrBadConfig,
		"registry.ErrBadConfig":  registry.ErrBadConfig,
		"packs.ErrInvalidConfig": packs.ErrInvalidConfig,
	}
	_, fileErr := packs.ParseConfig(packs.ConfigFile, []byte("[limits]\ntimeout = \"-1s\"\n"))
	_, hostErr := host.New(context.Background(), host.NewConfig().WithDefaultLimits(host.Limits{Timeout: -time.Second}))
	_, openErr := skillhost.Open(context.Background(), skillhost.Config{
		Operator: packs.DefaultConfig(), NoBundled: true, NoUserSources: true, NoIndex: true, NoCache: true,
		DefaultLimits: skillhost.Limits{Timeout: -time.Second},
	})
	_, regErr := skillhost.Open(context.Background(), skillhost.Config{
		Operator: packs.DefaultConfig(), NoBundled: true, NoUserSources: true, NoIndex: true, NoCache: true,
		ToolSearch: registry.ToolSearchConfig{ActivationScope: "forever"},
	})
	for what, err := range map[string]error{
		"[limits] timeout = -1s":          fileErr,
		"host.New, Timeout -1s":           hostErr,
		"Open, DefaultLimits.Timeout -1s": openErr,
		"Open, an unknown activation":     regErr,
	} {
		if err == nil {
			t.Errorf("%s: no error", what)
			continue
		}
		for name, s := range sentinels {
			if !errors.Is(err, s) {
				t.Errorf("%s: %v does not match %s", what, err, name)
			}
		}
	}
}
