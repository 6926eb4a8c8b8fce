package benchfmt

import (
	"path/filepath"
	"testing"
)

// BenchmarkParse measures parsing one launch's output, text and JSON, with
// per-iteration columns (25 sizes, 2 ranks).
func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"ar2_full_periter.txt", "ar2_full_periter.json", "ar2_debug_tuning.txt"} {
		data := readTestdata(b, filepath.Join("fixtures", name))
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Parse(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
