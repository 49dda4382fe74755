package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"oras.land/oras-go/v2/registry"
)

// Outdated is a locked entry whose source now gives something else.
type Outdated struct {
	Name string
	// Locked is the pin the lock holds, Latest the source's now: a
	// commit, a digest of the bytes fetched, or (for a folder) the
	// content digest.
	Locked, Latest string
}

// Outdated lists the locked entries whose source has moved on: a branch
// or tag at another commit, a tag naming another manifest, an archive
// or index entry with other bytes, a folder with other files. Nothing is
// installed; Install with the entry's source upgrades it.
func (in *Installer) Outdated(ctx context.Context) ([]Outdated, error) {
	lock, err := ReadLock(in.LockFile)
	if err != nil {
		return nil, err
	}
	var out []Outdated
	for _, e := range lock.Entries {
		latest, err := in.latest(ctx, e)
		if err != nil {
			return out, fmt.Errorf("%s: %w", e.Name, err)
		}
		locked := e.Resolved
		if locked == "" {
			locked = e.Digest
		}
		if latest != locked {
			out = append(out, Outdated{Name: e.Name, Locked: locked, Latest: latest})
		}
	}
	return out, nil
}

// latest resolves what e's source gives now, without installing it.
func (in *Installer) latest(ctx context.Context, e *Entry) (string, error) {
	src, err := ParseSource(e.Source)
	if err != nil {
		return "", err
	}
	switch src.Kind {
	case KindFolder:
		dir := src.Ref
		if e.Subpath != "" {
			dir = filepath.Join(dir, filepath.FromSlash(e.Subpath))
		}
		return sourceDigest(dir)
	case KindArchive:
		return FileDigest(src.Ref)
	case KindURL:
		tmp, err := os.MkdirTemp("", "skillhost-outdated-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		return in.download(ctx, src.Ref, filepath.Join(tmp, "archive"), in.limits().MaxBytes)
	case KindWellKnown:
		tmp, err := os.MkdirTemp("", "skillhost-outdated-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		idx, err := in.fetchIndex(ctx, src.Ref, tmp)
		if err != nil {
			return "", err
		}
		for _, s := range idx.Skills {
			if s.Name == e.Name {
				return s.Digest, nil
			}
		}
		return "", fmt.Errorf("%w: %s no longer lists %s", ErrBadSource, src.Ref, e.Name)
	case KindGit:
		return in.gitLatest(ctx, src)
	case KindOCI:
		repo, err := in.repository(src.Ref)
		if err != nil {
			return "", err
		}
		r, _ := registry.ParseReference(src.Ref)
		d, err := repo.Resolve(ctx, r.Reference)
		if err != nil {
			return "", fmt.Errorf("install: resolving %s: %w", src.Ref, err)
		}
		return d.Digest.String(), nil
	}
	return "", fmt.Errorf("%w: %s", ErrBadSource, e.Source)
}

// gitLatest lists the remote's references and returns the commit src's
// Rev (or the default branch) names now.
func (in *Installer) gitLatest(ctx context.Context, src Source) (string, error) {
	if commitRE.MatchString(src.Rev) {
		return src.Rev, nil
	}
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{src.Ref}})
	refs, err := rem.ListContext(ctx, &git.ListOptions{CABundle: in.GitCABundle})
	if err != nil {
		return "", fmt.Errorf("install: listing %s: %w", src.Ref, err)
	}
	byName := map[plumbing.ReferenceName]*plumbing.Reference{}
	for _, r := range refs {
		byName[r.Name()] = r
	}
	names := []plumbing.ReferenceName{plumbing.HEAD}
	if src.Rev != "" {
		// A peeled tag (^{}) names the commit an annotated tag points at.
		names = []plumbing.ReferenceName{plumbing.ReferenceName("refs/tags/" + src.Rev + "^{}"), plumbing.NewTagReferenceName(src.Rev), plumbing.NewBranchReferenceName(src.Rev)}
	}
	for _, n := range names {
		r, ok := byName[n]
		if !ok {
			continue
		}
		for r.Type() == plumbing.SymbolicReference {
			if r, ok = byName[r.Target()]; !ok {
				break
			}
		}
		if ok {
			return r.Hash().String(), nil
		}
	}
	return "", fmt.Errorf("%w: %s has no tag or branch %q", ErrBadSource, src.Ref, src.Rev)
}
