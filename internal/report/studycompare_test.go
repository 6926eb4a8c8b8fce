package report

import (
	"cmp"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
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
	if want := len(stored.MeasuredSizes(ls)); len(c.Rows) != want {
		t.Errorf("%d rows, want one per measured size (%d)", len(c.Rows), want)
	}
	for _, r := range c.Rows {
		if r.Significant || r.Speedup != 1 || r.BaselineUS != r.CandidateUS {
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

// opsStudy is a finished simulated search of one part per op (each
// 512K-4M, an 8M guard; a workload for several ops, a one-op study for
// one) whose recommended config runs each op at factor[op] (1 where
// unset) times NCCL defaults' time, over 6 confirmation launches of each
// op per arm.
func opsStudy(name string, seed uint64, factor map[nccl.Op]float64, ops ...nccl.Op) *Study {
	st := searchStudy(name)
	st.Collective = string(ops[0])
	if len(ops) > 1 {
		for _, op := range ops {
			st.Workload = append(st.Workload, store.Part{Op: op, Band: "512K-4M", BandMin: 512 * nccl.KiB, BandMax: 4 * nccl.MiB, Weight: 1 / float64(len(ops))})
		}
	}
	b := newBuilder(st, seed)
	all := append(slices.Clone(bandSizes), guardSizes...)
	base := b.trial(vocab.RoleBaseline, vocab.TrialComplete, "", nccl.Config{})
	fix := b.trial(vocab.RoleExplore, vocab.TrialComplete, "", nccl.Config{"NCCL_MAX_NCHANNELS": "8"})
	for range 6 {
		for _, op := range ops {
			f := cmp.Or(factor[op], 1)
			scaled := map[int64]float64{}
			for k, v := range defaultsUS {
				scaled[k] = v * f
			}
			b.launch(base, vocab.PhaseConfirm, true, defaultsUS, all, 0.02, 0.02, 1).Op = op
			b.launch(fix, vocab.PhaseConfirm, true, scaled, all, 0.02, 0.02, 1).Op = op
		}
	}
	b.s.Study.Recommendation = &store.Recommendation{Env: map[string]string(fix.Config.Clone()), TrialID: fix.ID, Significant: true}
	return b.s
}

// CompareStudies compares every op both studies measured, each over that
// op's own launches and sizes exactly as a comparison of that op's views
// (OpStudy) of the two, the first op's also as the top-level fields; an
// op only one study measured is named in a warning, with the study; a
// workload and a study sharing no op cannot be compared, and the error
// names each side's ops and the fresh form.
func TestCompareStudiesOpByOp(t *testing.T) {
	ar, a2a, ag, bc := nccl.AllReduce, nccl.AllToAll, nccl.AllGather, nccl.Broadcast
	for _, tc := range []struct {
		name string
		a, b *Study
		// ops compared, in order; warnings wanted (and not wanted); the
		// error wanted, if any.
		ops        []nccl.Op
		opB        nccl.Op   // B's op where it is not A's
		faster     []nccl.Op // the ops where B is significantly faster
		warn, not  []string
		errorWants []string
	}{
		{name: "workload vs workload",
			a:      opsStudy("s1-w", 1, nil, ar, a2a, bc),
			b:      opsStudy("s2-w", 2, map[nccl.Op]float64{a2a: 0.7}, a2a, ar, ag),
			ops:    []nccl.Op{ar, a2a},
			faster: []nccl.Op{a2a},
			warn: []string{"s1-w measured broadcast, which s2-w did not (it measured alltoall, all_reduce, all_gather): not compared; compare --part",
				"s2-w measured all_gather, which s1-w did not (it measured all_reduce, alltoall, broadcast): not compared"},
			not: []string{"first op", "different collectives"}},
		{name: "workload vs one op",
			a:      opsStudy("s1-w", 1, nil, ar, a2a),
			b:      opsStudy("s2-one", 2, map[nccl.Op]float64{a2a: 0.7}, a2a),
			ops:    []nccl.Op{a2a},
			faster: []nccl.Op{a2a},
			warn:   []string{"s1-w measured all_reduce, which s2-one did not (it measured alltoall): not compared"},
			not:    []string{"first op", "different collectives", "s2-one measured"}},
		{name: "one op vs workload",
			a:    opsStudy("s1-one", 1, nil, a2a),
			b:    opsStudy("s2-w", 2, nil, ar, a2a),
			ops:  []nccl.Op{a2a},
			warn: []string{"s2-w measured all_reduce, which s1-one did not (it measured alltoall): not compared"},
			not:  []string{"first op", "different collectives"}},
		{name: "no op in common",
			a: opsStudy("s1-w", 1, nil, ar, a2a),
			b: opsStudy("s2-one", 2, nil, ag),
			errorWants: []string{"studies s1-w (all_reduce, alltoall) and s2-one (all_gather) measured no op in common",
				"compare --part OP:BAND … --env-a K=V … --env-b K=V … measures two configs fresh"}},
		{name: "two one-op studies of different ops",
			a:    opsStudy("s1-one", 1, nil, ar),
			b:    opsStudy("s2-one", 2, nil, ag),
			ops:  []nccl.Op{ar},
			opB:  ag,
			warn: []string{"s1-one measured all_reduce and s2-one all_gather: different collectives"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := CompareStudies(tc.a, tc.b)
			if tc.errorWants != nil {
				if err == nil {
					t.Fatalf("compared %d ops, want an error", len(c.Ops))
				}
				for _, want := range tc.errorWants {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []nccl.Op
			for _, o := range c.Ops {
				got = append(got, o.Op)
			}
			if !slices.Equal(got, tc.ops) {
				t.Fatalf("compared ops %v, want %v", got, tc.ops)
			}
			if c.OpB != tc.opB {
				t.Errorf("B's op %q, want %q (named only where it is not A's)", c.OpB, tc.opB)
			}
			if !reflect.DeepEqual(c.OpComparison, c.Ops[0]) {
				t.Errorf("the top-level fields are not the first op's")
			}
			for _, o := range c.Ops {
				// The same comparison as of the op's one-op views.
				va, vb := tc.a, tc.b
				if va.WorkloadOps() != nil {
					va = va.OpStudy(o.Op)
				}
				if vb.WorkloadOps() != nil {
					vb = vb.OpStudy(o.Op)
				}
				one, err := CompareStudies(va, vb)
				if err != nil {
					t.Fatalf("%s's views: %v", o.Op, err)
				}
				if !reflect.DeepEqual(one.Rows, o.Rows) || !reflect.DeepEqual(one.Band, o.Band) || one.Arms[0].Launches != o.Arms[0].Launches {
					t.Errorf("%s: not the comparison of its views", o.Op)
				}
				if o.Arms[0].Launches != 6 || o.Arms[1].Launches != 6 || len(o.Rows) != len(bandSizes)+len(guardSizes) {
					t.Errorf("%s: %d + %d launches, %d rows; want the op's 6 + 6 and every size", o.Op, o.Arms[0].Launches, o.Arms[1].Launches, len(o.Rows))
				}
				if faster := slices.Contains(tc.faster, o.Op); faster != (o.Band.Significant && o.Band.Speedup > 1.3) {
					t.Errorf("%s: speedup %.3f significant %v, want faster %v", o.Op, o.Band.Speedup, o.Band.Significant, faster)
				}
			}
			for i, s := range []*Study{tc.a, tc.b} {
				if want := s.WorkloadOps() != nil; (c.Arms[i].Workload != "") != want || (want && c.Arms[i].Workload != s.Study.Parts().String()) {
					t.Errorf("arm %d's workload %q", i, c.Arms[i].Workload)
				}
			}
			text := strings.Join(c.Warnings, "\n")
			for _, want := range tc.warn {
				if !strings.Contains(text, want) {
					t.Errorf("warnings lack %q:\n%s", want, text)
				}
			}
			for _, bad := range tc.not {
				if strings.Contains(text, bad) {
					t.Errorf("warnings say %q:\n%s", bad, text)
				}
			}
		})
	}
}
