package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillhost/skillhost/install/sign"
	"github.com/skillhost/skillhost/packs"
)

// Installer installs into one installed folder and keeps its lock.
// Installs into one folder are serialised (a file lock in the folder),
// so two processes never stage over each other.
type Installer struct {
	// Dir is the installed folder: one folder per installed skill or
	// pack, named after it.
	Dir string
	// LockFile is the lock's path (skillhost.lock beside skillhost.toml).
	LockFile string
	// Limits bound each archive fetched and unpacked.
	Limits ArchiveLimits
	// Client fetches https:// sources; nil is a client with a one-minute
	// timeout that follows redirects to https only. A download redirected
	// to plain http is refused whichever client fetched it.
	Client *http.Client
	// GitCABundle, when set, are the PEM certificates git sources over
	// https:// are verified against instead of the system's.
	GitCABundle []byte
	// DockerConfig is the docker config file whose credentials OCI
	// registries are given; "" is $DOCKER_CONFIG/config.json, else
	// ~/.docker/config.json.
	DockerConfig string
	// Policy is what the installer trusts and requires; nil trusts no
	// signer and requires no signature.
	Policy *Policy
}

// Request is one install.
type Request struct {
	// Source is the source reference (see ParseSource).
	Source string
	// Skills names the skills and packs to install from a source that
	// holds several.
	Skills []string
	// All installs every skill and pack of the source.
	All bool
	// Digest, when set, is the sha256 the fetched archive must have.
	Digest string
	// Approve accepts capabilities beyond what the lock approved for an
	// installed skill or pack of the same name.
	Approve bool

	// locked, set by Sync, is the entry the install must reproduce
	// exactly.
	locked *Entry
}

// ApprovalError stops an upgrade that asks for more than its lock
// entry approved.
type ApprovalError struct {
	Name string
	// More lists what the new version asks for beyond the approval.
	More []string
}

func (e *ApprovalError) Error() string {
	return fmt.Sprintf("%s asks for more than was approved: %s; install again with approval to accept", e.Name, strings.Join(e.More, ", "))
}

// Is makes an *ApprovalError match ErrNeedsApproval.
func (e *ApprovalError) Is(target error) bool { return target == ErrNeedsApproval }

// ErrNeedsApproval: an upgrade asks for capabilities its lock entry did
// not approve.
var ErrNeedsApproval = errors.New("install: needs approval")

func (in *Installer) limits() ArchiveLimits { return in.Limits.withDefaults() }

func (in *Installer) client() *http.Client {
	if in.Client != nil {
		return in.Client
	}
	return &http.Client{Timeout: time.Minute, CheckRedirect: httpsOnly}
}

// httpsOnly refuses a redirect to anything but https, before the
// request is sent; and more than ten redirects, as net/http does.
func httpsOnly(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != "https" {
		return fmt.Errorf("%w: redirected to %s: plain http is not used", ErrBadSource, req.URL.Redacted())
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// unit is one skill or pack found in a staged tree.
type unit struct {
	name, kind, version string
	rel                 string // its folder (or file) in the tree
	src                 string // its folder (or file) in the source, "." for the whole
	file                bool   // a playbook or flat skill file, not a folder
}

// Install fetches, checks, unpacks and validates req's source, installs
// the skills and packs it chooses, and records them in the lock. Each
// is installed whole or not at all.
func (in *Installer) Install(ctx context.Context, req Request) ([]*Entry, error) {
	src, err := ParseSource(req.Source)
	if err != nil {
		return nil, err
	}
	if req.Digest != "" {
		if err := parseDigest(req.Digest); err != nil {
			return nil, err
		}
		if src.Kind == KindFolder || src.Kind == KindWellKnown || src.Kind == KindGit || src.Kind == KindOCI {
			return nil, fmt.Errorf("%w: a digest pins an archive, not a %s", ErrBadSource, src.Kind)
		}
		if src.Digest != "" && src.Digest != req.Digest {
			return nil, fmt.Errorf("%w: the URL's digest %s and the digest given %s differ", ErrBadSource, src.Digest, req.Digest)
		}
		src.Digest = req.Digest
	}
	if err := in.Policy.allowed(src); err != nil {
		return nil, err
	}
	unlock, err := in.lockDir()
	if err != nil {
		return nil, err
	}
	defer unlock()
	staging, err := os.MkdirTemp(in.Dir, ".staging-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)
	tree := filepath.Join(staging, "tree")
	if err := os.Mkdir(tree, 0o755); err != nil {
		return nil, err
	}
	// resolved pins what was fetched: one digest for the whole source,
	// or one per skill of a well-known index.
	resolved := map[string]string{}
	// signers are who signed what was fetched, by the same keys.
	signers := map[string]*sign.Signer{}
	signed := func(key, what string, artifactFile string, bundle []byte) error {
		var artifact []byte
		if bundle != nil {
			if artifactFile == "" {
				return fmt.Errorf("%w: %s: a signature but nothing it signs", ErrBadSource, what)
			}
			b, err := readBounded(artifactFile, in.limits().MaxBytes)
			if err != nil {
				return err
			}
			artifact = b
		}
		s, err := in.Policy.checkSignature(what, src.Kind, artifact, bundle, req.locked != nil && req.locked.Signer == "")
		if err != nil {
			return err
		}
		signers[key] = s
		return nil
	}
	switch src.Kind {
	case KindFolder:
		archive := filepath.Join(staging, "folder.tar.gz")
		if err := packFolder(src.Ref, archive, in.limits()); err != nil {
			return nil, err
		}
		if _, err := Unpack(archive, tree, in.limits()); err != nil {
			return nil, err
		}
	case KindArchive, KindURL:
		file := src.Ref
		var got string
		if src.Kind == KindURL {
			file = filepath.Join(staging, "download")
			got, err = in.download(ctx, src.Ref, file, in.limits().MaxBytes)
		} else {
			got, err = FileDigest(file)
		}
		if err != nil {
			return nil, err
		}
		if src.Digest != "" {
			if err := checkDigest(src.Ref, src.Digest, got); err != nil {
				return nil, err
			}
		}
		resolved[""] = got
		var bundle []byte
		if src.Kind == KindURL {
			bundle, err = in.remoteBundle(ctx, src.Ref)
		} else {
			bundle, err = localBundle(file)
		}
		if err != nil {
			return nil, err
		}
		if err := signed("", src.Ref, file, bundle); err != nil {
			return nil, err
		}
		if _, err := Unpack(file, tree, in.limits()); err != nil {
			return nil, fmt.Errorf("%s: %w", src.Ref, err)
		}
	case KindOCI:
		file := filepath.Join(staging, "download")
		got, manifest, err := in.ociFetch(ctx, src.Ref, file)
		if err != nil {
			return nil, err
		}
		resolved[""] = got
		bundle, err := in.ociBundle(ctx, src.Ref, manifest)
		if err != nil {
			return nil, err
		}
		if err := signed("", src.String(), file, bundle); err != nil {
			return nil, err
		}
		if _, err := Unpack(file, tree, in.limits()); err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
	case KindGit:
		clone := filepath.Join(staging, "clone")
		if err := signed("", src.String(), "", nil); err != nil {
			return nil, err
		}
		commit, err := in.gitClone(ctx, src, clone)
		if err != nil {
			return nil, err
		}
		resolved[""] = commit
		from := clone
		if src.Subpath != "" {
			from = filepath.Join(clone, filepath.FromSlash(src.Subpath))
			if st, err := os.Stat(from); err != nil || !st.IsDir() {
				return nil, fmt.Errorf("%w: %s has no folder %s at %s", ErrBadSource, src.Ref, src.Subpath, commit)
			}
		}
		archive := filepath.Join(staging, "clone.tar.gz")
		if err := packFolder(from, archive, in.limits()); err != nil {
			return nil, err
		}
		if _, err := Unpack(archive, tree, in.limits()); err != nil {
			return nil, err
		}
	case KindWellKnown:
		resolved, err = in.wellKnown(ctx, src.Ref, req, staging, tree, signed)
		if err != nil {
			return nil, err
		}
	}
	units, err := findUnits(ctx, staging, tree)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(units))
	for i, u := range units {
		names[i] = u.name
	}
	// A repository that lists its plugins (marketplace.json) may be asked
	// for a plugin's skills by the plugin's name.
	if byPlugin := plugins(tree, units); len(byPlugin) > 0 {
		req.Skills = expandPlugins(req.Skills, names, byPlugin)
	}
	want := map[string]bool{}
	if src.Kind == KindWellKnown {
		// The index chose already.
		for _, n := range names {
			want[n] = true
		}
	} else if want, err = choose(names, req, src.Ref); err != nil {
		return nil, err
	}
	lock, err := ReadLock(in.LockFile)
	if err != nil {
		return nil, err
	}
	// Stage every chosen unit in its final form and check it before any
	// is moved into place.
	type staged struct {
		u     unit
		dir   string
		entry *Entry
	}
	var ready []staged
	final := filepath.Join(staging, "final")
	if err := os.Mkdir(final, 0o755); err != nil {
		return nil, err
	}
	for _, u := range units {
		if !want[u.name] {
			continue
		}
		if !validName(u.name) {
			return nil, fmt.Errorf("%w: %q cannot be installed under that name: an installed folder's name is lowercase letters, digits, '-', '_' and '.'", ErrInvalid, u.name)
		}
		dir := filepath.Join(final, u.name)
		from := filepath.Join(tree, filepath.FromSlash(u.rel))
		if u.file {
			if err := os.Mkdir(dir, 0o755); err != nil {
				return nil, err
			}
			if err := os.Rename(from, filepath.Join(dir, path.Base(u.rel))); err != nil {
				return nil, err
			}
		} else if err := os.Rename(from, dir); err != nil {
			return nil, err
		}
		caps, err := validateUnit(ctx, dir, u)
		if err != nil {
			return nil, err
		}
		digest, err := DirDigest(dir)
		if err != nil {
			return nil, err
		}
		e := &Entry{Name: u.name, Kind: u.kind, Version: u.version, Source: src.String(), Digest: digest, Approved: caps}
		if u.src != "." {
			e.Subpath = u.src
		}
		if r, ok := resolved[u.name]; ok {
			e.Resolved = r
		} else {
			e.Resolved = resolved[""]
		}
		sg, ok := signers[u.name]
		if !ok {
			sg = signers[""]
		}
		if sg != nil {
			e.Signer, e.Issuer = sg.Identity, sg.Issuer
		}
		if want := req.locked; want != nil {
			if want.Resolved != "" && e.Resolved != want.Resolved {
				return nil, fmt.Errorf("%w: %s: the source now gives %s; the lock has %s", ErrDigestMismatch, u.name, e.Resolved, want.Resolved)
			}
			if err := checkDigest(u.name+"'s content from "+e.Source, want.Digest, e.Digest); err != nil {
				return nil, err
			}
			if e.Signer != want.Signer || e.Issuer != want.Issuer {
				return nil, fmt.Errorf("%w: %s is now signed by %s; the lock has %s", sign.ErrUntrusted, u.name, signerName(e.Signer, e.Issuer), signerName(want.Signer, want.Issuer))
			}
			// What the lock approved stays approved, signer included, and
			// the source as the lock names it.
			e.Approved, e.Signer, e.Issuer, e.Source = want.Approved, want.Signer, want.Issuer, want.Source
		} else if old := lock.Find(u.name); old != nil && !req.Approve {
			more := caps.Beyond(old.Approved)
			if e.Signer != old.Signer || e.Issuer != old.Issuer {
				more = append(more, fmt.Sprintf("signer %s (approved %s)", signerName(e.Signer, e.Issuer), signerName(old.Signer, old.Issuer)))
			}
			if len(more) > 0 {
				return nil, &ApprovalError{Name: u.name, More: more}
			}
		}
		ready = append(ready, staged{u: u, dir: dir, entry: e})
	}
	var out []*Entry
	for _, s := range ready {
		if err := replaceDir(s.dir, filepath.Join(in.Dir, s.u.name)); err != nil {
			return out, err
		}
		lock.put(s.entry)
		out = append(out, s.entry)
		// The lock is written after each unit, so that it never names
		// less than is installed.
		if err := lock.Write(in.LockFile); err != nil {
			return out, err
		}
	}
	return out, nil
}

// packFolder copies a folder through a reproducible archive, so that a
// folder meets every refusal an archive does (links, devices, bombs).
func packFolder(dir, archive string, lim ArchiveLimits) error {
	var buf bytes.Buffer
	if err := Build(&buf, dir, lim); err != nil {
		return err
	}
	return os.WriteFile(archive, buf.Bytes(), 0o600)
}

// findUnits lists the skills and packs of tree. When tree is itself one
// Agent Skill (a SKILL.md at its top) it is moved to a folder of the
// skill's name first, as the loader wants a skill's folder named after
// it.
func findUnits(ctx context.Context, staging, tree string) ([]unit, error) {
	root := tree
	top := ""
	if data, err := os.ReadFile(filepath.Join(tree, packs.SkillFile)); err == nil {
		s, err := packs.ParseSkillMD(packs.SkillFile, data, "")
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		if !validName(s.Name) {
			return nil, fmt.Errorf("%w: skill name %q cannot name an installed folder", ErrInvalid, s.Name)
		}
		root = filepath.Join(staging, "root")
		if err := os.Mkdir(root, 0o755); err != nil {
			return nil, err
		}
		if err := os.Rename(tree, filepath.Join(root, s.Name)); err != nil {
			return nil, err
		}
		if err := os.Rename(root, tree); err != nil {
			return nil, err
		}
		top = s.Name
	}
	sc, err := packs.LoadSource(ctx, packs.SourceSpec{Name: packs.SourceInstalled, Dir: tree, Root: ".", MaxDepth: packs.DefaultMaxDepth})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	rel := func(p string) string {
		p = strings.TrimPrefix(p, "./")
		if p == "" || p == "." {
			return "."
		}
		return p
	}
	var units []unit
	var packDirs []string
	for _, p := range sc.Packs {
		d := rel(p.Dir)
		if d == "." {
			// A pack at the top of the source: the whole tree is one unit.
			return []unit{{name: p.Name, kind: "pack", version: p.Version, rel: ".", src: "."}}, nil
		}
		packDirs = append(packDirs, d)
		units = append(units, unit{name: p.Name, kind: "pack", version: p.Version, rel: d})
	}
	inPack := func(f string) bool {
		return slices.ContainsFunc(packDirs, func(d string) bool { return strings.HasPrefix(f, d+"/") })
	}
	seen := map[string]bool{}
	for _, s := range sc.Skills {
		f := rel(s.File)
		if inPack(f) {
			continue
		}
		u := unit{name: s.Name, kind: "skill"}
		if path.Base(f) == packs.SkillFile {
			u.rel = path.Dir(f)
		} else {
			u.rel, u.file = f, true
			if seen[f] {
				// Several playbook skills in one file: the file is one unit,
				// named after its first skill.
				continue
			}
		}
		seen[f] = true
		units = append(units, u)
	}
	for i := range units {
		units[i].src = units[i].rel
		if top != "" {
			// The tree was one skill, moved into a folder of its name.
			units[i].src = strings.TrimPrefix(strings.TrimPrefix(units[i].rel, top), "/")
			if units[i].src == "" {
				units[i].src = "."
			}
		}
	}
	return units, nil
}

// validateUnit loads dir as the installed source will and returns what
// it asks for. Any problem refuses the install: an installed source is
// loaded whole or it is not worth installing.
func validateUnit(ctx context.Context, dir string, u unit) (Capabilities, error) {
	sc, err := packs.LoadSource(ctx, packs.SourceSpec{Name: packs.SourceInstalled, Dir: filepath.Dir(dir), MaxDepth: packs.DefaultMaxDepth})
	if err != nil {
		return Capabilities{}, fmt.Errorf("%w: %s: %v", ErrInvalid, u.name, err)
	}
	if len(sc.Packs) == 0 && len(sc.Skills) == 0 {
		return Capabilities{}, fmt.Errorf("%w: %s holds no skill or pack", ErrInvalid, u.name)
	}
	// Each module as `skillhost validate` checks it: a valid module whose
	// exports the manifest's tools name. A tool whose export is missing
	// fails when called, as at load, and does not refuse the install.
	var errs []error
	for _, p := range sc.Packs {
		for _, m := range p.Modules {
			wasm, err := fs.ReadFile(p.FS, m.Path)
			if err != nil {
				errs = append(errs, fmt.Errorf("pack %s module %s: %w", p.Name, m.Name, err))
				continue
			}
			if err := packs.CheckModule(m, wasm); err != nil {
				for _, e := range unjoin(err) {
					if !errors.Is(e, packs.ErrNoExport) {
						errs = append(errs, fmt.Errorf("pack %s: %w", p.Name, e))
					}
				}
			}
		}
	}
	if len(errs) > 0 {
		return Capabilities{}, fmt.Errorf("%w: %s: %w", ErrInvalid, u.name, errors.Join(errs...))
	}
	return capabilitiesOf(sc), nil
}

// replaceDir moves the staged folder from to dest, replacing what is
// there. The old folder is moved aside (to a hidden name, which sources
// skip) before the new one is moved in, and removed after.
func replaceDir(from, dest string) error {
	if _, err := os.Lstat(dest); err == nil {
		aside := filepath.Join(filepath.Dir(dest), ".old-"+filepath.Base(dest)+"-"+fmt.Sprint(time.Now().UnixNano()))
		if err := os.Rename(dest, aside); err != nil {
			return err
		}
		if err := os.Rename(from, dest); err != nil {
			// Put the old one back.
			_ = os.Rename(aside, dest)
			return err
		}
		return os.RemoveAll(aside)
	}
	return os.Rename(from, dest)
}

// Uninstall removes the installed skill or pack name and its lock entry.
func (in *Installer) Uninstall(name string) error {
	if !validName(name) {
		return fmt.Errorf("%w: %q is not an installed name", ErrBadSource, name)
	}
	unlock, err := in.lockDir()
	if err != nil {
		return err
	}
	defer unlock()
	lock, err := ReadLock(in.LockFile)
	if err != nil {
		return err
	}
	dir := filepath.Join(in.Dir, name)
	_, statErr := os.Lstat(dir)
	if !lock.remove(name) && statErr != nil {
		return fmt.Errorf("%w: %q is not installed", ErrBadSource, name)
	}
	// The lock first: a folder the lock does not name is refused at load,
	// so an interrupted uninstall never leaves a locked folder missing.
	if err := lock.Write(in.LockFile); err != nil {
		return err
	}
	aside := filepath.Join(in.Dir, ".removed-"+name+"-"+fmt.Sprint(time.Now().UnixNano()))
	if err := os.Rename(dir, aside); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.RemoveAll(aside)
}

// lockDir takes the installed folder's install lock, creating the folder,
// and removes what killed installs left behind (hidden staging and
// set-aside folders).
func (in *Installer) lockDir() (func(), error) {
	if in.Dir == "" || in.LockFile == "" {
		return nil, fmt.Errorf("%w: the installer needs an installed folder and a lock file", ErrBadSource)
	}
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return nil, err
	}
	unlock, err := flock(filepath.Join(in.Dir, ".install.lock"))
	if err != nil {
		return nil, err
	}
	ents, _ := os.ReadDir(in.Dir)
	for _, d := range ents {
		n := d.Name()
		switch {
		case strings.HasPrefix(n, ".staging-"), strings.HasPrefix(n, ".removed-"):
			_ = os.RemoveAll(filepath.Join(in.Dir, n))
		case strings.HasPrefix(n, ".old-"):
			// An install killed between moving the old folder aside and
			// the new one in: the old one goes back.
			name := strings.TrimPrefix(n, ".old-")
			if i := strings.LastIndexByte(name, '-'); i > 0 {
				name = name[:i]
			}
			dest := filepath.Join(in.Dir, name)
			if _, err := os.Lstat(dest); errors.Is(err, os.ErrNotExist) && validName(name) {
				_ = os.Rename(filepath.Join(in.Dir, n), dest)
				continue
			}
			_ = os.RemoveAll(filepath.Join(in.Dir, n))
		}
	}
	return unlock, nil
}

// SyncStatus is what Sync did for one locked entry.
type SyncStatus struct {
	Name string
	// Action is "ok" (the folder matched the lock), "installed" (it was
	// missing or changed and was installed again from its source).
	Action string
}

// Sync makes the installed folder what the lock says: each entry whose
// folder is missing or no longer matches its content digest is installed
// again from its source, and must come back with the locked resolved
// digest and content digest, else Sync stops with ErrDigestMismatch and
// leaves that entry as it was. Folders the lock does not name are left
// alone (Lock.Check reports them).
func (in *Installer) Sync(ctx context.Context) ([]SyncStatus, error) {
	lock, err := ReadLock(in.LockFile)
	if err != nil {
		return nil, err
	}
	var out []SyncStatus
	for _, e := range lock.Entries {
		if got, err := DirDigest(filepath.Join(in.Dir, e.Name)); err == nil && got == e.Digest {
			out = append(out, SyncStatus{Name: e.Name, Action: "ok"})
			continue
		}
		src, err := ParseSource(e.Source)
		if err != nil {
			return out, fmt.Errorf("%s: %w", e.Name, err)
		}
		req := Request{Source: e.Source, Skills: []string{e.Name}, locked: e}
		switch src.Kind {
		case KindArchive, KindURL:
			req.Digest = e.Resolved
		case KindOCI:
			// The locked digest, not wherever the tag points now.
			if e.Resolved != "" {
				req.Source = "oci://" + ociRepository(src.Ref) + "@" + e.Resolved
			}
		case KindGit:
			// The locked commit, not wherever the ref points now.
			if e.Resolved != "" {
				src.Rev = e.Resolved
				req.Source = src.String()
			}
		}
		if _, err := in.Install(ctx, req); err != nil {
			return out, fmt.Errorf("%s: %w", e.Name, err)
		}
		out = append(out, SyncStatus{Name: e.Name, Action: "installed"})
	}
	return out, nil
}

// signerName says who signed, for messages: "no one" when unsigned.
func signerName(identity, issuer string) string {
	switch {
	case identity == "":
		return "no one (unsigned)"
	case issuer != "":
		return identity + " (issuer " + issuer + ")"
	}
	return "key " + identity
}

// unjoin flattens errors.Join trees into their leaves.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}
