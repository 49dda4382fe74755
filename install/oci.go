package install

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	oras "oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
)

// KindOCI is an artifact in an OCI registry.
const KindOCI = "oci"

// Media types of what `skillhost pack push` writes to a registry. The tag
// names an image index (ArtifactType) holding the pack's manifest (a
// PackLayerType layer, the archive Build writes) and, for each of its
// Wasm modules, a manifest in the CNCF Wasm OCI layout (a
// WasmConfigType config and one WasmLayerType layer), so that other Wasm
// tools can pull the modules.
const (
	ArtifactType   = "application/vnd.skillhost.pack.v1"
	PackLayerType  = "application/vnd.skillhost.pack.layer.v1.tar+gzip"
	WasmConfigType = "application/vnd.wasm.config.v0+json"
	WasmLayerType  = "application/wasm"
)

// maxManifestBytes bounds a manifest or index fetched.
const maxManifestBytes = 4 << 20

// epoch is the creation time written into manifests, so that the same
// archive pushes the same manifests.
const epoch = "1970-01-01T00:00:00Z"

// parseOCI reads oci://HOST[:PORT]/REPO[:TAG|@sha256:HEX].
func parseOCI(ref string) (Source, error) {
	r, err := registry.ParseReference(strings.TrimPrefix(ref, "oci://"))
	if err != nil {
		return Source{}, fmt.Errorf("%w: %q: %v", ErrBadSource, ref, err)
	}
	if r.Reference == "" {
		r.Reference = "latest"
	}
	return Source{Kind: KindOCI, Ref: r.String()}, nil
}

// ociRepository is ref without its tag or digest: HOST/REPO.
func ociRepository(ref string) string {
	r, err := registry.ParseReference(ref)
	if err != nil {
		return ref
	}
	return r.Registry + "/" + r.Repository
}

// repository opens the registry repository of ref with the installer's
// client and the credentials of the docker config file.
func (in *Installer) repository(ref string) (*remote.Repository, error) {
	repo, err := remote.NewRepository(ref)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrBadSource, ref, err)
	}
	client := &auth.Client{Client: in.client(), Cache: auth.NewCache()}
	if file := in.dockerConfig(); file != "" {
		if store, err := credentials.NewFileStore(file); err == nil {
			client.Credential = credentials.Credential(store)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("install: reading registry credentials from %s: %w", file, err)
		}
	}
	repo.Client = client
	return repo, nil
}

// dockerConfig is the docker config file registry credentials are read
// from: Installer.DockerConfig, else $DOCKER_CONFIG/config.json, else
// ~/.docker/config.json.
func (in *Installer) dockerConfig() string {
	if in.DockerConfig != "" {
		return in.DockerConfig
	}
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		return filepath.Join(d, "config.json")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".docker", "config.json")
	}
	return ""
}

// Push pushes the archive file (as Build writes it) to the registry
// reference ref (HOST/REPO:TAG, oci:// in front or not) and returns the
// digest of the index the tag names.
func (in *Installer) Push(ctx context.Context, file, ref string) (string, error) {
	src, err := parseOCI(ref)
	if err != nil {
		return "", err
	}
	r, _ := registry.ParseReference(src.Ref)
	if strings.HasPrefix(r.Reference, "sha256:") {
		return "", fmt.Errorf("%w: %q: push to a tag, not a digest", ErrBadSource, ref)
	}
	data, err := readBounded(file, in.limits().MaxBytes)
	if err != nil {
		return "", err
	}
	modules, err := archiveModules(data, in.limits())
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	repo, err := in.repository(src.Ref)
	if err != nil {
		return "", err
	}
	push := func(mediaType string, b []byte, annotations map[string]string) (ocispec.Descriptor, error) {
		d := content.NewDescriptorFromBytes(mediaType, b)
		d.Annotations = annotations
		if err := repo.Push(ctx, d, bytes.NewReader(b)); err != nil && !isAlreadyExists(err) {
			return d, fmt.Errorf("install: pushing to %s: %w", src.Ref, err)
		}
		return d, nil
	}
	layer, err := push(PackLayerType, data, map[string]string{ocispec.AnnotationTitle: filepath.Base(file)})
	if err != nil {
		return "", err
	}
	created := map[string]string{ocispec.AnnotationCreated: epoch}
	packDesc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, ArtifactType, oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}, ManifestAnnotations: created})
	if err != nil {
		return "", fmt.Errorf("install: pushing to %s: %w", src.Ref, err)
	}
	packDesc.ArtifactType = ArtifactType
	manifests := []ocispec.Descriptor{packDesc}
	for _, m := range modules {
		layer, err := push(WasmLayerType, m.data, map[string]string{ocispec.AnnotationTitle: path.Base(m.path)})
		if err != nil {
			return "", err
		}
		cfg, _ := json.Marshal(map[string]any{"architecture": "wasm", "os": "wasip1", "layerDigests": []string{layer.Digest.String()}})
		cfgDesc, err := push(WasmConfigType, cfg, nil)
		if err != nil {
			return "", err
		}
		d, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{ConfigDescriptor: &cfgDesc, Layers: []ocispec.Descriptor{layer}, ManifestAnnotations: created})
		if err != nil {
			return "", fmt.Errorf("install: pushing module %s to %s: %w", m.path, src.Ref, err)
		}
		d.Annotations = map[string]string{ocispec.AnnotationTitle: m.path}
		manifests = append(manifests, d)
	}
	index := ocispec.Index{MediaType: ocispec.MediaTypeImageIndex, ArtifactType: ArtifactType, Manifests: manifests, Annotations: created}
	index.SchemaVersion = 2
	b, err := json.Marshal(index)
	if err != nil {
		return "", err
	}
	d := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, b)
	if err := repo.PushReference(ctx, d, bytes.NewReader(b), r.Reference); err != nil {
		return "", fmt.Errorf("install: pushing to %s: %w", src.Ref, err)
	}
	// A detached signature beside the archive goes along, attached to the
	// pack's manifest.
	bundle, err := localBundle(file)
	if err != nil {
		return "", err
	}
	if bundle != nil {
		if err := attachBundle(ctx, repo, packDesc, bundle); err != nil {
			return "", fmt.Errorf("install: attaching %s%s to %s: %w", file, BundleSuffix, src.Ref, err)
		}
	}
	return d.Digest.String(), nil
}

func isAlreadyExists(err error) bool {
	return err != nil && strings.Contains(err.Error(), "already exists")
}

// module is a Wasm module found in an archive.
type module struct {
	path string
	data []byte
}

// archiveModules lists the .wasm files of a .tar.gz archive.
func archiveModules(data []byte, lim ArchiveLimits) ([]module, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: a pushed archive is a .tar.gz as pack build writes it: %v", ErrBadArchive, err)
	}
	tr := tar.NewReader(zr)
	var out []module
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadArchive, err)
		}
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, ".wasm") {
			continue
		}
		if h.Size > lim.MaxFileBytes {
			return nil, &EntryError{Entry: h.Name, Why: "a module larger than a file may be", Err: ErrTooLarge}
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadArchive, err)
		}
		out = append(out, module{path: strings.TrimPrefix(h.Name, "./"), data: b})
	}
}

// ociFetch fetches the pack archive that ref names into file and returns
// the digest of what the reference resolved to (an index, or a pack
// manifest pushed by another tool).
func (in *Installer) ociFetch(ctx context.Context, ref, file string) (string, ocispec.Descriptor, error) {
	var none ocispec.Descriptor
	repo, err := in.repository(ref)
	if err != nil {
		return "", none, err
	}
	r, _ := registry.ParseReference(ref)
	root, err := repo.Resolve(ctx, r.Reference)
	if err != nil {
		return "", none, fmt.Errorf("install: resolving %s: %w", ref, err)
	}
	if strings.HasPrefix(r.Reference, "sha256:") && root.Digest.String() != r.Reference {
		return "", none, fmt.Errorf("%w: %s resolved to %s", ErrDigestMismatch, ref, root.Digest)
	}
	fetch := func(d ocispec.Descriptor, limit int64) ([]byte, error) {
		if d.Size > limit || d.Size < 0 {
			return nil, fmt.Errorf("%w: %s: %s is %d bytes; at most %d are fetched", ErrTooLarge, ref, d.Digest, d.Size, limit)
		}
		b, err := content.FetchAll(ctx, repo, d)
		if err != nil {
			if errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%w: %s: %s: %v", ErrDigestMismatch, ref, d.Digest, err)
			}
			return nil, fmt.Errorf("install: fetching %s from %s: %w", d.Digest, ref, err)
		}
		return b, nil
	}
	manifestDesc := root
	if root.MediaType == ocispec.MediaTypeImageIndex {
		b, err := fetch(root, maxManifestBytes)
		if err != nil {
			return "", none, err
		}
		var idx ocispec.Index
		if err := json.Unmarshal(b, &idx); err != nil {
			return "", none, fmt.Errorf("%w: %s: the index: %v", ErrBadSource, ref, err)
		}
		found := false
		for _, m := range idx.Manifests {
			if m.ArtifactType == ArtifactType {
				manifestDesc, found = m, true
				break
			}
		}
		if !found {
			return "", none, fmt.Errorf("%w: %s holds no skillhost pack (artifact type %s)", ErrBadSource, ref, ArtifactType)
		}
	}
	b, err := fetch(manifestDesc, maxManifestBytes)
	if err != nil {
		return "", none, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return "", none, fmt.Errorf("%w: %s: the manifest: %v", ErrBadSource, ref, err)
	}
	if m.ArtifactType != ArtifactType {
		return "", none, fmt.Errorf("%w: %s is a %q artifact, not a skillhost pack (%s)", ErrBadSource, ref, m.ArtifactType, ArtifactType)
	}
	for _, l := range m.Layers {
		if l.MediaType != PackLayerType {
			continue
		}
		data, err := fetch(l, in.limits().MaxBytes)
		if err != nil {
			return "", none, err
		}
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return "", none, err
		}
		return root.Digest.String(), manifestDesc, nil
	}
	return "", none, fmt.Errorf("%w: %s has no %s layer", ErrBadSource, ref, PackLayerType)
}

// readBounded reads file, refusing one larger than limit.
func readBounded(file string, limit int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is more than %d bytes", ErrTooLarge, file, limit)
	}
	return b, nil
}
