package registry

import (
	"reflect"
	"testing"

	"github.com/skillhost/skillhost/packs"
)

// HostLimits carries every limit the packs package reads: a field added
// to packs.Limits must reach the host.
func TestHostLimitsCoversPacksLimits(t *testing.T) {
	var l packs.Limits
	v := reflect.ValueOf(&l).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); {
		case f.CanInt():
			f.SetInt(int64(1000 + i))
		case f.CanUint():
			f.SetUint(uint64(1000 + i))
		default:
			t.Fatalf("packs.Limits.%s is not an integer", v.Type().Field(i).Name)
		}
	}
	set := 0
	for _, f := range HostLimits(l).Fields() {
		if f.Value != 0 {
			set++
		}
	}
	if set != v.NumField() {
		t.Errorf("HostLimits carries %d of the %d fields of packs.Limits", set, v.NumField())
	}
}
