package search

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nccltune/nccltune/internal/sim"
)

// TestEachRecordedPlanExploredOnce: on the real 4-rank loopback's replay,
// where the default space holds eight plans (Ring or Tree, Simple or LL,
// one channel or two) under many spellings, a study launches each plan
// as one trial: a config whose lists only restate what the rest runs
// (NCCL_MAX_NCHANNELS=1 with NCCL_PROTO=Simple, NCCL_ALGO=Ring) is
// launched as its twin first (twinFirst), and later spellings wait on one
// debug launch of the twin. Before, one seed measured the one-channel plan
// as five trials (13 launches). The plans are the replay's own records,
// not the search's rules.
func TestEachRecordedPlanExploredOnce(t *testing.T) {
	t.Parallel()
	path, err := filepath.Abs("../internal/sim/testdata/replay/h200-loopback4.json")
	if err != nil {
		t.Fatal(err)
	}
	profile := sim.ReplayPrefix + path
	r, err := sim.LoadReplay(profile)
	if err != nil {
		t.Fatal(err)
	}
	sizes := r.Defaults().NativePlan().Sizes()
	twins := 0
	for seed := int64(1); seed <= 10; seed++ {
		o := DefaultOptions()
		o.Band, o.Guard, o.Seed = spark4Options(seed).Band, spark4Options(seed).Guard, seed
		l := &replayLauncher{profile: profile, seed: seed, dir: t.TempDir(), refused: map[string]int{}}
		res, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		seen := map[string]string{}
		for _, tr := range res.Trials {
			if len(tr.Explore) == 0 {
				continue
			}
			rc, _, err := r.Match(tr.Config)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			plan := rc.NativePlan().Restrict(sizes).Key()
			if first, ok := seen[plan]; ok {
				twins++
				t.Logf("seed %d: %s explored beside %s, the same recorded plan", seed, tr.Config, first)
				continue
			}
			seen[plan] = tr.Config.String()
		}
	}
	// A twin may still be launched when the debug launches that would
	// prove it are spent; one in ten studies at most.
	if twins > 1 {
		t.Errorf("%d explored trials ran a plan another trial of the same study had run (10 studies)", twins)
	}
}
