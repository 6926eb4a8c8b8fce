package studyrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/store"
)

// RecordingOf reads every study of the store at path, read-only, as a
// replay is built from it (sim.BuildReplay): the simulated fabric never
// opens a store.
func RecordingOf(path string) (*sim.Recording, error) {
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("replay: open the recording %s: %w", path, err)
	}
	defer st.Close()
	sums, err := st.Studies()
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	rec := &sim.Recording{Source: path}
	for _, sum := range sums {
		study, err := recordedStudy(st, sum.ID)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		rec.Studies = append(rec.Studies, study)
	}
	return rec, nil
}

// recordedStudy is one study of the store as a recording.
func recordedStudy(st *store.Store, id uint64) (sim.RecordedStudy, error) {
	study, err := st.Study(fmt.Sprint(id))
	if err != nil {
		return sim.RecordedStudy{}, err
	}
	p := study.Platform
	out := sim.RecordedStudy{Name: study.Name, Simulated: study.Simulated,
		Ranks: p.Ranks, NCCLVersion: p.NCCLVersion, GPU: p.GPU, Transport: p.Transport}
	trials, launches, err := st.TrialsAndLaunches(study.ID)
	if err != nil {
		return out, err
	}
	configs := map[uint64]map[string]string{}
	for _, t := range trials {
		configs[t.ID] = t.Config
	}
	for _, l := range launches {
		cfg, ok := configs[l.TrialID]
		if !ok {
			continue
		}
		out.Launches = append(out.Launches, sim.RecordedLaunch{Config: cfg, Seq: l.Seq, Phase: l.Phase, Start: l.Start,
			Outcome: l.Outcome, Reason: l.Reason, Env: l.Env, Sizes: l.Sizes, Facts: l.Facts})
	}
	return out, nil
}

// BuildStoreReplay builds the replay of the store at path, with NCCL's
// plans from the doctor files beside it (sim.PlansBeside).
func BuildStoreReplay(path string) (*sim.Replay, error) {
	rec, err := RecordingOf(path)
	if err != nil {
		return nil, err
	}
	return sim.BuildReplay(sim.BuildOptions{Recording: rec, Plans: sim.PlansBeside(path)})
}

// LoadReplay loads the replay a --sim replay:FILE argument names; a store
// is built into a replay first and kept where the simulator reads it
// (sim.BuiltPath).
func LoadReplay(profile string) (*sim.Replay, error) {
	path := sim.ReplayPath(profile)
	if path != "" && sim.IsStoreFile(path) {
		if err := keepStoreReplay(path); err != nil {
			return nil, err
		}
	}
	return sim.LoadReplay(profile)
}

// keepStoreReplay builds the store's replay unless it is kept already
// (written to a temporary file renamed into place).
func keepStoreReplay(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	built := sim.BuiltPath(abs, fi)
	if _, err := os.Stat(built); err == nil {
		return nil
	}
	r, err := BuildStoreReplay(abs)
	if err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(built), filepath.Base(built)+".*")
	if err != nil {
		return fmt.Errorf("replay: keeping the replay of %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("replay: keeping the replay of %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), built)
}
