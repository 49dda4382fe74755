package packs

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// IconKind says what a tool's icon is (IconForm).
type IconKind int

// Kinds of icons.
const (
	// IconName is an icon a client cannot be given: a name ("search"),
	// or no icon at all. Listings show it as written.
	IconName IconKind = iota
	// IconEmoji is one emoji (a few code points at most), which MCP
	// renderings draw as an SVG image (EmojiIconURI).
	IconEmoji
	// IconURL is an https URL of an image, given to clients as it is.
	IconURL
	// IconFile is a PNG, JPEG or WebP file of the pack, by its path in the
	// pack; the registry reads it into a data: URI (ReadIcon).
	IconFile
)

// MaxIconBytes caps an icon file of a pack: an MCP client is sent it in
// every tools/list, inline.
const MaxIconBytes = 64 << 10

// iconTypes are the image types of icon files and URLs, by extension. SVG
// files are not among them: a pack's SVG may carry script, and skillhost
// would be serving it to every client as its own.
var iconTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}

// ErrIcon is returned by ReadIcon for an icon file that cannot be
// served: missing, too large, or not the image its name says.
var ErrIcon = errors.New("packs: icon cannot be served")

// IconForm classifies a tool's icon and gives the MIME type of an image
// URL or file ("" when its extension says none). An https URL is an
// IconURL; a relative path ending in .png, .jpg, .jpeg or .webp an
// IconFile; one emoji an IconEmoji; anything else an IconName.
func IconForm(icon string) (IconKind, string) {
	icon = strings.TrimSpace(icon)
	ext := strings.ToLower(path.Ext(icon))
	if u, err := url.Parse(icon); err == nil && u.Scheme == "https" && u.Host != "" {
		return IconURL, iconTypes[strings.ToLower(path.Ext(u.Path))]
	}
	if mime, ok := iconTypes[ext]; ok && fs.ValidPath(icon) {
		return IconFile, mime
	}
	if isEmoji(icon) {
		return IconEmoji, ""
	}
	return IconName, ""
}

// checkIcon says what is wrong with an icon that looks like an image file
// or a URL but cannot be one, for a manifest message; "" when nothing is.
func checkIcon(icon string) string {
	icon = strings.TrimSpace(icon)
	if kind, _ := IconForm(icon); kind != IconName {
		return ""
	}
	ext := strings.ToLower(path.Ext(icon))
	if u, err := url.Parse(icon); err == nil && u.Scheme != "" && u.Host != "" {
		return fmt.Sprintf("%q is a URL; an icon URL must be https", icon)
	}
	if ext == ".svg" {
		return fmt.Sprintf("%q is an SVG file; an icon file must be PNG, JPEG or WebP (an SVG can carry script)", icon)
	}
	if _, ok := iconTypes[ext]; ok {
		return fmt.Sprintf("%q must be a relative path inside the pack (no .., no leading /)", icon)
	}
	return ""
}

// isEmoji reports whether s is one emoji: at most 16 code points, none
// of them ASCII, each a symbol, a modifier, a variation selector, a
// joiner or a keycap, and at least one a symbol.
func isEmoji(s string) bool {
	if s == "" || utf8.RuneCountInString(s) > 16 {
		return false
	}
	symbol := false
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			return false
		case unicode.Is(unicode.So, r):
			symbol = true
		case unicode.Is(unicode.Sk, r), unicode.Is(unicode.Mn, r), unicode.Is(unicode.Me, r), r == '\u200d':
		default:
			return false
		}
	}
	return symbol
}

// EmojiIconURI draws an emoji as a square SVG image, as a data: URI: the
// form of an IconEmoji icon MCP clients are given.
func EmojiIconURI(emoji string) string {
	svg := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><text x="50" y="50" font-size="80" ` +
		`text-anchor="middle" dominant-baseline="central">` + html.EscapeString(strings.TrimSpace(emoji)) + `</text></svg>`
	return "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg))
}

// magic are the first bytes of each icon type's files.
var magic = map[string]func([]byte) bool{
	"image/png":  func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) },
	"image/jpeg": func(b []byte) bool { return bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}) },
	"image/webp": func(b []byte) bool {
		return len(b) >= 12 && bytes.HasPrefix(b, []byte("RIFF")) && string(b[8:12]) == "WEBP"
	},
}

// ReadIcon reads an IconFile icon from a pack's files and returns it as a
// data: URI. A file that is missing, over MaxIconBytes, or whose bytes
// are not the image its extension names is an error matching ErrIcon.
func ReadIcon(fsys fs.FS, icon string) (string, error) {
	icon = strings.TrimSpace(icon)
	kind, mime := IconForm(icon)
	if kind != IconFile {
		return "", fmt.Errorf("%w: %q is not an image file of the pack", ErrIcon, icon)
	}
	f, err := fsys.Open(icon)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrIcon, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxIconBytes+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: %s: %v", ErrIcon, icon, err)
	case len(data) > MaxIconBytes:
		return "", fmt.Errorf("%w: %s is over %d bytes", ErrIcon, icon, MaxIconBytes)
	case !magic[mime](data):
		return "", fmt.Errorf("%w: %s is not a %s image", ErrIcon, icon, mime)
	}
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data), nil
}
