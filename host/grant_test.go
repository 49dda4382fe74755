package host

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntersect(t *testing.T) {
	tests := []struct {
		name    string
		req, op Grant
		want    Grant
	}{
		{"nothing granted", Grant{AllowedHosts: []string{"api.example.com"}, Tools: []string{"a"}}, Grant{}, Grant{}},
		{
			"hosts narrowed both ways",
			Grant{AllowedHosts: []string{"api.example.com", "*", "evil.com"}},
			Grant{AllowedHosts: []string{"*.example.com"}},
			Grant{AllowedHosts: []string{"api.example.com", "*.example.com"}},
		},
		{
			"mounts: contained, read-only wins",
			Grant{Mounts: []Mount{{HostPath: "/srv/data/sub", GuestPath: "/data"}, {HostPath: "/etc", GuestPath: "/etc"}, {HostPath: "/srv/x", GuestPath: "/other"}}},
			Grant{Mounts: []Mount{{HostPath: "/srv/data", GuestPath: "/data", ReadOnly: true}, {HostPath: "/srv", GuestPath: "/srv"}}},
			Grant{Mounts: []Mount{{HostPath: "/srv/data/sub", GuestPath: "/data", ReadOnly: true}}},
		},
		{
			"request names only the guest path",
			Grant{Mounts: []Mount{{GuestPath: "/data/", ReadOnly: true}, {GuestPath: "/tmp"}}},
			Grant{Mounts: []Mount{{HostPath: "/srv/data", GuestPath: "/data"}}},
			Grant{Mounts: []Mount{{HostPath: "/srv/data", GuestPath: "/data", ReadOnly: true}}},
		},
		{
			"mount above the operator's is refused",
			Grant{Mounts: []Mount{{HostPath: "/srv/data/../secret", GuestPath: "/data"}}},
			Grant{Mounts: []Mount{{HostPath: "/srv/data", GuestPath: "/data"}}},
			Grant{},
		},
		{
			"env values only from the operator, only declared names",
			Grant{Env: map[string]string{"API_KEY": "from-manifest", "HOME": ""}},
			Grant{Env: map[string]string{"API_KEY": "secret", "OTHER": "x"}},
			Grant{Env: map[string]string{"API_KEY": "secret"}},
		},
		{
			"config defaults overlaid by operator",
			Grant{Config: map[string]string{"a": "1", "b": "2"}},
			Grant{Config: map[string]string{"b": "3"}},
			Grant{Config: map[string]string{"a": "1", "b": "3"}},
		},
		{
			"tools and capabilities",
			Grant{Tools: []string{"a", "b"}, Capabilities: []string{"mail.send", "sms.send"}},
			Grant{Tools: []string{"*"}, Capabilities: []string{"mail.send"}},
			Grant{Tools: []string{"a", "b"}, Capabilities: []string{"mail.send"}},
		},
		{
			"a request * gets the operator's list",
			Grant{Tools: []string{"*"}, Capabilities: []string{"*"}},
			Grant{Tools: []string{"b", "a"}, Capabilities: []string{"mail.send"}},
			Grant{Tools: []string{"b", "a"}, Capabilities: []string{"mail.send"}},
		},
		{"a request * with no operator list gets nothing", Grant{Tools: []string{"*"}, Capabilities: []string{"*"}}, Grant{}, Grant{}},
		{"* on both sides", Grant{Tools: []string{"*"}}, Grant{Tools: []string{"*", "a"}}, Grant{Tools: []string{"*"}}},
		{
			"names on both sides",
			Grant{Tools: []string{"a", "c", "a"}, Capabilities: []string{"mail.send"}},
			Grant{Tools: []string{"b", "a"}, Capabilities: []string{"sms.send"}},
			Grant{Tools: []string{"a"}},
		},
		{
			"limits take the smaller non-zero",
			Grant{Limits: Limits{Timeout: time.Second, MaxMemoryBytes: 1 << 20}},
			Grant{Limits: Limits{Timeout: 5 * time.Second, MaxOutputBytes: 10}},
			Grant{Limits: Limits{Timeout: time.Second, MaxMemoryBytes: 1 << 20, MaxOutputBytes: 10}},
		},
		{"private network only from the operator", Grant{AllowPrivateNetwork: true}, Grant{}, Grant{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, Intersect(tt.req, tt.op)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// Cap holds every field of Limits to the ceiling, whatever its type; a
// field added to Limits is covered without a change to Cap.
func TestLimitsCap(t *testing.T) {
	var low, high, unset Limits
	lv, hv := reflect.ValueOf(&low).Elem(), reflect.ValueOf(&high).Elem()
	for i := range lv.NumField() {
		switch f := lv.Field(i); {
		case f.CanInt():
			f.SetInt(int64(i + 1))
			hv.Field(i).SetInt(int64(i + 100))
		case f.CanUint():
			f.SetUint(uint64(i + 1))
			hv.Field(i).SetUint(uint64(i + 100))
		default:
			t.Fatalf("Limits.%s is a %s; every limit must be an integer", lv.Type().Field(i).Name, f.Kind())
		}
	}
	for _, tt := range []struct {
		name          string
		l, ceil, want Limits
	}{
		{"request below the ceiling", low, high, low},
		{"request above the ceiling", high, low, low},
		{"no request", unset, high, high},
		{"no ceiling", high, unset, high},
		{"neither", unset, unset, unset},
	} {
		if d := cmp.Diff(tt.want, tt.l.Cap(tt.ceil)); d != "" {
			t.Errorf("%s (-want +got)\n%s", tt.name, d)
		}
	}
}

func TestLimitsFields(t *testing.T) {
	l := Limits{Timeout: 2 * time.Second, MaxMemoryBytes: 1 << 40, MaxFuel: 7}
	got := map[string]int64{}
	for _, f := range l.Fields() {
		got[f.Name] = f.Value
	}
	if len(got) != reflect.TypeFor[Limits]().NumField() {
		t.Errorf("Fields() = %v; want one per field of Limits", got)
	}
	if got["timeout"] != int64(2*time.Second) || got["max_memory_bytes"] != 1<<40 || got["max_fuel"] != 7 || got["max_output_bytes"] != 0 {
		t.Errorf("Fields() = %v", got)
	}
	if f := (Limits{MaxMemoryBytes: math.MaxUint64}).Fields(); f[1].Value != math.MaxInt64 {
		t.Errorf("a uint64 past int64 reads as %d", f[1].Value)
	}
}
