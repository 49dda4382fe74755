package packs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SkillFile is the name of the instructions file in a skill folder.
const SkillFile = "SKILL.md"

// skillFileLower is the lower-case spelling some published skills use.
// The format's reference library accepts it, so skillhost does too, with
// a warning; when both exist, SKILL.md is the instructions file.
const skillFileLower = "skill.md"

// IsSkillFile reports whether name is the instructions file of a skill
// folder: SKILL.md, or skill.md (read with a warning).
func IsSkillFile(name string) bool { return name == SkillFile || name == skillFileLower }

// isSkillFileName is IsSkillFile, for use inside the package.
func isSkillFileName(name string) bool { return IsSkillFile(name) }

// Caps on what one skill folder may hold. They bound the work and memory a
// hostile folder can cause; real skills stay far below them.
const (
	// MaxSkillFiles is the most files a skill folder may hold besides
	// SKILL.md.
	MaxSkillFiles = 512
	// MaxSkillBytes is the most bytes the files of a skill folder,
	// SKILL.md included, may hold together.
	MaxSkillBytes = 16 << 20
	// MaxSkillMDBytes is the largest SKILL.md (or flat skill file) read.
	MaxSkillMDBytes = 1 << 20

	// maxSkillDirs and maxSkillDepth bound the folders walked.
	maxSkillDirs  = 512
	maxSkillDepth = 16
	// maxLinkHops bounds how many symbolic links one path may go through.
	maxLinkHops = 40
	// readDirBatch is how many entries are read from a folder at a time.
	readDirBatch = 128
)

// LoadSkillDir reads the Agent Skills folder dir of fsys: dir/SKILL.md and
// every other file below dir, recorded as Resources with their size and
// sha256 (streamed, never read whole). dir is a slash-separated path inside
// fsys, not "."; its last element must equal the skill's name. The error
// for a folder without SKILL.md matches fs.ErrNotExist; every other
// problem is a *ManifestError, all of them joined.
//
// Entries whose names start with "." (.git, .DS_Store) are skipped. A
// symbolic link is followed only when it resolves, step by step, to a path
// inside dir; a link that leaves the folder is an error naming the link and
// its target, and a link to a folder is skipped with a warning (its files
// are listed under their own paths). Links are read through fs.ReadLinkFS,
// which os.DirFS, (*os.Root).FS and fstest.MapFS implement; an FS with link
// entries that does not implement it gets an error for each link. For a
// folder others can write to while it is read, pass (*os.Root).FS: it
// refuses escapes at open time, where this function's check runs before.
//
// Limits: at most MaxSkillFiles files, MaxSkillBytes in total, 512 folders
// and 16 levels of nesting.
func LoadSkillDir(fsys fs.FS, dir string) (*SkillSpec, error) {
	if dir == "." || !fs.ValidPath(dir) {
		return nil, fmt.Errorf("packs: LoadSkillDir needs the skill folder's path inside the FS (the folder name is checked against the skill name), got %q", dir)
	}
	w := &skillWalker{fsys: fsys, root: dir}
	if err := w.walk("", 0); err != nil {
		w.errs = append(w.errs, err)
	}
	switch {
	case w.skillMD == nil && w.lowerMD != nil:
		w.skillMD = w.lowerMD
		w.warnings = append(w.warnings, fmt.Sprintf("%s: the instructions file is named %s; rename it %s, the name the Agent Skills format and other hosts expect",
			path.Join(dir, skillFileLower), skillFileLower, SkillFile))
	case w.lowerMD != nil:
		w.files = append(w.files, *w.lowerMD)
	}
	file := path.Join(dir, SkillFile)
	if w.skillMD != nil {
		file = path.Join(dir, w.skillMD.rel)
	}
	if w.skillMD == nil {
		if len(w.errs) == 0 {
			return nil, fmt.Errorf("%w: no %s in %s", fs.ErrNotExist, SkillFile, dir)
		}
		return nil, errors.Join(w.errs...)
	}
	var skill *SkillSpec
	total := w.skillMD.size
	data, err := readBounded(fsys, path.Join(dir, w.skillMD.real), file)
	if err != nil {
		w.errs = append(w.errs, err)
	} else if s, err := ParseSkillMD(file, data, path.Base(dir)); err != nil {
		w.errs = append(w.errs, err)
	} else {
		skill = s
	}
	for _, f := range w.files {
		total += f.size
	}
	if total > MaxSkillBytes {
		w.errs = append(w.errs, &ManifestError{File: dir,
			Msg: fmt.Sprintf("skill folder holds %d bytes in %d files; a skill may hold at most %d bytes (16 MiB)",
				total, len(w.files)+1, MaxSkillBytes)})
	}
	if len(w.errs) > 0 {
		return nil, errors.Join(w.errs...)
	}

	// Hash every file, never reading more than the remaining budget.
	budget := int64(MaxSkillBytes) - w.skillMD.size
	res := make([]Resource, 0, len(w.files))
	for _, f := range w.files {
		r, n, err := hashFile(fsys, path.Join(dir, f.real), path.Join(dir, f.rel), budget)
		if err != nil {
			w.errs = append(w.errs, err)
			continue
		}
		budget -= n
		r.Path = f.rel
		res = append(res, r)
	}
	if len(w.errs) > 0 {
		return nil, errors.Join(w.errs...)
	}
	slices.SortFunc(res, func(a, b Resource) int { return strings.Compare(a.Path, b.Path) })
	skill.Resources = res
	skill.Warnings = append(skill.Warnings, w.warnings...)
	skill.ContentHash = agentSkillHash(skill)
	return skill, nil
}

// LoadSkillFile reads a flat skill file such as skills/pdf.md: the file's
// stem is the skill's name and it brings no resources. A symbolic link is
// followed only within the file's folder. Problems are *ManifestError
// values.
func LoadSkillFile(fsys fs.FS, name string) (*SkillSpec, error) {
	if !fs.ValidPath(name) || name == "." || path.Ext(name) != ".md" {
		return nil, fmt.Errorf("packs: LoadSkillFile needs the path of a .md file inside the FS, got %q", name)
	}
	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	w := &skillWalker{fsys: fsys, root: dir}
	real := base
	if fi, err := fs.Lstat(fsys, name); err != nil {
		return nil, fmt.Errorf("reading skill file: %w", err)
	} else if fi.Mode()&fs.ModeSymlink != 0 {
		r, err := w.resolve(base)
		if err != nil {
			return nil, err
		}
		real = r
	}
	data, err := readBounded(fsys, path.Join(dir, real), name)
	if err != nil {
		return nil, err
	}
	return ParseSkillMD(name, data, strings.TrimSuffix(base, ".md"))
}

// skillFile is one regular file found in a skill folder.
type skillFile struct {
	rel  string // path relative to the skill folder, as the skill sees it
	real string // the same file with symbolic links resolved
	size int64
}

// skillWalker lists a skill folder.
type skillWalker struct {
	fsys     fs.FS
	root     string
	skillMD  *skillFile
	lowerMD  *skillFile // skill.md, used when there is no SKILL.md
	files    []skillFile
	dirs     int
	errs     []error
	warnings []string
}

// walk lists the folder rel (relative to w.root). It returns an error only
// when a cap stops the walk.
func (w *skillWalker) walk(rel string, depth int) error {
	if depth > maxSkillDepth {
		return &ManifestError{File: path.Join(w.root, rel),
			Msg: fmt.Sprintf("folders nest more than %d levels deep in the skill folder", maxSkillDepth)}
	}
	full := path.Join(w.root, rel)
	names, err := w.readDir(full)
	if err != nil {
		return err
	}
	for _, d := range names {
		name := d.Name()
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
			w.errs = append(w.errs, &ManifestError{File: full,
				Msg: fmt.Sprintf("folder entry %q is not a plain file name; every resource must stay inside the skill folder", name)})
			continue
		}
		if !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
			w.errs = append(w.errs, &ManifestError{File: full,
				Msg: fmt.Sprintf("folder entry %q has control characters or invalid UTF-8; resource names must be printable text", name)})
			continue
		}
		if strings.HasPrefix(name, ".") {
			continue
		}
		child := path.Join(rel, name)
		typ := d.Type()
		real := child
		if typ&fs.ModeSymlink != 0 {
			r, err := w.resolve(child)
			if err != nil {
				w.errs = append(w.errs, err)
				continue
			}
			fi, err := fs.Stat(w.fsys, path.Join(w.root, r))
			if err != nil {
				w.errs = append(w.errs, &ManifestError{File: path.Join(w.root, child), Msg: fmt.Sprintf("reading symlink target: %v", err)})
				continue
			}
			if fi.IsDir() {
				w.warnings = append(w.warnings, fmt.Sprintf("%s: symlink to folder %q skipped; its files are listed under their own paths",
					path.Join(w.root, child), r))
				continue
			}
			real, typ = r, fi.Mode().Type()
		}
		switch {
		case typ.IsDir() && child == SkillFile:
			w.errs = append(w.errs, &ManifestError{File: path.Join(w.root, child),
				Msg: "is a folder; SKILL.md must be a file"})
		case typ.IsDir():
			w.dirs++
			if w.dirs > maxSkillDirs {
				return &ManifestError{File: w.root,
					Msg: fmt.Sprintf("skill folder has more than %d folders; a skill may have at most %d", maxSkillDirs, maxSkillDirs)}
			}
			if err := w.walk(child, depth+1); err != nil {
				return err
			}
		case typ.IsRegular():
			fi, err := fs.Stat(w.fsys, path.Join(w.root, real))
			if err != nil {
				w.errs = append(w.errs, fmt.Errorf("reading %s: %w", path.Join(w.root, child), err))
				continue
			}
			f := skillFile{rel: child, real: real, size: fi.Size()}
			if child == SkillFile {
				w.skillMD = &f
				continue
			}
			if child == skillFileLower {
				w.lowerMD = &f
				continue
			}
			w.files = append(w.files, f)
			if len(w.files) > MaxSkillFiles {
				return &ManifestError{File: w.root,
					Msg: fmt.Sprintf("skill folder has at least %d files besides %s; a skill may have at most %d",
						len(w.files), SkillFile, MaxSkillFiles)}
			}
		default:
			w.errs = append(w.errs, &ManifestError{File: path.Join(w.root, child),
				Msg: fmt.Sprintf("is %s; a skill folder may hold only files, folders and links to them", typeNoun(typ))})
		}
	}
	return nil
}

// typeNoun names a file type that is neither a regular file, a folder nor
// a symbolic link.
func typeNoun(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file (" + t.String() + ")"
}

// readDir returns the entries of the folder full sorted by name, reading
// them in batches so a folder with a huge number of entries is refused
// without listing all of it.
func (w *skillWalker) readDir(full string) ([]fs.DirEntry, error) {
	f, err := w.fsys.Open(full)
	if err != nil {
		return nil, fmt.Errorf("reading skill folder %s: %w", full, err)
	}
	defer f.Close()
	rd, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, fmt.Errorf("reading skill folder %s: %w", full, &fs.PathError{Op: "readdir", Path: full, Err: errors.New("not implemented")})
	}
	const maxEntries = MaxSkillFiles + maxSkillDirs + 1
	var all []fs.DirEntry
	for {
		batch, err := rd.ReadDir(readDirBatch)
		all = append(all, batch...)
		if len(all) > maxEntries {
			return nil, &ManifestError{File: full,
				Msg: fmt.Sprintf("folder has more than %d entries; a skill may have at most %d files and %d folders",
					maxEntries, MaxSkillFiles, maxSkillDirs)}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading skill folder %s: %w", full, err)
		}
	}
	slices.SortFunc(all, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return all, nil
}

// resolve follows the symbolic link rel (relative to w.root) one path
// element at a time, as the operating system would, and returns the
// resolved path relative to w.root. It fails when any step leaves w.root:
// an absolute target, or a ".." above it.
func (w *skillWalker) resolve(rel string) (string, error) {
	linkFile := path.Join(w.root, rel)
	if _, ok := w.fsys.(fs.ReadLinkFS); !ok {
		return "", &ManifestError{File: linkFile,
			Msg: "is a symbolic link, but this file system cannot read links (it does not implement fs.ReadLinkFS), so it cannot be checked"}
	}
	first, err := fs.ReadLink(w.fsys, linkFile)
	if err != nil {
		return "", &ManifestError{File: linkFile, Msg: fmt.Sprintf("cannot read symlink: %v", err)}
	}
	escape := func() error {
		return &ManifestError{File: linkFile,
			Msg: fmt.Sprintf("symlink points to %q, outside the skill folder; a skill may only link to its own files (copy the target into the folder instead)", first)}
	}
	pending := strings.Split(rel, "/")
	var cur []string
	for hops := 0; len(pending) > 0; {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "", escape()
			}
			cur = cur[:len(cur)-1]
			continue
		}
		cand := path.Join(append(cur, c)...)
		fi, err := fs.Lstat(w.fsys, path.Join(w.root, cand))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", &ManifestError{File: linkFile, Msg: fmt.Sprintf("symlink points to %q, which does not exist", first)}
			}
			return "", &ManifestError{File: linkFile, Msg: fmt.Sprintf("resolving symlink %q: %v", first, err)}
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = append(cur, c)
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", &ManifestError{File: linkFile, Msg: fmt.Sprintf("symlink %q goes through more than %d links (a loop?)", first, maxLinkHops)}
		}
		target, err := fs.ReadLink(w.fsys, path.Join(w.root, cand))
		if err != nil {
			return "", &ManifestError{File: linkFile, Msg: fmt.Sprintf("cannot read symlink %s: %v", cand, err)}
		}
		if target == "" || strings.HasPrefix(target, "/") || strings.HasPrefix(target, "\\") ||
			(len(target) > 1 && target[1] == ':') {
			return "", escape()
		}
		pending = append(strings.Split(target, "/"), pending...)
	}
	if len(cur) == 0 {
		return ".", nil
	}
	return path.Join(cur...), nil
}

// readBounded reads a skill's Markdown file, refusing one larger than
// MaxSkillMDBytes.
func readBounded(fsys fs.FS, name, file string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSkillMDBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(data) > MaxSkillMDBytes {
		return nil, &ManifestError{File: file,
			Msg: fmt.Sprintf("file is larger than %d bytes (1 MiB); keep instructions short and move detail into references/", MaxSkillMDBytes)}
	}
	return data, nil
}

// hashFile streams the file name through sha256, reading at most budget
// bytes; file names it in errors.
func hashFile(fsys fs.FS, name, file string, budget int64) (Resource, int64, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return Resource{}, 0, fmt.Errorf("reading %s: %w", file, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, budget+1))
	if err != nil {
		return Resource{}, 0, fmt.Errorf("reading %s: %w", file, err)
	}
	if n > budget {
		return Resource{}, 0, &ManifestError{File: file,
			Msg: fmt.Sprintf("file grew while it was read and the skill folder now holds more than %d bytes (16 MiB)", MaxSkillBytes)}
	}
	return Resource{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, n, nil
}
