package registry

import (
	"reflect"
	"testing"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
)

// One type of limits and of mounts from the files to the host: what a
// manifest, [limits] and a [packs.<name>] section set is what the host
// enforces, with no conversion where a field could be lost.
func TestOneLimitsAndMountType(t *testing.T) {
	for _, c := range []struct {
		what      string
		got, want reflect.Type
	}{
		{"packs.Module.Limits", reflect.TypeFor[packs.Module]().Field(fieldIndex[packs.Module]("Limits")).Type, reflect.TypeFor[host.Limits]()},
		{"packs.Config.Limits", reflect.TypeFor[packs.Config]().Field(fieldIndex[packs.Config]("Limits")).Type, reflect.TypeFor[host.Limits]()},
		{"packs.PackGrant.Limits", reflect.TypeFor[packs.PackGrant]().Field(fieldIndex[packs.PackGrant]("Limits")).Type, reflect.TypeFor[host.Limits]()},
		{"packs.PackGrant.Mounts", reflect.TypeFor[packs.PackGrant]().Field(fieldIndex[packs.PackGrant]("Mounts")).Type, reflect.TypeFor[[]host.Mount]()},
	} {
		if c.got != c.want {
			t.Errorf("%s is a %s, want %s", c.what, c.got, c.want)
		}
	}
}

func fieldIndex[T any](name string) int {
	f, _ := reflect.TypeFor[T]().FieldByName(name)
	return f.Index[0]
}
