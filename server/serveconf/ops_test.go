package serveconf

import (
	"errors"
	"strings"
	"testing"
)

func TestServerOTLPEndpoint(t *testing.T) {
	cfg, err := parse("[server]\notlp_endpoint = \"http://collector:4318\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.OTLPEndpoint != "http://collector:4318" {
		t.Errorf("otlp_endpoint = %q", cfg.Server.OTLPEndpoint)
	}
	for _, bad := range []string{`"collector:4318"`, `"ftp://collector"`, `"http://"`, `4318`} {
		_, err := parse("[server]\notlp_endpoint = " + bad + "\n")
		if !errors.Is(err, ErrBadConfig) {
			t.Errorf("otlp_endpoint = %s: %v, want ErrBadConfig", bad, err)
		}
	}
}

// [server.providers] is gone: the error sends the operator to the section
// that serves every engine.
func TestServerProvidersPointToCapabilities(t *testing.T) {
	_, err := parse("[server.providers.mail]\ncommand = [\"mail-bridge\"]\n")
	if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), "[capabilities.providers.<namespace>]") {
		t.Errorf("[server.providers.mail]: %v, want an error naming [capabilities.providers.<namespace>]", err)
	}
}
