package store

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// TestLaunchOpRoundTrip: the op of every launch is stored and read back;
// a launch stored without one (databases from before ops were recorded)
// reads as all-reduce.
func TestLaunchOpRoundTrip(t *testing.T) {
	s := openWriter(t)
	st := searchStudy()
	st.Collective = string(nccl.AllGather)
	if err := s.CreateStudy(st); err != nil {
		t.Fatal(err)
	}
	tr := &Trial{StudyID: st.ID, Config: nccl.Config{}, Role: vocab.RoleBaseline}
	if err := s.AddTrial(tr); err != nil {
		t.Fatal(err)
	}
	ops := append([]nccl.Op{""}, nccl.Ops...)
	for i, op := range ops {
		l := testLaunch(st.ID, tr.ID, i, 3)
		l.Op = op
		if err := s.AddLaunch(l, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Launches(st.ID)
	if err != nil || len(got) != len(ops) {
		t.Fatalf("launches: %d, %v", len(got), err)
	}
	for i, l := range got {
		if l.Op != ops[i] {
			t.Errorf("launch %d: op %q, want %q", i, l.Op, ops[i])
		}
	}
	if got[0].Op.OrAllReduce() != nccl.AllReduce {
		t.Errorf("a launch without an op reads as %q, want all_reduce", got[0].Op.OrAllReduce())
	}
	back, err := s.Study(st.Name)
	if err != nil || back.Collective != "all_gather" {
		t.Errorf("study collective %q, %v", back.Collective, err)
	}
}

// TestStudyWorkloadKey: a study's parts are stored under "workload", the
// key the stored studies of every earlier nccltune hold them under; a
// study of several parts read back from such a record keeps them, and
// does not read as the one part of its Band and Collective.
func TestStudyWorkloadKey(t *testing.T) {
	// The release of 2026-12-04 wrote them under "workload_calls": its
	// studies read back too.
	for _, key := range []string{"workload", "workload_calls"} {
		stored := `{"kind":"search","band":"1M-4M","collective":"all_reduce","` + key + `":[` +
			`{"op":"all_reduce","band":"1M-4M","band_min":1048576,"band_max":4194304,"weight":1},` +
			`{"op":"all_gather","band":"64K-256K","band_min":65536,"band_max":262144,"weight":1}]}`
		var st Study
		if err := json.Unmarshal([]byte(stored), &st); err != nil {
			t.Fatal(err)
		}
		if w := st.Parts(); len(w) != 2 || w[1].Op != nccl.AllGather || st.Band != "1M-4M" {
			t.Fatalf("%s: parts read back: %v, band %v, want all_reduce and all_gather", key, w, st.Band)
		}
		data, err := json.Marshal(&st)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"workload":[`) || strings.Contains(string(data), "workload_calls") {
			t.Errorf("%s: the study is written back without its \"workload\" key:\n%s", key, data)
		}
	}
}
