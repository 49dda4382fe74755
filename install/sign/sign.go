// Package sign makes and checks the signatures skillhost installs by:
// sigstore bundles (the format cosign writes) over a pack archive, made
// with a key of the publisher's (GenerateKey, Sign) and verified offline
// against the keys and keyless identities an operator trusts (Trust).
//
// It is a package of its own because sigstore's libraries are large:
// the code that needs them is here and nowhere else.
package sign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgsign "github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"
)

// Errors of the package.
var (
	// ErrBadKey: a key file that is not a PEM ECDSA P-256 key of the kind
	// asked for.
	ErrBadKey = errors.New("sign: bad key")
	// ErrBadSignature: a bundle that cannot be read, or whose signature
	// does not verify over the artifact.
	ErrBadSignature = errors.New("sign: bad signature")
	// ErrUntrusted: a valid signature by a key or identity the trust
	// policy does not name, or names as revoked.
	ErrUntrusted = errors.New("sign: untrusted signer")
	// ErrNoTrust: a policy with nothing to trust.
	ErrNoTrust = errors.New("sign: nothing trusted")
)

// GenerateKey makes an ECDSA P-256 key pair: the private key as a PKCS #8
// PEM block (keep it secret: file mode 0600), the public key as a PKIX
// PEM block (publish it).
func GenerateKey() (private, public []byte, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), nil
}

// KeyID is a public key's identity in bundles, locks and messages:
// "sha256:" and the hex sha256 of its PKIX encoding.
func KeyID(public []byte) (string, error) {
	k, err := parsePublic(public)
	if err != nil {
		return "", err
	}
	return keyID(k)
}

func keyID(k *ecdsa.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(s[:]), nil
}

func parsePublic(b []byte) (*ecdsa.PublicKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("%w: want a PEM PUBLIC KEY block", ErrBadKey)
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	ek, ok := k.(*ecdsa.PublicKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: want an ECDSA P-256 public key", ErrBadKey)
	}
	return ek, nil
}

func parsePrivate(b []byte) (*ecdsa.PrivateKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%w: want a PEM PRIVATE KEY block (PKCS #8)", ErrBadKey)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: want an ECDSA P-256 private key", ErrBadKey)
	}
	return ek, nil
}

// keypair signs with a key of the publisher's, as sigstore-go's signer
// wants one.
type keypair struct {
	k    *ecdsa.PrivateKey
	hint []byte
}

var _ sgsign.Keypair = (*keypair)(nil)

func (p *keypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}
func (p *keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}
func (p *keypair) GetHint() []byte                { return p.hint }
func (p *keypair) GetKeyAlgorithm() string        { return "ECDSA" }
func (p *keypair) GetPublicKey() crypto.PublicKey { return p.k.Public() }
func (p *keypair) GetPublicKeyPem() (string, error) {
	der, err := x509.MarshalPKIXPublicKey(p.k.Public())
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}
func (p *keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	d := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, p.k, d[:])
	return sig, d[:], err
}

// Sign signs artifact with the private key and returns the sigstore
// bundle (JSON) to publish beside it: a message signature over the
// artifact's sha256, with the key's id as the hint of its verification
// material.
func Sign(artifact, private []byte) ([]byte, error) {
	k, err := parsePrivate(private)
	if err != nil {
		return nil, err
	}
	id, err := keyID(&k.PublicKey)
	if err != nil {
		return nil, err
	}
	b, err := sgsign.Bundle(&sgsign.PlainData{Data: artifact}, &keypair{k: k, hint: []byte(id)}, sgsign.BundleOptions{})
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return protojson.Marshal(b)
}

// Identity is a keyless signer: the OIDC issuer that vouched for it and
// its subject (an email or a workflow URL), each exact, or the subject
// as a regular expression matched against the whole subject.
type Identity struct {
	Issuer        string
	Subject       string
	SubjectRegexp string
}

// Trust is what an operator trusts to sign what is installed.
type Trust struct {
	// Keys are PEM public keys; several allow a key to be rotated.
	Keys [][]byte
	// Revoked are ids (KeyID) of keys no longer trusted, whatever Keys
	// says.
	Revoked []string
	// Identities are keyless signers, verified against TrustedRoot.
	Identities []Identity
	// TrustedRoot is the sigstore trusted root (trusted_root.json) that
	// keyless signatures chain to; keyless signatures are refused without
	// one.
	TrustedRoot []byte
}

// Signer is who made a signature that verified.
type Signer struct {
	// Identity is the key's id (KeyID) or the keyless subject.
	Identity string
	// Issuer is the keyless OIDC issuer; "" for a key.
	Issuer string
}

// Verify checks the bundle (JSON) over artifact against t and returns
// who signed it: ErrBadSignature for a bundle that does not verify,
// ErrUntrusted for a good signature by a key or identity t does not
// trust.
func (t *Trust) Verify(artifact, bundleJSON []byte) (*Signer, error) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(bundleJSON); err != nil {
		return nil, fmt.Errorf("%w: reading the bundle: %v", ErrBadSignature, err)
	}
	return t.verify(artifact, &b)
}

func (t *Trust) verify(artifact []byte, entity verify.SignedEntity) (*Signer, error) {
	vc, err := entity.VerificationContent()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	if pk := vc.PublicKey(); pk != nil {
		return t.verifyKeyed(artifact, entity, string(pk.Hint()))
	}
	if vc.Certificate() == nil {
		return nil, fmt.Errorf("%w: the bundle has neither a key hint nor a certificate", ErrBadSignature)
	}
	return t.verifyKeyless(artifact, entity)
}

func (t *Trust) verifyKeyed(artifact []byte, entity verify.SignedEntity, hint string) (*Signer, error) {
	if len(t.Keys) == 0 {
		return nil, fmt.Errorf("%w: the artifact is signed with key %s and no key is trusted", ErrUntrusted, hint)
	}
	keys := map[string]*ecdsa.PublicKey{}
	for i, pemKey := range t.Keys {
		k, err := parsePublic(pemKey)
		if err != nil {
			return nil, fmt.Errorf("trusted key %d: %w", i+1, err)
		}
		id, err := keyID(k)
		if err != nil {
			return nil, err
		}
		keys[id] = k
	}
	if slices.Contains(t.Revoked, hint) {
		return nil, fmt.Errorf("%w: key %s is revoked", ErrUntrusted, hint)
	}
	k, ok := keys[hint]
	if !ok {
		return nil, fmt.Errorf("%w: key %s is not a trusted key", ErrUntrusted, hint)
	}
	v, err := signature.LoadECDSAVerifier(k, crypto.SHA256)
	if err != nil {
		return nil, err
	}
	material := root.NewTrustedPublicKeyMaterial(func(id string) (root.TimeConstrainedVerifier, error) {
		if id != hint {
			return nil, fmt.Errorf("key %s is not trusted", id)
		}
		return root.NewExpiringKey(v, time.Time{}, time.Time{}), nil
	})
	verifier, err := verify.NewVerifier(material, verify.WithNoObserverTimestamps())
	if err != nil {
		return nil, err
	}
	if _, err := verifier.Verify(entity, verify.NewPolicy(verify.WithArtifact(bytes.NewReader(artifact)), verify.WithKey())); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return &Signer{Identity: hint}, nil
}

func (t *Trust) verifyKeyless(artifact []byte, entity verify.SignedEntity) (*Signer, error) {
	if len(t.Identities) == 0 {
		return nil, fmt.Errorf("%w: the artifact is signed keyless and no keyless identity is trusted", ErrUntrusted)
	}
	if len(t.TrustedRoot) == 0 {
		return nil, fmt.Errorf("%w: keyless signatures need a sigstore trusted root", ErrNoTrust)
	}
	tr, err := root.NewTrustedRootFromJSON(t.TrustedRoot)
	if err != nil {
		return nil, fmt.Errorf("%w: the trusted root: %v", ErrNoTrust, err)
	}
	return t.verifyKeylessWith(artifact, entity, tr)
}

// verifyKeylessWith verifies a keyless signature against the trusted
// material: a transparency log entry that vouches for the signing time,
// a certificate chaining to the trusted root, and an identity t trusts.
func (t *Trust) verifyKeylessWith(artifact []byte, entity verify.SignedEntity, material root.TrustedMaterial) (*Signer, error) {
	verifier, err := verify.NewVerifier(material, verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	if err != nil {
		return nil, err
	}
	var errs []string
	for _, id := range t.Identities {
		if id.Issuer == "" || (id.Subject == "") == (id.SubjectRegexp == "") {
			return nil, fmt.Errorf("%w: a keyless identity needs an issuer and one of subject and subject_regexp", ErrNoTrust)
		}
		re := ""
		if id.SubjectRegexp != "" {
			re = "^(?:" + id.SubjectRegexp + ")$"
			if _, err := regexp.Compile(re); err != nil {
				return nil, fmt.Errorf("%w: subject_regexp %q: %v", ErrNoTrust, id.SubjectRegexp, err)
			}
		}
		ci, err := verify.NewShortCertificateIdentity(id.Issuer, "", id.Subject, re)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoTrust, err)
		}
		res, err := verifier.Verify(entity, verify.NewPolicy(verify.WithArtifact(bytes.NewReader(artifact)), verify.WithCertificateIdentity(ci)))
		if err == nil {
			s := &Signer{Issuer: id.Issuer}
			if res.Signature != nil && res.Signature.Certificate != nil {
				s.Identity = res.Signature.Certificate.SubjectAlternativeName
			}
			return s, nil
		}
		errs = append(errs, err.Error())
	}
	msg := strings.Join(errs, "; ")
	if strings.Contains(msg, "identity") || strings.Contains(msg, "issuer") || strings.Contains(msg, "SAN") {
		return nil, fmt.Errorf("%w: %s", ErrUntrusted, msg)
	}
	return nil, fmt.Errorf("%w: %s", ErrBadSignature, msg)
}
