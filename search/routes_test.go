package search

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/sim"
	"github.com/nccltune/nccltune/vocab"
)

// replayProfile is the --sim value of a committed replay.
func replayProfile(t *testing.T, file string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "sim", "testdata", "replay", file))
	if err != nil {
		t.Fatal(err)
	}
	return sim.ReplayPrefix + abs
}

// TestNoCrossNICOnOneNIC: on every fabric with one NIC per host (the
// simulated profiles flat and h200-loopback, and both replays of
// the real loopback) NCCL's plan of the defaults, read from the study's
// own debug launch, proves every NCCL_CROSS_NIC value of the space a
// no-op, so no config carrying one is ever a trial apart from the same
// config without it, and no recommendation carries one (a study per
// fabric).
func TestNoCrossNICOnOneNIC(t *testing.T) {
	type fabric struct {
		name     string
		launcher func(seed int64) Launcher
		band     nccl.Band
	}
	sims := func(profile string) func(int64) Launcher {
		return func(seed int64) Launcher { return newSimLauncher(t, profile, 1, seed) }
	}
	replay := func(file string) func(int64) Launcher {
		profile := replayProfile(t, file)
		return func(seed int64) Launcher {
			return &replayLauncher{profile: profile, seed: seed, dir: t.TempDir(), refused: map[string]int{}}
		}
	}
	wide := nccl.Band{Min: 512 << 10, Max: 4 << 20}
	for _, f := range []fabric{
		{"flat", sims("flat"), wide},
		{"h200-loopback", sims("h200-loopback"), wide},
		{"replay h200-loopback4", replay("h200-loopback4.json"), wide},
		{"replay h200-loopback4-32k", replay("h200-loopback4-32k.json"), nccl.Band{Min: 32 << 10, Max: 256 << 10}},
	} {
		t.Run(f.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Band, o.Guard, o.Seed = f.band, DefaultGuard(f.band), 1
			p := newPlanner(o.Band.Sizes(), o.Guard, false)
			l, err := f.launcher(1).Launch(context.Background(), Request{Config: nccl.Config{}, MinBytes: explainMin, MaxBytes: explainMax, Phase: vocab.PhasePlan, Debug: true})
			if err != nil {
				t.Fatal(err)
			}
			if !p.learn(&Trial{Role: vocab.RoleBaseline, Config: nccl.Config{}}, vocab.PhasePlan, "", l) {
				t.Fatalf("no plan read from the defaults' debug launch (%s)", l.Reason)
			}
			if p.defaults().NICs != 1 && !p.defaults().NoNetwork {
				t.Fatalf("%d NICs per host, want 1", p.defaults().NICs)
			}
			for _, c := range []string{"0", "1", "2"} {
				with := nccl.Config{"NCCL_CROSS_NIC": c, "NCCL_MAX_CTAS": "1"}
				if p.keyOf(with) != p.keyOf(nccl.Config{"NCCL_MAX_CTAS": "1"}) {
					t.Errorf("NCCL_CROSS_NIC=%s beside a cap is keyed apart from the cap alone", c)
				}
			}
			res, err := Run(context.Background(), o, f.launcher(1), newMemRecorder(t), nil, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := res.Env()["NCCL_CROSS_NIC"]; ok {
				t.Errorf("recommends %s", res.Env())
			}
		})
	}
}

// TestCrossNICMergedBySameRoutes: on spark4 and spark2 (two RoCE NICs per
// host, and NCCL_CROSS_NIC changes nothing there: the simulator routes
// every channel alike and times it alike) the study reads each value's
// routes from one debug launch, merges the value away, and no
// recommendation carries it (the README's first run used to recommend
// NCCL_CROSS_NIC=0 NCCL_MAX_NCHANNELS=8 NCCL_PROTO=Simple).
func TestCrossNICMergedBySameRoutes(t *testing.T) {
	for _, run := range []struct {
		profile string
		seed    int64
	}{{"spark4", 1}, {"spark4", 2}, {"spark4", 3}, {"spark2", 1}, {"spark2", 2}} {
		seed := run.seed
		res, _, l := runStudy(t, run.profile, spark4Options(seed))
		probes := 0
		for _, r := range l.launches {
			if _, ok := r.Config["NCCL_CROSS_NIC"]; ok && len(r.Config) == 1 && r.Phase == vocab.PhasePlan {
				probes++
			}
		}
		if _, ok := res.Env()["NCCL_CROSS_NIC"]; ok || !res.Recommend {
			t.Errorf("%s seed %d: recommends %s (recommend %v)", run.profile, seed, res.Env(), res.Recommend)
		}
		if probes == 0 || probes > 2 {
			t.Errorf("%s seed %d: %d debug launches of an NCCL_CROSS_NIC value alone, want one per value met (1 or 2)", run.profile, seed, probes)
		}
	}
}

// TestListTwinBesideAForcedAlgorithm: on the replayed loopback at
// 32K–256K NCCL's defaults choose LL below 128K, so NCCL_PROTO=Simple
// beside NCCL_ALGO=Tree changes the defaults' plan, and only the log of
// NCCL_ALGO=Tree alone shows that it chooses Simple at every size anyway:
// that config is the twin to read, and once read, NCCL_PROTO=Simple is
// dropped from the recommendation.
func TestListTwinBesideAForcedAlgorithm(t *testing.T) {
	l := &replayLauncher{profile: replayProfile(t, "h200-loopback4-32k.json"), seed: 1, dir: t.TempDir(), refused: map[string]int{}}
	band := nccl.Band{Min: 32 << 10, Max: 256 << 10}
	p := newPlanner(band.Sizes(), DefaultGuard(band), false)
	read := func(cfg nccl.Config, role string) {
		t.Helper()
		launch, err := l.Launch(context.Background(), Request{Config: cfg, MinBytes: explainMin, MaxBytes: explainMax, Phase: vocab.PhasePlan, Debug: true})
		if err != nil {
			t.Fatal(err)
		}
		if !p.learn(&Trial{Role: role, Config: cfg}, vocab.PhasePlan, "", launch) {
			t.Fatalf("%s: no plan read (%s)", cfg, launch.Reason)
		}
	}
	read(nccl.Config{}, vocab.RoleBaseline)
	w := nccl.Config{"NCCL_ALGO": "Tree", "NCCL_PROTO": "Simple"}
	tw, unknown := p.twinUnknown(w)
	if !unknown || tw.Key() != "NCCL_ALGO=Tree" {
		t.Fatalf("twin %s (unknown %v), want NCCL_ALGO=Tree to read", tw, unknown)
	}
	read(tw, vocab.RoleExplore)
	if r := p.resolve(w); !r.Certain || r.Reduced.Key() != "NCCL_ALGO=Tree" {
		t.Errorf("after the twin's log: certain %v, reduced %s, dropped %+v; want NCCL_PROTO=Simple dropped", r.Certain, r.Reduced, r.Dropped)
	}
	if _, unknown := p.twinUnknown(w); unknown {
		t.Error("the twin is still unknown after its log was read")
	}
}
