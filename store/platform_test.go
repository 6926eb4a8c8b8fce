package store

import (
	"encoding/json"
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestPlatformDifferences: what both platforms recorded and disagree on,
// in order; a field either left empty is no difference.
func TestPlatformDifferences(t *testing.T) {
	spark4 := Platform{Ranks: 4, Nodes: 4, Transport: "IB", GPU: "NVIDIA GB10", NCCLVersion: "2.30.7"}
	for _, tc := range []struct {
		a, b   Platform
		want   string
		fabric bool
	}{
		{spark4, spark4, "[]", false},
		{spark4, Platform{Ranks: 2, Nodes: 2, Transport: "IB"}, "[ranks 4 vs 2 nodes 4 vs 2]", true},
		{Platform{Ranks: 2, Nodes: 2, Transport: "Socket"}, Platform{Ranks: 2, Nodes: 1, Transport: "P2P"}, "[nodes 2 vs 1 transport Socket vs P2P]", true},
		{spark4, Platform{NCCLVersion: "2.28.3"}, "[NCCL 2.30.7 vs 2.28.3]", false},
		{spark4, Platform{}, "[]", false},
	} {
		d := tc.a.Differences(tc.b)
		fabric := false
		for _, x := range d {
			fabric = fabric || x.Fabric()
		}
		if got := fmt.Sprint(d); got != tc.want || fabric != tc.fabric {
			t.Errorf("%+v vs %+v: %s (fabric %v), want %s (%v)", tc.a, tc.b, got, fabric, tc.want, tc.fabric)
		}
	}
}

// TestSummaryBaselineEnv: a study's summary carries its baseline env, {}
// for NCCL's defaults; a summary written before it was recorded reads it
// from its study, so history can say "keep your baseline".
func TestSummaryBaselineEnv(t *testing.T) {
	s := openWriter(t)
	withBaseline := searchStudy()
	withBaseline.BaselineEnv = map[string]string{"NCCL_PROTO": "^LL128"}
	plain := searchStudy()
	for _, st := range []*Study{withBaseline, plain} {
		if err := s.CreateStudy(st); err != nil {
			t.Fatal(err)
		}
	}
	// The first study's summary as an older nccltune wrote it.
	if err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSummaries)
		var sum map[string]any
		if err := json.Unmarshal(b.Get(itob(withBaseline.ID)), &sum); err != nil {
			return err
		}
		delete(sum, "baseline_env")
		data, _ := json.Marshal(sum)
		return b.Put(itob(withBaseline.ID), data)
	}); err != nil {
		t.Fatal(err)
	}
	sums, err := s.Studies()
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64]map[string]string{}
	for _, sum := range sums {
		got[sum.ID] = sum.BaselineEnv
	}
	if fmt.Sprint(got[withBaseline.ID]) != "map[NCCL_PROTO:^LL128]" || got[plain.ID] == nil || len(got[plain.ID]) != 0 {
		t.Errorf("baseline envs %v", got)
	}
}
