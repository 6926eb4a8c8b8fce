package benchfmt

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
)

// TestRealOpCaptures reads every real capture of testdata/ops (every
// *_perf of one nccl-tests build on the 4-rank loopback; see its README):
// each names its op, its busbw is nccl-tests' factor for that op, the
// sizes read back as the powers of two asked for (all-gather,
// reduce-scatter and alltoall print them rounded), and the debug logs
// carry NCCL's choices for every op NCCL tunes, under its own name.
func TestRealOpCaptures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "ops", "*_4r*"))
	if len(files) < 3*len(nccl.Ops) {
		t.Fatalf("%d captures, want text, JSON and debug for each of %d ops", len(files), len(nccl.Ops))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := nccl.ParseOp(strings.Split(filepath.Base(path), "_4r")[0])
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var r *Result
			if strings.HasSuffix(path, ".json") {
				r, err = ParseJSON(data)
			} else {
				r, err = Parse(data)
			}
			if err != nil || r.Op() != want || r.NRanks != 4 || len(r.Rows) == 0 {
				t.Fatalf("op %q, %d ranks, %d rows, %v; want %s on 4 ranks", r.Op(), r.NRanks, len(r.Rows), err, want)
			}
			for _, row := range r.Rows {
				if row.Out.AlgBW < 0.5 {
					continue // two decimals leave too few digits for a ratio
				}
				if f := row.Out.BusBW / row.Out.AlgBW; math.Abs(f-want.BusFactor(4)) > 0.02 {
					t.Errorf("%d bytes: busbw/algbw %.3f, want %s's %.3f", row.Bytes, f, want, want.BusFactor(4))
				}
			}
			for _, z := range SizesOf(r) {
				if n := z.Nominal(); n&(n-1) != 0 {
					t.Errorf("size %d reads as %d, not the power of two asked for", z.Bytes, n)
				}
			}
			if !strings.Contains(path, "_debug") {
				return
			}
			fn := want.Function()
			choices := 0
			for _, c := range r.Facts.Choices {
				if c.Collective != fn {
					t.Errorf("a choice of %s in %s's log", c.Collective, want)
				}
				choices++
			}
			if _, tuned := want.PerFunction(); tuned != (choices > 0) {
				t.Errorf("%d choices logged; NCCL tunes %s: %v", choices, want, tuned)
			}
		})
	}
}
