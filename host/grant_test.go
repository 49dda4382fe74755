package host

import (
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
