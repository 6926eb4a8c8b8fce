package sim

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/runner"
)

// TestBatchDuration: a batch costs its start-up, one communicator's init
// per config and every visit (its iterations at the visit's times and the
// overhead); noiseless, a visit is the profile's true times.
func TestBatchDuration(t *testing.T) {
	p, err := LoadProfile("h200-loopback")
	if err != nil {
		t.Fatal(err)
	}
	sizes := nccl.PowersOfTwo(512<<10, 4<<20)
	cfgs := []nccl.Config{{}, {"NCCL_PROTO": "LL"}}
	for _, rounds := range []int{1, 8} {
		d := p.SampleBatch([]BatchOp{{Op: nccl.AllReduce, Sizes: sizes}}, cfgs, rounds, 3, 20, 0, 1, 5)
		want := BatchStartup + 2*BatchCommInit
		for i, c := range cfgs {
			if d.Errs[i] != nil || len(d.Visits[i]) != 1 || len(d.Visits[i][0]) != rounds {
				t.Fatalf("config %s: err %v, %d ops", c, d.Errs[i], len(d.Visits[i]))
			}
			sum := 0.0
			for _, b := range sizes {
				us, _ := p.TrueTimeUS(c, b)
				sum += us
				if got := d.Visits[i][0][rounds-1][b]; math.Abs(got-us) > 1e-9*us {
					t.Errorf("%s at %d: %.3f µs, want the true %.3f", c, b, got, us)
				}
			}
			want += time.Duration(rounds) * (BatchVisitOverhead + time.Duration(23*sum*float64(time.Microsecond)))
		}
		if diff := d.Duration - want; diff < -time.Millisecond || diff > time.Millisecond {
			t.Errorf("%d rounds: %s, want %s", rounds, d.Duration, want)
		}
	}
}

// TestReplayBatch: on the recorded loopback the model gives a round of the
// experiment's eight configs (their replayed equivalents) about the
// measured 1.22 s; a config the recording cannot speak for fails alone.
func TestReplayBatch(t *testing.T) {
	r, err := LoadReplay(ReplayPrefix + "testdata/replay/h200-loopback4.json")
	if err != nil {
		t.Fatal(err)
	}
	sizes := nccl.PowersOfTwo(512<<10, 4<<20)
	ops := []BatchOp{{Op: nccl.AllReduce, Sizes: sizes}}
	eight := []nccl.Config{{}, {}, {}, {"NCCL_MAX_NCHANNELS": "1"}, {"NCCL_ALGO": "Tree"}, {"NCCL_PROTO": "LL"}, {}, {}}
	d := r.SampleBatch(ops, eight, 24, 3, 20, 1, 7, 3)
	perRound := (d.Duration - BatchStartup - 8*BatchCommInit).Seconds() / 24
	if perRound < 1.1 || perRound > 1.35 {
		t.Errorf("a round of eight configs: %.2f s, want about the measured 1.22 s", perRound)
	}
	mixed := []nccl.Config{{}, {"NCCL_ALGO": "CollnetDirect"}}
	d = r.SampleBatch(ops, mixed, 3, 3, 20, 1, 7, 3)
	if d.Errs[0] != nil || d.Errs[1] == nil || len(d.Visits[0]) != 1 {
		t.Errorf("errs %v: want the unrecorded config alone refused", d.Errs)
	}
}

// TestMainBatch: --batch PLAN.json prints the torch instrument's batch
// lines, which benchfmt.ParseBatch reads: labelled simulated, a verdict per
// communicator from NCCL's simulated plan, a config NCCL refuses dropped
// alone, every round of the others at every op's sizes, the modelled wall
// time in the done line, no round past max_seconds, and a knob NCCL reads
// once per process refused by name.
func TestMainBatch(t *testing.T) {
	prof, _ := LoadProfile("spark4")
	cfgs := []nccl.Config{{}, {"NCCL_PROTO": "LL"}, {"NCCL_MAX_CTAS": "1"}, {"NCCL_MIN_CTAS": "128"}, {"NCCL_ALGO": "NVLS"}}
	d := prof.SampleBatch([]BatchOp{{Op: nccl.AllReduce, Sizes: nccl.PowersOfTwo(512<<10, 4<<20)}}, cfgs, 4, 3, 20, 1, 5, 2)
	fixed := BatchStartup + 5*BatchCommInit
	round := (d.Duration - fixed).Seconds() / 4
	excluded := map[string]string{
		"floor_128": "NCCL printed 'Comm config Min CTAs set to 128' but used 64 coll channels",
		"nvls":      "its communicator failed: rank 0: SIMULATED NCCL invalid usage"}
	plan := func(edit func(*runner.BatchPlan)) string {
		p := &runner.BatchPlan{Version: 1, Configs: []runner.BatchConfig{
			{Name: "defaults", CommSettings: nccl.CommSettings{Env: map[string]string{}}},
			{Name: "ll", CommSettings: nccl.CommSettings{Env: map[string]string{"NCCL_PROTO": "LL"}}},
			{Name: "one_channel", CommSettings: nccl.CommSettings{Env: map[string]string{}, MaxCTAs: 1}},
			{Name: "floor_128", CommSettings: nccl.CommSettings{Env: map[string]string{}, MinCTAs: 128}},
			{Name: "nvls", CommSettings: nccl.CommSettings{Env: map[string]string{"NCCL_ALGO": "NVLS"}}}},
			CreationOrder: []int{2, 0, 1, 4, 3}, Rounds: 4, WarmupIters: 3, Iters: 20, RoundSeed: 17, MaxSeconds: 60,
			Ops: []runner.BatchOp{{Op: nccl.AllReduce, Sizes: nccl.PowersOfTwo(512<<10, 4<<20)}}}
		edit(p)
		path := filepath.Join(t.TempDir(), "plan.json")
		data, _ := json.Marshal(p)
		os.WriteFile(path, data, 0o644)
		return path
	}
	tests := []struct {
		name     string
		edit     func(*runner.BatchPlan)
		code     int
		rounds   int
		excluded map[string]string // config → what its exclusion says
		stderr   string
	}{
		{"every verdict", func(*runner.BatchPlan) {}, 0, 4, excluded, ""},
		{"max_seconds stops the rounds", func(p *runner.BatchPlan) { p.MaxSeconds = fixed.Seconds() + 2.5*round }, 0, 2, excluded, ""},
		{"a knob read once per process", func(p *runner.BatchPlan) { p.Configs[1].Env["NCCL_CROSS_NIC"] = "1" }, 2, 0, nil,
			`batch config "ll" sets NCCL_CROSS_NIC, which NCCL reads once per process`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runMain(t, nil, "--profile", "spark4", "--seed", "5", "--launch", "2", "--batch", plan(tt.edit))
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q: want %d saying %q", r.code, r.stderr, tt.code, tt.stderr)
			}
			if tt.code != 0 {
				return
			}
			b, err := benchfmt.ParseBatch([]byte(r.stdout))
			if err != nil || !b.Header.Simulated || b.Rounds != tt.rounds || b.Header.NRanks != 4 {
				t.Fatalf("ParseBatch: %v; simulated %v, %d rounds, %d ranks: want simulated, %d rounds, 4 ranks", err, b != nil && b.Header.Simulated, b.Rounds, b.Header.NRanks, tt.rounds)
			}
			for _, c := range b.Configs {
				why, want := c.Excluded(), tt.excluded[c.Name]
				if want == "" && why != "" || !strings.Contains(why, want) {
					t.Errorf("%s excluded for %q, want %q", c.Name, why, want)
				}
				if why == "" && len(c.Ops[0].Rows) != 4*tt.rounds {
					t.Errorf("%s: %d rows, want 4 sizes × %d rounds", c.Name, len(c.Ops[0].Rows), tt.rounds)
				}
			}
			if c := b.Configs[2]; c.Channels != 1 || !c.TookEffect {
				t.Errorf("one_channel: %d channels, took effect %v", c.Channels, c.TookEffect)
			}
			if want := fixed.Seconds() + float64(tt.rounds)*round; math.Abs(b.Seconds-want) > 1e-6 {
				t.Errorf("the done line says %.3f s, want the modelled %.3f s", b.Seconds, want)
			}
		})
	}
}
