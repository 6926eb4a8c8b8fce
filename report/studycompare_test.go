package report

import (
	"math"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/store"
)

// A study compared with itself measured the same launches: every size is
// common, nothing differs, and the band's speedup is 1.
func TestCompareStudiesWithItself(t *testing.T) {
	s := sweepStudy()
	c, err := CompareStudies(s, s)
	if err != nil {
		t.Fatal(err)
	}
	_, ls := s.ResultLaunches()
	if want := len(measuredSizes(ls)); len(c.Rows) != want {
		t.Errorf("%d rows, want one per measured size (%d)", len(c.Rows), want)
	}
	for _, r := range c.Rows {
		if r.Significant || r.Change != 0 || r.AUS != r.BUS {
			t.Errorf("size %d: %+v, want the same times and no difference", r.Bytes, r)
		}
	}
	if math.Abs(c.Band.Speedup-1) > 1e-9 || c.Band.Significant {
		t.Errorf("band speedup %v significant %v, want 1 and not significant", c.Band.Speedup, c.Band.Significant)
	}
	if c.Arms[0].Study != s.Name() || c.Arms[0].ScoreUS == nil {
		t.Errorf("arm A %+v, want the study's name and its score", c.Arms[0])
	}
}

// TestCompareStudiesSaysWhatDiffers: two studies of other ranks, nodes,
// ops or simulated profiles are compared, with a warning for each thing
// that differs besides the config; a study and itself get none.
func TestCompareStudiesSaysWhatDiffers(t *testing.T) {
	a := sweepStudy()
	if c, _ := CompareStudies(a, a); len(c.Warnings) != 0 {
		t.Errorf("a study and itself: %q", c.Warnings)
	}
	withStudy := func(s *Study, edit func(*store.Study)) *Study {
		st := *s.Study
		edit(&st)
		out := *s
		out.Study = &st
		return &out
	}
	a = withStudy(a, func(st *store.Study) {
		st.Platform.Ranks, st.Platform.Nodes, st.Simulated, st.Launch.SimProfile = 4, 4, true, "spark4"
	})
	b := withStudy(a, func(st *store.Study) {
		st.Name, st.Collective = "s9-other", "all_gather"
		st.Platform.Ranks, st.Platform.Nodes, st.Launch.SimProfile = 2, 2, "spark2"
	})
	c, err := CompareStudies(a, b)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(c.Warnings, "\n")
	for _, want := range []string{"measured all_reduce and s9-other all_gather", "different platforms", "ranks ", "nodes "} {
		if !strings.Contains(text, want) {
			t.Errorf("warnings lack %q:\n%s", want, text)
		}
	}
	if !strings.Contains(text, "different simulated fabrics: "+a.Name()+" on spark4, s9-other on spark2") || !strings.Contains(text, "ranks 4 vs 2, nodes 4 vs 2") {
		t.Errorf("warnings lack the simulated profiles or the platforms:\n%s", text)
	}
}

// Two stored studies compare their first op's launches: a study of
// several parts is said to be compared over that op only, with the
// fresh form that measures every part.
func TestCompareStudiesSaysWorkloadIsFirstOpOnly(t *testing.T) {
	a := sweepStudy()
	st := *a.Study
	st.Name = "s5-512K-8M"
	st.Workload = []store.Part{{Op: nccl.AllReduce, Band: "512K-4M", BandMin: 512 << 10, BandMax: 4 << 20, Weight: 0.8},
		{Op: nccl.AllToAll, Band: "512K-8M", BandMin: 512 << 10, BandMax: 8 << 20, Weight: 0.2}}
	b := *a
	b.Study = &st
	c, err := CompareStudies(a, &b)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(c.Warnings, "\n")
	if !strings.Contains(text, "s5-512K-8M is a workload of several parts (all_reduce:512K-4M:0.8 alltoall:512K-8M:0.2): compared over its first op's launches (all_reduce) only; compare --part") {
		t.Errorf("warnings:\n%s", text)
	}
}
