package report

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/golden"
	"github.com/nccltune/nccltune/internal/launchstats"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/store"
)

// checkGolden compares got with testdata/name; -update rewrites it.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// The sizes of the fixture studies: a 512K-4M band with an 8M guard.
var (
	bandSizes  = []int64{512 * nccl.KiB, nccl.MiB, 2 * nccl.MiB, 4 * nccl.MiB}
	guardSizes = []int64{8 * nccl.MiB}
	// spark4-like true times (µs): NCCL's defaults have the 512K-4M hole,
	// PROTO=^LL128 MAX_NCHANNELS=8 fixes it.
	defaultsUS = map[int64]float64{512 * nccl.KiB: 540, nccl.MiB: 1150, 2 * nccl.MiB: 740, 4 * nccl.MiB: 760, 8 * nccl.MiB: 815}
	fixedUS    = map[int64]float64{512 * nccl.KiB: 141, nccl.MiB: 125, 2 * nccl.MiB: 169, 4 * nccl.MiB: 295, 8 * nccl.MiB: 572}
	channelsUS = map[int64]float64{512 * nccl.KiB: 300, nccl.MiB: 420, 2 * nccl.MiB: 500, 4 * nccl.MiB: 610, 8 * nccl.MiB: 790}
)

// builder makes a study in memory, as the store would hand it back, with
// seeded noise: every run of the tests sees the same numbers.
type builder struct {
	s      *Study
	rng    *rand.Rand
	nextID uint64
	seq    int
	start  time.Time
}

func newBuilder(st *store.Study, seed uint64) *builder {
	st.ID = 1
	st.Created = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st.Updated = st.Created.Add(10 * time.Minute)
	return &builder{s: &Study{Study: st, LaunchStats: launchstats.Figures{}}, rng: rand.New(rand.NewPCG(seed, 7)), nextID: 1, start: st.Created}
}

func (b *builder) trial(role string, state vocab.TrialState, reason string, cfg nccl.Config) *store.Trial {
	t := &store.Trial{ID: b.nextID, StudyID: 1, Number: len(b.s.Trials), Config: cfg, Key: cfg.Key(), Role: role, State: state, Reason: reason}
	b.nextID++
	b.s.Trials = append(b.s.Trials, t)
	b.s.Study.Trials = len(b.s.Trials)
	return t
}

// launch adds a launch of trial t measuring the sizes with the true times
// given, a per-launch offset (lognormal, sigma launchSD) and per-iteration
// jitter (iterSD), 5 iterations per size; factor multiplies every time
// (an outlier launch).
func (b *builder) launch(t *store.Trial, phase string, scored bool, truth map[int64]float64, sizes []int64, launchSD, iterSD, factor float64) *store.Launch {
	offset := math.Exp(launchSD*b.rng.NormFloat64()) * factor
	l := &store.Launch{ID: uint64(b.seq + 1), StudyID: 1, TrialID: t.ID, Seq: b.seq, Phase: phase, Outcome: benchfmt.OK,
		Scored: scored, Simulated: b.s.Study.Simulated, Start: b.start.Add(time.Duration(b.seq) * time.Second)}
	b.seq++
	ranks := b.s.Study.Platform.Ranks
	for _, size := range sizes {
		var samples []float64
		for range 5 {
			samples = append(samples, math.Round(truth[size]*offset*math.Exp(iterSD*b.rng.NormFloat64())*100)/100)
		}
		med := samples[2] // not the median: nccl-tests prints the mean; any plausible value does here
		alg := float64(size) / med / 1e3
		z := benchfmt.Size{Bytes: size, TimeUS: med, AlgBW: math.Round(alg*100) / 100, Samples: samples}
		if ranks > 1 {
			z.BusBW = math.Round(alg*2*float64(ranks-1)/float64(ranks)*100) / 100
		}
		l.Sizes = append(l.Sizes, z)
	}
	if scored {
		// What a study stores: the launch's band score as measured, none
		// when the study scores no band.
		if sc, err := model.LaunchScore(model.LaunchOf(l.Sizes), b.s.Study.Sizes); err == nil {
			l.ScoreUS = sc
		}
	}
	t.Launches++
	b.s.Launches = append(b.s.Launches, l)
	b.s.Study.Launches = len(b.s.Launches)
	return l
}

func (b *builder) failed(t *store.Trial, reason string) {
	b.s.Launches = append(b.s.Launches, &store.Launch{ID: uint64(b.seq + 1), StudyID: 1, TrialID: t.ID, Seq: b.seq, Phase: vocab.PhaseExplore,
		Outcome: benchfmt.Failed, Reason: reason, ExitCode: 1, Simulated: b.s.Study.Simulated})
	b.seq++
	t.Launches++
	b.s.Study.Launches = len(b.s.Launches)
}

func (b *builder) explain(t *store.Trial, choices []benchfmt.Choice) {
	b.s.Launches = append(b.s.Launches, &store.Launch{ID: uint64(b.seq + 1), StudyID: 1, TrialID: t.ID, Seq: b.seq, Phase: vocab.PhaseExplain,
		Outcome: benchfmt.OK, Simulated: b.s.Study.Simulated, Facts: &benchfmt.Facts{Choices: choices}})
	b.seq++
	t.Launches++
	b.s.Study.Launches = len(b.s.Launches)
}

func searchStudy(name string) *store.Study {
	gdr := false
	return &store.Study{Name: name, Kind: vocab.KindSearch, Band: "512K-4M", BandMin: 512 * nccl.KiB, BandMax: 4 * nccl.MiB,
		Sizes: bandSizes, GuardSizes: guardSizes, Collective: "all_reduce",
		Space:  map[string][]string{"NCCL_PROTO": {"", "LL", "^LL128"}, "NCCL_MAX_NCHANNELS": {"", "2", "8"}},
		Launch: store.LaunchSettings{Launcher: "sim", NP: 4, Timeout: 5 * time.Minute, SimProfile: "spark4", SimNoise: 1, SimSeed: 1},
		Platform: store.Platform{NCCLVersion: "2.28.3", Ranks: 4, Nodes: 4, GPU: "NVIDIA GB10 (simulated)", Transport: "IB", GDR: &gdr,
			Hosts: []string{"sim-spark4-0", "sim-spark4-1", "sim-spark4-2", "sim-spark4-3"}},
		Simulated: true, Seed: 1, Budget: store.Budget{Launches: 60}, Status: vocab.StatusDone}
}

// recommendStudy is a finished simulated search that recommends
// PROTO=^LL128 MAX_NCHANNELS=8 after 6 vs 6 interleaved confirmation
// launches, with a failed trial, a one-launch trial and explain launches.
func recommendStudy() *Study {
	b := newBuilder(searchStudy("s3-512K-4M"), 3)
	all := append(append([]int64{}, bandSizes...), guardSizes...)
	base := b.trial(vocab.RoleBaseline, vocab.TrialComplete, "", nccl.Config{})
	b.launch(base, vocab.PhaseWarmup, false, defaultsUS, all, 0.3, 0.05, 1.3)
	b.launch(base, vocab.PhaseExplore, true, defaultsUS, all, 0.05, 0.05, 1)
	fix := b.trial(vocab.RoleExplore, vocab.TrialComplete, "", nccl.Config{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"})
	b.launch(fix, vocab.PhaseExplore, true, fixedUS, all, 0.05, 0.05, 1)
	bad := b.trial(vocab.RoleExplore, vocab.TrialFailed, "exit status 1: NCCL WARN <invalid> protocol", nccl.Config{"NCCL_PROTO": "LL128", "NCCL_ALGO": "Tree"})
	b.failed(bad, "exit status 1: NCCL WARN <invalid> protocol")
	ch := b.trial(vocab.RoleExplore, vocab.TrialComplete, "", nccl.Config{"NCCL_MAX_NCHANNELS": "2"})
	b.launch(ch, vocab.PhaseExplore, true, channelsUS, all, 0.05, 0.05, 1)
	b.launch(fix, vocab.PhaseRefine, true, fixedUS, all, 0.05, 0.05, 1)
	for range 6 {
		b.launch(base, vocab.PhaseConfirm, true, defaultsUS, all, 0.05, 0.05, 1)
		b.launch(fix, vocab.PhaseConfirm, true, fixedUS, all, 0.05, 0.05, 1)
	}
	b.explain(base, []benchfmt.Choice{
		{Collective: "AllReduce", Bytes: 512 * nccl.KiB, Algo: "RING", Proto: "LL128", ChannelLo: 0, ChannelHi: 31, Channels: 32},
		{Collective: "AllReduce", Bytes: nccl.MiB, Algo: "RING", Proto: "LL128", ChannelLo: 0, ChannelHi: 63, Channels: 64},
	})
	b.explain(fix, []benchfmt.Choice{
		{Collective: "AllReduce", Bytes: 512 * nccl.KiB, Algo: "RING", Proto: "SIMPLE", ChannelLo: 0, ChannelHi: 7, Channels: 8},
		{Collective: "AllReduce", Bytes: nccl.MiB, Algo: "RING", Proto: "SIMPLE", ChannelLo: 0, ChannelHi: 7, Channels: 8},
	})
	b.s.Study.Recommendation = &store.Recommendation{Env: map[string]string(fix.Config.Clone()), Speedup: 4.4, SpeedupCI: [2]float64{4.1, 4.8}, CILevel: 0.95,
		Significant: true, PValue: 0.0022, Reason: "significant and above the 3% minimum effect", MinEffect: 0.03,
		BaselineScoreUS: 770, ScoreUS: 175, TrialID: fix.ID, BaselineLaunches: 6, CandidateLaunches: 6}
	return b.s
}

// keepStudy is a finished real (not simulated) search that kept NCCL's
// defaults: its challenger is no faster, each arm has 5 confirmation
// launches (too few for a per-size interval) and the baseline has an
// outlier launch.
func keepStudy() *Study {
	st := searchStudy("s4-512K-4M")
	st.Simulated, st.Launch = false, store.LaunchSettings{Launcher: "mpirun", NP: 4, Hosts: []string{"spark5", "spark6", "spark7", "spark8"}, Bench: "all_reduce_perf"}
	st.Platform.GPU = "NVIDIA GB10"
	b := newBuilder(st, 4)
	all := append(append([]int64{}, bandSizes...), guardSizes...)
	base := b.trial(vocab.RoleBaseline, vocab.TrialComplete, "", nccl.Config{})
	cand := b.trial(vocab.RoleExplore, vocab.TrialComplete, "", nccl.Config{"NCCL_MAX_NCHANNELS": "2"})
	for i := range 5 {
		factor := 1.0
		if i == 2 {
			factor = 2.5
		}
		b.launch(base, vocab.PhaseConfirm, true, fixedUS, all, 0.03, 0.03, factor)
		b.launch(cand, vocab.PhaseConfirm, true, fixedUS, all, 0.03, 0.03, 1)
	}
	b.s.Study.Recommendation = &store.Recommendation{Env: map[string]string{}, Speedup: 1.01, SpeedupCI: [2]float64{0.95, 1.07}, CILevel: 0.95,
		PValue: 0.69, Reason: "keep the baseline: the gain is not significant (p=0.69)", BaselineLaunches: 5, CandidateLaunches: 5}
	return b.s
}

// sweepStudy is one config's curve from 32K to 256M, 3 launches (too few
// for an interval: min–max), on 2 ranks (busbw = algbw).
func sweepStudy() *Study {
	st := &store.Study{Name: "s5-sweep", Kind: vocab.KindSweep, Band: "32K-256M", BandMin: 32 * nccl.KiB, BandMax: 256 * nccl.MiB,
		Collective: "all_reduce", Launch: store.LaunchSettings{Launcher: "local", Bench: "all_reduce_perf"},
		Platform: store.Platform{NCCLVersion: "2.27.7", Ranks: 2, Nodes: 1, GPU: "NVIDIA H200", Transport: "P2P"}, Status: vocab.StatusDone}
	b := newBuilder(st, 5)
	truth := map[int64]float64{}
	var sizes []int64
	for s := int64(32 * nccl.KiB); s <= 256*nccl.MiB; s *= 2 {
		sizes = append(sizes, s)
		truth[s] = 20 + float64(s)/(300e3) // 20 µs latency, 300 GB/s
	}
	tr := b.trial(vocab.RoleSweep, vocab.TrialComplete, "", nccl.Config{})
	for range 3 {
		b.launch(tr, vocab.PhaseSweep, true, truth, sizes, 0.02, 0.02, 1)
	}
	return b.s
}

// sequentialStudy is a finished simulated search whose sequential
// confirmation stopped at 4 launches of NCCL defaults and 7 of the
// candidate, and where a config measured once, setting more knobs,
// scored a little better than the one confirmed.
func sequentialStudy() *Study {
	b := newBuilder(searchStudy("s6-512K-4M"), 6)
	all := append(append([]int64{}, bandSizes...), guardSizes...)
	base := b.trial(vocab.RoleBaseline, vocab.TrialComplete, "", nccl.Config{})
	b.launch(base, vocab.PhaseExplore, true, defaultsUS, all, 0.05, 0.05, 1)
	fix := b.trial(vocab.RoleExplore, vocab.TrialComplete, "", nccl.Config{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"})
	b.launch(fix, vocab.PhaseExplore, true, fixedUS, all, 0.05, 0.05, 1)
	b.launch(fix, vocab.PhaseRefine, true, fixedUS, all, 0.05, 0.05, 1)
	lucky := b.trial(vocab.RoleExplore, vocab.TrialComplete, "", nccl.Config{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8", "NCCL_ALGO": "Ring"})
	b.launch(lucky, vocab.PhaseExplore, true, fixedUS, all, 0, 0.01, 0.98)
	for i := range 7 {
		if i < 4 {
			b.launch(base, vocab.PhaseConfirm, true, defaultsUS, all, 0.05, 0.05, 1)
		}
		b.launch(fix, vocab.PhaseConfirm, true, fixedUS, all, 0.05, 0.05, 1.01)
	}
	// NCCL runs Ring anyway: the lucky config's plan is the fix's.
	var plan []benchfmt.Choice
	for _, size := range bandSizes {
		plan = append(plan, benchfmt.Choice{Collective: "AllReduce", Bytes: size, Algo: "RING", Proto: "SIMPLE", ChannelLo: 0, ChannelHi: 7, Channels: 8})
	}
	b.explain(fix, plan)
	b.explain(lucky, plan)
	b.s.Study.Recommendation = &store.Recommendation{Env: map[string]string(fix.Config.Clone()), Speedup: 4.4, SpeedupCI: [2]float64{4.0, 4.8}, CILevel: 0.95,
		Significant: true, PValue: 0.006, MinEffect: 0.03, TrialID: fix.ID, BaselineLaunches: 4, CandidateLaunches: 7}
	return b.s
}

// importStudy is saved logs brought in with nccltune import: its band
// fields describe what the logs measured, not a searched band.
func importStudy() *Study {
	st := &store.Study{Name: "s7-import", Kind: vocab.KindImport, Band: "512K-8M", BandMin: 512 * nccl.KiB, BandMax: 8 * nccl.MiB,
		Collective: "all_reduce", Platform: store.Platform{Ranks: 4}, Status: vocab.StatusDone}
	b := newBuilder(st, 7)
	all := append(append([]int64{}, bandSizes...), guardSizes...)
	tr := b.trial(vocab.RoleImport, vocab.TrialComplete, "", nccl.Config{})
	for range 2 {
		b.launch(tr, vocab.PhaseImport, false, defaultsUS, all, 0.02, 0.02, 1)
	}
	return b.s
}

// workloadStudy is a finished simulated search of a workload of two parts
// (all_reduce and alltoall, both 512K-4M, an 8M guard) that recommends
// PROTO=^LL128 MAX_NCHANNELS=8 after 6 vs 6 interleaved confirmation
// launches of each op: what report draws and tabulates op by op.
func workloadStudy() *Study {
	st := searchStudy("s8-workload")
	st.Workload = []store.Part{
		{Op: nccl.AllReduce, Band: "512K-4M", BandMin: 512 * nccl.KiB, BandMax: 4 * nccl.MiB, Weight: 0.7},
		{Op: nccl.AllToAll, Band: "512K-4M", BandMin: 512 * nccl.KiB, BandMax: 4 * nccl.MiB, Weight: 0.3},
	}
	b := newBuilder(st, 8)
	scaled := func(truth map[int64]float64, f float64) map[int64]float64 {
		out := map[int64]float64{}
		for k, v := range truth {
			out[k] = v * f
		}
		return out
	}
	truth := map[nccl.Op][2]map[int64]float64{
		nccl.AllReduce: {defaultsUS, fixedUS},
		nccl.AllToAll:  {scaled(defaultsUS, 1.6), scaled(fixedUS, 1.3)},
	}
	ops := []nccl.Op{nccl.AllReduce, nccl.AllToAll}
	// Each launch measures one op over its part's sizes and the guard,
	// scored as the search scores it: over that op's sizes.
	launch := func(t *store.Trial, phase string, op nccl.Op, arm int) {
		sizes := st.Parts().Sizes(op)
		l := b.launch(t, phase, true, truth[op][arm], append(slices.Clone(sizes), guardSizes...), 0.05, 0.05, 1)
		l.Op = op
		if sc, err := model.LaunchScore(model.LaunchOf(l.Sizes), sizes); err == nil {
			l.ScoreUS = sc
		}
	}
	base := b.trial(vocab.RoleBaseline, vocab.TrialComplete, "", nccl.Config{})
	fix := b.trial(vocab.RoleExplore, vocab.TrialComplete, "", nccl.Config{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"})
	for _, op := range ops {
		launch(base, vocab.PhaseExplore, op, 0)
		launch(fix, vocab.PhaseExplore, op, 1)
	}
	for range 6 {
		for _, op := range ops {
			launch(base, vocab.PhaseConfirm, op, 0)
			launch(fix, vocab.PhaseConfirm, op, 1)
		}
	}
	for _, arm := range []struct {
		t             *store.Trial
		proto         string
		channels, max int
	}{{base, "LL128", 32, 31}, {fix, "SIMPLE", 8, 7}} {
		var plan []benchfmt.Choice
		for _, fn := range []string{"AllReduce", "AlltoAll"} {
			for _, size := range bandSizes {
				plan = append(plan, benchfmt.Choice{Collective: fn, Bytes: size, Algo: "RING", Proto: arm.proto, ChannelLo: 0, ChannelHi: arm.max, Channels: arm.channels})
			}
		}
		b.explain(arm.t, plan)
	}
	b.s.Study.Recommendation = &store.Recommendation{Env: map[string]string(fix.Config.Clone()), Speedup: 3.9, SpeedupCI: [2]float64{3.6, 4.2}, CILevel: 0.95,
		Significant: true, PValue: 0.0022, Reason: "significant and above the 3% minimum effect", MinEffect: 0.03,
		BaselineScoreUS: 900, ScoreUS: 230, TrialID: fix.ID, BaselineLaunches: 6, CandidateLaunches: 6,
		Parts: []store.PartComparison{
			{Op: nccl.AllReduce, Band: "512K-4M", Weight: 0.7, Speedup: 4.4, SpeedupCI: [2]float64{4.1, 4.8}, CILevel: 0.95, Significant: true,
				PValue: 0.0022, BaselineScoreUS: 770, ScoreUS: 175},
			{Op: nccl.AllToAll, Band: "512K-4M", Weight: 0.3, Speedup: 3.4, SpeedupCI: [2]float64{3.1, 3.7}, CILevel: 0.95, Significant: true,
				PValue: 0.0022, BaselineScoreUS: 1230, ScoreUS: 360},
		}}
	return b.s
}
