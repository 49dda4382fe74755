package rewrite

import "testing"

// BenchmarkInstrument instruments Go guests of 2.5 and 3.6 MB; MB/s is of
// input.
func BenchmarkInstrument(b *testing.B) {
	for _, name := range []string{"gobench", "gohostile"} {
		wasm := goGuest(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(wasm)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := Instrument(wasm, Options{ExportGlobals: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
