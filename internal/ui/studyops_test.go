package ui

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/golden"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/store"
)

// TestGuardTableSaysTheStudysAlpha: the guard table names the alpha the
// study decided at (its stored settings), not a level recovered from the
// Holm levels, which is alpha/m when the first test was not rejected.
func TestGuardTableSaysTheStudysAlpha(t *testing.T) {
	study := &store.Study{Search: &store.SearchSettings{MinEffect: 0.03, Alpha: 0.01},
		Recommendation: &store.Recommendation{OpGuards: []store.OpGuard{{Op: nccl.Broadcast, Speedup: 1, SpeedupCI: [2]store.JSONFloat{0.9, 1.1}, CILevel: 0.95,
			BaselineLaunches: 8, CandidateLaunches: 8, Sizes: []int64{nccl.MiB},
			PerSize: []store.GuardSize{{Bytes: nccl.MiB, Speedup: 0.99, PValue: 0.4, Level: 0.0025}}}}}}
	var b bytes.Buffer
	writeGuardTable(&b, study)
	if !strings.Contains(b.String(), "alpha 0.01)") {
		t.Errorf("the guard table does not say the study's alpha 0.01:\n%s", b.String())
	}
}

// TestGuardTableSizesOfEveryOp: guards judged at different sizes (verify
// --tuner-plugin of a workload judges each op at its own calls and the
// sizes just outside them) each show every size they were judged at,
// under the union of the ops' sizes: taking one op's sizes as the
// columns dropped all_gather's 512K.
func TestGuardTableSizesOfEveryOp(t *testing.T) {
	const K, M = 1 << 10, nccl.MiB
	guard := func(op nccl.Op, speedups map[int64]float64, sizes ...int64) store.OpGuard {
		g := store.OpGuard{Op: op, Speedup: 1, SpeedupCI: [2]store.JSONFloat{0.9, 1.1}, CILevel: 0.95, BaselineLaunches: 6, CandidateLaunches: 6, Sizes: sizes}
		for _, b := range sizes {
			g.PerSize = append(g.PerSize, store.GuardSize{Bytes: b, Speedup: store.JSONFloat(speedups[b]), PValue: 0.5, Level: 0.05})
		}
		return g
	}
	study := &store.Study{Search: &store.SearchSettings{MinEffect: 0.03, Alpha: 0.05},
		Recommendation: &store.Recommendation{OpGuards: []store.OpGuard{
			guard(nccl.AllReduce, map[int64]float64{M: 1.1, 2 * M: 1.2, 8 * M: 1.3, 16 * M: 1.4}, M, 2*M, 8*M, 16*M),
			guard(nccl.AllGather, map[int64]float64{512 * K: 2, M: 4, 2 * M: 5}, 512*K, M, 2*M)}}}
	var b bytes.Buffer
	writeGuardTable(&b, study)
	golden.Check(t, filepath.Join("testdata", "guard_table_sizes.golden"), b.Bytes())
}

// TestGuardTableUnmeasured: a guarded op no launch measured (its change
// and a size's undefined, NaN, as the store keeps them) prints "—", never
// +0.0%, and the heading's launch counts are those of an op that has
// launches: the first op's 0 vs 0 headed a real verify's table.
func TestGuardTableUnmeasured(t *testing.T) {
	nan := store.JSONFloat(math.NaN())
	study := &store.Study{Search: &store.SearchSettings{MinEffect: 0.05, Alpha: 0.05},
		Recommendation: &store.Recommendation{OpGuards: []store.OpGuard{
			{Op: nccl.AllReduce, Speedup: nan, SpeedupCI: [2]store.JSONFloat{nan, nan}, CILevel: 0.95, WorstSpeedup: nan, Sizes: []int64{4, 8},
				PerSize: []store.GuardSize{{Bytes: 4, Speedup: nan, PValue: 1}, {Bytes: 8, Speedup: 1.1, PValue: 0.5, Level: 0.05}}},
			{Op: nccl.AllGather, Speedup: 1, SpeedupCI: [2]store.JSONFloat{0.9, 1.1}, CILevel: 0.95, BaselineLaunches: 4, CandidateLaunches: 4, Sizes: []int64{64},
				PerSize: []store.GuardSize{{Bytes: 64, Speedup: 1, PValue: 0.5, Level: 0.05}}}}}}
	var b bytes.Buffer
	writeGuardTable(&b, study)
	golden.Check(t, filepath.Join("testdata", "guard_table_unmeasured.golden"), b.Bytes())
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[1], "4 vs 4 launches") {
		t.Errorf("heading %q: want the launches of the op that has them, 4 vs 4", lines[1])
	}
	if f := strings.Fields(lines[3]); len(f) < 4 || f[0] != "all_reduce" || f[1] != "—" || f[2] != "—" || f[3] != "-9.1%" {
		t.Errorf("all_reduce row %q: want — for its change and at 4, -9.1%% at 8", lines[3])
	}
}
