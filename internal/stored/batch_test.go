package stored

import (
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/store"
)

// TestBatchText: a study says how many of its launches came from how many
// batch launches, and nothing when none did; a simulated study the
// modelled wall time of those shares.
func TestBatchText(t *testing.T) {
	member := func(seq int) *store.Launch {
		return &store.Launch{Batch: &benchfmt.BatchMember{Seq: seq, Configs: 3}}
	}
	simulated := func(seq int, ms time.Duration) *store.Launch {
		l := member(seq)
		l.Simulated, l.Duration, l.Batch.Modelled = true, time.Millisecond, ms*time.Millisecond
		return l
	}
	for _, tc := range []struct {
		name     string
		launches []*store.Launch
		want     string
	}{
		{"no batch", []*store.Launch{{}, {}}, ""},
		{"one batch of two", []*store.Launch{{}, member(0), member(0)},
			"2 launches from 1 batch launch (several configs in one process each, exploring; the confirmation's launches are their own)"},
		{"three batches", []*store.Launch{member(0), member(1), member(1), member(2), {}},
			"4 launches from 3 batch launches (several configs in one process each, exploring; the confirmation's launches are their own)"},
		{"simulated: the shares' modelled wall time", []*store.Launch{simulated(0, 1300), simulated(0, 1300), simulated(1, 1450), {Simulated: true, Duration: time.Second}},
			"3 launches from 2 batch launches (several configs in one process each, exploring; the confirmation's launches are their own); their modelled wall time 4.1s (SIMULATED)"},
	} {
		if got := BatchText(tc.launches); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
