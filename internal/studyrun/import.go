package studyrun

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// ImportOptions say where import stores the files.
type ImportOptions struct {
	Study  string      // --study; empty creates one
	Config nccl.Config // --env
	// Op, when set (--op), is checked against each output's own op.
	Op nccl.Op
}

// ImportResult is what import did (Created when it made the study).
type ImportResult struct {
	Study    *store.Study
	Trial    *store.Trial
	Created  bool
	Imported []runresult.ImportedFile
	Skipped  []runresult.SkippedFile
}

// Import stores saved nccl-tests outputs (text or -J JSON; a run's text
// and JSON together as one launch) as launches of one trial of an import
// study, each file whole or not at all. Files that cannot be imported are
// skipped, with why; the store is opened only when one can.
func Import(ctx context.Context, db string, paths []string, o ImportOptions) (*ImportResult, error) {
	good, skipped, err := parseImportFiles(ctx, paths)
	if err != nil {
		return nil, err
	}
	if o.Config, err = importConfig(good, o.Config); err != nil {
		return nil, vocab.Mark(vocab.ErrUsage, err)
	}
	res := &ImportResult{Skipped: skipped}
	if len(good) == 0 {
		return res, nil
	}
	if o.Study != "" {
		// An import that would store nothing must not open the database
		// for writing, which rewrites its meta page.
		rest, err := belongingFiles(db, o.Study, o.Op, good)
		if err != nil {
			return nil, err
		}
		if rest == nil {
			for _, f := range good {
				res.Skipped = append(res.Skipped, runresult.SkippedFile{File: f.path, Error: f.err.Error()})
			}
			return res, nil
		}
	}
	st, err := store.Open(db, store.Options{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if err := res.store(ctx, st, o, good); err != nil {
		return nil, err
	}
	return res, nil
}

// parseImportFiles parses each file; those that cannot be imported come
// back as skipped, with why. A run's text and its JSON become one file.
func parseImportFiles(ctx context.Context, paths []string) ([]*parsedFile, []runresult.SkippedFile, error) {
	files := make([]*parsedFile, len(paths))
	for i, path := range paths {
		files[i] = parseImportFile(ctx, path)
		if ctx.Err() != nil {
			return nil, nil, vocab.ErrInterrupted
		}
	}
	var good []*parsedFile
	var skipped []runresult.SkippedFile
	first := map[[sha256.Size]byte]string{}
	for _, f := range files {
		if f.err != nil {
			skipped = append(skipped, runresult.SkippedFile{File: f.path, Error: f.err.Error()})
			continue
		}
		if earlier, ok := first[f.sum]; ok {
			return nil, nil, vocab.UsageErrorf("%s is the same output as %s (identical content): a run is imported once — give each file once", f.path, earlier)
		}
		first[f.sum] = f.path
		good = append(good, f)
	}
	for _, check := range []func([]*parsedFile) error{sameFabricKind, sameOpAndRanks} {
		if err := check(good); err != nil {
			return nil, nil, vocab.Mark(vocab.ErrUsage, err)
		}
	}
	return pairRuns(good), skipped, nil
}

// sameOpAndRanks refuses to put runs of different collectives or rank
// counts into one import: a trial is one config measured one way.
func sameOpAndRanks(files []*parsedFile) error {
	for _, f := range files[min(1, len(files)):] {
		a, b := files[0].result, f.result
		if a.Op().OrAllReduce() != b.Op().OrAllReduce() {
			return fmt.Errorf("%s is %s output but %s is %s; an import study holds one collective — import them separately", files[0].path, a.Op().OrAllReduce(), f.path, b.Op().OrAllReduce())
		}
		if a.NRanks != b.NRanks {
			return fmt.Errorf("%s ran on %d ranks but %s on %d; an import study holds one fabric — import them separately", files[0].path, a.NRanks, f.path, b.NRanks)
		}
	}
	return nil
}

// importConfig is the config the runs are stored under: --env when given,
// else the one their -J JSON recorded, else NCCL's defaults. Runs that
// record other or different configs, or that cannot say beside one that
// does, are refused: each launch is stored with the config it ran with.
func importConfig(files []*parsedFile, given nccl.Config) (nccl.Config, error) {
	var recorded nccl.Config
	var recordedBy, unknown string
	for _, f := range files {
		if f.result.Env == nil { // text output
			unknown = cmp.Or(unknown, f.path)
			continue
		}
		cfg := nccl.KnobsOf(f.result.Env).Clone()
		if len(given) > 0 {
			if want := nccl.KnobsOf(given); cfg.Key() != want.Key() {
				return nil, fmt.Errorf("%s records that it ran with %s, not the --env given (%s); import each config with its own --env", f.path, configText(cfg), configText(want))
			}
			continue
		}
		switch {
		case recordedBy == "":
			recorded, recordedBy = cfg, f.path
		case cfg.Key() != recorded.Key():
			return nil, fmt.Errorf("%s records that it ran with %s but %s with %s; a trial is one config — import each config separately (with --env)", recordedBy, configText(recorded), f.path, configText(cfg))
		}
	}
	if len(given) > 0 || len(recorded) == 0 {
		return given, nil
	}
	if unknown != "" {
		return nil, fmt.Errorf("%s records that it ran with %s, but %s does not say what it ran with (text output without its JSON); import them separately, with --env for the text", recordedBy, configText(recorded), unknown)
	}
	return recorded, nil
}

func configText(c nccl.Config) string {
	if len(c) == 0 {
		return "NCCL's defaults"
	}
	return c.String()
}

// store adds the files to the import study (o.Study, or a new one the
// first file describes), each whole or not at all.
func (r *ImportResult) store(ctx context.Context, st *store.Store, o ImportOptions, good []*parsedFile) error {
	study, created, err := importStudy(st, o.Study, good[0].result)
	if err != nil {
		return err
	}
	r.Study, r.Created = study, created
	stored, err := storedOutputs(st, study, created)
	if err != nil {
		return err
	}
	var matching []*parsedFile
	for _, f := range good {
		if why := studyMismatch(f, study, o.Op, stored); why != "" {
			r.Skipped = append(r.Skipped, runresult.SkippedFile{File: f.path, Error: why})
			continue
		}
		matching = append(matching, f)
	}
	if len(matching) > 0 {
		if r.Trial, err = importTrial(st, study, o.Config); err != nil {
			return err
		}
	}
	// ended stores how a new import study ended (an existing one keeps
	// its status).
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
		l := importLaunch(f, study, r.Trial)
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
		r.Imported = append(r.Imported, runresult.ImportedFile{File: name, Launch: l.ID, Seq: l.Seq, Outcome: string(l.Outcome), Reason: l.Reason,
			Simulated: l.Simulated, Collective: f.result.Collective, NRanks: f.result.NRanks, Rows: len(l.Sizes)})
	}
	ended(vocab.StatusDone, "")
	return nil
}

// parsedFile is one FILE: its parse, or why it cannot be imported.
type parsedFile struct {
	path   string
	data   []byte
	isJSON bool
	result *benchfmt.Result
	err    error
	twin   *parsedFile       // the text output of the same launch as this JSON
	sum    [sha256.Size]byte // the same output given twice is one run
}

// sums are the hashes of the outputs this file stores (its twin's too).
func (f *parsedFile) sums() [][sha256.Size]byte {
	out := [][sha256.Size]byte{f.sum}
	if f.twin != nil {
		out = append(out, f.twin.sum)
	}
	return out
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
		f.err = fmt.Errorf("cannot read it: %w", outfile.UnwrapPath(err))
		return f
	}
	trimmed := strings.TrimLeft(string(data[:min(len(data), 64)]), " \t\r\n\ufeff")
	if f.isJSON = strings.HasPrefix(trimmed, "{"); f.isJSON {
		data, _ = benchfmt.RedactJSONEnv(data) // what is stored, and hashed
	}
	f.data, f.sum = data, sha256.Sum256(data)
	f.result, err = benchfmt.Parse(data)
	var failure *benchfmt.FailureError
	switch {
	case errors.As(err, &failure):
		f.err = fmt.Errorf("the run failed or its output stops early: %v", failure.Message)
	case f.result != nil && len(f.result.Rows) == 0 && len(f.result.Notes) > 0: // say why, not "no table"
		f.err = fmt.Errorf("no results row can be imported: %s", f.result.Notes[0])
		if more := len(f.result.Notes) - 1; more > 0 {
			f.err = fmt.Errorf("%w (and %d more notes)", f.err, more)
		}
	case err != nil:
		f.err = fmt.Errorf("not nccl-tests output: %v", err)
	case f.result == nil || len(f.result.Rows) == 0:
		f.err = errors.New("not nccl-tests output: no results rows")
	case f.result.Runs > 1:
		f.err = fmt.Errorf("it holds %d runs saved one after another (%s first); an import stores one run of one collective per file — save each run in its own file", f.result.Runs, f.result.Op().OrAllReduce())
	}
	return f
}

// sameFabricKind refuses to mix simulated and real outputs in one import.
func sameFabricKind(files []*parsedFile) error {
	sim := slices.IndexFunc(files, func(f *parsedFile) bool { return f.result.Simulated })
	real := slices.IndexFunc(files, func(f *parsedFile) bool { return !f.result.Simulated })
	if sim >= 0 && real >= 0 {
		return fmt.Errorf("%s is SIMULATED output but %s is from a real fabric; import them separately (a study is one or the other)", files[sim].path, files[real].path)
	}
	return nil
}

// belongingFiles reads the --study (read-only) and returns the files that
// belong in it; nil when none does, each file's err saying why.
func belongingFiles(db, name string, op nccl.Op, files []*parsedFile) ([]*parsedFile, error) {
	st, err := store.Open(db, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrNoDatabase) {
		return files, nil // the writer reports the missing study
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	study, err := st.Study(name)
	if err != nil {
		return files, nil // the writer reports it as it always has
	}
	if err := checkImportStudy(study); err != nil {
		return nil, err
	}
	stored, err := storedOutputs(st, study, false)
	if err != nil {
		return nil, err
	}
	var out []*parsedFile
	for _, f := range files {
		if why := studyMismatch(f, study, op, stored); why != "" {
			f.err = errors.New(why)
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// studyMismatch says why a file does not belong in the study: another op
// or fabric, or a run the study already holds (stored maps its outputs'
// hashes to their launches); "" when it belongs.
func studyMismatch(f *parsedFile, study *store.Study, op nccl.Op, stored map[[sha256.Size]byte]uint64) string {
	r := f.result
	if why := r.OpMismatch(op); why != "" {
		return why
	}
	// An output that names no program (before nccl-tests 2.15) is taken
	// at its word.
	if got := r.Op(); got != "" && got != study.Op() {
		return fmt.Sprintf("the output is of %s, study %s measured %s; import it into a study of its own (without --study)", got, study.Name, study.Op())
	}
	if r.Simulated != study.Simulated {
		if r.Simulated {
			return fmt.Sprintf("it is SIMULATED output and study %s holds real measurements; import it into a new study", study.Name)
		}
		return fmt.Sprintf("it is from a real fabric and study %s is SIMULATED; import it into a new study", study.Name)
	}
	// A study is one fabric: its launches are averaged as one.
	var diffs []string
	for _, d := range store.PlatformOf(r).Differences(study.Platform) {
		if d.Fabric() {
			diffs = append(diffs, d.String())
		}
	}
	if len(diffs) > 0 {
		return fmt.Sprintf("it ran on another fabric than study %s (this file's %s): import it into a study of its own (without --study)", study.Name, strings.Join(diffs, ", "))
	}
	for _, sum := range f.sums() {
		if id, ok := stored[sum]; ok {
			return fmt.Sprintf("study %s already holds this run (launch %d, identical output); a run is stored once", study.Name, id)
		}
	}
	return ""
}

// storedOutputs maps the hash of each output a study holds to its launch.
func storedOutputs(st *store.Store, study *store.Study, created bool) (map[[sha256.Size]byte]uint64, error) {
	out := map[[sha256.Size]byte]uint64{}
	if created {
		return out, nil
	}
	launches, err := st.Launches(study.ID)
	if err != nil {
		return nil, err
	}
	for _, l := range launches {
		raw, err := st.RawOutput(l.ID)
		if err != nil {
			return nil, err
		}
		// An old, unredacted JSON hashes as it is stored now.
		storedJSON, _ := benchfmt.RedactJSONEnv(raw.JSON)
		for _, data := range [][]byte{raw.Stdout, storedJSON} {
			if len(data) > 0 {
				out[sha256.Sum256(data)] = l.ID
			}
		}
	}
	return out, nil
}

// importStudy finds the --study, or creates one the first file describes.
func importStudy(st *store.Store, name string, first *benchfmt.Result) (*store.Study, bool, error) {
	if name != "" {
		study, err := st.Study(name)
		if errors.Is(err, store.ErrNotFound) {
			return nil, false, vocab.UsageErrorf("%v; omit --study to start a new import study", err)
		}
		if err != nil {
			return nil, false, err
		}
		if err := checkImportStudy(study); err != nil {
			return nil, false, err
		}
		return study, false, nil
	}
	study := &store.Study{
		Kind:       vocab.KindImport,
		Collective: first.Collective,
		Simulated:  first.Simulated,
		Platform:   store.PlatformOf(first),
		Launch:     store.LaunchSettings{SimProfile: first.SimProfile},
		Status:     vocab.StatusRunning, // until every file is in
	}
	var sizes []int64
	for _, z := range benchfmt.SizesOf(first) {
		sizes = append(sizes, z.Nominal())
	}
	slices.Sort(sizes)
	if sizes = slices.Compact(sizes); len(sizes) > 0 {
		band := nccl.Band{Min: sizes[0], Max: sizes[len(sizes)-1]}
		study.Band, study.BandMin, study.BandMax, study.Sizes = band.String(), band.Min, band.Max, sizes
	}
	if err := st.CreateStudy(study); err != nil {
		return nil, false, err
	}
	return study, true, nil
}

func checkImportStudy(study *store.Study) error {
	if study.Kind != vocab.KindImport {
		return vocab.UsageErrorf("study %s is a %s; import adds only to import studies (omit --study to start a new one)", study.Name, study.Kind)
	}
	return nil
}

// importTrial is the study's trial for cfg, existing or new.
func importTrial(st *store.Store, study *store.Study, cfg nccl.Config) (*store.Trial, error) {
	trial := &store.Trial{StudyID: study.ID, Config: cfg, Role: vocab.RoleImport, State: vocab.TrialComplete}
	err := st.AddTrial(trial)
	var dup *store.DuplicateTrialError
	if errors.As(err, &dup) {
		return st.Trial(dup.Existing)
	}
	return trial, err
}

func importLaunch(f *parsedFile, study *store.Study, trial *store.Trial) *store.Launch {
	r := f.result
	l := &store.Launch{
		StudyID: study.ID, TrialID: trial.ID, Phase: vocab.PhaseImport, Op: r.Op(),
		Outcome: benchfmt.OK, Env: trial.Config.Env(), Simulated: r.Simulated,
		Sizes: benchfmt.SizesOf(r), Facts: r.Facts,
	}
	l.Source = f.path
	if abs, err := filepath.Abs(f.path); err == nil {
		l.Source = abs
	}
	if fi, err := os.Stat(f.path); err == nil {
		l.Start = fi.ModTime().UTC() // when the output was saved: the best the file tells
	}
	if why := r.Invalid(); why != "" {
		l.Outcome, l.Reason = benchfmt.Invalid, why
	}
	l.Scored = l.Outcome == benchfmt.OK
	return l
}

// pairRuns finds a run's text output and its -J JSON among the files: one
// launch, so the JSON (which holds the per-iteration samples) keeps the
// text as its twin.
func pairRuns(files []*parsedFile) []*parsedFile {
	var out []*parsedFile
	used := map[*parsedFile]bool{}
	for _, j := range files {
		if !j.isJSON {
			continue
		}
		for _, t := range files {
			if t.isJSON || used[t] || !sameRun(t.result, j.result) {
				continue
			}
			j.twin, used[t] = t, true
			break
		}
	}
	for _, f := range files {
		if !used[f] {
			out = append(out, f)
		}
	}
	return out
}

// sameRun reports whether a text and a JSON parse describe one launch:
// the same collective, ranks and rows, with times equal to the text's
// precision.
func sameRun(text, js *benchfmt.Result) bool {
	if text == nil || js == nil || text.Collective != js.Collective || text.NRanks != js.NRanks || len(text.Rows) != len(js.Rows) {
		return false
	}
	for i, a := range text.Rows {
		b := js.Rows[i]
		if a.Bytes != b.Bytes || a.Cycle != b.Cycle || !sameTime(a.Out.TimeUS, b.Out.TimeUS) {
			return false
		}
		if (a.In == nil) != (b.In == nil) || a.In != nil && !sameTime(a.In.TimeUS, b.In.TimeUS) {
			return false
		}
	}
	return true
}

// sameTime compares a time as the text table prints it (rounded to a few
// significant digits) with the JSON's full value.
func sameTime(text, js float64) bool {
	return math.Abs(text-js) <= math.Max(0.011, 0.0006*math.Abs(js))
}
