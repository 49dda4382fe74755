package sign

import (
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// VerifyKeylessWith is verifyKeylessWith, for tests against a virtual
// sigstore instead of a trusted root file.
func (t *Trust) VerifyKeylessWith(artifact []byte, entity verify.SignedEntity, material root.TrustedMaterial) (*Signer, error) {
	return t.verifyKeylessWith(artifact, entity, material)
}

// VerifyKeyless is verify for an entity a test made: a keyless one goes
// the way a bundle of a certificate does.
func (t *Trust) VerifyKeyless(artifact []byte, entity verify.SignedEntity) error {
	_, err := t.verify(artifact, entity)
	return err
}
