package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
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
	"github.com/nccltune/nccltune/runner"
)

// replayLauncher runs a replay in process exactly as the CLI launches it
// (`nccltune search --sim replay:FILE --seed S`): the same argv from
// runner.Spec (-I 1 -J, the debug env of a debug launch), the same
// per-launch seed and launch index, the simulator's code (sim.Main), and
// the output parsed as runner parses it (JSON samples, facts from the
// text). So a seed measured here reproduces with the CLI.
type replayLauncher struct {
	profile string
	seed    int64
	dir     string
	// refused counts launches the replay could not speak for, per config.
	refused map[string]int
	// clock, when set, adds up the study's simulated wall time (wall).
	clock *replayClock
	wall  time.Duration
	// explore and confirm are the parts of wall spent exploring (batches
	// included) and confirming (the guards' launches included); the rest
	// is the warm-up and the debug launches.
	explore, confirm time.Duration
	// batches counts the batch launches made (LaunchBatch), members their
	// configs and visits their (config, size) visits, every round.
	batches, members, visits int
}

// LaunchBatch replays a batch launch (sim.Replay.SampleBatch): each
// config's communicator one of its recorded launches, its rounds drawn
// from that launch's iterations, 3 untimed and 20 timed iterations a
// visit, as the torch instrument's plan asks; its wall time the batch's
// modelled one (sim.BatchStartup, BatchCommInit, visits).
func (l *replayLauncher) LaunchBatch(ctx context.Context, b Batch) ([]*benchfmt.Launch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := sim.LoadReplay(l.profile)
	if err != nil {
		return nil, err
	}
	var cfgs []nccl.Config
	for _, m := range b.Members {
		cfgs = append(cfgs, m.Config)
	}
	seq := b.Members[0].Seq
	d := r.SampleBatch(simBatchOps(b, ""), cfgs, b.Rounds, 3, 20, 1, cliLaunchSeed(l.seed, seq), seq)
	l.wall += d.Duration
	l.explore += d.Duration
	l.batches++
	l.members += len(cfgs)
	for _, op := range simBatchOps(b, "") {
		l.visits += len(cfgs) * b.Rounds * len(op.Sizes)
	}

	for i, err := range d.Errs {
		var refusal *sim.ReplayRefusal
		if errors.As(err, &refusal) {
			l.refused[cfgs[i].Canonical().String()]++
		}
	}
	return batchLaunches(b, d), nil
}

// replayClock is what one launch of a study takes on the recorded fabric:
// an ordinary launch as long as the recording's launches of the config the
// replay plays for it (from its start to the next launch's start, so
// process start, NCCL's init and teardown included: on the 4-rank loopback
// 2.8 s for the defaults, 3.8 s for NCCL_PROTO=LL, 5.3 s for Tree with LL
// and one channel); a debug launch, which the recordings did not time, as
// the share of the defaults' ordinary launch that real studies measured on
// one machine (debugWideShare over NCCL_DEBUG's wide range, debugBandShare
// over the band and guard sizes only: fixed cost dominates both).
type replayClock struct {
	replay   *sim.Replay
	byConfig map[*sim.ReplayConfig]time.Duration
	period   time.Duration
}

// debugWideShare and debugBandShare are a debug launch's time over an
// ordinary launch of NCCL's defaults, measured in one real 4-rank study
// (docs/validation-runs/loopback4-twin-seed1.txt: the defaults' plan launch
// over 32K-256M with -n 1 -w 1 -c 0, 3.44 s; the band-and-guard debug
// launches, 1.97-2.05 s; the defaults' ordinary launches, 2.51 s). The
// clock used 5.5 s and the defaults' 2.8 s before those flags.
const (
	debugWideShare = 3.44 / 2.51
	debugBandShare = 2.0 / 2.51
)

func newReplayClock(r *sim.Replay) *replayClock {
	type start struct {
		at time.Time
		c  *sim.ReplayConfig
	}
	var starts []start
	for _, c := range r.Configs {
		for _, l := range c.Launches {
			if !l.Start.IsZero() {
				starts = append(starts, start{l.Start, c})
			}
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].at.Before(starts[j].at) })
	gaps := map[*sim.ReplayConfig][]float64{}
	for i := 1; i < len(starts); i++ {
		gaps[starts[i-1].c] = append(gaps[starts[i-1].c], starts[i].at.Sub(starts[i-1].at).Seconds())
	}
	k := &replayClock{replay: r, byConfig: map[*sim.ReplayConfig]time.Duration{}, period: launchPeriod(r)}
	for c, g := range gaps {
		k.byConfig[c] = time.Duration(median(g) * float64(time.Second))
	}
	return k
}

// launch is how long req takes on the recorded fabric.
func (k *replayClock) launch(req Request) time.Duration {
	defaults := k.period
	if d, ok := k.byConfig[k.replay.Defaults()]; ok {
		defaults = d
	}
	if req.Debug {
		share := debugBandShare
		// Only the wide range reaches 256M (explainRange).
		if req.MaxBytes >= explainMax {
			share = debugWideShare
		}
		return time.Duration(share * float64(defaults))
	}
	if m, _, err := k.replay.Match(req.Config); err == nil {
		if d, ok := k.byConfig[m]; ok {
			return d
		}
		return k.period
	}
	return defaults
}

// cliLaunchSeed is cmd/nccltune's launchSeed.
func cliLaunchSeed(seed int64, seq int) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", seed, seq)
	return int64(h.Sum64() >> 1)
}

func (l *replayLauncher) Launch(ctx context.Context, req Request) (*benchfmt.Launch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var took time.Duration
	if l.clock != nil {
		d := l.clock.launch(req)
		l.wall, took = l.wall+d, d
		switch req.Phase {
		case vocab.PhaseExplore, vocab.PhaseRefine:
			l.explore += d
		case vocab.PhaseConfirm, vocab.PhaseGuard:
			l.confirm += d
		}
	}
	spec := runner.Spec{Config: req.Config, MinBytes: req.MinBytes, MaxBytes: req.MaxBytes, PerIter: true, Debug: req.Debug,
		Sim: &runner.SimSpec{Executable: "nccltune", Profile: l.profile, Noise: 1, Seed: cliLaunchSeed(l.seed, req.Seq), Launch: req.Seq}}
	jsonPath := filepath.Join(l.dir, "launch.json")
	os.Remove(jsonPath)
	cmd, err := spec.BuildCommand("", jsonPath)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	code := sim.Main(cmd.Argv[2:], cmd.Env, &stdout, &stderr)
	launch := &benchfmt.Launch{Argv: cmd.Argv, Env: cmd.Env, ExitCode: code, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Simulated: true, Duration: took}
	res, perr := benchfmt.Parse(append(stdout.Bytes(), stderr.Bytes()...))
	if data, err := os.ReadFile(jsonPath); err == nil {
		if jr, err := benchfmt.ParseJSON(data); err == nil && len(jr.Rows) > 0 {
			if res != nil {
				jr.Facts = res.Facts
			}
			res, perr = jr, nil
		}
	}
	launch.Result = res
	switch {
	case code != 0:
		launch.Outcome, launch.Reason = benchfmt.Failed, fmt.Sprintf("exit status %d: %s", code, strings.TrimSpace(stderr.String()))
		if strings.Contains(stderr.String(), "cannot speak for") {
			l.refused[req.Config.Canonical().String()]++
		}
	case perr != nil || res == nil || len(res.Rows) == 0:
		launch.Outcome, launch.Reason = benchfmt.Failed, fmt.Sprintf("unparsable output: %v", perr)
	case res.Invalid() != "":
		launch.Outcome, launch.Reason = benchfmt.Invalid, res.Invalid()
	default:
		launch.Outcome = benchfmt.OK
	}
	return launch, nil
}

// replayOutcome classifies one study's answer on a replay.
type replayOutcome struct {
	env nccl.Config
	// best: the recommendation replays the recorded config with the best
	// band score (its own launches, or those of the config NCCL runs like
	// it: a cap spelt the other way) and carries nothing else.
	best bool
	// within5 is true when the replayed config's recorded band score is
	// within 5 % of the best recorded one.
	within5 bool
	// noops are recommended knobs that leave NCCL's plan unchanged: proved
	// by the plan rules, or shown by the recording (the config without
	// the knob was recorded with the same plan).
	noops   []string
	refused int
}

// recordedScore is a recorded config's band score: the geometric mean
// over the band's sizes of the recording's per-size medians (every warm
// launch's iterations).
func recordedScore(r *sim.Replay, c *sim.ReplayConfig, band []int64) float64 {
	med := r.Medians(c)
	sum, n := 0.0, 0
	for i, b := range r.Sizes {
		for _, x := range band {
			if x == b {
				sum += math.Log(med[i])
				n++
			}
		}
	}
	return math.Exp(sum / float64(n))
}

// bestRecorded is the timed config with the best recorded band score.
func bestRecorded(r *sim.Replay, band []int64) (*sim.ReplayConfig, float64) {
	var best *sim.ReplayConfig
	score := math.Inf(1)
	for _, c := range r.Configs {
		if len(c.Launches) == 0 {
			continue
		}
		if sc := recordedScore(r, c, band); sc < score {
			best, score = c, sc
		}
	}
	return best, score
}

func classifyReplay(r *sim.Replay, env nccl.Config, band []int64) replayOutcome {
	out := replayOutcome{env: env}
	if len(env) == 0 {
		return out
	}
	res := r.Native().Explain(env)
	for _, d := range res.Dropped {
		out.noops = append(out.noops, d.Knob+"="+d.Value+" ("+d.Reason+")")
	}
	with, _, err := r.Match(env)
	for _, k := range env.Names() {
		without := env.Clone()
		delete(without, k)
		other, _, err2 := r.Match(without)
		if err == nil && err2 == nil && with.NativePlan().Key() == other.NativePlan().Key() && !containsPrefix(out.noops, k+"=") {
			out.noops = append(out.noops, k+"="+env[k]+" (the recording's plan without it is the same)")
		}
	}
	if err == nil {
		best, bestScore := bestRecorded(r, band)
		out.best = with == best && len(out.noops) == 0
		out.within5 = recordedScore(r, with, band) <= 1.05*bestScore
	}
	return out
}

// launchPeriod is the recording's median time from one launch's start to
// the next's: what one launch of a study costs on that fabric, start-up
// included (the clock's fallback for a config it has no gap of).
func launchPeriod(r *sim.Replay) time.Duration {
	var starts []time.Time
	for _, c := range r.Configs {
		for _, l := range c.Launches {
			if !l.Start.IsZero() {
				starts = append(starts, l.Start)
			}
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	var gaps []float64
	for i := 1; i < len(starts); i++ {
		gaps = append(gaps, starts[i].Sub(starts[i-1]).Seconds())
	}
	if len(gaps) == 0 {
		return 0
	}
	return time.Duration(median(gaps) * float64(time.Second))
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// TestReplayQuality measures the search on a replay of a real fabric:
// over seeds 1..N (default 100) at budgets 30, the default and 120, how
// many studies recommend the recorded config with the best band score and
// nothing else (on h200-loopback4, one channel cap at 1, spelt
// NCCL_MAX_NCHANNELS or NCCL_MAX_CTAS; on h200-loopback4-32k,
// NCCL_ALGO=Tree), what the others recommend, the median launches and
// simulated wall time (each launch as long as the recording's launches of
// the config it replays, a debug launch as the real study's: replayClock), and
// whether any recommendation carries a knob that leaves NCCL's plan
// unchanged. It prints the table for docs/PERFORMANCE.md and fails below
// the bar (≥ 95 of 100 at the default budget, no no-op knob).
// Opt-in (minutes):
//
//	NCCLTUNE_REPLAY=internal/sim/testdata/replay/h200-loopback4.json go test ./search -run TestReplayQuality -v -timeout 60m
//	NCCLTUNE_REPLAY=internal/sim/testdata/replay/h200-loopback4-32k.json NCCLTUNE_REPLAY_BAND=32K-256K go test ./search -run TestReplayQuality -v -timeout 60m
//
// (a relative path is read from the package directory or the repository's root).
//
// NCCLTUNE_REPLAY_SEEDS (how many), NCCLTUNE_REPLAY_FIRST_SEED,
// NCCLTUNE_REPLAY_BUDGETS (comma-separated) and NCCLTUNE_REPLAY_BAND
// (default 512K-4M; the guard is the size above) change the seeds,
// budgets and band; NCCLTUNE_REPLAY_BATCH=N explores in batch launches
// of N configs (Options.BatchSize; LaunchBatch), 0 (default) in
// separate launches.
func TestReplayQuality(t *testing.T) {
	t.Parallel()
	path := os.Getenv("NCCLTUNE_REPLAY")
	if path == "" {
		t.Skip("set NCCLTUNE_REPLAY to a replay file to measure the search on it (nccltune replay build STORE.db --out FILE.json makes one from a store)")
	}
	// A relative path may be written from the repository's root.
	if _, err := os.Stat(sim.ReplayPath(path)); err != nil && !filepath.IsAbs(sim.ReplayPath(path)) {
		path = filepath.Join("..", sim.ReplayPath(path))
	}
	abs, err := filepath.Abs(sim.ReplayPath(path))
	if err != nil {
		t.Fatal(err)
	}
	profile := sim.ReplayPrefix + abs
	r, err := sim.LoadReplay(profile)
	if err != nil {
		t.Fatal(err)
	}
	seeds := 100
	if s := os.Getenv("NCCLTUNE_REPLAY_SEEDS"); s != "" {
		if seeds, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	first := int64(1)
	if s := os.Getenv("NCCLTUNE_REPLAY_FIRST_SEED"); s != "" {
		if first, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	def := DefaultOptions().Budget
	budgets := []int{30, def, 120}
	if s := os.Getenv("NCCLTUNE_REPLAY_BUDGETS"); s != "" {
		budgets = nil
		for _, b := range strings.Split(s, ",") {
			n, err := strconv.Atoi(b)
			if err != nil {
				t.Fatal(err)
			}
			budgets = append(budgets, n)
		}
	}
	band := nccl.Band{Min: 512 << 10, Max: 4 << 20}
	if s := os.Getenv("NCCLTUNE_REPLAY_BAND"); s != "" {
		if band, err = nccl.ParseBand(s); err != nil {
			t.Fatal(err)
		}
	}
	batchSize := 0
	if s := os.Getenv("NCCLTUNE_REPLAY_BATCH"); s != "" {
		if batchSize, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	best, bestScore := bestRecorded(r, band.Sizes())
	period := launchPeriod(r)
	clock := newReplayClock(r)
	fmt.Printf("replay %s: %s\n\nband %s; best recorded config %s (%.1f µs, defaults %.1f µs); a launch every %.2f s in the recording\n\n",
		r.Name, r.Description, band, best.Env, bestScore, recordedScore(r, r.Defaults(), band.Sizes()), period.Seconds())
	fmt.Printf("exploration in batch launches of %d configs (0: separate launches; a batch's wall time is modelled, simulated)\n\n", batchSize)
	fmt.Printf("| budget | the best recorded config, nothing else | other within 5 %% | other recommendation | keep defaults | with a no-op knob | median launches | median batch launches | median simulated wall time | exploring | confirming | ended early (settled) | launches refused by the replay |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, budget := range budgets {
		right, near, other, keep, noop, refused, settled := 0, 0, 0, 0, 0, 0, 0
		others, refusedCfg, endings := map[string]int{}, map[string]int{}, map[string]int{}
		var noopExamples []string
		var launches, walls, explores, confirms, batches []float64
		for seed := first; seed < first+int64(seeds); seed++ {
			o := DefaultOptions()
			o.Band, o.Guard, o.Seed, o.Budget, o.BatchSize = band, DefaultGuard(band), seed, budget, batchSize
			l := &replayLauncher{profile: profile, seed: seed, dir: t.TempDir(), refused: map[string]int{}, clock: clock}
			res, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil)
			if err != nil {
				t.Fatalf("budget %d seed %d: %v", budget, seed, err)
			}
			c := classifyReplay(r, res.Env(), band.Sizes())
			t.Logf("budget %d seed %d: %s (%d launches, %s; %s)", budget, seed, c.env, res.Launches, res.Ending, res.Reason)
			launches = append(launches, float64(res.Launches))
			walls = append(walls, l.wall.Seconds())
			explores, confirms = append(explores, l.explore.Seconds()), append(confirms, l.confirm.Seconds())
			batches = append(batches, float64(l.batches))
			if l.batches > 0 {
				t.Logf("budget %d seed %d: %d batch launches of %d configs, %d visits; exploring %.0f s, confirming %.0f s, in all %.0f s",
					budget, seed, l.batches, l.members, l.visits, l.explore.Seconds(), l.confirm.Seconds(), l.wall.Seconds())
			}
			endings[res.Ending]++
			if res.Settled != "" {
				settled++
			}
			for k, n := range l.refused {
				refused += n
				refusedCfg[k] += n
			}
			switch {
			case c.best:
				right++
			case len(c.env) == 0:
				keep++
			case c.within5:
				near++
				others[c.env.String()]++
			default:
				other++
				others[c.env.String()]++
			}
			if len(c.noops) > 0 {
				noop++
				noopExamples = append(noopExamples, fmt.Sprintf("seed %d: %s: %s", seed, c.env, strings.Join(c.noops, "; ")))
			}
		}
		mark := ""
		if budget == def {
			mark = " (default)"
		}
		med := median(launches)
		fmt.Printf("| %d%s | %d/%d | %d | %d | %d | %d | %.0f | %.0f | %.0f s | %.0f s | %.0f s | %d | %d |\n", budget, mark, right, seeds, near, other, keep, noop,
			med, median(batches), median(walls), median(explores), median(confirms), settled, refused)
		var names []string
		for k := range others {
			names = append(names, k)
		}
		sort.Slice(names, func(i, j int) bool { return others[names[i]] > others[names[j]] })
		for _, k := range names {
			t.Logf("budget %d: %d× %s", budget, others[k], k)
		}
		var ends []string
		for k, n := range endings {
			ends = append(ends, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(ends)
		t.Logf("budget %d: endings %s", budget, strings.Join(ends, ", "))
		var refusedNames []string
		for k := range refusedCfg {
			refusedNames = append(refusedNames, k)
		}
		sort.Slice(refusedNames, func(i, j int) bool { return refusedCfg[refusedNames[i]] > refusedCfg[refusedNames[j]] })
		for i, k := range refusedNames {
			if i == 15 {
				t.Logf("budget %d: … %d more configs refused", budget, len(refusedNames)-i)
				break
			}
			t.Logf("budget %d: refused %d× %s", budget, refusedCfg[k], k)
		}
		for _, ex := range noopExamples {
			t.Logf("budget %d: no-op knob: %s", budget, ex)
		}
		if budget == def && seeds >= 100 && (right*100 < 95*seeds || noop > 0) {
			t.Errorf("default budget: %d/%d recommend the best recorded config %s and nothing else (want ≥ 95/100), %d carry a no-op knob (want 0)", right, seeds, best.Env, noop)
		}
	}
}

// TestReplayLauncher runs one short study on a small replay built here
// from the simulator, through the launcher TestReplayQuality uses: the
// study ends, unrecorded configs are refused as failed launches (never
// a crash of the study), and the answer is classified.
func TestReplayLauncher(t *testing.T) {
	t.Parallel()
	p, err := sim.LoadProfile("h200-loopback")
	if err != nil {
		t.Fatal(err)
	}
	sizes := nccl.PowersOfTwo(512<<10, 8<<20)
	r := &sim.Replay{Format: sim.ReplayFormat, Name: "tiny", NRanks: p.NRanks, NCCLVersion: p.NCCLVersion,
		Transport: "Socket", NICs: []string{"lo:127.0.0.1<0>"}, Channels: 2, Sizes: sizes}
	launch := 0
	for _, cfg := range []nccl.Config{{}, {"NCCL_MAX_NCHANNELS": "1"}} {
		c := &sim.ReplayConfig{Env: cfg}
		for _, b := range sizes {
			ch, err := p.Choose(cfg, b)
			if err != nil {
				t.Fatal(err)
			}
			c.Plan = append(c.Plan, benchfmt.PlanStep{Bytes: b, Algo: ch.Algo, Proto: ch.Proto, Channels: ch.Channels})
		}
		for i := 0; i < 4; i++ {
			samples, err := p.SampleLaunch(cfg, sizes, 10, 1, int64(launch+1), launch)
			if err != nil {
				t.Fatal(err)
			}
			l := sim.ReplayLaunch{Cold: launch == 0}
			for _, b := range sizes {
				ts := samples[b]
				if len(cfg) > 0 {
					// The cap is the recording's best config: twice as fast.
					for j := range ts {
						ts[j] /= 2
					}
				}
				l.TimesUS = append(l.TimesUS, ts)
			}
			c.Launches = append(c.Launches, l)
			launch++
		}
		r.Configs = append(r.Configs, c)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "tiny.json")
	os.WriteFile(file, data, 0o644)
	o := DefaultOptions()
	band := nccl.Band{Min: 512 << 10, Max: 4 << 20}
	o.Band, o.Guard, o.Budget, o.Seed = band, DefaultGuard(band), 25, 3
	l := &replayLauncher{profile: sim.ReplayPrefix + file, seed: 3, dir: t.TempDir(), refused: map[string]int{}}
	res, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Launches == 0 || len(l.refused) == 0 {
		t.Errorf("%d launches, %d configs refused: want a study that met unrecorded configs", res.Launches, len(l.refused))
	}
	loaded, err := sim.LoadReplay(sim.ReplayPrefix + file)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env   nccl.Config
		best  bool
		noops int
	}{
		{nccl.Config{}, false, 0},
		{nccl.Config{"NCCL_MAX_NCHANNELS": "1"}, true, 0},
		{nccl.Config{"NCCL_MAX_NCHANNELS": "1", "NCCL_PROTO": "Simple"}, false, 1},
		{nccl.Config{"NCCL_CROSS_NIC": "0"}, false, 1},
	} {
		c := classifyReplay(loaded, tc.env, band.Sizes())
		if c.best != tc.best || len(c.noops) != tc.noops {
			t.Errorf("%s: best %v, no-ops %v; want %v and %d", tc.env, c.best, c.noops, tc.best, tc.noops)
		}
	}
}
