package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/install"
	"github.com/skillhost/skillhost/install/sign"
)

type signer struct {
	private, public []byte
	id              string
}

func newSigner(t *testing.T) signer {
	t.Helper()
	priv, pub, err := sign.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	id, _ := sign.KeyID(pub)
	return signer{priv, pub, id}
}

// signFile writes file's detached signature beside it.
func (s signer) signFile(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sign.Sign(data, s.private)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file+install.BundleSuffix, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillArchive(t *testing.T, name, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name+".tar.gz")
	os.WriteFile(file, tarGz(t, entry{name: name + "/SKILL.md", body: skillMD(name, body)}), 0o644)
	return file
}

// The tamper matrix of signatures: every case is refused with the error
// that names why, and nothing is installed.
func TestSignedInstalls(t *testing.T) {
	alice, bob, mallory := newSigner(t), newSigner(t), newSigner(t)
	policy := func(require bool, keys ...signer) *install.Policy {
		tr := &sign.Trust{}
		for _, k := range keys {
			tr.Keys = append(tr.Keys, k.public)
		}
		return &install.Policy{Trust: tr, RequireSignature: require}
	}
	ctx := context.Background()

	t.Run("trusted key", func(t *testing.T) {
		file := skillArchive(t, "pdf", "x")
		alice.signFile(t, file)
		in := newInstaller(t)
		in.Policy = policy(true, alice, bob)
		got, err := in.Install(ctx, install.Request{Source: file})
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Signer != alice.id {
			t.Fatalf("signer %q, want %s", got[0].Signer, alice.id)
		}
	})

	archive := func(t *testing.T) string { return skillArchive(t, "pdf", "x") }
	refused := []struct {
		name   string
		policy *install.Policy
		setup  func(t *testing.T, file string) string // returns the source
		want   error
	}{
		{"untrusted key", policy(false, alice), func(t *testing.T, f string) string { mallory.signFile(t, f); return f }, sign.ErrUntrusted},
		{"no policy, signed", nil, func(t *testing.T, f string) string { mallory.signFile(t, f); return f }, sign.ErrUntrusted},
		{"revoked key", &install.Policy{Trust: &sign.Trust{Keys: [][]byte{alice.public}, Revoked: []string{alice.id}}}, func(t *testing.T, f string) string { alice.signFile(t, f); return f }, sign.ErrUntrusted},
		{"flipped byte", policy(false, alice), func(t *testing.T, f string) string {
			alice.signFile(t, f)
			b, _ := os.ReadFile(f)
			b[len(b)/2] ^= 1
			os.WriteFile(f, b, 0o644)
			return f
		}, sign.ErrBadSignature},
		{"signature of another archive", policy(false, alice), func(t *testing.T, f string) string {
			other := skillArchive(t, "pdf", "other")
			alice.signFile(t, other)
			sig, _ := os.ReadFile(other + install.BundleSuffix)
			os.WriteFile(f+install.BundleSuffix, sig, 0o644)
			return f
		}, sign.ErrBadSignature},
		{"garbage signature", policy(false, alice), func(t *testing.T, f string) string {
			os.WriteFile(f+install.BundleSuffix, []byte("not a bundle"), 0o644)
			return f
		}, sign.ErrBadSignature},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			in := newInstaller(t)
			in.Policy = c.policy
			src := c.setup(t, archive(t))
			_, err := in.Install(ctx, install.Request{Source: src})
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if got := installed(t, in); len(got) != 0 {
				t.Fatalf("installed %v", got)
			}
		})
	}

	t.Run("unsigned remote under a signing policy", func(t *testing.T) {
		data, _ := os.ReadFile(archive(t))
		srv := serve(t, map[string][]byte{"/pdf.tar.gz": data})
		in := newInstaller(t)
		in.Client, in.Policy = srv.Client(), policy(true, alice)
		if _, err := in.Install(ctx, install.Request{Source: srv.URL + "/pdf.tar.gz"}); !errors.Is(err, install.ErrUnsigned) {
			t.Fatalf("err %v, want ErrUnsigned", err)
		}
		// A local archive is the operator's own: no signature needed.
		if _, err := in.Install(ctx, install.Request{Source: archive(t)}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("signed remote", func(t *testing.T) {
		file := archive(t)
		alice.signFile(t, file)
		data, _ := os.ReadFile(file)
		sig, _ := os.ReadFile(file + install.BundleSuffix)
		srv := serve(t, map[string][]byte{"/pdf.tar.gz": data, "/pdf.tar.gz" + install.BundleSuffix: sig})
		in := newInstaller(t)
		in.Client, in.Policy = srv.Client(), policy(true, alice)
		got, err := in.Install(ctx, install.Request{Source: srv.URL + "/pdf.tar.gz"})
		if err != nil || got[0].Signer != alice.id {
			t.Fatalf("installed %+v, %v", got, err)
		}
	})
	t.Run("git under a signing policy", func(t *testing.T) {
		bare, _, _ := gitRepo(t)
		in := newInstaller(t)
		in.Policy = policy(true, alice)
		if _, err := in.Install(ctx, install.Request{Source: "git+file://" + bare + "/skills/alpha"}); !errors.Is(err, install.ErrUnsigned) {
			t.Fatalf("err %v, want ErrUnsigned", err)
		}
	})
}

// An upgrade signed by someone else stops for approval, as one that
// asks for more does; so does an unsigned upgrade of a signed install.
func TestSignerChangeNeedsApproval(t *testing.T) {
	alice, bob := newSigner(t), newSigner(t)
	ctx := context.Background()
	in := newInstaller(t)
	in.Policy = &install.Policy{Trust: &sign.Trust{Keys: [][]byte{alice.public, bob.public}}}
	v1 := skillArchive(t, "pdf", "one")
	alice.signFile(t, v1)
	if _, err := in.Install(ctx, install.Request{Source: v1}); err != nil {
		t.Fatal(err)
	}
	v2 := skillArchive(t, "pdf", "two")
	bob.signFile(t, v2)
	_, err := in.Install(ctx, install.Request{Source: v2})
	var ae *install.ApprovalError
	if !errors.As(err, &ae) || len(ae.More) != 1 || !strings.Contains(ae.More[0], "signer key "+bob.id) || !strings.Contains(ae.More[0], alice.id) {
		t.Fatalf("err %v; want an approval naming both signers", err)
	}
	unsigned := skillArchive(t, "pdf", "three")
	if _, err := in.Install(ctx, install.Request{Source: unsigned}); !errors.As(err, &ae) || !strings.Contains(ae.More[0], "unsigned") {
		t.Fatalf("an unsigned upgrade: %v", err)
	}
	if _, err := in.Install(ctx, install.Request{Source: v2, Approve: true}); err != nil {
		t.Fatal(err)
	}
	lock, _ := install.ReadLock(in.LockFile)
	if e := lock.Find("pdf"); e.Signer != bob.id {
		t.Fatalf("lock signer %s, want %s", e.Signer, bob.id)
	}
	// Sync refuses the locked source re-signed by another trusted key.
	alice.signFile(t, v2)
	os.RemoveAll(filepath.Join(in.Dir, "pdf"))
	if _, err := in.Sync(ctx); !errors.Is(err, sign.ErrUntrusted) {
		t.Fatalf("sync with another signer: %v", err)
	}
}

func TestSignedOCIAndAllowedRegistries(t *testing.T) {
	alice := newSigner(t)
	srv, _ := registryServer(t)
	host := strings.TrimPrefix(srv.URL, "https://")
	ctx := context.Background()
	pub := newInstaller(t)
	pub.Client, pub.DockerConfig = srv.Client(), filepath.Join(t.TempDir(), "none.json")
	signed := packArchive(t, "weather", "api.weather.example")
	alice.signFile(t, signed)
	if _, err := pub.Push(ctx, signed, host+"/skills/weather:1"); err != nil {
		t.Fatal(err)
	}
	unsigned := packArchive(t, "notes")
	if _, err := pub.Push(ctx, unsigned, host+"/skills/notes:1"); err != nil {
		t.Fatal(err)
	}
	in := newInstaller(t)
	in.Client, in.DockerConfig = pub.Client, pub.DockerConfig
	in.Policy = &install.Policy{Trust: &sign.Trust{Keys: [][]byte{alice.public}}, RequireSignature: true}
	got, err := in.Install(ctx, install.Request{Source: "oci://" + host + "/skills/weather:1"})
	if err != nil || got[0].Signer != alice.id {
		t.Fatalf("installed %+v, %v", got, err)
	}
	if _, err := in.Install(ctx, install.Request{Source: "oci://" + host + "/skills/notes:1"}); !errors.Is(err, install.ErrUnsigned) {
		t.Fatalf("an unsigned artifact: %v", err)
	}
	in.Policy.Registries = []string{"registry.example"}
	if _, err := in.Install(ctx, install.Request{Source: "oci://" + host + "/skills/weather:1"}); !errors.Is(err, install.ErrBadSource) {
		t.Fatalf("a registry the policy does not allow: %v", err)
	}
}

func TestRestrictAndTrusts(t *testing.T) {
	g := host.Grant{AllowedHosts: []string{"api.example"}, AllowPrivateNetwork: true, Capabilities: []string{"mail.send"},
		Mounts: []host.Mount{{HostPath: "/data", GuestPath: "/data"}, {HostPath: "/ref", GuestPath: "/ref", ReadOnly: true}},
		Env:    map[string]string{"TOKEN": "x"}, Limits: host.Limits{Timeout: time.Second}}
	r, why := install.Restrict(g)
	if len(r.AllowedHosts) != 0 || r.AllowPrivateNetwork || len(r.Capabilities) != 0 || !r.Mounts[0].ReadOnly || !r.Mounts[1].ReadOnly {
		t.Fatalf("restricted %+v", r)
	}
	if r.Env["TOKEN"] != "x" || r.Limits.Timeout != time.Second || len(why) != 3 {
		t.Fatalf("restricted %+v, why %q", r, why)
	}
	if g.Mounts[0].ReadOnly {
		t.Fatal("Restrict changed the grant it was given")
	}
	if _, why := install.Restrict(host.Grant{Env: map[string]string{"A": "b"}}); len(why) != 0 {
		t.Fatalf("a grant with nothing to take: %q", why)
	}

	alice, bob := newSigner(t), newSigner(t)
	p := &install.Policy{Trust: &sign.Trust{Keys: [][]byte{alice.public, bob.public}, Revoked: []string{bob.id},
		Identities: []sign.Identity{{Issuer: "https://iss.example", SubjectRegexp: `https://ci\.example/acme/.*`}}}}
	for _, c := range []struct {
		id, issuer string
		want       bool
	}{
		{alice.id, "", true},
		{bob.id, "", false}, // revoked
		{newSigner(t).id, "", false},
		{"", "", false},
		{"https://ci.example/acme/release", "https://iss.example", true},
		{"https://ci.example/acme/release", "https://other.example", false},
		{"https://ci.example/evil?https://ci.example/acme/x", "https://iss.example", false},
	} {
		if got := p.Trusts(c.id, c.issuer); got != c.want {
			t.Errorf("Trusts(%q, %q) = %v", c.id, c.issuer, got)
		}
	}
	if (*install.Policy)(nil).Trusts(alice.id, "") {
		t.Error("a nil policy trusts a key")
	}
}
