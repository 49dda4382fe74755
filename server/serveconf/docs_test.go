package serveconf

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/confwalk"
	"github.com/skillhost/skillhost/tenancy"
)

// docs/config.md's section on [server] and [tenants] names every key the
// reader accepts: a key added to a section's type is a key of the file,
// and must be documented with it.
func TestDocsListEveryKey(t *testing.T) {
	data, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## `[server]` and `[tenants.<id>]`")
	if !ok {
		t.Fatal("docs/config.md has no section on [server] and [tenants.<id>]")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, typ := range []reflect.Type{reflect.TypeFor[Server](), reflect.TypeFor[OAuth](), reflect.TypeFor[Tenant](), reflect.TypeFor[tenancy.Quotas]()} {
		for _, key := range confwalk.Keys(typ) {
			if !regexp.MustCompile("[`.]" + regexp.QuoteMeta(key) + "[`.\\]]").MatchString(section) {
				t.Errorf("docs/config.md does not document %s, a key of %s", key, typ)
			}
		}
	}
}
