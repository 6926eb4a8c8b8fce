package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/runner"
)

// recording describes a recording of launches made the way a real store
// is made: interleaved rounds of one launch per config (one sweep study per
// launch), the fabric's launch index counting across all of them (so
// only the very first launch is cold), and one doctor JSON per config.
type recording struct {
	profile *Profile
	configs []nccl.Config
	rounds  int
	iters   int
	sizes   []int64
	// failAt makes that global launch index a failed launch.
	failAt int
	// debugPlans stores the plans as NCCL_DEBUG facts of explain launches
	// instead of writing doctor files.
	debugPlans bool
	// planOnly get a doctor file (a plan) but no timed launch.
	planOnly []nccl.Config
}

// record makes the recording, as studyrun.RecordingOf reads a store of
// it (the store would be dir/rec.db), and writes its doctor files into
// dir.
func (rc recording) record(t testing.TB, dir string) *Recording {
	t.Helper()
	rec := &Recording{Source: filepath.Join(dir, "rec.db")}
	p := rc.profile
	start := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	g := 0
	addStudy := func(cfg nccl.Config, phase string, l *RecordedLaunch) {
		l.Config, l.Phase, l.Seq = cfg, phase, 0
		rec.Studies = append(rec.Studies, RecordedStudy{Name: fmt.Sprintf("s%d-sweep", len(rec.Studies)+1), Simulated: true,
			Ranks: p.NRanks, NCCLVersion: p.NCCLVersion, GPU: p.GPU, Transport: transportSocket, Launches: []RecordedLaunch{*l}})
	}
	for round := 0; round < rc.rounds; round++ {
		for _, cfg := range rc.configs {
			l := &RecordedLaunch{Start: start.Add(time.Duration(g) * time.Minute), Outcome: benchfmt.OK}
			if g == rc.failAt && rc.failAt > 0 {
				l.Outcome, l.Reason = benchfmt.Failed, "exit status 3: recorded failure"
			} else {
				samples, err := p.SampleLaunch(cfg, rc.sizes, rc.iters, 1, int64(g+1), g)
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range rc.sizes {
					l.Sizes = append(l.Sizes, benchfmt.Size{Bytes: b, TimeUS: meanOf(samples[b]), Samples: samples[b]})
				}
			}
			addStudy(cfg, vocab.PhaseSweep, l)
			g++
		}
	}
	for i, cfg := range append(append([]nccl.Config{}, rc.configs...), rc.planOnly...) {
		f := p.resolve(cfg)
		var choices []benchfmt.Choice
		for _, b := range rc.sizes {
			c := f.choose(b)
			choices = append(choices, benchfmt.Choice{Collective: "AllReduce", Bytes: b, Algo: c.LogAlgo(), Proto: c.LogProto(), ChannelHi: c.Channels - 1, Channels: c.Channels})
		}
		if rc.debugPlans {
			// A debug launch of the simulator, parsed as a study would.
			debugEnv := append(cfg.Env(), "NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS="+runner.DefaultDebugSubsys)
			var out, errOut bytes.Buffer
			if code := Main([]string{"--profile", p.Name, "-b", fmt.Sprint(rc.sizes[0]), "-e", fmt.Sprint(rc.sizes[len(rc.sizes)-1]), "-f", "2", "-n", "2"},
				debugEnv, &out, &errOut); code != 0 {
				t.Fatalf("debug launch of %s: exit %d: %s", cfg, code, errOut.String())
			}
			res, err := benchfmt.Parse(out.Bytes())
			if err != nil || res.Facts == nil {
				t.Fatalf("debug launch of %s: %v", cfg, err)
			}
			l := &RecordedLaunch{Start: start.Add(time.Duration(g+i) * time.Minute), Outcome: benchfmt.OK, Env: debugEnv, Facts: res.Facts}
			addStudy(cfg, vocab.PhaseExplain, l)
			continue
		}
		base := p.resolve(nccl.Config{})
		doc := map[string]any{"source": "launch", "simulated": true, "nccl_version": p.NCCLVersion, "nranks": p.NRanks,
			"gpu": p.GPU, "transport": transportSocket, "channels": base.commChannels, "failed": false, "nics": []string{"lo:127.0.0.1<0>"}}
		var baseChoices []benchfmt.Choice
		for _, b := range rc.sizes {
			c := base.choose(b)
			baseChoices = append(baseChoices, benchfmt.Choice{Collective: "AllReduce", Bytes: b, Algo: c.LogAlgo(), Proto: c.LogProto(), ChannelHi: c.Channels - 1, Channels: c.Channels})
		}
		doc["choices"] = baseChoices
		if len(cfg) > 0 {
			doc["compare_env"] = cfg
			var rows []map[string]any
			for _, c := range choices {
				rows = append(rows, map[string]any{"collective": "AllReduce", "bytes": c.Bytes,
					"recommended": map[string]any{"algo": canonAlgo(c.Algo), "proto": canonProto(c.Proto), "channels": c.Channels}})
			}
			doc["compare"] = rows
		}
		data, _ := json.Marshal(doc)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("doctor-%d.json", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rec
}

func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

var (
	recSizes   = nccl.PowersOfTwo(512<<10, 8<<20)
	recConfigs = []nccl.Config{{}, {"NCCL_MAX_NCHANNELS": "1"}, {"NCCL_PROTO": "LL"}, {"NCCL_ALGO": "Tree"}}
)

// testReplay records a small simulated fabric, builds its replay and
// writes it as a replay file (rec.json, beside the recording's doctor
// files) for the simulator's launches to read.
func testReplay(t testing.TB, rc recording) (*Replay, string) {
	t.Helper()
	dir := t.TempDir()
	rec := rc.record(t, dir)
	r, err := BuildReplay(BuildOptions{Recording: rec, Plans: PlansBeside(rec.Source)})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "rec.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return r, file
}

func defaultRecording(t testing.TB) recording {
	return recording{profile: mustProfile(t, "h200-loopback"), configs: recConfigs, rounds: 4, iters: 5, sizes: recSizes}
}

func TestReplayBuildRoundTrip(t *testing.T) {
	for _, debug := range []bool{false, true} {
		t.Run(fmt.Sprintf("debugPlans=%v", debug), func(t *testing.T) {
			rc := defaultRecording(t)
			rc.debugPlans = debug
			r, _ := testReplay(t, rc)
			if len(r.Configs) != len(recConfigs) || len(r.Configs[0].Env) != 0 {
				t.Fatalf("configs %v, want the defaults first and %d in all", r.Configs, len(recConfigs))
			}
			if !r.FromSimulated || r.NRanks != 2 || r.NCCLVersion != "2.28.3" || fmt.Sprint(r.Sizes) != fmt.Sprint(recSizes) {
				t.Errorf("replay facts: simulated %v ranks %d nccl %s sizes %v", r.FromSimulated, r.NRanks, r.NCCLVersion, r.Sizes)
			}
			p := mustProfile(t, "h200-loopback")
			cold := 0
			for _, c := range r.Configs {
				if len(c.Launches) != rc.rounds {
					t.Errorf("%s: %d launches, want %d (one per round)", c.Env, len(c.Launches), rc.rounds)
				}
				for i, l := range c.Launches {
					if l.Cold {
						cold++
						if len(c.Env) != 0 || i != 0 {
							t.Errorf("launch %d of %s is cold; only the store's first launch (the defaults') is", i, c.Env)
						}
					}
					if i > 0 && !l.Start.After(c.Launches[i-1].Start) {
						t.Errorf("%s: launches out of time order", c.Env)
					}
				}
				f := p.resolve(c.Env)
				for _, s := range c.Plan {
					want := f.choose(s.Bytes)
					if got := (Choice{Algo: s.Algo, Proto: s.Proto, Channels: s.Channels}); got != want {
						t.Errorf("%s at %d: plan %+v, want %+v", c.Env, s.Bytes, got, want)
					}
				}
				if len(c.Plan) != len(recSizes) || c.PlanSource == "" {
					t.Errorf("%s: plan of %d sizes from %q", c.Env, len(c.Plan), c.PlanSource)
				}
			}
			if cold != 1 {
				t.Errorf("%d cold launches, want 1", cold)
			}
			// A replay file says the same as the store it came from.
			data, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "r.json")
			os.WriteFile(file, data, 0o644)
			back, err := LoadReplay(ReplayPrefix + file)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := json.Marshal(back)
			if !bytes.Equal(data, again) {
				t.Error("the replay file does not read back as written")
			}
		})
	}
}

func TestIsReplay(t *testing.T) {
	_, db := testReplay(t, defaultRecording(t))
	profile := filepath.Join(t.TempDir(), "p.json")
	data, _ := builtinFS.ReadFile("profiles/spark4.json")
	os.WriteFile(profile, data, 0o644)
	for _, tc := range []struct {
		arg  string
		want bool
	}{{db, true}, {"replay:" + db, true}, {"replay:missing.json", true}, {profile, false}, {"spark4", false}, {"missing.db", false}} {
		if got := IsReplay(tc.arg); got != tc.want {
			t.Errorf("IsReplay(%s) = %v, want %v", tc.arg, got, tc.want)
		}
	}
	if _, err := LoadReplay("replay:" + profile); err == nil || !strings.Contains(err.Error(), "is it a profile?") {
		t.Errorf("a profile given as a replay: %v", err)
	}
}

// launchIndex finds which recorded launch of c a replayed sample is, by
// its whole launch: every size must come from that one launch.
func launchIndex(t *testing.T, r *Replay, c *ReplayConfig, got map[int64][]float64, scale []float64) int {
	t.Helper()
	for i, l := range c.Launches {
		if l.Failed != "" {
			continue
		}
		same := true
		for k, b := range r.Sizes {
			for j, v := range got[b] {
				if math.Abs(v-l.TimesUS[k][j%len(l.TimesUS[k])]*scale[k]) > 1e-9*v {
					same = false
				}
			}
		}
		if same {
			return i
		}
	}
	return -1
}

func ones(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

func TestReplayResamplesRecordedLaunches(t *testing.T) {
	r, _ := testReplay(t, defaultRecording(t))
	for _, c := range r.Configs {
		seen := map[int]bool{}
		for seed := int64(1); seed <= 40; seed++ {
			got, err := r.SampleLaunch(c.Env, r.Sizes, 8, 1, seed, 1+int(seed%7))
			if err != nil {
				t.Fatal(err)
			}
			i := launchIndex(t, r, c, got, ones(len(r.Sizes)))
			if i < 0 {
				t.Fatalf("%s seed %d: the samples are not one recorded launch (whole, iterations in order, cycled past the 5 recorded)", c.Env, seed)
			}
			if c.Launches[i].Cold {
				t.Errorf("%s seed %d: a warm launch replayed the cold one", c.Env, seed)
			}
			seen[i] = true
		}
		want := len(c.Launches)
		if len(c.Env) == 0 {
			want-- // the cold launch is only launch 0
		}
		if len(seen) != want {
			t.Errorf("%s: 40 launches drew %d of the %d warm recorded launches", c.Env, len(seen), want)
		}
	}
	// Reproducible: same seed and index, same launch.
	a, _ := r.SampleLaunch(nccl.Config{}, r.Sizes, 5, 1, 9, 3)
	b, _ := r.SampleLaunch(nccl.Config{}, r.Sizes, 5, 1, 9, 3)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("the same seed and launch index replayed different launches")
	}
}

func TestReplayColdLaunchFirst(t *testing.T) {
	r, _ := testReplay(t, defaultRecording(t))
	def := r.Defaults()
	got, _ := r.SampleLaunch(nccl.Config{}, r.Sizes, 5, 1, 3, 0)
	if i := launchIndex(t, r, def, got, ones(len(r.Sizes))); i < 0 || !def.Launches[i].Cold {
		t.Fatalf("launch 0 of the defaults replayed launch %d, want the recorded cold one", i)
	}
	// The simulated recording's cold launch is ~30 % slow: so is launch 0.
	ratio := r.coldRatio()
	for k, x := range ratio {
		if x < 1.1 {
			t.Errorf("cold/warm at %d: %.2f, want the recorded cold start (h200-loopback: 1.3)", r.Sizes[k], x)
		}
	}
	// Another config's launch 0 is one of its warm launches, as slow as
	// the recorded cold launch was.
	c := r.Configs[1]
	got, _ = r.SampleLaunch(c.Env, r.Sizes, 5, 1, 3, 0)
	if i := launchIndex(t, r, c, got, ratio); i < 0 {
		t.Errorf("launch 0 of %s is not a warm launch × the cold ratio", c.Env)
	}
	// --noise 0 is the median curve, cold or not.
	med := r.Medians(def)
	for _, launch := range []int{0, 5} {
		got, _ = r.SampleLaunch(nccl.Config{}, r.Sizes, 3, 0, 1, launch)
		for k, b := range r.Sizes {
			for _, v := range got[b] {
				if math.Abs(v-med[k]) > 1e-9*v {
					t.Fatalf("noise 0, launch %d, %d B: %g, want the median %g", launch, b, v, med[k])
				}
			}
		}
	}
}

func TestReplayMatch(t *testing.T) {
	r, _ := testReplay(t, defaultRecording(t))
	for _, tc := range []struct {
		cfg  nccl.Config
		want string // the recorded config's key, or "refused"
	}{
		{nccl.Config{}, ""},
		{env("NCCL_DEBUG=INFO", "NCCL_IB_HCA=mlx5"), ""},                         // not knobs
		{env("NCCL_CROSS_NIC=2"), ""},                                            // NCCL's default value
		{env("NCCL_MAX_NCHANNELS=1"), "NCCL_MAX_NCHANNELS=1"},                    // recorded
		{env("NCCL_MAX_NCHANNELS=1", "NCCL_MAX_CTAS=4"), "NCCL_MAX_NCHANNELS=1"}, // the smaller cap wins
		{env("NCCL_PROTO=LL", "NCCL_CROSS_NIC=2"), "NCCL_PROTO=LL"},
		// NCCL's plan rules: proved no-ops replay what is left.
		{env("NCCL_MAX_NCHANNELS=2"), ""},                                            // a cap at the 2 channels NCCL uses
		{env("NCCL_MAX_CTAS=64", "NCCL_PROTO=Simple", "NCCL_ALGO=Ring"), ""},         // lists that hold every choice
		{env("NCCL_CROSS_NIC=0"), ""},                                                // one NIC
		{env("NCCL_CROSS_NIC=0", "NCCL_MAX_NCHANNELS=1"), "NCCL_MAX_NCHANNELS=1"},    // the rest is recorded
		{env("NCCL_MAX_CTAS=1"), "NCCL_MAX_NCHANNELS=1"},                             // one key since NCCL 2.17
		{env("NCCL_NTHREADS=256"), "refused"},                                        // the defaults' log cannot say
		{env("NCCL_MAX_NCHANNELS=1", "NCCL_PROTO=Simple"), "NCCL_MAX_NCHANNELS=1"},   // Simple is all its recorded plan uses
		{env("NCCL_ALGO=Ring", "NCCL_PROTO=LL", "NCCL_MAX_CTAS=4"), "NCCL_PROTO=LL"}, // Ring is all LL's recorded plan uses
		{env("NCCL_PROTO=LL", "NCCL_MAX_NCHANNELS=1"), "refused"},                    // two plan changes, neither recorded with the other
		{env("NCCL_ALGO=Tree", "NCCL_PROTO=Simple"), "NCCL_ALGO=Tree"},
		{env("NCCL_ALGO=Ring", "NCCL_MAX_CTAS=1"), "NCCL_MAX_NCHANNELS=1"}, // the cap spelt the other way
		{env("NCCL_PROTO=LL128"), "refused"},                               // switches on what the defaults had off
	} {
		c, _, err := r.Match(tc.cfg)
		switch {
		case tc.want == "refused":
			var ref *ReplayRefusal
			if !errors.As(err, &ref) || !strings.Contains(err.Error(), "cannot speak for "+knobsOf(tc.cfg).String()) {
				t.Errorf("%s: %v, want a refusal naming the config", tc.cfg, err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.cfg, err)
		case c.Env.Key() != tc.want:
			t.Errorf("%s replays %q, want %q", tc.cfg, c.Env.Key(), tc.want)
		}
	}
}

func configOf(t *testing.T, r *Replay, key string) *ReplayConfig {
	t.Helper()
	for _, c := range r.Configs {
		if c.Env.Key() == key {
			return c
		}
	}
	t.Fatalf("no recorded config %q", key)
	return nil
}

// runReplay runs the replay child in process.
func runReplay(t *testing.T, profile string, environ []string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(append([]string{"--profile", profile}, args...), environ, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func TestReplayChildOutput(t *testing.T) {
	r, db := testReplay(t, defaultRecording(t))
	c := configOf(t, r, "NCCL_MAX_NCHANNELS=1")
	environ := append(c.Env.Env(), "NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,ENV,NET,TUNING")
	out, errOut, code := runReplay(t, "replay:"+db, environ, "-b", "256K", "-e", "32M", "-f", "2", "--seed", "4", "--launch", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	res, err := benchfmt.Parse([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Simulated || res.SimProfile != "replay:rec" || !strings.Contains(out, "# nccltune simulated fabric: profile replay:rec (SIMULATED, not a measurement)") {
		t.Errorf("the output is not labelled as a simulated replay: simulated %v profile %q", res.Simulated, res.SimProfile)
	}
	if res.NRanks != r.NRanks || res.Facts == nil || res.Facts.Transport != "Socket" || res.Facts.Channels != 1 {
		t.Errorf("facts %+v, ranks %d", res.Facts, res.NRanks)
	}
	// Debug lines: the recorded plan; outside the recorded sizes, the
	// nearest recorded size's choice and time.
	plan := map[int64]benchfmt.PlanStep{}
	for _, s := range c.Plan {
		plan[s.Bytes] = s
	}
	if len(res.Facts.Choices) != 8 {
		t.Fatalf("%d TUNING lines, want one per size 256K..32M", len(res.Facts.Choices))
	}
	for _, ch := range res.Facts.Choices {
		b := min(max(ch.Bytes, r.Sizes[0]), r.Sizes[len(r.Sizes)-1])
		want := plan[b]
		if !strings.EqualFold(ch.Algo, want.Algo) || !strings.EqualFold(ch.Proto, want.Proto) || ch.Channels != want.Channels {
			t.Errorf("%d B: NCCL line %s %s %d, want the plan of %d B: %+v", ch.Bytes, ch.Algo, ch.Proto, ch.Channels, b, want)
		}
	}
	if !strings.Contains(out, "NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..0}") {
		t.Errorf("no NCCL-style TUNING line for 1M:\n%s", out)
	}
	rows := map[int64]float64{}
	for _, row := range res.Rows {
		rows[row.Bytes] = row.Out.TimeUS
	}
	if rows[256<<10] != rows[512<<10] || rows[32<<20] != rows[8<<20] || rows[1<<20] == rows[512<<10] {
		t.Errorf("outside 512K..8M the times must be the nearest recorded size's: %v", rows)
	}
}

func TestReplayRefusesUnknownConfig(t *testing.T) {
	_, db := testReplay(t, defaultRecording(t))
	out, errOut, code := runReplay(t, "replay:"+db, []string{"NCCL_NTHREADS=256"}, "-b", "1M", "-e", "1M")
	if code != exitReplayRefused || out != "" || !strings.Contains(errOut, "SIMULATED replay rec cannot speak for NCCL_NTHREADS=256") {
		t.Errorf("exit %d, stdout %q, stderr %q: want a refusal naming the config", code, out, errOut)
	}
	if _, _, code := runReplay(t, "replay:"+db, nil, "--ranks", "8"); code != 2 {
		t.Errorf("--ranks 8 on a 2-rank recording: exit %d, want 2", code)
	}
}

func TestReplayRecordedFailure(t *testing.T) {
	rc := defaultRecording(t)
	rc.failAt = len(recConfigs) + 1 // round 1, second config
	r, db := testReplay(t, rc)
	c := configOf(t, r, recConfigs[1].Key())
	failed := 0
	for seed := int64(1); seed <= 30; seed++ {
		_, err := r.SampleLaunch(c.Env, r.Sizes, 5, 1, seed, 1)
		var rf *ReplayedFailure
		if errors.As(err, &rf) {
			failed++
			_, errOut, code := runReplay(t, "replay:"+db, c.Env.Env(), "--seed", fmt.Sprint(seed), "--launch", "1")
			if code != exitReplayedFailure || !strings.Contains(errOut, "recorded failure") {
				t.Errorf("a replayed failure: exit %d, %s", code, errOut)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if failed == 0 || failed == 30 {
		t.Errorf("%d of 30 replays of a config with 1 failed launch in 4 failed", failed)
	}
}

func TestReplayTuningTable(t *testing.T) {
	rc := defaultRecording(t)
	rc.debugPlans = true
	r, db := testReplay(t, rc)
	if r.Tuning == nil || r.Tuning["RING"]["SIMPLE"] <= 0 || r.Tuning["RING"]["LL128"] != 0 {
		t.Fatalf("recorded table %v: want h200-loopback's (Simple on, LL128 off)", r.Tuning)
	}
	debug := []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,TUNING"}
	for _, tc := range []struct {
		cfg  []string
		want map[string]bool // protocol → on in the printed table (Ring)
	}{
		{nil, map[string]bool{"LL": true, "LL128": false, "SIMPLE": true}},
		{[]string{"NCCL_PROTO=LL"}, map[string]bool{"LL": true, "LL128": false, "SIMPLE": false}},
	} {
		out, errOut, code := runReplay(t, "replay:"+db, append(tc.cfg, debug...), "-b", "1M", "-e", "1M")
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.cfg, code, errOut)
		}
		res, _ := benchfmt.Parse([]byte(out))
		n, ok := res.Facts.Native("AllReduce")
		if !ok || n.Table == nil {
			t.Fatalf("%v: no plan or table in the replay's debug log", tc.cfg)
		}
		for proto, on := range tc.want {
			if got := n.Table["RING"][proto] > 0; got != on {
				t.Errorf("%v: Ring/%s printed on=%v, want %v", tc.cfg, proto, got, on)
			}
		}
	}
	// Without a recorded table, a replay prints none rather than invent one.
	r2, db2 := testReplay(t, defaultRecording(t))
	if r2.Tuning != nil {
		t.Fatalf("a recording without debug logs has a table: %v", r2.Tuning)
	}
	out, _, _ := runReplay(t, "replay:"+db2, debug, "-b", "1M", "-e", "1M")
	if res, _ := benchfmt.Parse([]byte(out)); res.Facts == nil || res.Facts.Tuning != nil || len(res.Facts.Choices) != 1 {
		t.Errorf("without a recorded table: facts %+v", res.Facts)
	}
}

// TestWriteSimRecording writes a simulated recording made the way the
// real one is (interleaved rounds, one launch index across all of them,
// doctor files) and its replay file into $NCCLTUNE_RECORD_REPLAY: a
// stand-in for a real recording while developing (it is SIMULATED, and
// its replay says from_simulated). Opt-in:
//
//	NCCLTUNE_RECORD_REPLAY=/tmp/rec go test ./sim -run TestWriteSimRecording
func TestWriteSimRecording(t *testing.T) {
	dir := os.Getenv("NCCLTUNE_RECORD_REPLAY")
	if dir == "" {
		t.Skip("set NCCLTUNE_RECORD_REPLAY=DIR to write a simulated recording there")
	}
	p, err := mustProfile(t, "h200-loopback").WithRanks(4)
	if err != nil {
		t.Fatal(err)
	}
	var configs []nccl.Config
	for _, c := range []string{"", "NCCL_MAX_NCHANNELS=1", "NCCL_MAX_CTAS=1", "NCCL_PROTO=LL", "NCCL_PROTO=LL128", "NCCL_ALGO=Tree",
		"NCCL_ALGO=Tree NCCL_PROTO=LL", "NCCL_ALGO=Tree NCCL_MAX_NCHANNELS=1", "NCCL_PROTO=LL NCCL_MAX_NCHANNELS=1", "NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=1"} {
		cfg := nccl.Config{}
		for _, kv := range strings.Fields(c) {
			k, v, _ := strings.Cut(kv, "=")
			cfg[k] = v
		}
		configs = append(configs, cfg)
	}
	os.MkdirAll(dir, 0o755)
	rec := recording{profile: p, configs: configs, rounds: 7, iters: 20, sizes: recSizes}.record(t, dir)
	r, err := BuildReplay(BuildOptions{Recording: rec, Plans: PlansBeside(rec.Source), Name: "sim-loopback4"})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.MarshalIndent(r, "", " ")
	if err := os.WriteFile(filepath.Join(dir, "replay.json"), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote the doctor files and %s: %s", filepath.Join(dir, "replay.json"), r.Description)
}

func TestReplayPlanOnlyConfigs(t *testing.T) {
	rc := defaultRecording(t)
	rc.planOnly = []nccl.Config{env("NCCL_MIN_NCHANNELS=2"), env("NCCL_NTHREADS=256"), env("NCCL_ALGO=Tree", "NCCL_MAX_NCHANNELS=1")}
	r, _ := testReplay(t, rc)
	if len(r.PlanOnly) != 3 || len(r.Configs) != len(recConfigs) {
		t.Fatalf("%d plan-only, %d timed configs", len(r.PlanOnly), len(r.Configs))
	}
	for _, tc := range []struct {
		cfg  nccl.Config
		want string
	}{
		{env("NCCL_MIN_NCHANNELS=2"), ""},                          // NCCL showed the defaults' plan
		{env("NCCL_MIN_NCHANNELS=2", "NCCL_CROSS_NIC=0"), ""},      // … and one NIC has nothing to cross
		{env("NCCL_NTHREADS=256"), "refused"},                      // same plan, but threads change the time
		{env("NCCL_ALGO=Tree", "NCCL_MAX_NCHANNELS=1"), "refused"}, // a plan nothing timed ran
		{env("NCCL_ALGO=Tree", "NCCL_MAX_CTAS=1"), "refused"},      // the same, spelt otherwise
	} {
		c, how, err := r.Match(tc.cfg)
		switch {
		case tc.want == "refused":
			if err == nil {
				t.Errorf("%s: replays %s (%s), want a refusal", tc.cfg, c.Env, how)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.cfg, err)
		case c.Env.Key() != tc.want || len(c.Launches) == 0:
			t.Errorf("%s replays %q (%s), want the timed %q", tc.cfg, c.Env.Key(), how, tc.want)
		}
	}
}

// TestRecordedLoopback4 checks the committed real recording
// (testdata/replay/h200-loopback4.json, see its README): what it holds
// and that it says what the hardware said.
func TestRecordedLoopback4(t *testing.T) {
	r, err := LoadReplay(ReplayPrefix + "testdata/replay/h200-loopback4.json")
	if err != nil {
		t.Fatal(err)
	}
	if r.FromSimulated || r.NRanks != 4 || r.NCCLVersion != "2.28.3" || r.Transport != "Socket" || r.Channels != 2 {
		t.Errorf("fabric: simulated %v, %d ranks, NCCL %s, %s, %d channels", r.FromSimulated, r.NRanks, r.NCCLVersion, r.Transport, r.Channels)
	}
	if len(r.Configs) != 10 || len(r.PlanOnly) != 4 {
		t.Errorf("%d timed and %d plan-only configs, want 10 and 4", len(r.Configs), len(r.PlanOnly))
	}
	cold := 0
	for _, c := range r.Configs {
		if len(c.Launches) != 7 {
			t.Errorf("%s: %d launches, want 7 rounds", c.Env, len(c.Launches))
		}
		for _, l := range c.Launches {
			if l.Cold {
				cold++
			}
		}
	}
	if cold != 1 || !r.Defaults().Launches[0].Cold {
		t.Errorf("%d cold launches; want one, the defaults' first", cold)
	}
	// The band score (geometric mean of per-size medians over 512K-4M).
	score := func(cfg nccl.Config) float64 {
		c, _, err := r.Match(cfg)
		if err != nil {
			t.Fatal(err)
		}
		med := r.Medians(c)
		s := 0.0
		for k, b := range r.Sizes {
			if b <= 4<<20 {
				s += math.Log(med[k])
			}
		}
		return math.Exp(s / 4)
	}
	gain := score(nccl.Config{}) / score(env("NCCL_MAX_NCHANNELS=1"))
	if gain < 1.03 || gain > 1.12 {
		t.Errorf("NCCL_MAX_NCHANNELS=1 is ×%.3f the defaults; the hardware showed 5–14 %% at 512K–4M", gain)
	}
	for _, cfg := range []nccl.Config{env("NCCL_MAX_CTAS=1"), env("NCCL_MAX_CTAS=1", "NCCL_CROSS_NIC=0", "NCCL_ALGO=Ring")} {
		if c, how, err := r.Match(cfg); err != nil || c.Env.Key() != "NCCL_MAX_NCHANNELS=1" {
			t.Errorf("%s: %v %s, want the recorded NCCL_MAX_NCHANNELS=1", cfg, err, how)
		}
	}
	if c, _, err := r.Match(env("NCCL_PROTO=^LL128")); err != nil || len(c.Env) != 0 {
		t.Errorf("NCCL_PROTO=^LL128 (doctor: NCCL's own plan): %v, want the defaults", err)
	}
}

// TestRequirePlansNamesAFew: a store of searches lacks NCCL's plan for
// most of its configs; the error counts them and names three, in one
// readable line, instead of listing every config.
func TestRequirePlansNamesAFew(t *testing.T) {
	var configs []*ReplayConfig
	for i := 0; i < 40; i++ {
		configs = append(configs, &ReplayConfig{Env: nccl.Config{"NCCL_MAX_CTAS": fmt.Sprint(i + 1), "NCCL_PROTO": "Simple", "NCCL_ALGO": "Ring"}})
	}
	configs = append(configs, &ReplayConfig{Env: nccl.Config{}, Plan: []benchfmt.PlanStep{{}}})
	err := requirePlans(configs)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, "40 of 41 recorded configs have no plan") || !strings.Contains(msg, "and 37 more") || len(msg) > 600 {
		t.Errorf("%d characters: %s", len(msg), msg)
	}
}
