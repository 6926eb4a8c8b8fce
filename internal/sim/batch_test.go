package sim

import (
	"math"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/nccl"
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
