package install

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// KindGit is a git repository at a tag, branch or commit.
const KindGit = "git"

// gitHosts are the hosts whose https:// URLs are git repositories
// without a .git ending, and whose shorthand people type
// (github.com/owner/repo).
var gitHosts = map[string]bool{"github.com": true, "gitlab.com": true, "codeberg.org": true, "bitbucket.org": true}

var (
	segmentRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	revRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)
	commitRE  = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// parseGit reads a git source: an https:// or file:// URL of a
// repository (ending in .git, or on a known git host), with git+ in front
// or not, or the shorthand owner/repo and host/owner/repo, each optionally
// followed by the path of a folder inside the repository and @REF (a tag,
// branch or commit). A repository's URL on a known host may also be the
// one a browser shows for a folder: .../tree/REF/path. ok is false when
// ref is not a git source at all.
func parseGit(ref string) (s Source, ok bool, err error) {
	raw := ref
	bad := func(format string, args ...any) (Source, bool, error) {
		return Source{}, true, fmt.Errorf("%w: %q: %s", ErrBadSource, raw, fmt.Sprintf(format, args...))
	}
	ref = strings.TrimPrefix(ref, "git+")
	var rev string
	if i := strings.LastIndexByte(ref, '@'); i > 0 && !strings.Contains(ref[i:], ":") {
		rev, ref = ref[i+1:], ref[:i]
		if !revRE.MatchString(rev) || strings.Contains(rev, "..") {
			return bad("@%s is not a tag, branch or commit", rev)
		}
	}
	if !strings.Contains(ref, "://") {
		// The shorthand: [host/]owner/repo[/path].
		segs := strings.Split(ref, "/")
		host := "github.com"
		if len(segs) > 0 && strings.Contains(segs[0], ".") {
			host, segs = segs[0], segs[1:]
		}
		if len(segs) < 2 {
			return Source{}, false, nil
		}
		for _, seg := range segs {
			if !segmentRE.MatchString(seg) || seg == ".." {
				return Source{}, false, nil
			}
		}
		ref = "https://" + host + "/" + strings.Join(segs, "/")
	}
	u, err := url.Parse(ref)
	if err != nil {
		return Source{}, false, nil
	}
	switch {
	case u.Scheme == "file":
	case u.Scheme == "https" && !isArchiveName(u.Path) && (gitHosts[u.Host] || strings.HasSuffix(u.Path, ".git") || strings.Contains(u.Path, ".git/")):
	default:
		return Source{}, false, nil
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return bad("a repository URL carries no user, query or fragment")
	}
	if u.Scheme == "file" && (u.Host != "" && u.Host != "localhost" || strings.Trim(u.Path, "/") == "") {
		return bad("a file:// repository URL names a folder on this machine (file:///path/to/repo.git)")
	}
	if u.Scheme == "https" && u.Host == "" {
		return bad("an https:// repository URL names its host")
	}
	repo, sub := u.Path, ""
	if i := strings.Index(repo, ".git/"); i >= 0 {
		repo, sub = repo[:i+4], strings.Trim(repo[i+5:], "/")
	} else if !strings.HasSuffix(repo, ".git") {
		if u.Scheme == "file" {
			// A local repository: the whole path.
		} else {
			segs := strings.Split(strings.Trim(repo, "/"), "/")
			if len(segs) < 2 {
				return bad("a repository URL names owner/repo")
			}
			repo, sub = "/"+segs[0]+"/"+segs[1]+".git", strings.Join(segs[2:], "/")
			// A browser's URL of a folder: tree/REF/path.
			if len(segs) >= 4 && (segs[2] == "tree" || segs[2] == "blob") {
				if rev != "" {
					return bad("the ref is given twice (/tree/%s and @%s)", segs[3], rev)
				}
				rev, sub = segs[3], strings.Join(segs[4:], "/")
			}
		}
	}
	if sub != "" {
		if c := path.Clean(sub); c != sub || strings.HasPrefix(c, "..") || strings.HasPrefix(c, "/") {
			return bad("the folder %q inside the repository is not a clean relative path", sub)
		}
	}
	u.Path = repo
	return Source{Kind: KindGit, Ref: u.String(), Rev: rev, Subpath: sub}, true, nil
}

// gitClone clones the repository of s into dir, checks out its Rev
// (default: the default branch) and returns the commit.
func (in *Installer) gitClone(ctx context.Context, s Source, dir string) (string, error) {
	r, err := git.PlainCloneContext(ctx, dir, false, &git.CloneOptions{
		URL: s.Ref, NoCheckout: true, Tags: git.AllTags, CABundle: in.GitCABundle,
	})
	if err != nil {
		return "", fmt.Errorf("install: cloning %s: %w", s.Ref, err)
	}
	var hash *plumbing.Hash
	if s.Rev == "" {
		head, err := r.Head()
		if err != nil {
			return "", fmt.Errorf("install: %s: no default branch: %w", s.Ref, err)
		}
		h := head.Hash()
		hash = &h
	} else {
		for _, rev := range []string{s.Rev, "refs/tags/" + s.Rev, "origin/" + s.Rev} {
			if hash, err = r.ResolveRevision(plumbing.Revision(rev)); err == nil {
				break
			}
		}
		if err != nil {
			return "", fmt.Errorf("%w: %s has no tag, branch or commit %q", ErrBadSource, s.Ref, s.Rev)
		}
	}
	// A tag object names a commit.
	if c, err := r.CommitObject(*hash); err == nil {
		h := c.Hash
		hash = &h
	} else if t, terr := r.TagObject(*hash); terr == nil {
		c, err := t.Commit()
		if err != nil {
			return "", fmt.Errorf("%w: %s: tag %s names no commit", ErrBadSource, s.Ref, s.Rev)
		}
		h := c.Hash
		hash = &h
	} else {
		return "", fmt.Errorf("%w: %s: %s names no commit", ErrBadSource, s.Ref, s.Rev)
	}
	if commitRE.MatchString(s.Rev) && hash.String() != s.Rev {
		return "", fmt.Errorf("%w: %s: commit %s resolved to %s", ErrDigestMismatch, s.Ref, s.Rev, hash)
	}
	w, err := r.Worktree()
	if err != nil {
		return "", err
	}
	if err := w.Checkout(&git.CheckoutOptions{Hash: *hash, Force: true}); err != nil {
		return "", fmt.Errorf("install: %s: checking out %s: %w", s.Ref, hash, err)
	}
	return hash.String(), nil
}
