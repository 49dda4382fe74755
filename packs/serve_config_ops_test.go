package packs_test

import (
	"errors"
	"testing"

	"github.com/skillhost/skillhost/packs"
)

func TestServerOTLPEndpoint(t *testing.T) {
	cfg, err := packs.ParseConfig("skillhost.toml", []byte("[server]\notlp_endpoint = \"http://collector:4318\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.OTLPEndpoint != "http://collector:4318" {
		t.Errorf("otlp_endpoint = %q", cfg.Server.OTLPEndpoint)
	}
	for _, bad := range []string{`"collector:4318"`, `"ftp://collector"`, `"http://"`, `4318`} {
		_, err := packs.ParseConfig("skillhost.toml", []byte("[server]\notlp_endpoint = "+bad+"\n"))
		if !errors.Is(err, packs.ErrInvalidConfig) {
			t.Errorf("otlp_endpoint = %s: %v, want ErrInvalidConfig", bad, err)
		}
	}
}

func TestServerProviders(t *testing.T) {
	cfg, err := packs.ParseConfig("skillhost.toml", []byte(`
[server.providers.mail]
command = ["mail-bridge", "--stdio"]
timeout = "5s"

[server.providers.gog]
command = ["gogcli", "bridge"]
`))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Server.Providers
	if len(got) != 2 {
		t.Fatalf("providers: %+v", got)
	}
	byNS := map[string]packs.ProviderConfig{got[0].Namespace: got[0], got[1].Namespace: got[1]}
	if m := byNS["mail"]; len(m.Command) != 2 || m.Command[0] != "mail-bridge" || m.Timeout != 5e9 {
		t.Errorf("mail: %+v", m)
	}
	if g := byNS["gog"]; len(g.Command) != 2 || g.Timeout != 0 {
		t.Errorf("gog: %+v", g)
	}
	for _, bad := range []string{
		"[server.providers.mail]\ntimeout = \"5s\"\n",
		"[server.providers.mail]\ncommand = []\n",
		"[server.providers.Mail]\ncommand = [\"x\"]\n",
		"[server.providers.mail]\ncommand = [\"x\"]\nnamespace = \"y\"\n",
		"[server.providers.mail]\ncommand = \"x\"\n",
	} {
		if _, err := packs.ParseConfig("skillhost.toml", []byte(bad)); !errors.Is(err, packs.ErrInvalidConfig) {
			t.Errorf("%q: %v, want ErrInvalidConfig", bad, err)
		}
	}
}
