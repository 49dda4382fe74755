package packs

import (
	"testing"
)

func TestDecodeSmoke(t *testing.T) {
	doc, err := decodeYAML("pack.yaml", []byte("name: PDF\nmodules:\n  - name: m\n    path: m.wasm\n    nmae: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range checkSchema("pack", "pack.yaml", doc) {
		t.Log(e)
	}
}
