package host

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// minimal module: imports env.f (func type 0) and declares memory min 2.
var scanSample = []byte{
	0, 'a', 's', 'm', 1, 0, 0, 0,
	1, 4, 1, 0x60, 0, 0, // type section: () -> ()
	2, 9, 1, 3, 'e', 'n', 'v', 1, 'f', 0, 0, // import env.f func 0
	5, 3, 1, 0, 2, // memory min 2
}

func TestScanModule(t *testing.T) {
	info, err := scanModule(scanSample)
	if err != nil {
		t.Fatal(err)
	}
	want := moduleInfo{imports: []wasmImport{{module: "env", name: "f", kind: 0}}, memMinPages: 2, hasMemory: true}
	if d := cmp.Diff(want, info, cmp.AllowUnexported(moduleInfo{}, wasmImport{})); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

func TestScanModuleMalformed(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":       nil,
		"magic":       []byte("\x00asn\x01\x00\x00\x00"),
		"component":   []byte("\x00asm\x0d\x00\x01\x00"),
		"section":     append([]byte("\x00asm\x01\x00\x00\x00"), 2, 100, 1),
		"leb":         append([]byte("\x00asm\x01\x00\x00\x00"), 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
		"name length": append([]byte("\x00asm\x01\x00\x00\x00"), 2, 3, 1, 50, 'x'),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := scanModule(b); !errors.Is(err, errMalformed) {
				t.Errorf("err = %v, want errMalformed", err)
			}
		})
	}
}

func FuzzScanModule(f *testing.F) {
	f.Add(scanSample)
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = scanModule(b) // must not panic or loop
	})
}
