package sign_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/skillhost/skillhost/install/sign"
)

// Keys that are not ECDSA P-256 keys of the kind asked for are refused
// with ErrBadKey, wherever they are met.
func TestKeysOfTheWrongKind(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	pemOf := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	rsaPub, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	p384Pub, _ := x509.MarshalPKIXPublicKey(&p384.PublicKey)
	rsaPriv, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	p384Priv, _ := x509.MarshalPKCS8PrivateKey(p384)
	priv, pub, _ := sign.GenerateKey()
	publics := map[string][]byte{
		"not PEM": []byte("not a key"), "a private key": priv, "RSA": pemOf("PUBLIC KEY", rsaPub), "P-384": pemOf("PUBLIC KEY", p384Pub),
		"garbage DER": pemOf("PUBLIC KEY", []byte("garbage")),
	}
	for name, k := range publics {
		if _, err := sign.KeyID(k); !errors.Is(err, sign.ErrBadKey) {
			t.Errorf("KeyID of %s: %v", name, err)
		}
		// A bad trusted key is named, not skipped.
		bdl, _ := sign.Sign([]byte("a"), priv)
		if _, err := (&sign.Trust{Keys: [][]byte{pub, k}}).Verify([]byte("a"), bdl); !errors.Is(err, sign.ErrBadKey) {
			t.Errorf("a trusted %s: %v", name, err)
		}
	}
	privates := map[string][]byte{
		"not PEM": []byte("not a key"), "a public key": pub, "RSA": pemOf("PRIVATE KEY", rsaPriv), "P-384": pemOf("PRIVATE KEY", p384Priv),
		"garbage DER": pemOf("PRIVATE KEY", []byte("garbage")),
	}
	for name, k := range privates {
		if _, err := sign.Sign([]byte("a"), k); !errors.Is(err, sign.ErrBadKey) {
			t.Errorf("Sign with %s: %v", name, err)
		}
	}
}

// Keyless signatures without the means to check them are refused for
// that reason: no identity trusted, no trusted root, a root that is not
// one, an identity that cannot match.
func TestKeylessWithoutTrust(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	artifact := []byte("archive")
	entity, err := vs.Sign("ci@acme.example", "https://iss.example", artifact)
	if err != nil {
		t.Fatal(err)
	}
	id := []sign.Identity{{Issuer: "https://iss.example", Subject: "ci@acme.example"}}
	for name, c := range map[string]struct {
		trust *sign.Trust
		want  error
	}{
		"no identity":     {&sign.Trust{TrustedRoot: []byte("{}")}, sign.ErrUntrusted},
		"no root":         {&sign.Trust{Identities: id}, sign.ErrNoTrust},
		"a root of junk":  {&sign.Trust{Identities: id, TrustedRoot: []byte("junk")}, sign.ErrNoTrust},
		"no issuer":       {&sign.Trust{Identities: []sign.Identity{{Subject: "ci@acme.example"}}}, sign.ErrNoTrust},
		"both subjects":   {&sign.Trust{Identities: []sign.Identity{{Issuer: "https://iss.example", Subject: "a", SubjectRegexp: "a"}}}, sign.ErrNoTrust},
		"a bad regexp":    {&sign.Trust{Identities: []sign.Identity{{Issuer: "https://iss.example", SubjectRegexp: "(("}}}, sign.ErrNoTrust},
		"keys, not roots": {&sign.Trust{Keys: [][]byte{mustPub(t)}}, sign.ErrUntrusted},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			switch name {
			case "no identity", "no root", "a root of junk", "keys, not roots":
				err = c.trust.VerifyKeyless(artifact, entity)
			default:
				_, err = c.trust.VerifyKeylessWith(artifact, entity, vs)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
}

func mustPub(t *testing.T) []byte {
	_, pub, err := sign.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub
}
