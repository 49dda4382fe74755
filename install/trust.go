package install

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	oras "oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/install/sign"
	"github.com/skillhost/skillhost/install/trustconf"
)

// BundleSuffix ends the name of a detached signature: pdf.tar.gz is
// signed by pdf.tar.gz.sigstore.json beside it.
const BundleSuffix = ".sigstore.json"

// BundleArtifactType is the artifact type of a signature attached in an
// OCI registry as a referrer of the pack's manifest.
const BundleArtifactType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// ErrUnsigned: a source that must be signed (a remote one, when the
// policy requires signatures) came without a signature.
var ErrUnsigned = errors.New("install: unsigned")

// Policy is what an installer trusts and requires.
type Policy struct {
	// Trust holds the keys and keyless identities trusted to sign; nil
	// trusts no one, so any signature met is refused as untrusted.
	Trust *sign.Trust
	// RequireSignature refuses remote sources (https:// archives and
	// sites, git, OCI) that come without a trusted signature. Folders and
	// archive files on disk are the operator's own and need none.
	RequireSignature bool
	// RestrictUnknown holds installed packs that no trusted signer signed
	// to Restrict's ceiling when they run.
	RestrictUnknown bool
	// Registries, GitHosts and Sites, when not empty, are the only OCI
	// registries, git hosts and https:// hosts sources may name (exact
	// host names, host:port for a port).
	Registries, GitHosts, Sites []string
}

// remote says whether a source kind comes from another machine.
func isRemote(kind string) bool {
	switch kind {
	case KindURL, KindWellKnown, KindGit, KindOCI:
		return true
	}
	return false
}

// allowed checks the source's host against the policy's lists.
func (p *Policy) allowed(src Source) error {
	if p == nil {
		return nil
	}
	host, list, what := "", []string(nil), ""
	switch src.Kind {
	case KindOCI:
		host, list, what = ociRegistry(src.Ref), p.Registries, "registry"
	case KindGit:
		if strings.HasPrefix(src.Ref, "file://") {
			return nil
		}
		host, list, what = urlHost(src.Ref), p.GitHosts, "git host"
	case KindURL, KindWellKnown:
		host, list, what = urlHost(src.Ref), p.Sites, "site"
	default:
		return nil
	}
	if len(list) == 0 {
		return nil
	}
	for _, h := range list {
		if strings.EqualFold(h, host) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s %s is not one the trust policy allows (%s)", ErrBadSource, what, host, strings.Join(list, ", "))
}

func urlHost(u string) string {
	rest := u[strings.Index(u, "://")+3:]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return strings.ToLower(rest)
}

func ociRegistry(ref string) string {
	r := ociRepository(ref)
	if i := strings.IndexByte(r, '/'); i >= 0 {
		return strings.ToLower(r[:i])
	}
	return r
}

// checkSignature verifies the bundle (nil: none came) over artifact and
// returns the signer. A signature that does not verify, or is by someone
// the policy does not trust, is refused whether or not one was required.
func (p *Policy) checkSignature(what string, kind string, artifact, bundle []byte, lockedUnsigned bool) (*sign.Signer, error) {
	if bundle == nil {
		// What the lock approved unsigned stays approved unsigned.
		if p != nil && p.RequireSignature && isRemote(kind) && !lockedUnsigned {
			return nil, fmt.Errorf("%w: %s comes without a signature (%s beside it, or attached in its registry) and the trust policy requires one", ErrUnsigned, what, BundleSuffix)
		}
		return nil, nil
	}
	trust := &sign.Trust{}
	if p != nil && p.Trust != nil {
		trust = p.Trust
	}
	s, err := trust.Verify(artifact, bundle)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return s, nil
}

// localBundle reads the detached signature beside an archive on disk,
// nil when there is none.
func localBundle(file string) ([]byte, error) {
	b, err := readBounded(file+BundleSuffix, maxManifestBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// remoteBundle fetches the detached signature beside an https:// archive,
// nil when the server has none (404).
func (in *Installer) remoteBundle(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+BundleSuffix, nil)
	if err != nil {
		return nil, err
	}
	resp, err := in.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("install: fetching %s%s: %w", u, BundleSuffix, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, nil
	default:
		return nil, fmt.Errorf("install: fetching %s%s: %s", u, BundleSuffix, resp.Status)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(http.MaxBytesReader(nil, resp.Body, maxManifestBytes)); err != nil {
		return nil, fmt.Errorf("install: fetching %s%s: %w", u, BundleSuffix, err)
	}
	return buf.Bytes(), nil
}

// ociBundle fetches the signature attached to the pack manifest manifest
// as a referrer, nil when none is.
func (in *Installer) ociBundle(ctx context.Context, ref string, manifest ocispec.Descriptor) ([]byte, error) {
	repo, err := in.repository(ref)
	if err != nil {
		return nil, err
	}
	var found []ocispec.Descriptor
	err = repo.Referrers(ctx, manifest, BundleArtifactType, func(rs []ocispec.Descriptor) error {
		found = append(found, rs...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("install: listing the signatures of %s: %w", ref, err)
	}
	for _, d := range found {
		if d.Size > maxManifestBytes {
			continue
		}
		b, err := content.FetchAll(ctx, repo, d)
		if err != nil {
			return nil, fmt.Errorf("install: fetching a signature of %s: %w", ref, err)
		}
		var m ocispec.Manifest
		if json.Unmarshal(b, &m) != nil || len(m.Layers) != 1 || m.Layers[0].Size > maxManifestBytes {
			continue
		}
		bundle, err := content.FetchAll(ctx, repo, m.Layers[0])
		if err != nil {
			return nil, fmt.Errorf("install: fetching a signature of %s: %w", ref, err)
		}
		return bundle, nil
	}
	return nil, nil
}

// attachBundle pushes bundle as a referrer of the pack manifest.
func attachBundle(ctx context.Context, target oras.Target, manifest ocispec.Descriptor, bundle []byte) error {
	layer := content.NewDescriptorFromBytes(BundleArtifactType, bundle)
	if err := target.Push(ctx, layer, bytes.NewReader(bundle)); err != nil && !isAlreadyExists(err) {
		return err
	}
	_, err := oras.PackManifest(ctx, target, oras.PackManifestVersion1_1, BundleArtifactType, oras.PackManifestOptions{
		Subject: &manifest, Layers: []ocispec.Descriptor{layer},
		ManifestAnnotations: map[string]string{ocispec.AnnotationCreated: epoch},
	})
	return err
}

// PolicyOf makes the policy of a [trust] section, reading the key and
// trusted root files it names.
func PolicyOf(c trustconf.Config) (*Policy, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	tr := &sign.Trust{Revoked: c.Revoked}
	for _, k := range c.Keys {
		b, err := readBounded(k, maxManifestBytes)
		if err != nil {
			return nil, fmt.Errorf("[trust] keys: %w", err)
		}
		if _, err := sign.KeyID(b); err != nil {
			return nil, fmt.Errorf("[trust] keys: %s: %w", k, err)
		}
		tr.Keys = append(tr.Keys, b)
	}
	for _, id := range c.Identities {
		tr.Identities = append(tr.Identities, sign.Identity{Issuer: id.Issuer, Subject: id.Subject, SubjectRegexp: id.SubjectRegexp})
	}
	if c.TrustedRoot != "" {
		b, err := readBounded(c.TrustedRoot, 64<<20)
		if err != nil {
			return nil, fmt.Errorf("[trust] trusted_root: %w", err)
		}
		tr.TrustedRoot = b
	}
	return &Policy{Trust: tr, RequireSignature: c.Require(), RestrictUnknown: c.Restrict(), Registries: c.Registries, GitHosts: c.GitHosts, Sites: c.Sites}, nil
}

// Trusts says whether the policy trusts the signer a lock entry names:
// a key it lists and does not revoke, or a keyless identity it names.
// An entry with no signer is trusted by no policy.
func (p *Policy) Trusts(identity, issuer string) bool {
	if p == nil || p.Trust == nil || identity == "" {
		return false
	}
	if issuer == "" {
		if slices.Contains(p.Trust.Revoked, identity) {
			return false
		}
		for _, k := range p.Trust.Keys {
			if id, err := sign.KeyID(k); err == nil && id == identity {
				return true
			}
		}
		return false
	}
	for _, id := range p.Trust.Identities {
		if id.Issuer != issuer {
			continue
		}
		if id.Subject != "" && id.Subject == identity {
			return true
		}
		if id.SubjectRegexp != "" {
			if re, err := regexp.Compile("^(?:" + id.SubjectRegexp + ")$"); err == nil && re.MatchString(identity) {
				return true
			}
		}
	}
	return false
}

// Restrict is the ceiling of an installed pack no trusted signer signed:
// g without network (no hosts, no private network), with every mount
// read-only, and without host services. It returns what it took away,
// one reason a line, for `show` to say.
func Restrict(g host.Grant) (host.Grant, []string) {
	var why []string
	if len(g.AllowedHosts) > 0 || g.AllowPrivateNetwork {
		why = append(why, "no network (allowed hosts "+strings.Join(g.AllowedHosts, ", ")+" withheld)")
		g.AllowedHosts, g.AllowPrivateNetwork = nil, false
	}
	mounts := make([]host.Mount, len(g.Mounts))
	for i, m := range g.Mounts {
		if !m.ReadOnly {
			why = append(why, "mount "+m.GuestPath+" read-only")
			m.ReadOnly = true
		}
		mounts[i] = m
	}
	g.Mounts = mounts
	if len(g.Capabilities) > 0 {
		why = append(why, "no services ("+strings.Join(g.Capabilities, ", ")+" withheld)")
		g.Capabilities = nil
	}
	return g, why
}
