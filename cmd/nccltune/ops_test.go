package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
)

// TestSweepOpJSON: sweep --op measures that op end to end: the JSON
// names it, the busbw is the op's (all-gather (n−1)/n of algbw on spark4's
// 4 ranks), every launch is stored with it and the study records it.
func TestSweepOpJSON(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "t.db")
	stdout, stderr, code := runCLI(t, db, "sweep", "--sim", "spark4", "--op", "all_gather", "--json", "--min", "512K", "--max", "4M")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Collective string `json:"collective"`
		Study      string `json:"study"`
		Rows       []struct {
			Bytes int64   `json:"bytes"`
			BusBW float64 `json:"busbw"`
			AlgBW float64 `json:"algbw"`
		} `json:"rows"`
	}
	decodeOneJSON(t, stdout, &doc)
	if doc.Collective != "all_gather" || len(doc.Rows) != 4 {
		t.Fatalf("collective %q, %d rows: %s", doc.Collective, len(doc.Rows), stdout)
	}
	for _, r := range doc.Rows {
		if f := r.BusBW / r.AlgBW; f < 0.74 || f > 0.76 {
			t.Errorf("%d: busbw/algbw %.3f, want all-gather's 0.75 on 4 ranks", r.Bytes, f)
		}
	}
	st := openStore(t, db)
	study, err := st.Study(doc.Study)
	if err != nil || study.Op() != nccl.AllGather {
		t.Fatalf("study %+v, %v", study, err)
	}
	launches, err := st.Launches(study.ID)
	if err != nil || len(launches) == 0 {
		t.Fatal(err)
	}
	for _, l := range launches {
		if l.Op != nccl.AllGather || !strings.Contains(strings.Join(l.Argv, " "), "--collective all_gather") {
			t.Errorf("launch %d: op %q, argv %q", l.Seq, l.Op, l.Argv)
		}
	}
	if _, stderr, code := runCLI(t, db, "sweep", "--sim", "spark4", "--op", "allgathr"); code != 2 || !strings.Contains(stderr, "did you mean all_gather") {
		t.Errorf("--op allgathr: exit %d, %s", code, stderr)
	}
}

// TestImportReadsOp: import reads the op from the output's program name
// (the real all_gather fixture: its sizes as nccl-tests prints them for 3
// ranks) and --op only checks it.
func TestImportReadsOp(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "t.db")
	ag := filepath.Join("..", "..", "internal", "benchfmt", "testdata", "fixtures", "ag3.txt")
	if _, _, code := runCLI(t, db, "import", "--op", "reduce_scatter", ag); code == 0 {
		t.Errorf("import --op reduce_scatter of an all_gather output succeeded")
	}
	stdout, stderr, code := runCLI(t, db, "import", "--op", "all_gather", "--json", ag)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	var doc struct {
		Study string `json:"study"`
	}
	decodeOneJSON(t, stdout, &doc)
	s := storedStudy(t, db, doc.Study)
	if s.study.Op() != nccl.AllGather || len(s.launches) != 1 || s.launches[0].Op != nccl.AllGather {
		t.Fatalf("study op %q, launches %d", s.study.Op(), len(s.launches))
	}
	if z := s.launches[0].Sizes[0]; z.Bytes != 524256 || z.Nominal() != 524288 {
		t.Errorf("first size %d (nominal %d), want nccl-tests' 524256 for the 512K asked", z.Bytes, z.Nominal())
	}
}
