package install

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Kinds of source.
const (
	KindFolder    = "folder"    // a folder on disk
	KindArchive   = "archive"   // a .tar.gz, .tgz, .tar or .zip file on disk
	KindURL       = "url"       // an https:// URL of such an archive
	KindWellKnown = "wellknown" // an https:// site with /.well-known/agent-skills/index.json
)

// Source is a parsed source reference.
type Source struct {
	Kind string
	// Ref is the folder or file (absolute) or the URL (of a git
	// repository: the repository's).
	Ref string
	// Rev is a git source's tag, branch or commit ("" the default branch).
	Rev string
	// Subpath is a git source's folder inside the repository.
	Subpath string
	// Digest is the sha256 the fetched archive must have ("" when none
	// is known): a URL's #sha256=<hex> fragment, or the caller's.
	Digest string
}

// String is the source's canonical form, as the lock records it.
func (s Source) String() string {
	if s.Kind == KindOCI {
		return "oci://" + s.Ref
	}
	if s.Kind == KindGit {
		out := "git+" + s.Ref
		if s.Subpath != "" {
			out += "/" + s.Subpath
		}
		if s.Rev != "" {
			out += "@" + s.Rev
		}
		return out
	}
	if s.Digest != "" && s.Kind == KindURL {
		return s.Ref + "#" + strings.Replace(s.Digest, ":", "=", 1)
	}
	return s.Ref
}

var archiveExts = []string{".tar.gz", ".tgz", ".tar", ".zip"}

func isArchiveName(name string) bool {
	name = strings.ToLower(name)
	for _, ext := range archiveExts {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// ParseSource reads a source reference: an existing folder or archive
// file, an https:// URL of an archive (optionally ending in
// #sha256=<hex>), or an https:// site that serves a well-known skills
// index. Plain http:// is refused: nothing installed travels unencrypted.
func ParseSource(ref string) (Source, error) {
	if ref == "" {
		return Source{}, fmt.Errorf("%w: an empty source", ErrBadSource)
	}
	if !strings.Contains(ref, "://") {
		if _, err := os.Stat(ref); err != nil {
			if s, ok, gerr := parseGit(ref); ok {
				return s, gerr
			}
		}
	} else if strings.HasPrefix(ref, "oci://") {
		return parseOCI(ref)
	} else if s, ok, err := parseGit(ref); ok {
		return s, err
	}
	if strings.Contains(ref, "://") {
		u, err := url.Parse(ref)
		if err != nil {
			return Source{}, fmt.Errorf("%w: %q: %v", ErrBadSource, ref, err)
		}
		switch u.Scheme {
		case "https":
		case "http":
			return Source{}, fmt.Errorf("%w: %q: plain http is not used; use https://", ErrBadSource, ref)
		default:
			return Source{}, fmt.Errorf("%w: %q: scheme %q; want a folder, an archive, a git repository or an https:// URL", ErrBadSource, ref, u.Scheme)
		}
		if u.Host == "" || u.User != nil {
			return Source{}, fmt.Errorf("%w: %q: an https:// URL needs a host and no user name or password in it", ErrBadSource, ref)
		}
		s := Source{Kind: KindWellKnown}
		if frag, ok := strings.CutPrefix(u.Fragment, "sha256="); ok {
			s.Digest = DigestPrefix + frag
			if err := parseDigest(s.Digest); err != nil {
				return Source{}, err
			}
		} else if u.Fragment != "" {
			return Source{}, fmt.Errorf("%w: %q: the only fragment read is #sha256=<hex>", ErrBadSource, ref)
		}
		u.Fragment = ""
		if isArchiveName(u.Path) {
			s.Kind = KindURL
		} else if s.Digest != "" {
			return Source{}, fmt.Errorf("%w: %q: a digest pins an archive URL, not a site", ErrBadSource, ref)
		}
		s.Ref = u.String()
		return s, nil
	}
	abs, err := filepath.Abs(ref)
	if err != nil {
		return Source{}, fmt.Errorf("%w: %q: %v", ErrBadSource, ref, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Source{}, fmt.Errorf("%w: %q: no such folder or archive (%v)", ErrBadSource, ref, err)
	}
	switch {
	case st.IsDir():
		return Source{Kind: KindFolder, Ref: abs}, nil
	case st.Mode().IsRegular() && isArchiveName(abs):
		return Source{Kind: KindArchive, Ref: abs}, nil
	}
	return Source{}, fmt.Errorf("%w: %q is neither a folder nor a .tar.gz, .tgz, .tar or .zip archive", ErrBadSource, ref)
}

// download fetches u into file, at most limit bytes, and returns its
// sha256 digest.
func (in *Installer) download(ctx context.Context, u, file string, limit int64) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrBadSource, u, err)
	}
	resp, err := in.client().Do(req)
	if err != nil {
		return "", fmt.Errorf("install: fetching %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("install: fetching %s: %s", u, resp.Status)
	}
	if resp.Request != nil && resp.Request.URL.Scheme != "https" {
		return "", fmt.Errorf("install: fetching %s: redirected to %s: plain http is not used", u, resp.Request.URL.Redacted())
	}
	if resp.ContentLength > limit {
		return "", fmt.Errorf("%w: %s is %d bytes; at most %d are fetched", ErrTooLarge, u, resp.ContentLength, limit)
	}
	f, err := os.Create(file)
	if err != nil {
		return "", err
	}
	n, err := io.Copy(f, io.LimitReader(resp.Body, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("install: fetching %s: %w", u, err)
	}
	if n > limit {
		return "", fmt.Errorf("%w: %s is more than %d bytes", ErrTooLarge, u, limit)
	}
	return FileDigest(file)
}

// wellKnownIndex is /.well-known/agent-skills/index.json, version 0.2.0
// of the agent skills discovery format.
type wellKnownIndex struct {
	base    *url.URL
	Version string `json:"version"`
	Skills  []struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Description string `json:"description"`
		URL         string `json:"url"`
		Digest      string `json:"digest"`
	} `json:"skills"`
}

// fetchIndex fetches and reads a site's well-known index.
func (in *Installer) fetchIndex(ctx context.Context, site, tmp string) (*wellKnownIndex, error) {
	base, err := url.Parse(strings.TrimSuffix(site, "/") + "/.well-known/agent-skills/index.json")
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrBadSource, site, err)
	}
	indexFile := filepath.Join(tmp, "index.json")
	if _, err := in.download(ctx, base.String(), indexFile, maxIndexBytes); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(indexFile)
	if err != nil {
		return nil, err
	}
	idx := &wellKnownIndex{base: base}
	if err := json.Unmarshal(data, idx); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadSource, base, err)
	}
	if !strings.HasPrefix(idx.Version, "0.2.") {
		return nil, fmt.Errorf("%w: %s: version %q; this skillhost reads 0.2.x", ErrBadSource, base, idx.Version)
	}
	return idx, nil
}

// maxIndexBytes bounds a well-known index.
const maxIndexBytes = 4 << 20

// wellKnown fetches the site's index and each skill req names (or every
// one with all) into tree, each skill in a folder of its name, and
// returns the digests of what it fetched by skill name.
func (in *Installer) wellKnown(ctx context.Context, site string, req Request, tmp, tree string, signed func(key, what, file string, bundle []byte) error) (map[string]string, error) {
	idx, err := in.fetchIndex(ctx, site, tmp)
	if err != nil {
		return nil, err
	}
	base := idx.base
	names := make([]string, 0, len(idx.Skills))
	for _, s := range idx.Skills {
		names = append(names, s.Name)
	}
	want, err := choose(names, req, base.String())
	if err != nil {
		return nil, err
	}
	resolved := map[string]string{}
	for _, s := range idx.Skills {
		if !want[s.Name] {
			continue
		}
		if !validName(s.Name) {
			return nil, fmt.Errorf("%w: %s: skill name %q is not a skill name", ErrBadSource, base, s.Name)
		}
		if err := parseDigest(s.Digest); err != nil {
			return nil, fmt.Errorf("%s: skill %q: %w", base, s.Name, err)
		}
		ref, err := base.Parse(s.URL)
		if err != nil || ref.Scheme != "https" {
			return nil, fmt.Errorf("%w: %s: skill %q: url %q is not an https:// URL", ErrBadSource, base, s.Name, s.URL)
		}
		file := filepath.Join(tmp, "fetch-"+s.Name)
		got, err := in.download(ctx, ref.String(), file, in.limits().MaxBytes)
		if err != nil {
			return nil, err
		}
		if err := checkDigest(fmt.Sprintf("skill %q from %s", s.Name, ref), s.Digest, got); err != nil {
			return nil, err
		}
		bundle, err := in.remoteBundle(ctx, ref.String())
		if err != nil {
			return nil, err
		}
		if err := signed(s.Name, fmt.Sprintf("skill %q from %s", s.Name, ref), file, bundle); err != nil {
			return nil, err
		}
		dest := filepath.Join(tree, s.Name)
		switch s.Type {
		case "skill-md":
			if err := os.Mkdir(dest, 0o755); err != nil {
				return nil, err
			}
			if err := os.Rename(file, filepath.Join(dest, "SKILL.md")); err != nil {
				return nil, err
			}
		case "archive":
			if err := os.Mkdir(dest, 0o755); err != nil {
				return nil, err
			}
			if _, err := Unpack(file, dest, in.limits()); err != nil {
				return nil, fmt.Errorf("skill %q from %s: %w", s.Name, ref, err)
			}
			// An archive of one skill folder: the folder's files are the
			// skill's.
			if err := hoist(dest, s.Name); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%w: %s: skill %q: type %q; want skill-md or archive", ErrBadSource, base, s.Name, s.Type)
		}
		resolved[s.Name] = s.Digest
	}
	return resolved, nil
}

// hoist moves the files of dir/name up into dir when dir holds only
// that folder and no SKILL.md of its own.
func hoist(dir, name string) error {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 || !ents[0].IsDir() || ents[0].Name() != name {
		return err
	}
	inner := filepath.Join(dir, name)
	tmp := dir + ".hoist"
	if err := os.Rename(inner, tmp); err != nil {
		return err
	}
	if err := os.Remove(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// choose picks the names a request installs from the ones a source
// offers: those it names (each must exist), all of them with All, or
// the only one.
func choose(names []string, req Request, where string) (map[string]bool, error) {
	want := map[string]bool{}
	switch {
	case len(req.Skills) > 0:
		for _, n := range req.Skills {
			found := false
			for _, have := range names {
				if have == n {
					found = true
				}
			}
			if !found {
				return nil, fmt.Errorf("%w: %s has no skill or pack %q; it has %s", ErrBadSource, where, n, strings.Join(names, ", "))
			}
			want[n] = true
		}
	case req.All || len(names) == 1:
		for _, n := range names {
			want[n] = true
		}
	case len(names) == 0:
		return nil, fmt.Errorf("%w: %s holds no skill or pack", ErrInvalid, where)
	default:
		return nil, fmt.Errorf("%w: %s holds %d skills and packs (%s): name the ones to install, or install all", ErrBadSource, where, len(names), strings.Join(names, ", "))
	}
	return want, nil
}
