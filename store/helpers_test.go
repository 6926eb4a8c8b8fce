package store

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// openWriter opens a new writer store in a temporary directory.
func openWriter(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "test.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// studyWithTrial stores a search study and one trial of it in s.
func studyWithTrial(t testing.TB, s *Store) (*Study, *Trial) {
	t.Helper()
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		t.Fatal(err)
	}
	tr := &Trial{StudyID: st.ID}
	if err := s.AddTrial(tr); err != nil {
		t.Fatal(err)
	}
	return st, tr
}

func searchStudy() *Study {
	gdr := true
	return &Study{
		Kind: vocab.KindSearch, Band: "512K-4M", BandMin: 512 * nccl.KiB, BandMax: 4 * nccl.MiB,
		Sizes: []int64{512 * nccl.KiB, nccl.MiB, 2 * nccl.MiB, 4 * nccl.MiB}, GuardSizes: []int64{256 * nccl.MiB},
		Collective: "all_reduce",
		Space: map[string][]string{
			"NCCL_PROTO":         {"", "LL", "LL128", "Simple", "^LL128"},
			"NCCL_MAX_NCHANNELS": {"", "2", "4", "8", "16"},
		},
		BaseEnv: map[string]string{"NCCL_IB_HCA": "mlx5_0"},
		Launch: LaunchSettings{Launcher: "mpirun", NP: 2, Hosts: []string{"spark1", "spark2"}, MPIArgs: []string{"--bind-to", "none"},
			Bench: "all_reduce_perf", BenchArgs: []string{"-n", "20"}, Timeout: 2 * time.Minute, SimProfile: "spark4", SimNoise: 1, SimSeed: 7},
		Platform:  Platform{NCCLVersion: "2.28.3", Ranks: 2, Nodes: 2, GPU: "NVIDIA GB10", Transport: "IB", Hosts: []string{"spark1", "spark2"}, GDR: &gdr},
		Simulated: true, Seed: 42, Budget: Budget{Trials: 40, Time: 10 * time.Minute},
	}
}

// testLaunch is launch i of a trial: 4 sizes × samples per-iteration
// times, all derived from i so a reader can check every value.
func testLaunch(studyID, trialID uint64, i, samples int) *Launch {
	zero := int64(0)
	l := &Launch{
		StudyID: studyID, TrialID: trialID, Phase: vocab.PhaseExplore,
		Start:    time.Date(2026, 11, 29, 9, 0, i%60, 0, time.UTC),
		Duration: time.Duration(1000+i) * time.Millisecond, Outcome: benchfmt.OK, ExitCode: 0,
		Argv:      []string{"mpirun", "-np", "2", "all_reduce_perf", "-b", "512K", "-e", "4M", "-f", "2", "-I", "1", "-J", fmt.Sprintf("/tmp/l%d.json", i)},
		Env:       []string{"NCCL_PROTO=^LL128"},
		Simulated: true, Scored: true, ScoreUS: 100 + float64(i),
		Facts: &benchfmt.Facts{NCCLVersion: "2.28.3", NRanks: 2, Transport: "IB", Channels: 8,
			Choices: []benchfmt.Choice{{Collective: "AllReduce", Bytes: nccl.MiB, Algo: "RING", Proto: "SIMPLE", ChannelLo: 0, ChannelHi: 7, Channels: 8}}},
	}
	for k, b := range []int64{512 * nccl.KiB, nccl.MiB, 2 * nccl.MiB, 4 * nccl.MiB} {
		sz := benchfmt.Size{Bytes: b, TimeUS: float64(100*(k+1)) + float64(i)/7, AlgBW: 1.5, BusBW: 3, Wrong: &zero}
		for j := 0; j < samples; j++ {
			sz.Samples = append(sz.Samples, sz.TimeUS+math.Sin(float64(i*1000+j)))
		}
		l.Sizes = append(l.Sizes, sz)
	}
	return l
}

// testRaw is the raw output of launch i: a realistic-sized nccl-tests table.
func testRaw(i int) *Raw {
	var b strings.Builder
	fmt.Fprintf(&b, "# nccl-tests version 2.19.6 launch %d\n", i)
	for r := 0; r < 60; r++ {
		fmt.Fprintf(&b, "%12d %12d float sum -1 %8.2f %6.2f %6.2f 0 %8.2f %6.2f %6.2f 0\n", 1<<r%40, r, float64(i+r)/3, 1.1, 2.2, float64(r), 3.3, 4.4)
	}
	return &Raw{Stdout: []byte(b.String()), Stderr: []byte(fmt.Sprintf("warning %d\n", i)), JSON: []byte(fmt.Sprintf(`{"launch": %d}`, i))}
}

// checkFile runs bbolt's consistency check over the whole file.
func checkFile(t testing.TB, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("bbolt cannot open %s: %v", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("bbolt check of %s: %v", path, err)
	}
}
