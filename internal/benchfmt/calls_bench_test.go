package benchfmt

import (
	"bytes"
	"testing"
)

// BenchmarkParseCalls reads 8 MiB of COLL and TUNING lines (input.MaxBytes
// is 64 MiB: multiply by 8 for the worst case).
func BenchmarkParseCalls(b *testing.B) {
	one := readTestdata(b, "calls/nccl.gpu0.1001")
	data := bytes.Repeat(one, (8<<20)/len(one))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseCalls(data); err != nil {
			b.Fatal(err)
		}
	}
}
