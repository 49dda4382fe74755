package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/skillhost/skillhost/guests/go/skill"
)

// defaultRoot is where the host mounts the granted folder. The config key
// root overrides it (tests point it at a temporary directory).
const defaultRoot = "/data"

var getConfig = skill.Config

func root() string {
	if r, ok := getConfig("root"); ok && r != "" {
		return filepath.Clean(r)
	}
	return defaultRoot
}

// resolve maps a path the model gave ("notes/a.txt", "/data/notes/a.txt",
// "./x/../y") to a file under the root, and returns it with the path to
// show back (always "/data/..."-style, rooted at the mount). Nothing can
// climb above the root: ".." stops there. The host's WASI mount is the
// real boundary; this keeps messages clear.
func resolve(p string) (full, shown string, err error) {
	r := root()
	p = strings.TrimSpace(p)
	if p == "" {
		p = "."
	}
	p = filepath.ToSlash(p)
	rs := filepath.ToSlash(r)
	switch {
	case p == rs || strings.HasPrefix(p, rs+"/"):
		p = strings.TrimPrefix(p, rs)
	case p == defaultRoot || strings.HasPrefix(p, defaultRoot+"/"):
		p = strings.TrimPrefix(p, defaultRoot)
	case strings.HasPrefix(p, "/"):
		return "", "", skill.InvalidInput(fmt.Sprintf("path %q is outside %s; give a path under it or relative to it", p, defaultRoot))
	}
	rel := path.Clean("/" + p) // "/" + cleaned, never above "/"
	shown = path.Join(defaultRoot, rel)
	return filepath.Join(r, filepath.FromSlash(rel)), shown, nil
}

// fsError turns a filesystem error into a tool error with an abi code.
func fsError(err error, shown string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return skill.NotFound(fmt.Sprintf("%s does not exist", shown))
	case errors.Is(err, syscall.EROFS):
		return skill.PermissionDenied(fmt.Sprintf("%s: the folder is mounted read-only", shown))
	case errors.Is(err, fs.ErrPermission):
		return skill.PermissionDenied(fmt.Sprintf("%s: permission denied", shown))
	case errors.Is(err, syscall.ENOTDIR):
		return skill.InvalidInput(fmt.Sprintf("%s: a part of the path is not a directory", shown))
	case errors.Is(err, syscall.EISDIR):
		return skill.InvalidInput(fmt.Sprintf("%s is a directory", shown))
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EFBIG):
		return skill.LimitExceeded(fmt.Sprintf("%s: no space left", shown))
	case errors.Is(err, syscall.EBADF):
		// WASI answers EBADF for a path under no preopened folder.
		return skill.PermissionDenied(fmt.Sprintf("%s: no folder is granted at %s; the operator must mount one there", shown, defaultRoot))
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %s failed: %v", shown, pe.Op, pe.Err)
	}
	return fmt.Errorf("%s: %v", shown, err)
}

// fsWriteError is fsError for writes: a runtime that refuses to open a
// file for writing on a read-only mount may report "not implemented"
// (wazero's own mounts give ENOSYS) or "not supported" instead of EROFS.
func fsWriteError(err error, shown string) error {
	if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.ENOTSUP) {
		return skill.PermissionDenied(fmt.Sprintf("%s: the folder is mounted read-only", shown))
	}
	return fsError(err, shown)
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

// ---- read_file ----

const (
	defaultReadLines = 2000
	maxReadBytes     = 256 << 10
)

type ReadFileIn struct {
	Path   string `json:"path" desc:"File path, relative to /data or absolute under /data" jsonschema:"minLength=1"`
	Offset int    `json:"offset,omitempty" desc:"First line to return, 1-based" jsonschema:"minimum=1,default=1"`
	Limit  int    `json:"limit,omitempty" desc:"Maximum number of lines to return" jsonschema:"minimum=1,maximum=100000,default=2000"`
}

type ReadFileOut struct {
	Path       string `json:"path"`
	Content    string `json:"content" desc:"The lines, with their newlines"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line" desc:"Last line returned (start_line-1 when none)"`
	TotalLines int    `json:"total_lines"`
	Size       int64  `json:"size" desc:"File size in bytes"`
	Truncated  bool   `json:"truncated" desc:"More lines follow; read again with offset end_line+1"`
}

var readFileTool = skill.Tool("read_file", readFile,
	skill.Category("files"), skill.Idempotent(), skill.RequiresFilesystem(),
	skill.Describe("Read a text file from the granted folder (/data), optionally a window of lines (offset is the 1-based first line, limit the number of lines; at most 256 KiB per call). Reports the total line count so you can page through large files. Binary files are refused."),
	skill.Tags("files", "read", "filesystem"))

func readFile(in ReadFileIn) (ReadFileOut, error) {
	full, shown, err := resolve(in.Path)
	if err != nil {
		return ReadFileOut{}, err
	}
	f, err := os.Open(full)
	if err != nil {
		return ReadFileOut{}, fsError(err, shown)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ReadFileOut{}, fsError(err, shown)
	}
	if st.IsDir() {
		return ReadFileOut{}, skill.InvalidInput(shown + " is a directory; use list_dir")
	}
	start := max(in.Offset, 1)
	limit := in.Limit
	if limit <= 0 {
		limit = defaultReadLines
	}
	out := ReadFileOut{Path: shown, StartLine: start, EndLine: start - 1, Size: st.Size()}
	// Lines are cut from fixed-size chunks read straight from the file
	// rather than through bufio: under TinyGo with -scheduler=none, handing
	// an *os.File to bufio links code that starts a goroutine, which fails
	// to compile.
	var content bytes.Buffer
	line := 0
	partial := false // the current line continues in the next chunk
	keep := func(b []byte, ends bool) {
		if !partial {
			line++
		}
		partial = !ends
		if line < start || line >= start+limit || out.Truncated {
			return
		}
		if content.Len()+len(b) > maxReadBytes {
			out.Truncated = true
			return
		}
		content.Write(b)
		if ends {
			out.EndLine = line
		}
	}
	buf := make([]byte, 64<<10)
	first := true
	for {
		n, err := f.Read(buf)
		chunk := buf[:n]
		if first && n > 0 {
			first = false
			if bytes.IndexByte(chunk[:min(n, 8000)], 0) >= 0 {
				return ReadFileOut{}, skill.InvalidInput(shown + " looks binary (it contains NUL bytes); use file_info")
			}
		}
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				keep(chunk, false)
				break
			}
			keep(chunk[:i+1], true)
			chunk = chunk[i+1:]
		}
		if err == io.EOF || (n == 0 && err == nil) {
			break
		}
		if err != nil {
			return ReadFileOut{}, fsError(err, shown)
		}
	}
	if partial && out.EndLine == line-1 && line >= start && line < start+limit && !out.Truncated {
		out.EndLine = line // a last line without a newline
	}
	out.TotalLines = line
	if out.EndLine < line && out.EndLine >= start-1 && start <= line {
		out.Truncated = true
	}
	if !utf8.Valid(content.Bytes()) {
		out.Content = strings.ToValidUTF8(content.String(), "\uFFFD")
	} else {
		out.Content = content.String()
	}
	return out, nil
}

// ---- list_dir ----

type ListDirIn struct {
	Path          string `json:"path,omitempty" desc:"Directory, relative to /data or absolute under /data" jsonschema:"default=."`
	Recursive     bool   `json:"recursive,omitempty" desc:"Descend into subdirectories (up to max_depth)"`
	MaxDepth      int    `json:"max_depth,omitempty" desc:"With recursive: how many levels below path" jsonschema:"minimum=1,maximum=20,default=5"`
	Glob          string `json:"glob,omitempty" desc:"Only list files whose name matches, e.g. *.md or report-??.csv (directories are still walked)"`
	IncludeHidden bool   `json:"include_hidden,omitempty" desc:"Include names starting with a dot"`
	MaxEntries    int    `json:"max_entries,omitempty" jsonschema:"minimum=1,maximum=5000,default=500"`
}

type Entry struct {
	Path     string `json:"path"`
	Type     string `json:"type" desc:"file, dir, symlink or other"`
	Size     int64  `json:"size"`
	Modified string `json:"modified" desc:"RFC 3339"`
}

type ListDirOut struct {
	Path      string  `json:"path"`
	Entries   []Entry `json:"entries"`
	Truncated bool    `json:"truncated" desc:"max_entries was reached"`
}

var listDirTool = skill.Tool("list_dir", listDir,
	skill.Category("files"), skill.Idempotent(), skill.RequiresFilesystem(),
	skill.Describe("List the files and folders in a directory of the granted folder (/data), optionally recursively and filtered by a name glob, with type, size and modification time, sorted by path."),
	skill.Tags("files", "list", "directory", "filesystem"))

func listDir(in ListDirIn) (ListDirOut, error) {
	full, shown, err := resolve(in.Path)
	if err != nil {
		return ListDirOut{}, err
	}
	if in.Glob != "" {
		if _, err := path.Match(in.Glob, ""); err != nil {
			return ListDirOut{}, skill.InvalidInput(fmt.Sprintf("bad glob %q", in.Glob))
		}
	}
	st, err := os.Stat(full)
	if err != nil {
		return ListDirOut{}, fsError(err, shown)
	}
	if !st.IsDir() {
		return ListDirOut{}, skill.InvalidInput(shown + " is not a directory; use file_info")
	}
	maxEntries := in.MaxEntries
	if maxEntries <= 0 {
		maxEntries = 500
	}
	depth := 1
	if in.Recursive {
		depth = in.MaxDepth
		if depth <= 0 {
			depth = 5
		}
	}
	out := ListDirOut{Path: shown, Entries: []Entry{}}
	errStop := errors.New("stop")
	err = filepath.WalkDir(full, func(p string, d fs.DirEntry, err error) error {
		if p == full {
			return err
		}
		rel, _ := filepath.Rel(full, p)
		rel = filepath.ToSlash(rel)
		level := strings.Count(rel, "/") + 1
		if err != nil {
			return nil // unreadable entry: skip it
		}
		name := d.Name()
		if !in.IncludeHidden && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if in.Glob == "" || (!d.IsDir() && matchGlob(in.Glob, name)) {
			if len(out.Entries) >= maxEntries {
				out.Truncated = true
				return errStop
			}
			e := Entry{Path: path.Join(shown, rel), Type: fileType(d.Type())}
			if info, err := d.Info(); err == nil {
				e.Size = info.Size()
				if info.IsDir() {
					e.Size = 0
				}
				e.Modified = info.ModTime().UTC().Format(time.RFC3339)
			}
			out.Entries = append(out.Entries, e)
		}
		if d.IsDir() && level >= depth {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil && err != errStop {
		return ListDirOut{}, fsError(err, shown)
	}
	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Path < out.Entries[j].Path })
	return out, nil
}

func matchGlob(glob, name string) bool {
	ok, _ := path.Match(glob, name)
	return ok
}

// ---- file_info ----

type FileInfoIn struct {
	Path string `json:"path" desc:"File or directory, relative to /data or absolute under /data"`
}

type FileInfoOut struct {
	Path     string `json:"path"`
	Type     string `json:"type" desc:"file, dir, symlink or other"`
	Size     int64  `json:"size" desc:"Bytes (0 for directories)"`
	Modified string `json:"modified" desc:"RFC 3339"`
	Mode     string `json:"mode" desc:"Type and permissions, e.g. -rw-r--r-- or drwxr-xr-x"`
	Entries  *int   `json:"entries,omitempty" desc:"For a directory: number of entries"`
}

var fileInfoTool = skill.Tool("file_info", fileInfo,
	skill.Category("files"), skill.Idempotent(), skill.RequiresFilesystem(),
	skill.Describe("Report whether a path in the granted folder (/data) is a file or directory, with its size, modification time and permissions. Fails with not_found when it does not exist."),
	skill.Tags("files", "stat", "filesystem"))

func fileInfo(in FileInfoIn) (FileInfoOut, error) {
	full, shown, err := resolve(in.Path)
	if err != nil {
		return FileInfoOut{}, err
	}
	st, err := os.Lstat(full)
	if err != nil {
		return FileInfoOut{}, fsError(err, shown)
	}
	out := FileInfoOut{Path: shown, Type: fileType(st.Mode()), Size: st.Size(),
		Modified: st.ModTime().UTC().Format(time.RFC3339), Mode: st.Mode().String()}
	if st.IsDir() {
		out.Size = 0
		if ents, err := os.ReadDir(full); err == nil {
			n := len(ents)
			out.Entries = &n
		}
	}
	return out, nil
}

// ---- write_file ----

const maxWriteBytes = 10 << 20

type WriteFileIn struct {
	Path       string `json:"path" desc:"File path, relative to /data or absolute under /data" jsonschema:"minLength=1"`
	Content    string `json:"content" desc:"Text to write"`
	Mode       string `json:"mode,omitempty" desc:"overwrite replaces the file (creating it), append adds to its end (creating it), create fails if it exists" jsonschema:"enum=overwrite|append|create,default=overwrite"`
	CreateDirs bool   `json:"create_dirs,omitempty" desc:"Create missing parent directories"`
}

type WriteFileOut struct {
	Path         string `json:"path"`
	BytesWritten int    `json:"bytes_written"`
	Created      bool   `json:"created" desc:"The file did not exist before"`
	Size         int64  `json:"size" desc:"File size after writing"`
}

var writeFileTool = skill.Tool("write_file", writeFile,
	skill.Category("files"), skill.SideEffects(), skill.RequiresFilesystem(),
	skill.Describe("Write text to a file in the granted folder (/data): overwrite (default), append, or create only if new; optionally create parent directories. Works only when the folder is granted read-write; otherwise fails with permission_denied."),
	skill.Tags("files", "write", "filesystem"))

func writeFile(in WriteFileIn) (WriteFileOut, error) {
	full, shown, err := resolve(in.Path)
	if err != nil {
		return WriteFileOut{}, err
	}
	if full == root() {
		return WriteFileOut{}, skill.InvalidInput("give a file path, not the folder itself")
	}
	if len(in.Content) > maxWriteBytes {
		return WriteFileOut{}, skill.LimitExceeded(fmt.Sprintf("content is %d bytes; the limit is %d", len(in.Content), maxWriteBytes))
	}
	flags := os.O_WRONLY | os.O_CREATE
	switch in.Mode {
	case "", "overwrite":
		flags |= os.O_TRUNC
	case "append":
		flags |= os.O_APPEND
	case "create":
		flags |= os.O_EXCL
	default:
		return WriteFileOut{}, skill.InvalidInput("mode must be overwrite, append or create")
	}
	_, statErr := os.Stat(full)
	existed := statErr == nil
	if existed && in.Mode == "create" {
		return WriteFileOut{}, skill.InvalidInput(shown + " already exists (mode create)")
	}
	if in.CreateDirs {
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return WriteFileOut{}, fsWriteError(err, path.Dir(shown))
		}
	}
	f, err := os.OpenFile(full, flags, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return WriteFileOut{}, skill.InvalidInput(shown + " already exists (mode create)")
		}
		if errors.Is(err, fs.ErrNotExist) && !in.CreateDirs {
			return WriteFileOut{}, skill.NotFound(path.Dir(shown) + " does not exist; set create_dirs to create it")
		}
		return WriteFileOut{}, fsWriteError(err, shown)
	}
	n, err := f.WriteString(in.Content) // not io.WriteString: see readFile
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return WriteFileOut{}, fsWriteError(err, shown)
	}
	out := WriteFileOut{Path: shown, BytesWritten: n, Created: !existed}
	if st, err := os.Stat(full); err == nil {
		out.Size = st.Size()
	}
	return out, nil
}

// ---- search_files ----

const maxSearchFileBytes = 8 << 20

type SearchFilesIn struct {
	Pattern         string `json:"pattern" desc:"Go (RE2) regular expression matched against each line" jsonschema:"minLength=1"`
	Path            string `json:"path,omitempty" desc:"Directory (searched recursively) or single file" jsonschema:"default=."`
	Glob            string `json:"glob,omitempty" desc:"Only search files whose name matches, e.g. *.go"`
	CaseInsensitive bool   `json:"case_insensitive,omitempty"`
	MaxMatches      int    `json:"max_matches,omitempty" jsonschema:"minimum=1,maximum=2000,default=200"`
}

type SearchMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text" desc:"The matching line, cut at 500 characters"`
}

type SearchFilesOut struct {
	Matches      []SearchMatch `json:"matches"`
	FilesScanned int           `json:"files_scanned"`
	Truncated    bool          `json:"truncated" desc:"max_matches was reached"`
}

var searchFilesTool = skill.Tool("search_files", searchFiles,
	skill.Category("files"), skill.Idempotent(), skill.RequiresFilesystem(),
	skill.Describe("Search the text files under a directory of the granted folder (/data) for lines matching a regular expression (like grep -rn), optionally only files matching a name glob. Returns path, line number and line text of each match. Hidden, binary and files over 8 MiB are skipped."),
	skill.Tags("files", "search", "grep", "filesystem"))

func searchFiles(in SearchFilesIn) (SearchFilesOut, error) {
	full, shown, err := resolve(in.Path)
	if err != nil {
		return SearchFilesOut{}, err
	}
	pat := in.Pattern
	if in.CaseInsensitive {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return SearchFilesOut{}, skill.InvalidInput("bad pattern: " + strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if in.Glob != "" {
		if _, err := path.Match(in.Glob, ""); err != nil {
			return SearchFilesOut{}, skill.InvalidInput(fmt.Sprintf("bad glob %q", in.Glob))
		}
	}
	limit := in.MaxMatches
	if limit <= 0 {
		limit = 200
	}
	if _, err := os.Stat(full); err != nil {
		return SearchFilesOut{}, fsError(err, shown)
	}
	out := SearchFilesOut{Matches: []SearchMatch{}}
	errStop := errors.New("stop")
	err = filepath.WalkDir(full, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p != full && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() || (in.Glob != "" && !matchGlob(in.Glob, d.Name())) {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > maxSearchFileBytes {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			return nil
		}
		out.FilesScanned++
		rel, _ := filepath.Rel(full, p)
		shownFile := path.Join(shown, filepath.ToSlash(rel))
		for i, line := range strings.Split(string(data), "\n") {
			if !re.MatchString(line) {
				continue
			}
			if len(out.Matches) >= limit {
				out.Truncated = true
				return errStop
			}
			if utf8.RuneCountInString(line) > 500 {
				line = string([]rune(line)[:500])
			}
			out.Matches = append(out.Matches, SearchMatch{Path: shownFile, Line: i + 1, Text: strings.TrimRight(line, "\r")})
		}
		return nil
	})
	if err != nil && err != errStop {
		return SearchFilesOut{}, fsError(err, shown)
	}
	return out, nil
}
