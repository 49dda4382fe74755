package sign_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/skillhost/skillhost/install/sign"
)

func keys(t *testing.T) (private, public []byte, id string) {
	t.Helper()
	private, public, err := sign.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	id, err = sign.KeyID(public)
	if err != nil {
		t.Fatal(err)
	}
	return private, public, id
}

func TestKeyedSignatures(t *testing.T) {
	artifact := []byte("the bytes of a pack archive")
	priv, pub, id := keys(t)
	priv2, pub2, id2 := keys(t)
	_, pub3, _ := keys(t)
	b, err := sign.Sign(artifact, priv)
	if err != nil {
		t.Fatal(err)
	}
	trust := &sign.Trust{Keys: [][]byte{pub3, pub}}
	s, err := trust.Verify(artifact, b)
	if err != nil || s.Identity != id || s.Issuer != "" {
		t.Fatalf("verify: %+v, %v", s, err)
	}
	// Rotation: the second key of two signs as well as the first.
	b2, _ := sign.Sign(artifact, priv2)
	if s, err := (&sign.Trust{Keys: [][]byte{pub, pub2}}).Verify(artifact, b2); err != nil || s.Identity != id2 {
		t.Fatalf("a rotated key: %+v, %v", s, err)
	}

	flipped := bytes.Clone(artifact)
	flipped[3] ^= 1
	for name, c := range map[string]struct {
		trust    *sign.Trust
		artifact []byte
		bundle   []byte
		want     error
	}{
		"a flipped byte":   {trust, flipped, b, sign.ErrBadSignature},
		"another key":      {&sign.Trust{Keys: [][]byte{pub3}}, artifact, b, sign.ErrUntrusted},
		"no key trusted":   {&sign.Trust{}, artifact, b, sign.ErrUntrusted},
		"a revoked key":    {&sign.Trust{Keys: [][]byte{pub}, Revoked: []string{id}}, artifact, b, sign.ErrUntrusted},
		"not a bundle":     {trust, artifact, []byte("{}"), sign.ErrBadSignature},
		"garbage":          {trust, artifact, []byte("\x00\x01"), sign.ErrBadSignature},
		"a borrowed hint":  {&sign.Trust{Keys: [][]byte{pub, pub2}}, artifact, withHint(t, b2, id), sign.ErrBadSignature},
		"another artifact": {trust, []byte("other bytes"), b, sign.ErrBadSignature},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := c.trust.Verify(c.artifact, c.bundle); !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
	if _, err := sign.Sign(artifact, pub); !errors.Is(err, sign.ErrBadKey) {
		t.Fatalf("signing with a public key: %v", err)
	}
	if _, err := sign.KeyID(priv); !errors.Is(err, sign.ErrBadKey) {
		t.Fatalf("the id of a private key: %v", err)
	}
}

// withHint rewrites a bundle's key hint: a signature by one key claiming
// to be by another.
func withHint(t *testing.T, b []byte, hint string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	vm := m["verificationMaterial"].(map[string]any)
	vm["publicKey"] = map[string]any{"hint": hint}
	out, _ := json.Marshal(m)
	return out
}

func TestKeylessSignatures(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	artifact := []byte("the bytes of a pack archive")
	const issuer = "https://token.actions.example"
	const subject = "https://github.example/acme/skills/.github/workflows/release.yml@refs/tags/v1"
	entity, err := vs.Sign(subject, issuer, artifact)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		ids      []sign.Identity
		artifact []byte
		want     error
	}{
		"exact":               {[]sign.Identity{{Issuer: issuer, Subject: subject}}, artifact, nil},
		"regexp":              {[]sign.Identity{{Issuer: issuer, SubjectRegexp: `https://github\.example/acme/skills/.*`}}, artifact, nil},
		"second of two":       {[]sign.Identity{{Issuer: issuer, Subject: "someone@else.example"}, {Issuer: issuer, Subject: subject}}, artifact, nil},
		"another subject":     {[]sign.Identity{{Issuer: issuer, Subject: "https://github.example/evil/skills/x"}}, artifact, sign.ErrUntrusted},
		"another issuer":      {[]sign.Identity{{Issuer: "https://accounts.example", Subject: subject}}, artifact, sign.ErrUntrusted},
		"unanchored regexp":   {[]sign.Identity{{Issuer: issuer, SubjectRegexp: `acme/skills`}}, artifact, sign.ErrUntrusted},
		"a flipped byte":      {[]sign.Identity{{Issuer: issuer, Subject: subject}}, []byte("the bytes of a pack archivE"), sign.ErrBadSignature},
		"no identity trusted": {nil, artifact, sign.ErrUntrusted},
		"no subject":          {[]sign.Identity{{Issuer: issuer}}, artifact, sign.ErrNoTrust},
	} {
		t.Run(name, func(t *testing.T) {
			trust := &sign.Trust{Identities: c.ids}
			var s *sign.Signer
			var err error
			if len(c.ids) == 0 {
				// No identity: refused before any trusted root is needed.
				_, err = trust.Verify(artifact, []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`))
				if !errors.Is(err, sign.ErrBadSignature) && !errors.Is(err, c.want) {
					t.Fatalf("err %v", err)
				}
				return
			}
			s, err = trust.VerifyKeylessWith(c.artifact, entity, vs)
			if c.want == nil {
				if err != nil || s.Identity != subject || s.Issuer != issuer {
					t.Fatalf("verify: %+v, %v", s, err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
}
