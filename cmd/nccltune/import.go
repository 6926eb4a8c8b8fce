package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/studyrun"
	"github.com/nccltune/nccltune/vocab"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "bring saved nccl-tests outputs (text or JSON) into the database",
		ArgsUsage: "FILE…",
		Description: `import parses saved nccl-tests outputs (the text table, with or without
NCCL_DEBUG lines, or the -J JSON file) and stores each as one launch, so
results measured before nccltune join the history. The files go into a new
study of kind import, or into an existing import study named by --study.
--env records the NCCL settings the runs used: one trial per distinct set.
Simulated outputs stay labelled as simulated. A file that does not parse
completely is reported by name and nothing of it is stored.

Examples:
  nccltune import run1.txt run2.txt
  nccltune import --env NCCL_PROTO=^LL128 --env NCCL_MAX_NCHANNELS=8 tuned.json
  nccltune import --study s9-import more.txt`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "env", Usage: "`K=V` the imported runs were made with, repeatable (none: NCCL's defaults)"},
			&cli.StringFlag{Name: "study", Usage: "add to this existing import `STUDY` instead of starting a new one"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("import needs at least one FILE of saved nccl-tests output")
			}
			cfg, err := importConfig(c.StringSlice("env"))
			if err != nil {
				return usageError(err)
			}
			db, err := c.String("db"), error(nil)
			if db == "" {
				if db, err = store.DefaultPath(); err != nil {
					return err
				}
			}
			return runImport(c.Context, importOptions{
				db: db, files: c.Args().Slice(), config: cfg, study: c.String("study"),
				json: c.Bool("json"), stdout: c.App.Writer, stderr: c.App.ErrWriter,
			})
		},
	}
}

type importOptions struct {
	db     string
	files  []string
	config nccl.Config
	study  string
	json   bool
	stdout io.Writer
	stderr io.Writer
}

// importConfig reads --env: any environment variable may be recorded (a
// run may have set NCCL_IB_HCA), and NCCL knobs must hold valid values.
func importConfig(items []string) (nccl.Config, error) {
	if err := checkNoRepeats("env", items); err != nil {
		return nil, err
	}
	cfg := nccl.Config{}
	for _, it := range items {
		k, v, err := nccl.ParseKeyValue(it)
		if err != nil {
			return nil, fmt.Errorf("--env %w", err)
		}
		if nccl.IsKnob(k) {
			knob, _ := nccl.LookupKnob(k)
			if err := knob.Validate(v); err != nil {
				return nil, fmt.Errorf("--env %s: %w", it, err)
			}
		}
		if old, dup := cfg[k]; dup && old != v {
			return nil, fmt.Errorf("--env gives %s twice (%q and %q)", k, old, v)
		}
		if v != "" {
			cfg[k] = v
		}
	}
	return cfg, nil
}

// parsedFile is one FILE: its parse, or why it cannot be imported.
type parsedFile struct {
	path   string
	data   []byte
	isJSON bool
	result *runner.Result
	err    error
	// twin is the text output of the same launch as this JSON (pairRuns).
	twin *parsedFile
}

func runImport(ctx context.Context, o importOptions) error {
	files := make([]*parsedFile, len(o.files))
	for i, path := range o.files {
		files[i] = parseImportFile(ctx, path)
		if ctx.Err() != nil {
			return vocab.ErrInterrupted
		}
	}
	var good []*parsedFile
	var skipped []ui.SkippedFile
	for _, f := range files {
		if f.err != nil {
			skipped = append(skipped, ui.SkippedFile{File: f.path, Error: f.err.Error()})
			continue
		}
		good = append(good, f)
	}
	if err := sameFabricKind(good); err != nil {
		return usageError(err)
	}
	good = pairRuns(good)

	var study *store.Study
	var trial *store.Trial
	var imported []ui.ImportedFile
	created := false
	if len(good) > 0 {
		st, err := store.Open(o.db, store.Options{})
		if err != nil {
			return err
		}
		defer st.Close()
		study, created, err = importStudy(st, o.study, good[0].result)
		if err != nil {
			return err
		}
		var matching []*parsedFile
		for _, f := range good {
			if f.result.Simulated != study.Simulated {
				skipped = append(skipped, ui.SkippedFile{File: f.path, Error: simMismatch(f, study)})
				continue
			}
			matching = append(matching, f)
		}
		if len(matching) > 0 {
			if trial, err = importTrial(st, study, o.config); err != nil {
				return err
			}
		}
		// ended stores how a new import study ended (an existing one
		// keeps its status: each file is stored whole, or not at all).
		ended := func(status, reason string) {
			if created {
				study.Status, study.Reason = status, reason
				_ = st.UpdateStudy(study)
			}
		}
		for i, f := range matching {
			if ctx.Err() != nil {
				ended(vocab.StatusInterrupted, fmt.Sprintf("interrupted after %d of %d files; import the rest with --study %s", i, len(matching), study.Name))
				return vocab.ErrInterrupted
			}
			l := importLaunch(f, study, trial)
			raw := &store.Raw{Stdout: f.data}
			name := f.path
			if f.isJSON {
				raw = &store.Raw{JSON: f.data}
				if f.twin != nil {
					raw.Stdout = f.twin.data
					name = f.path + " + " + f.twin.path + " (one run)"
				}
			}
			if err := st.AddLaunch(l, raw); err != nil {
				err = fmt.Errorf("import %s: %w", f.path, err)
				ended(vocab.StatusFailed, fmt.Sprintf("%v (after %d of %d files)", err, i, len(matching)))
				return err
			}
			imported = append(imported, ui.ImportedFile{File: name, Launch: l.ID, Seq: l.Seq, Outcome: string(l.Outcome), Reason: l.Reason,
				Simulated: l.Simulated, Collective: f.result.Collective, NRanks: f.result.NRanks, Rows: len(l.Sizes)})
		}
		ended(vocab.StatusDone, "")
	}

	rep := ui.ImportReport{Study: study, Trial: trial, Created: created, Imported: imported, Skipped: skipped}
	if err := ui.PrintImport(o.stdout, o.json, rep); err != nil {
		return err
	}
	if len(skipped) > 0 {
		return fmt.Errorf("%d of %d files were not imported (see above); nothing of them was stored", len(skipped), len(o.files))
	}
	return nil
}

// parseImportFile reads and parses one file. Only a complete table is
// imported: a run that failed or stopped early is reported, not stored.
func parseImportFile(ctx context.Context, path string) *parsedFile {
	f := &parsedFile{path: path}
	data, err := input.ReadFile(ctx, path, nil, input.MaxBytes)
	var tooLarge *input.TooLargeError
	if errors.As(err, &tooLarge) {
		f.err = fmt.Errorf("it is larger than %d MiB, the most nccltune reads", input.MaxBytes>>20)
		return f
	}
	if err != nil {
		f.err = fmt.Errorf("cannot read it: %w", unwrapPathError(err))
		return f
	}
	f.data = data
	trimmed := strings.TrimLeft(string(data[:min(len(data), 64)]), " \t\r\n\ufeff")
	f.isJSON = strings.HasPrefix(trimmed, "{")
	f.result, err = runner.Parse(data)
	var failure *runner.FailureError
	switch {
	case errors.As(err, &failure):
		f.err = fmt.Errorf("the run failed or its output stops early: %v", failure.Message)
	case err != nil:
		f.err = fmt.Errorf("not nccl-tests output: %v", err)
	case f.result == nil || len(f.result.Rows) == 0:
		f.err = errors.New("not nccl-tests output: no results rows")
	}
	return f
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// sameFabricKind refuses to mix simulated and real outputs in one import:
// a study is either a simulation or a measurement.
func sameFabricKind(files []*parsedFile) error {
	var sim, real []string
	for _, f := range files {
		if f.result.Simulated {
			sim = append(sim, f.path)
		} else {
			real = append(real, f.path)
		}
	}
	if len(sim) > 0 && len(real) > 0 {
		return fmt.Errorf("%s is SIMULATED output but %s is from a real fabric; import them separately (a study is one or the other)", sim[0], real[0])
	}
	return nil
}

func simMismatch(f *parsedFile, study *store.Study) string {
	if f.result.Simulated {
		return fmt.Sprintf("it is SIMULATED output and study %s holds real measurements; import it into a new study", study.Name)
	}
	return fmt.Sprintf("it is from a real fabric and study %s is SIMULATED; import it into a new study", study.Name)
}

// importStudy finds the --study to add to, or creates a new import study
// described by the first file.
func importStudy(st *store.Store, name string, first *runner.Result) (*store.Study, bool, error) {
	if name != "" {
		study, err := st.Study(name)
		if errors.Is(err, store.ErrNotFound) {
			return nil, false, usageErrorf("%v; omit --study to start a new import study", err)
		}
		if err != nil {
			return nil, false, err
		}
		if study.Kind != vocab.KindImport {
			return nil, false, usageErrorf("study %s is a %s; import adds only to import studies (omit --study to start a new one)", study.Name, study.Kind)
		}
		return study, false, nil
	}
	study := &store.Study{
		Kind:       vocab.KindImport,
		Collective: first.Collective,
		Simulated:  first.Simulated,
		Fabric:     studyrun.FabricOf(first),
		Launch:     store.LaunchSettings{SimProfile: first.SimProfile},
		// Running until every file is in: an import stopped part way
		// (Ctrl-C, a full disk) must not read as a complete study.
		Status: vocab.StatusRunning,
	}
	if sizes := distinctSizes(first); len(sizes) > 0 {
		band := nccl.Band{Min: sizes[0], Max: sizes[len(sizes)-1]}
		study.Band, study.BandMin, study.BandMax, study.Sizes = band.String(), band.Min, band.Max, sizes
	}
	if err := st.CreateStudy(study); err != nil {
		return nil, false, err
	}
	return study, true, nil
}

// importTrial is the study's trial for cfg: the existing one when the
// study already has this config, else a new one.
func importTrial(st *store.Store, study *store.Study, cfg nccl.Config) (*store.Trial, error) {
	trial := &store.Trial{StudyID: study.ID, Config: cfg, Role: vocab.RoleImport, State: vocab.TrialComplete}
	err := st.AddTrial(trial)
	var dup *store.DuplicateTrialError
	if errors.As(err, &dup) {
		return st.Trial(dup.Existing)
	}
	return trial, err
}

// importLaunch is the stored launch of one parsed file.
func importLaunch(f *parsedFile, study *store.Study, trial *store.Trial) *store.Launch {
	r := f.result
	l := &store.Launch{
		StudyID: study.ID, TrialID: trial.ID, Phase: vocab.PhaseImport,
		Outcome: runner.OK, Env: trial.Config.Env(), Simulated: r.Simulated,
		Sizes: store.SizesFromResult(r), Facts: r.Facts,
	}
	if abs, err := filepath.Abs(f.path); err == nil {
		l.Source = abs
	} else {
		l.Source = f.path
	}
	if fi, err := os.Stat(f.path); err == nil {
		l.Start = fi.ModTime().UTC() // when the output was saved: the best the file tells
	}
	if why := r.Invalid(); why != "" {
		l.Outcome, l.Reason = runner.Invalid, why
	}
	l.Scored = l.Outcome == runner.OK
	return l
}

func distinctSizes(r *runner.Result) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, row := range r.Rows {
		if !seen[row.Bytes] {
			seen[row.Bytes] = true
			out = append(out, row.Bytes)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
