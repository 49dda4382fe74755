package packs

import (
	"bytes"
	"fmt"
)

// maxFrontmatterBytes bounds the YAML frontmatter of a Markdown skill file.
// Real frontmatter is a few hundred bytes to a few kilobytes; the cap is
// checked before any YAML is parsed, so a huge header fails at once.
const maxFrontmatterBytes = 64 << 10

// utf8BOM is the byte order mark some editors put at the start of a file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// frontmatter is a Markdown file split at its YAML header.
type frontmatter struct {
	// YAML is the header: a "---" line (a YAML document start marker, so a
	// YAML parser reports the same line numbers as the file) and the lines
	// up to, not including, the closing one.
	YAML []byte
	// Body is everything after the closing line, byte for byte.
	Body string
	// BodyLine is the file line the body starts on.
	BodyLine int
}

// splitFrontmatter splits data (a Markdown file with a YAML header) into the
// header and the body. The header starts with a "---" line at the very top
// of the file (after an optional UTF-8 byte order mark) and ends at the next
// line that is exactly "---"; trailing spaces, tabs and a carriage return on
// either delimiter line are tolerated, so CRLF files split the same way.
// Problems are *ManifestError values naming file.
func splitFrontmatter(file string, data []byte) (*frontmatter, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	first, _, hasNL := bytes.Cut(data, []byte("\n"))
	if !isDelimiter(first) {
		return nil, &ManifestError{File: file, Line: 1,
			Msg: "a SKILL.md needs YAML frontmatter between --- lines with name and description, starting on the first line"}
	}
	if !hasNL {
		return nil, errUnterminated(file)
	}
	// Look for the closing line only within the cap (plus room for the
	// delimiter itself), so a huge header costs no more than the cap.
	start := len(first) + 1 // offset of the first header line in data
	window := data[:min(len(data), start+maxFrontmatterBytes+8)]
	line := 2
	for off := start; off < len(window); line++ {
		end := bytes.IndexByte(window[off:], '\n')
		next := len(window)
		if end >= 0 {
			end += off
			next = end + 1
		} else {
			end = len(window)
		}
		if isDelimiter(window[off:end]) && (end < len(window) || len(window) == len(data)) {
			if off-start > maxFrontmatterBytes {
				break
			}
			// The opening line is given to YAML as a bare "---" (it may carry
			// trailing blanks or a carriage return).
			return &frontmatter{
				YAML:     append([]byte("---\n"), data[start:off]...),
				Body:     string(data[next:]),
				BodyLine: line + 1,
			}, nil
		}
		off = next
	}
	if len(data)-start > maxFrontmatterBytes {
		return nil, &ManifestError{File: file, Line: 1,
			Msg: fmt.Sprintf("frontmatter is longer than %d bytes (no closing --- line within the limit); keep the YAML header small and put detail in the body",
				maxFrontmatterBytes)}
	}
	return nil, errUnterminated(file)
}

func errUnterminated(file string) error {
	return &ManifestError{File: file, Line: 1,
		Msg: "frontmatter opens with --- on line 1 but has no closing --- line; add a line holding only --- after the last field"}
}

// isDelimiter reports whether line is "---" followed only by spaces, tabs or
// a carriage return.
func isDelimiter(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	return ok && len(bytes.TrimRight(rest, " \t\r")) == 0
}
