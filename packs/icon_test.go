package packs_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillhost/skillhost/packs"
)

func TestIconForm(t *testing.T) {
	for _, c := range []struct {
		icon string
		kind packs.IconKind
		mime string
	}{
		{"\U0001F50D", packs.IconEmoji, ""},
		{"\U0001F468\u200D\U0001F4BB", packs.IconEmoji, ""},
		{"\u2699\ufe0f", packs.IconEmoji, ""},
		{"search", packs.IconName, ""},
		{"", packs.IconName, ""},
		{"🔍 search", packs.IconName, ""},
		{"icons/tool.png", packs.IconFile, "image/png"},
		{"icons/tool.JPG", packs.IconFile, "image/jpeg"},
		{"tool.webp", packs.IconFile, "image/webp"},
		{"../tool.png", packs.IconName, ""},
		{"/abs/tool.png", packs.IconName, ""},
		{"icons/tool.svg", packs.IconName, ""},
		{"https://example.com/a/icon.png", packs.IconURL, "image/png"},
		{"https://example.com/icon", packs.IconURL, ""},
		{"http://example.com/icon.png", packs.IconName, ""},
	} {
		kind, mime := packs.IconForm(c.icon)
		if kind != c.kind || mime != c.mime {
			t.Errorf("IconForm(%q) = %v %q, want %v %q", c.icon, kind, mime, c.kind, c.mime)
		}
	}
	uri := packs.EmojiIconURI("\U0001F50D")
	svg, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(uri, "data:image/svg+xml;base64,"))
	if err != nil || !strings.Contains(string(svg), "\U0001F50D</text></svg>") {
		t.Errorf("EmojiIconURI = %s (%s, %v)", uri, svg, err)
	}
}

func TestReadIcon(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n" + "rest"
	fsys := fstest.MapFS{
		"icons/ok.png":    {Data: []byte(png)},
		"icons/fake.png":  {Data: []byte("<svg onload=alert(1)>")},
		"icons/big.jpg":   {Data: append([]byte{0xff, 0xd8, 0xff}, make([]byte, packs.MaxIconBytes)...)},
		"icons/ok.webp":   {Data: []byte("RIFF\x00\x00\x00\x00WEBPVP8 ")},
		"icons/gone.webp": nil,
	}
	delete(fsys, "icons/gone.webp")
	uri, err := packs.ReadIcon(fsys, "icons/ok.png")
	if err != nil || uri != "data:image/png;base64,"+base64.StdEncoding.EncodeToString([]byte(png)) {
		t.Errorf("ReadIcon(ok.png) = %q, %v", uri, err)
	}
	if _, err := packs.ReadIcon(fsys, "icons/ok.webp"); err != nil {
		t.Errorf("ReadIcon(ok.webp): %v", err)
	}
	for _, bad := range []string{"icons/fake.png", "icons/big.jpg", "icons/gone.webp", "search", "https://example.com/i.png"} {
		if _, err := packs.ReadIcon(fsys, bad); !errors.Is(err, packs.ErrIcon) {
			t.Errorf("ReadIcon(%q): %v, want ErrIcon", bad, err)
		}
	}
}

// A manifest icon that looks like an image file or a URL but cannot be
// served is a manifest error on its line.
func TestManifestIcon(t *testing.T) {
	base := "name: p\nmodules:\n  - name: m\n    path: m.wasm\n    tools:\n      - name: t\n        description: d\n        icon: "
	for icon, ok := range map[string]bool{
		`"🔍"`: true, "search": true, "icons/t.png": true, "https://example.com/t.png": true,
		"icons/t.svg": false, "../t.png": false, "http://example.com/t.png": false,
	} {
		_, err := packs.Parse([]byte(base+icon+"\n"), "pack.yaml")
		if ok != (err == nil) {
			t.Errorf("icon %s: %v, want ok %v", icon, err, ok)
		}
		var me *packs.ManifestError
		if err != nil && (!errors.As(err, &me) || me.Line != 8 || !strings.Contains(me.Field, "icon")) {
			t.Errorf("icon %s: %v; want a manifest error at line 8 naming the icon", icon, err)
		}
	}
}
