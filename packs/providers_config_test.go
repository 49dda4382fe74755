package packs_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/packs"
)

func TestCapabilityProviders(t *testing.T) {
	cfg, err := packs.ParseConfig("skillhost.toml", []byte(`
[capabilities.providers.mail]
command = ["mail-bridge", "--stdio"]
timeout = "5s"
env = { MAIL_TOKEN = "s3cret", MAIL_HOST = "smtp.example.com" }

[capabilities.providers.cal]
command = ["cal-bridge"]
enabled = false
`))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Capabilities.Providers
	if len(got) != 2 {
		t.Fatalf("providers: %+v", got)
	}
	mail, cal := got[0], got[1]
	if mail.Namespace != "mail" || !mail.Enabled || mail.Timeout != 5*time.Second || mail.Line != 2 {
		t.Errorf("mail: %+v", mail)
	}
	if diff := cmp.Diff([]string{"mail-bridge", "--stdio"}, mail.Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	if mail.Env["MAIL_TOKEN"].Value() != "s3cret" || mail.Env["MAIL_HOST"].Value() != "smtp.example.com" {
		t.Errorf("env: %v", mail.Env)
	}
	if cal.Namespace != "cal" || cal.Enabled || cal.Timeout != 0 {
		t.Errorf("cal: %+v", cal)
	}
	if en := cfg.Capabilities.EnabledProviders(); len(en) != 1 || en[0].Namespace != "mail" {
		t.Errorf("enabled: %+v", en)
	}
	// An env value is a secret: printing the config never shows it.
	b, _ := json.Marshal(cfg)
	if strings.Contains(string(b), "s3cret") {
		t.Errorf("the config's JSON shows an env value: %s", b)
	}
}

func TestCapabilityProviderMistakes(t *testing.T) {
	for _, tc := range []struct{ name, toml, want string }{
		{"no command", "[capabilities.providers.mail]\ntimeout = \"5s\"\n", "needs command"},
		{"empty command", "[capabilities.providers.mail]\ncommand = []\n", "must name the program"},
		{"command a string", "[capabilities.providers.mail]\ncommand = \"mail-bridge\"\n", "command"},
		{"bad namespace", "[capabilities.providers.Mail]\ncommand = [\"x\"]\n", "namespace \"Mail\""},
		{"dotted namespace", "[capabilities.providers.\"mail.send\"]\ncommand = [\"x\"]\n", "namespace \"mail.send\""},
		{"unknown key", "[capabilities.providers.mail]\ncommand = [\"x\"]\nnamespace = \"y\"\n", "unknown key"},
		{"timeout without unit", "[capabilities.providers.mail]\ncommand = [\"x\"]\ntimeout = \"30\"\n", "no unit"},
		{"negative timeout", "[capabilities.providers.mail]\ncommand = [\"x\"]\ntimeout = \"-1s\"\n", "positive duration"},
		{"bad env name", "[capabilities.providers.mail]\ncommand = [\"x\"]\nenv = { \"mail-token\" = \"v\" }\n", "environment variable name"},
		{"env not a string", "[capabilities.providers.mail]\ncommand = [\"x\"]\nenv = { TOKEN = 3 }\n", "TOKEN"},
		{"enabled not a bool", "[capabilities.providers.mail]\ncommand = [\"x\"]\nenabled = \"no\"\n", "enabled"},
		{"unknown capabilities key", "[capabilities]\nprovider = 1\n", "unknown key"},
		{"providers not a table", "[capabilities]\nproviders = 1\n", "providers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := packs.ParseConfig("skillhost.toml", []byte(tc.toml))
			if !errors.Is(err, packs.ErrInvalidConfig) {
				t.Fatalf("%v, want ErrInvalidConfig", err)
			}
			var ce *packs.ConfigError
			if !errors.As(err, &ce) || ce.Line == 0 {
				t.Errorf("%v: want a line number", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: want it to mention %q", err, tc.want)
			}
		})
	}
}
