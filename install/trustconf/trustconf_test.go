package trustconf_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/install/trustconf"
	"github.com/skillhost/skillhost/internal/confwalk"
	"github.com/skillhost/skillhost/packs"
)

func TestTrustSection(t *testing.T) {
	file := filepath.Join("/etc", "skillhost", "skillhost.toml")
	op, err := packs.ParseConfig(file, []byte(`
[trust]
require_signature = false
keys = ["keys/release.pub", "/abs/other.pub"]
revoked = ["sha256:`+strings.Repeat("ab", 32)+`"]
trusted_root = "trusted_root.json"
registries = ["ghcr.io", "localhost:5000"]

[[trust.identities]]
issuer = "https://token.actions.example"
subject_regexp = 'https://github\.example/acme/.*'
`))
	if err != nil {
		t.Fatal(err)
	}
	c := trustconf.Of(op)
	if c.Require() || len(c.Keys) != 2 || c.Keys[0] != "/etc/skillhost/keys/release.pub" || c.Keys[1] != "/abs/other.pub" ||
		c.TrustedRoot != "/etc/skillhost/trusted_root.json" || len(c.Identities) != 1 || c.Identities[0].SubjectRegexp == "" || len(c.Registries) != 2 {
		t.Fatalf("read %+v", c)
	}
	// No section: remote sources must be signed, no one is trusted.
	op, err = packs.ParseConfig(file, []byte("state_dir = \"x\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := trustconf.Of(op); !c.Require() || len(c.Keys) != 0 {
		t.Fatalf("default %+v", c)
	}
	if c := trustconf.Of(nil); !c.Require() {
		t.Fatal("the default of no config does not require signatures")
	}
}

func TestTrustSectionErrors(t *testing.T) {
	_, err := packs.ParseConfig("skillhost.toml", []byte(`[trust]
revoked = ["abc"]
registries = ["Not A Host"]
colour = "blue"

[[trust.identities]]
issuer = "https://token.actions.example"

[[trust.identities]]
subject = "a@example.com"
`))
	if !errors.Is(err, confwalk.ErrBadConfig) {
		t.Fatalf("err %v, want ErrBadConfig", err)
	}
	for _, want := range []string{
		`skillhost.toml:2: trust.revoked[0] "abc" is not a key id`,
		`skillhost.toml:3: trust.registries[0] "Not A Host" is not a host name`,
		`skillhost.toml:4: unknown key "trust.colour"`,
		`trust.identities[0] needs one of subject and subject_regexp`,
		`trust.identities[1] has no issuer`,
		`trust.trusted_root is needed`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the errors do not say %q:\n%v", want, err)
		}
	}
}
