package studyrun

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// sizesAt is one launch's stored sizes: each size's samples.
func sizesAt(samples map[int64][]float64) []benchfmt.Size {
	var out []benchfmt.Size
	for _, b := range []int64{1 << 20, 2 << 20} {
		if xs, ok := samples[b]; ok {
			out = append(out, benchfmt.Size{Bytes: b, TimeUS: xs[0], Samples: xs})
		}
	}
	return out
}

func TestLoadTrials(t *testing.T) {
	st := openStore(t)
	study := &store.Study{Kind: vocab.KindSearch, Band: "1M-2M", BandMin: 1 << 20, BandMax: 2 << 20, Status: vocab.StatusRunning}
	if err := st.CreateStudy(study); err != nil {
		t.Fatal(err)
	}
	// The store numbers trials in the order they are added.
	cand := &store.Trial{StudyID: study.ID, Number: 1, Config: nccl.Config{"NCCL_PROTO": "Simple"}, Role: vocab.RoleExplore, State: vocab.TrialComplete}
	base := &store.Trial{StudyID: study.ID, Number: 0, Config: nccl.Config{}, Role: vocab.RoleBaseline, State: vocab.TrialRunning}
	bad := &store.Trial{StudyID: study.ID, Number: 2, Config: nccl.Config{"NCCL_ALGO": "Tree"}, Role: vocab.RoleExplore, State: vocab.TrialFailed, Reason: "exit 1"}
	for _, tr := range []*store.Trial{base, cand, bad} {
		if err := st.AddTrial(tr); err != nil {
			t.Fatal(err)
		}
	}
	ok := map[int64][]float64{1 << 20: {10, 11}, 2 << 20: {20}}
	launches := []struct {
		trial  *store.Trial
		phase  string
		out    benchfmt.Outcome
		scored bool
		facts  *benchfmt.Facts
	}{
		{base, vocab.PhaseWarmup, benchfmt.OK, false, nil},
		{base, vocab.PhasePlan, benchfmt.OK, false, &benchfmt.Facts{NCCLVersion: "2.21.5"}},
		{base, vocab.PhaseExplore, benchfmt.OK, true, nil},
		{cand, vocab.PhaseExplore, benchfmt.OK, true, nil},
		{bad, vocab.PhaseExplore, benchfmt.Failed, false, nil},
		{base, vocab.PhaseConfirm, benchfmt.OK, true, nil},
		{cand, vocab.PhaseConfirm, benchfmt.OK, true, nil},
		{cand, vocab.PhaseExplain, benchfmt.Failed, false, nil},
	}
	for i, l := range launches {
		rec := &store.Launch{StudyID: study.ID, TrialID: l.trial.ID, Seq: i, Phase: l.phase, Outcome: l.out, Scored: l.scored, Facts: l.facts}
		if l.out == benchfmt.OK {
			rec.Sizes = sizesAt(ok)
		}
		if err := st.AddLaunch(rec, &store.Raw{}); err != nil {
			t.Fatal(err)
		}
	}

	so := search.DefaultOptions()
	so.Band = nccl.Band{Min: 1 << 20, Max: 2 << 20}
	prior, err := LoadTrials(st, study, so)
	if err != nil {
		t.Fatal(err)
	}
	trials, n := prior.Trials, prior.Launches
	if n != len(launches) {
		t.Errorf("launches = %d, want %d", n, len(launches))
	}
	type shape struct {
		number, launches, explore, confirm, debug int
		state                                     vocab.TrialState
	}
	want := []shape{
		{0, 4, 1, 1, 1, vocab.TrialRunning},
		// A complete trial is usable again: the study goes on.
		{1, 3, 1, 1, 1, vocab.TrialRunning},
		{2, 1, 0, 0, 0, vocab.TrialFailed},
	}
	if len(trials) != len(want) {
		t.Fatalf("%d trials, want %d", len(trials), len(want))
	}
	for i, tr := range trials {
		got := shape{tr.Number, tr.Launches, len(tr.Explore), len(tr.Confirm), len(tr.Debug), tr.State}
		if got != want[i] {
			t.Errorf("trial %d: got %+v, want %+v", i, got, want[i])
		}
	}
	if got := trials[0].Explore[0].Times[1<<20]; !reflect.DeepEqual(got, []float64{10, 11}) {
		t.Errorf("baseline's 1M samples = %v, want [10 11]", got)
	}
	if d := trials[0].Debug[0]; d.Phase != vocab.PhasePlan || d.Launch.Result.Facts.NCCLVersion != "2.21.5" {
		t.Errorf("baseline's debug launch = %+v, want the plan launch with its facts", d)
	}
	if trials[2].Reason != "exit 1" {
		t.Errorf("failed trial's reason = %q", trials[2].Reason)
	}
}

// A study stored with a refusal after which another candidate was
// confirmed is read back with that refusal, and the baseline's
// confirmation launches are the next confirmation's alone (those from
// its restart on): the refused candidate's partners are not the next
// one's. Stored before refusals were kept, the same launches all stay.
func TestLoadTrialsAfterARefusal(t *testing.T) {
	for _, kept := range []bool{true, false} {
		st := openStore(t)
		study := &store.Study{Kind: vocab.KindSearch, Band: "1M-2M", BandMin: 1 << 20, BandMax: 2 << 20, Status: vocab.StatusInterrupted}
		if err := st.CreateStudy(study); err != nil {
			t.Fatal(err)
		}
		base := &store.Trial{StudyID: study.ID, Number: 0, Config: nccl.Config{}, Role: vocab.RoleBaseline, State: vocab.TrialRunning}
		refused := &store.Trial{StudyID: study.ID, Number: 1, Config: nccl.Config{"NCCL_MAX_CTAS": "1"}, Role: vocab.RoleExplore, State: vocab.TrialRunning}
		next := &store.Trial{StudyID: study.ID, Number: 2, Config: nccl.Config{"NCCL_PROTO": "Simple"}, Role: vocab.RoleExplore, State: vocab.TrialRunning}
		// The refused candidate's lists rewrote this one's (ScopedFrom).
		unscoped := &store.Trial{StudyID: study.ID, Number: 3, Config: nccl.Config{"NCCL_MAX_CTAS": "1", "NCCL_PROTO": "Simple"}, Role: vocab.RoleExplore, State: vocab.TrialRunning}
		for _, tr := range []*store.Trial{base, refused, next, unscoped} {
			if err := st.AddTrial(tr); err != nil {
				t.Fatal(err)
			}
		}
		ok := sizesAt(map[int64][]float64{1 << 20: {10}, 2 << 20: {20}})
		for i, tr := range []*store.Trial{base, refused, base, refused, base, next, base} {
			rec := &store.Launch{StudyID: study.ID, TrialID: tr.ID, Seq: i, Phase: vocab.PhaseConfirm, Outcome: benchfmt.OK, Scored: true, Sizes: ok}
			if err := st.AddLaunch(rec, &store.Raw{}); err != nil {
				t.Fatal(err)
			}
		}
		if kept {
			// Every field set, none at its zero value: a field the
			// round trip drops fails the comparison below.
			study.Refusals = []store.Refusal{{TrialID: refused.ID, Env: refused.Config, Ending: vocab.EndingGuard, Reason: "slower at the guard size",
				Speedup: 1.2, SpeedupCI: [2]float64{1.1, 1.3}, CILevel: 0.9926, ScopedFromTrialID: unscoped.ID,
				SlowerAt: []store.Site{{Op: nccl.Broadcast, Bytes: 1 << 22}},
				Restart:  &store.Restart{Seq: 4, NextEnv: map[string]string{"NCCL_PROTO": "allreduce:Simple"}, ExploreStopped: "budget", ExactDone: true}}}
			if err := st.UpdateStudy(study); err != nil {
				t.Fatal(err)
			}
		}
		so := search.DefaultOptions()
		so.Band = nccl.Band{Min: 1 << 20, Max: 2 << 20}
		prior, err := LoadTrials(st, study, so)
		if err != nil {
			t.Fatal(err)
		}
		wantBase, wantRefused := 4, 0
		if kept {
			wantBase, wantRefused = 2, 1
		}
		if got := len(prior.Trials[0].Confirm); got != wantBase {
			t.Errorf("refusals kept %v: the baseline has %d confirmation launches, want %d", kept, got, wantBase)
		}
		if len(prior.Trials[1].Confirm) != 2 || len(prior.Trials[2].Confirm) != 1 || prior.Launches != 7 {
			t.Errorf("refusals kept %v: candidates' confirmation launches %d and %d, %d launches; want 2, 1, 7",
				kept, len(prior.Trials[1].Confirm), len(prior.Trials[2].Confirm), prior.Launches)
		}
		if len(prior.Refused) != wantRefused {
			t.Fatalf("refusals kept %v: %d refusals read back, want %d", kept, len(prior.Refused), wantRefused)
		}
		if kept {
			r := prior.Refused[0]
			if r.Trial != prior.Trials[1] || r.ScopedFrom != prior.Trials[3] || r.Ending != vocab.EndingGuard || r.Restart == nil || r.Restart.Seq != 4 || r.Restart.Stopped != "budget" ||
				!r.Restart.ExactDone || r.Restart.Next.Key() != (nccl.Config{"NCCL_PROTO": "allreduce:Simple"}).Key() ||
				r.Decision == nil || r.Decision.CILevel != 0.9926 ||
				len(r.SlowerAt) != 1 || r.SlowerAt[0] != (search.Site{Op: nccl.Broadcast, Bytes: 1 << 22}) {
				t.Errorf("refusal read back as %+v (restart %+v)", r, r.Restart)
			}
			// Read back and stored again, as the decided study stores it.
			if got := RefusalOf(r); !reflect.DeepEqual(got, study.Refusals[0]) {
				t.Errorf("refusal stored again as %+v, was %+v", got, study.Refusals[0])
			}
		}
	}
}

func TestSpaceMapRoundTrip(t *testing.T) {
	space := search.DefaultSpace()
	if got := SpaceFromMap(SpaceMap(space)); !reflect.DeepEqual(got, space) {
		t.Errorf("SpaceFromMap(SpaceMap(s)) = %v, want %v", got, space)
	}
}

// launches makes n launches whose every size takes about us µs.
func launchesAt(n int, us float64) []model.Launch {
	var out []model.Launch
	for i := 0; i < n; i++ {
		x := us * (1 + 0.01*float64(i%3))
		out = append(out, model.Launch{Times: map[int64][]float64{1 << 20: {x, x}, 2 << 20: {2 * x, 2 * x}}})
	}
	return out
}

func TestRecommendationOf(t *testing.T) {
	sizes := []int64{1 << 20, 2 << 20}
	so := search.DefaultOptions()
	so.Band = nccl.Band{Min: 1 << 20, Max: 2 << 20}
	so.Guard = []int64{2 << 20}
	fast := nccl.Config{"NCCL_PROTO": "Simple"}
	newTrial := func(id uint64, cfg nccl.Config, explore, confirm []model.Launch) *search.Trial {
		return &search.Trial{ID: id, Config: cfg, Explore: explore, Confirm: confirm, State: vocab.TrialComplete}
	}
	base := newTrial(1, nccl.Config{}, launchesAt(3, 100), launchesAt(6, 100))
	win := newTrial(2, fast, launchesAt(3, 80), launchesAt(6, 80))
	decision := model.Compare(base.Confirm, win.Confirm, sizes, so.Stats)

	tests := []struct {
		name           string
		res            *search.Result
		env            map[string]string
		trial, cand    uint64
		significant    bool
		perSize, guard int
		launches       int
	}{
		{name: "no candidate: the baseline's exploration score",
			res: &search.Result{Baseline: base, Ending: vocab.EndingNoCandidate, Reason: "none ran"},
			env: map[string]string{}},
		{name: "recommended",
			res: &search.Result{Baseline: base, Winner: win, Decision: &decision, Recommend: true, Ending: vocab.EndingRecommended},
			env: fast, trial: 2, cand: 2, significant: true, perSize: 2, guard: 1, launches: 6},
		{name: "kept the baseline: the candidate is recorded, not recommended",
			res: &search.Result{Baseline: base, Winner: win, Decision: &decision, Recommend: false, Ending: vocab.EndingGuard},
			env: map[string]string{}, cand: 2, perSize: 2, guard: 1, launches: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := RecommendationOf(tt.res, so)
			if !reflect.DeepEqual(rec.Env, tt.env) || rec.TrialID != tt.trial || rec.CandidateTrialID != tt.cand {
				t.Errorf("env %v trial %d candidate %d, want %v %d %d", rec.Env, rec.TrialID, rec.CandidateTrialID, tt.env, tt.trial, tt.cand)
			}
			if rec.Significant != tt.significant || len(rec.PerSize) != tt.perSize || len(rec.Guards) != tt.guard {
				t.Errorf("significant %v, %d sizes, %d guards; want %v, %d, %d", rec.Significant, len(rec.PerSize), len(rec.Guards), tt.significant, tt.perSize, tt.guard)
			}
			if rec.BaselineLaunches != tt.launches || rec.CandidateLaunches != tt.launches {
				t.Errorf("launches %d/%d, want %d", rec.BaselineLaunches, rec.CandidateLaunches, tt.launches)
			}
			if rec.Ending != tt.res.Ending || rec.Dropped == nil {
				t.Errorf("ending %q dropped %v", rec.Ending, rec.Dropped)
			}
			if tt.res.Decision == nil {
				if want := base.Score(sizes); rec.BaselineScoreUS != want || rec.ScoreUS != want || rec.Speedup != 1 {
					t.Errorf("scores %g/%g speedup %g, want the baseline's %g and 1", rec.BaselineScoreUS, rec.ScoreUS, rec.Speedup, want)
				}
				return
			}
			if rec.Speedup != decision.Speedup || !(rec.ScoreUS < rec.BaselineScoreUS) {
				t.Errorf("speedup %g (want %g), scores %g vs %g", rec.Speedup, decision.Speedup, rec.ScoreUS, rec.BaselineScoreUS)
			}
		})
	}
}

func TestFiniteOr(t *testing.T) {
	for _, tt := range []struct{ x, want float64 }{{1.5, 1.5}, {math.NaN(), 7}, {math.Inf(1), 7}, {math.Inf(-1), 7}} {
		if got := store.FiniteOr(tt.x, 7); got != tt.want {
			t.Errorf("store.FiniteOr(%v, 7) = %v", tt.x, got)
		}
	}
}

// TestResumeAndVerifyReadTheSameStats checks that search --resume and
// verify read a stored study's decision settings (minimum effect, alpha,
// statistics options) the same way: a resumed study must go on deciding
// as verify of it decides, for a study that stored its settings, one
// stored without an alpha, and one stored before any were kept.
func TestResumeAndVerifyReadTheSameStats(t *testing.T) {
	launch := LaunchSettings{Simulated: true}
	tests := []struct {
		name     string
		settings func(*store.SearchSettings) *store.SearchSettings
		want     model.Options
	}{
		{"stored", func(ss *store.SearchSettings) *store.SearchSettings {
			ss.MinEffect, ss.Alpha = 0.05, 0.01
			return ss
		}, model.Options{Alpha: 0.01, Confidence: vocab.DefaultConfidence, MinEffect: 0.05,
			HighSpreadPct: model.DefaultHighSpreadPct, OutlierZ: model.DefaultOutlierZ}},
		{"no alpha stored", func(ss *store.SearchSettings) *store.SearchSettings {
			ss.MinEffect, ss.Alpha = 0.05, 0
			return ss
		}, model.Options{Alpha: vocab.DefaultAlpha, Confidence: vocab.DefaultConfidence, MinEffect: 0.05,
			HighSpreadPct: model.DefaultHighSpreadPct, OutlierZ: model.DefaultOutlierZ}},
		{"no settings stored", func(*store.SearchSettings) *store.SearchSettings { return nil }, model.DefaultOptions()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			so := search.DefaultOptions()
			so.Band = nccl.Band{Min: 512 << 10, Max: 4 << 20}
			so.Guard = search.DefaultGuard(so.Band)
			run, err := PrepareSearch(st, SearchOptions{Study: so, Launch: launch})
			if err != nil {
				t.Fatal(err)
			}
			study := run.Study
			study.Search = tc.settings(study.Search)
			study.Status = vocab.StatusInterrupted
			if err := st.UpdateStudy(study); err != nil {
				t.Fatal(err)
			}
			resumed, err := PrepareSearch(st, SearchOptions{Study: search.DefaultOptions(), Launch: launch, Resume: study.Name})
			if err != nil {
				t.Fatal(err)
			}
			ab, err := PlanVerify(st, VerifyOptions{Study: study.Name, Config: nccl.Config{"NCCL_PROTO": "Simple"}, Launch: launch, Launches: 10})
			if err != nil {
				t.Fatal(err)
			}
			if got := resumed.Options.Stats; got != tc.want {
				t.Errorf("resume decides with %+v, want %+v", got, tc.want)
			}
			if ab.Stats != tc.want {
				t.Errorf("verify decides with %+v, want %+v", ab.Stats, tc.want)
			}
		})
	}
}

// A guarded op's statistic no launch measured (model.CompareGuards'
// NaN: an arm without launches, a size without a row) is stored
// undefined, null in JSON, and reads back undefined: it was stored as
// speedup 1, which verify printed as +0.0%.
func TestOpGuardUnmeasuredIsNull(t *testing.T) {
	nan := math.NaN()
	g := opGuardOf(search.OpGuard{Op: nccl.AllReduce, Sizes: []int64{4, 8}, Result: model.GuardResult{Speedup: nan, Lo: nan, Hi: nan, WorstSpeedup: nan, P: 1,
		Sizes: []model.SizeGuard{{Bytes: 4, Speedup: nan, P: 1}, {Bytes: 8, Speedup: 1.25, P: 0.5, Level: 0.05}}}})
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"speedup":null,"speedup_ci":[null,null]`, `"worst_speedup":null`, `{"bytes":4,"speedup":null`, `{"bytes":8,"speedup":1.25`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("stored guard %s: want %s", b, want)
		}
	}
	var back store.OpGuard
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(float64(back.Speedup)) || !math.IsNaN(float64(back.SpeedupCI[0])) || !math.IsNaN(float64(back.PerSize[0].Speedup)) || back.PerSize[1].Speedup != 1.25 {
		t.Errorf("read back %+v: want the unmeasured statistics NaN", back)
	}
}

// TestFailedRefusalHasNoInterval: a candidate that failed before any look
// of its confirmation has no interval; the refused-earlier line must not
// show a made-up [1.00, 1.00] with a level.
func TestFailedRefusalHasNoInterval(t *testing.T) {
	r := RefusalOf(search.Refusal{Trial: &search.Trial{ID: 7, Config: nccl.Config{"NCCL_ALGO": "Tree"}},
		Ending: vocab.EndingCandidateFailed, Reason: "the candidate NCCL_ALGO=Tree failed during confirmation (boom)"})
	lines := stored.RefusalLines([]store.Refusal{r}, 0)
	if len(lines) != 1 || strings.Contains(lines[0], "[") || strings.Contains(lines[0], "CI") {
		t.Errorf("a failed candidate's refusal reads %q, want its speedup without an interval", lines)
	}
}
