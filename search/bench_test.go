package search

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

var samplerTable = flag.Bool("samplers", false, "run the sampler comparison (TPE, random, grid × profiles × 20 seeds; minutes)")

// TestSamplerTable compares the proposal strategies on every simulated
// profile: for each seed, the number of launches until the config the
// study would confirm has a true band score within 3 % of the best of the
// whole space, and whether that happened within the default 60-launch
// budget. It prints the table for docs/PERFORMANCE.md:
//
//	go test ./search -run TestSamplerTable -samplers -v -timeout 60m
func TestSamplerTable(t *testing.T) {
	t.Parallel()
	if !*samplerTable {
		t.Skip("pass -samplers to run the comparison")
	}
	const seeds = 20
	band := nccl.Band{Min: 512 << 10, Max: 4 << 20}
	fmt.Printf("| profile | sampler | median launches to within 3 %% | within 3 %% by launch 60 | reached at all |\n|---|---|---|---|---|\n")
	for _, profile := range sim.BuiltinProfiles() {
		prof := newSimLauncher(t, profile, 0, 0).prof
		space := DefaultSpace()
		best, _ := bestInSpace(t, prof, space, band.Sizes())
		for _, sampler := range Samplers {
			var reach []int
			by60, reached := 0, 0
			for seed := int64(1); seed <= seeds; seed++ {
				o := DefaultOptions()
				o.Band, o.Guard, o.Seed, o.Sampler = band, DefaultGuard(band), seed, sampler
				o.Budget = 600
				if sampler == "grid" {
					o.Budget = space.Size() + 40
				}
				first := -1
				onEvent := func(ev Event) {
					if first >= 0 || ev.Candidate == nil {
						return
					}
					if trueScore(t, prof, ev.Candidate.Config, band.Sizes()) <= best*1.03 {
						first = ev.Seq + 1
					}
				}
				l := newSimLauncher(t, profile, 1, seed)
				if _, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, onEvent); err != nil {
					t.Fatalf("%s %s seed %d: %v", profile, sampler, seed, err)
				}
				if first < 0 {
					first = math.MaxInt32
				} else {
					reached++
				}
				if first <= 60 {
					by60++
				}
				reach = append(reach, first)
			}
			sort.Ints(reach)
			med := "never"
			if m := reach[len(reach)/2]; m != math.MaxInt32 {
				med = strconv.Itoa(m)
			}
			fmt.Printf("| %s | %s | %s | %d/%d | %d/%d |\n", profile, sampler, med, by60, seeds, reached, seeds)
		}
	}
	fmt.Printf("\nThe whole default space holds %d configs: one pass of the grid is %d launches.\n", DefaultSpace().Size(), DefaultSpace().Size())
}

// textLauncher runs the simulated benchmark in process (sim.Main, the code
// the simulator process runs) and parses its text with benchfmt.Parse, as a
// real launch would: it times the benchmark's part so that a benchmark of
// the study can subtract it.
type textLauncher struct {
	seed  int64
	bench time.Duration // time spent inside the simulated benchmark
}

func (l *textLauncher) Launch(ctx context.Context, req Request) (*benchfmt.Launch, error) {
	args := []string{"--profile", "spark4", "--seed", strconv.FormatInt(l.seed*1_000_003+int64(req.Seq), 10),
		"--launch", strconv.Itoa(req.Seq), "-b", strconv.FormatInt(req.MinBytes, 10), "-e", strconv.FormatInt(req.MaxBytes, 10),
		"-f", "2", "-I", "1"}
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := sim.Main(args, req.Config.Env(), &stdout, &stderr)
	l.bench += time.Since(start)
	launch := &benchfmt.Launch{ExitCode: code, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Simulated: true}
	res, err := benchfmt.Parse(launch.Stdout)
	launch.Result = res
	switch {
	case code != 0 || err != nil:
		launch.Outcome, launch.Reason = benchfmt.Failed, fmt.Sprintf("exit %d: %v", code, err)
	case res.Invalid() != "":
		launch.Outcome, launch.Reason = benchfmt.Invalid, res.Invalid()
	default:
		launch.Outcome = benchfmt.OK
	}
	return launch, nil
}

// benchRecorder writes to a real bbolt store as the CLI's recorder does:
// a new trial goes in with its first launch, one commit per launch.
type benchRecorder struct {
	st      *store.Store
	study   *store.Study
	sizes   []int64
	pending map[*Trial]*store.Trial
}

func (r *benchRecorder) SaveTrial(t *Trial) error {
	r.pending[t] = &store.Trial{StudyID: r.study.ID, Number: t.Number, Config: t.Config, Key: t.Config.Key(), State: t.State, Role: t.Role}
	return nil
}

func (r *benchRecorder) SaveTrials(ts []*Trial) error {
	var recs []*store.Trial
	for _, t := range ts {
		if t.ID != 0 {
			recs = append(recs, &store.Trial{ID: t.ID, Config: t.Config, State: t.State, Reason: t.Reason, ScoreUS: t.Score(r.sizes)})
		}
	}
	return r.st.UpdateTrials(recs)
}

func (r *benchRecorder) SaveRefusal(Refusal) error { return nil }
func (r *benchRecorder) SaveDesign(Planned) error  { return nil }

func (r *benchRecorder) SaveLaunch(t *Trial, req Request, l *benchfmt.Launch, scored bool, scoreUS float64) error {
	rec := &store.Launch{StudyID: r.study.ID, TrialID: t.ID, Phase: req.Phase, Outcome: l.Outcome, Reason: l.Reason,
		Simulated: true, Scored: scored, Sizes: benchfmt.SizesOf(l.Result)}
	if l.Result != nil {
		rec.Facts = l.Result.Facts
	}
	u := store.TrialUpdate{State: t.State, Reason: t.Reason}
	if len(t.Explore) > 0 {
		u.ScoreUS = t.Score(r.sizes)
	}
	raw := &store.Raw{Stdout: l.Stdout, Stderr: l.Stderr}
	if nt := r.pending[t]; nt != nil {
		if err := r.st.AddTrialWithLaunch(nt, rec, raw, u); err != nil {
			return err
		}
		t.ID = nt.ID
		delete(r.pending, t)
		return nil
	}
	return r.st.AddLaunchUpdatingTrial(rec, raw, u)
}

// BenchmarkLaunchOverhead measures nccltune's own time per launch —
// proposing, planning, parsing the benchmark's text, modelling and
// storing in bbolt (fsync included) — once a study holds 200 trials. The
// simulated benchmark's own time is subtracted. It reports the median over
// the launches made after the 200th trial ("overhead-median-ms"); the
// target is under 5 ms.
func BenchmarkLaunchOverhead(b *testing.B) {
	band := nccl.Band{Min: 512 << 10, Max: 4 << 20}
	var perLaunch []time.Duration
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		st, err := store.Open(filepath.Join(dir, "bench.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		study := &store.Study{Kind: vocab.KindSearch, Band: band.String(), Simulated: true}
		if err := st.CreateStudy(study); err != nil {
			b.Fatal(err)
		}
		o := DefaultOptions()
		o.Band, o.Guard, o.Seed, o.Budget = band, DefaultGuard(band), int64(i+1), 480
		l := &textLauncher{seed: int64(i + 1)}
		rec := &benchRecorder{st: st, study: study, sizes: band.Sizes(), pending: map[*Trial]*store.Trial{}}
		last, lastBench := time.Now(), time.Duration(0)
		onEvent := func(ev Event) {
			now := time.Now()
			if ev.Trials >= 200 {
				perLaunch = append(perLaunch, now.Sub(last)-(l.bench-lastBench))
			}
			last, lastBench = now, l.bench
		}
		b.StartTimer()
		res, err := Run(context.Background(), o, l, rec, nil, 0, onEvent)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Trials) < 200 {
			b.Fatalf("the study made %d trials in %d launches (stopped: %s), fewer than the 200 measured at", len(res.Trials), res.Launches, res.Stopped)
		}
		st.Close()
		os.RemoveAll(dir)
	}
	if len(perLaunch) == 0 {
		b.Fatal("no launch after the 200th trial")
	}
	sort.Slice(perLaunch, func(i, j int) bool { return perLaunch[i] < perLaunch[j] })
	b.ReportMetric(float64(perLaunch[len(perLaunch)/2].Microseconds())/1000, "overhead-median-ms")
	b.ReportMetric(float64(perLaunch[len(perLaunch)*9/10].Microseconds())/1000, "overhead-p90-ms")
	b.ReportMetric(float64(len(perLaunch))/float64(b.N), "launches-measured/op")
}

var (
	qualityTable   = flag.Bool("quality", false, "run the recommendation-quality table (100 seeds per profile; a few minutes)")
	qualitySeeds   = flag.Int("quality-seeds", 100, "seeds per cell of the quality table")
	qualityFirst   = flag.Int64("quality-first-seed", 1, "the quality table's first seed")
	qualityBudgets = flag.String("quality-budgets", "60", "comma-separated budgets of the quality table")
	qualityProfile = flag.String("quality-profiles", "", "comma-separated profiles of the quality table (default: every built-in one)")
)

// TestQualityTable measures what users get from the default study (budget
// 60, band 512K-4M) on each simulated profile over 100 seeds: how often the
// recommendation's true band score is within 3 % and 5 % of the best of
// the whole space (keeping the defaults counts with the defaults' score),
// how often a change is recommended at all, and how the studies ended
// (search.Result.Ending) with their mean launches. For docs/PERFORMANCE.md:
//
//	go test ./search -run TestQualityTable -quality -v -timeout 30m
//	go test ./search -run TestQualityTable -quality -quality-budgets 30,60,120 -v
func TestQualityTable(t *testing.T) {
	t.Parallel()
	if !*qualityTable {
		t.Skip("pass -quality to run the table")
	}
	seeds := *qualitySeeds
	var budgets []int
	for _, b := range strings.Split(*qualityBudgets, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(b))
		if err != nil {
			t.Fatalf("-quality-budgets %q: %v", *qualityBudgets, err)
		}
		budgets = append(budgets, n)
	}
	band := nccl.Band{Min: 512 << 10, Max: 4 << 20}
	fmt.Printf("| profile | budget | best config (true band score) | defaults | within 3 %% | within 5 %% | change recommended | mean launches | median launches | ended early (settled) | endings |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	profiles := sim.BuiltinProfiles()
	if *qualityProfile != "" {
		profiles = strings.Split(*qualityProfile, ",")
	}
	for _, profile := range profiles {
		prof := newSimLauncher(t, profile, 0, 0).prof
		best, bestCfg := bestInSpace(t, prof, DefaultSpace(), band.Sizes())
		def := trueScore(t, prof, nccl.Config{}, band.Sizes())
		for _, budget := range budgets {
			in3, in5, changed, launches, settled := 0, 0, 0, 0, 0
			endings := map[string]int{}
			var counts []float64
			for seed := *qualityFirst; seed < *qualityFirst+int64(seeds); seed++ {
				o := spark4Options(seed)
				o.Budget = budget
				res, _, l := runStudy(t, profile, o)
				got := trueScore(t, prof, res.Env(), band.Sizes())
				if got <= best*1.03 {
					in3++
				}
				if got <= best*1.05 {
					in5++
				}
				if res.Recommend {
					changed++
				}
				launches += len(l.launches)
				counts = append(counts, float64(len(l.launches)))
				endings[res.Ending]++
				if res.Settled != "" {
					settled++
				}
			}
			var ends []string
			for e, n := range endings {
				ends = append(ends, fmt.Sprintf("%s %d", e, n))
			}
			sort.Strings(ends)
			fmt.Printf("| %s | %d | %s (%.0f µs) | %.0f µs | %d/%d | %d/%d | %d/%d | %.1f | %.0f | %d | %s |\n", profile, budget, bestCfg, best, def,
				in3, seeds, in5, seeds, changed, seeds, float64(launches)/float64(seeds), median(counts), settled, strings.Join(ends, ", "))
		}
	}
}
