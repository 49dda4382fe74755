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
