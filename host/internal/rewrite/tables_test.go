package rewrite

import "testing"

// Info.WritesOutsideMemory is set exactly for code that can change a table
// or a passive segment.
func TestWritesOutsideMemory(t *testing.T) {
	// (module (table 1 funcref) (func (export "f") BODY)) with BODY given
	// as raw instruction bytes (before the final end).
	module := func(body ...byte) []byte {
		code := append([]byte{0x00}, body...) // no locals
		code = append(code, 0x0b)
		b := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
			1, 4, 1, 0x60, 0, 0, // type () -> ()
			3, 2, 1, 0, // one function of type 0
			4, 4, 1, 0x70, 0, 1, // table: funcref, min 1
			7, 5, 1, 1, 'f', 0, 0, // export "f" func 0
			10, byte(len(code) + 2), 1, byte(len(code))}
		return append(b, code...)
	}
	tests := []struct {
		name string
		body []byte
		want bool
	}{
		{"nothing", nil, false},
		{"table.get", []byte{0x41, 0, 0x25, 0, 0x1a}, false},
		{"table.size", []byte{0xfc, 16, 0, 0x1a}, false},
		{"table.set", []byte{0x41, 0, 0xd0, 0x70, 0x26, 0}, true},
		{"table.grow", []byte{0xd0, 0x70, 0x41, 1, 0xfc, 15, 0, 0x1a}, true},
		{"table.fill", []byte{0x41, 0, 0xd0, 0x70, 0x41, 0, 0xfc, 17, 0}, true},
		{"memory.fill is not a table", []byte{0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 11, 0}, false},
		{"data.drop", []byte{0xfc, 9, 0}, true},
		{"elem.drop", []byte{0xfc, 13, 0}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, info, err := Instrument(module(tt.body...), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if info.WritesOutsideMemory != tt.want {
				t.Errorf("WritesOutsideMemory = %v, want %v", info.WritesOutsideMemory, tt.want)
			}
		})
	}
}
