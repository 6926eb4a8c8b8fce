package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/export"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "re-measure a study's recommendation against its baseline (NCCL's defaults, or --baseline-env), fresh and interleaved",
		ArgsUsage: "STUDY",
		Description: `verify checks a recommendation independently of the search that made it:
new launches of NCCL's defaults and of the recommended env, alternating
(B C B C …, --launches each, after one uncounted warm-up), compared with
the same statistics as the search. It says whether the fresh speedup and
its interval agree with what the search claimed. Use it after a search,
after a driver or NCCL upgrade, or before changing a serving recipe.

With --tuner-plugin FILE.so it proves the tuner CSV before deployment:
the study's CSV (export --format nccl-tuner) is written to a temporary
file under $TMPDIR (on several hosts, a directory every host sees) and
the candidate runs with NCCL_TUNER_PLUGIN=FILE.so and
NCCL_TUNER_CONFIG_FILE=that file instead of the env. One debug launch of
it comes first: it shows what the plugin did per size ("Applied config",
"No matching config found": one channel) and, if a rank dies inside the
plugin (the example plugin built from NCCL < 2.30.3 source), ends verify
with the cause and the fix (exit 3) before anything is measured. Then the
CSV is measured against the baseline like the env, and verify says
whether it reproduces the study's gain. It is also judged at every size
of the band and at the power of two just outside each edge (where a row
stretched past what was measured acts; never below the smallest size the
op's benchmark runs), each size on its own with the
guards' rule: a size the CSV makes significantly slower fails verify
(exit 1), naming it. --tuner-config FILE measures that CSV (the file you
deploy, edited or not) instead of the study's own export. Between the
sizes an op is called at, a size where the CSV keeps NCCL's own choice
(channels 0) is equal by rule, and said so; one it changes is judged
too. A study of calls (--calls) is also measured at each size its
process calls off the powers of two, as the search's own-size check
launches there (after each measured launch of either arm, phase exact),
and a called size the CSV makes significantly slower fails verify. On Blackwell
at 3 or more nodes, where the example plugin's init retunes NCCL whatever
its CSV holds, the plugin with an empty CSV is measured too, after each
launch of the CSV: verify prints its own effect (against the baseline)
beside the rows' (the CSV against the empty CSV), per op and size.

A study of collectives (search --part, --guard-ops) is measured as it
was: each measurement one launch of every part's op at its band; every
part is compared, and the combined speedup (the search's objective)
checked against the claim. The guarded ops are measured, the study's
--guard-launches per arm, for a config the fresh comparison recommends.
A part or guarded op significantly slower by more than the study's
minimum effect refuses the config and fails verify (exit 1), naming the
op, unless the study had refused that candidate too. With --tuner-plugin
the debug launch is made once per op of the workload that NCCL's tuner
sees (not alltoall or sendrecv), and a warning names the op whose calls
fell back.

Examples:
  nccltune verify s3-512K-4M --sim spark4
  nccltune verify s3-512K-4M --launches 10 --launcher mpirun --np 2 --hosts a,b
  nccltune verify s3-512K-4M --baseline-env NCCL_PROTO=^LL128 --baseline-env NCCL_MAX_NCHANNELS=8 --sim spark4
  nccltune verify s2-512K-4M --tuner-plugin /opt/nccl/libnccl-tuner-example.so <launch flags>
  nccltune verify s4-512K-8M --sim h200-loopback --np 4   # a study of --part all_reduce:512K-4M --part alltoall:512K-8M`,
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "launches", Value: 10, Usage: "interleaved launches per arm"},
			launchflags.EnvFlag("verify this `K=V` config instead of the study's recommendation (repeatable)"),
			&cli.StringFlag{Name: "tuner-plugin", Usage: "measure the study's tuner CSV, exported on the fly, through NCCL's example tuner plugin `FILE.so` (built from NCCL 2.30.3+ source) instead of its env"},
			&cli.StringFlag{Name: "tuner-config", Usage: "with --tuner-plugin, measure this tuner `CSV` (the file you deploy) instead of the study's own export"},
			jsonFlag(),
		}, append(launchflags.BaselineFlags(), launchflags.Flags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return vocab.UsageErrorf("verify takes one STUDY (got %d arguments); nccltune history lists them", c.NArg())
			}
			m, err := readMeasureFlags(c) // verify has no --repeats or --no-warmup
			if err != nil {
				return err
			}
			lo, cfg := m.launch, m.config
			baseline, err := launchflags.ReadBaseline(c, lo.Spec.BaseEnv)
			if err != nil {
				return err
			}
			plugin, err := tunerPluginFlag(c, lo.Spec.BaseEnv)
			if err != nil {
				return err
			}
			if plugin != "" && len(cfg) > 0 {
				return vocab.UsageErrorf("--tuner-plugin measures the study's tuner CSV, --env another config: give one of them")
			}
			tunerConfig, err := tunerConfigFlag(c, plugin)
			if err != nil {
				return err
			}
			return runVerify(c.Context, verifyOptions{VerifyOptions: studyrun.VerifyOptions{Launch: lo, Study: c.Args().First(),
				Config: cfg, Launches: c.Int("launches"), Baseline: baseline, BaselineSet: c.IsSet("baseline-env") || c.IsSet("baseline-env-file")},
				tunerPlugin: plugin, tunerConfig: tunerConfig, cmdIO: m.cmdIO})
		},
	}
}

// verifyOptions are verify's (the study, the config, the baseline and
// the launches) and compare's (the launches).
type verifyOptions struct {
	studyrun.VerifyOptions
	cmdIO
	naming      studyNaming
	tunerPlugin string // --tuner-plugin (absolute): when set, the study's tuner CSV is measured through it
	tunerConfig string // --tuner-config (absolute): when set, the CSV measured instead of the study's export
}

func runVerify(ctx context.Context, o verifyOptions) error {
	st, err := store.Open(o.db, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	o.CheckRelaunch = func(study *store.Study) error {
		return launchflags.CheckRelaunch(study, "verify", o.Launch, o.stderr)
	}
	ab, err := studyrun.PlanVerify(st, o.VerifyOptions)
	if err != nil {
		return err
	}
	if o.tunerPlugin != "" {
		// The study as export reads it: the CSV when none is given, and
		// NCCL's recorded choices the CSV's gaps are judged by.
		rec, recErr := studyExport(st, o.Study)
		if recErr != nil && !errors.Is(recErr, vocab.ErrUsage) {
			return recErr // the database could not be read
		}
		csv, content := o.tunerConfig, ""
		if csv == "" {
			if recErr != nil {
				return recErr
			}
			var buf bytes.Buffer // the CSV export --format nccl-tuner writes
			if err := export.Write(&buf, export.FormatTuner, []*export.Recommendation{rec}, export.Options{}); err != nil {
				return vocab.UsageErrorf("--tuner-plugin: study %s has no tuner CSV to measure: %v", rec.Study.Name, err)
			}
			content = buf.String()
			if csv, err = writeTempCSV(content); err != nil {
				return err
			}
			defer outfile.RemoveAtExit(csv)()
		} else {
			data, err := input.Load(ctx, csv, input.MaxBytes)
			if err != nil {
				return vocab.UsageErrorf("--tuner-config %s: %v", csv, err)
			}
			content = string(data)
		}
		// The study keeps what NCCL read: a temporary file is gone when
		// verify ends, and the user's file may change.
		ab.Cand, ab.CheckCand, ab.TunerCSV = nccl.TunerConfig(o.tunerPlugin, csv), true, content
		// What is deployed is judged where it acts: the band and the sizes
		// just outside it, and between calls where the CSV changes NCCL's choice.
		ab.GuardDelivered(o.Launch.Spec.NP)
		if err := ab.SettleGaps(func(op nccl.Op, sizes []int64) ([]bool, error) {
			if recErr != nil {
				return make([]bool, len(sizes)), nil // no record of NCCL's choices: judge them all
			}
			return export.KeepsNCCL(rec, content, op, sizes)
		}); err != nil {
			return err
		}
		if ab.PluginRetunes {
			// Loading the plugin changes NCCL's choices there whatever
			// the CSV holds: an empty CSV tells its effect from the rows'.
			empty, err := writeTempCSV("# nccltune verify: no rows, to measure what loading the tuner plugin alone changes\n")
			if err != nil {
				return err
			}
			defer outfile.RemoveAtExit(empty)()
			ab.PluginAlone = nccl.TunerConfig(o.tunerPlugin, empty)
		}
	}
	return runInterleaved(ctx, st, o, ab)
}

// tunerPluginFlag reads --tuner-plugin: a file that is there, made
// absolute (NCCL opens it in every rank's working directory).
func tunerPluginFlag(c *cli.Context, base map[string]string) (string, error) {
	path := c.String("tuner-plugin")
	if path == "" {
		return "", nil
	}
	for _, k := range []string{nccl.TunerPluginVar, nccl.TunerConfigVar} {
		if _, ok := base[k]; ok {
			return "", vocab.UsageErrorf("--tuner-plugin sets %s for the CSV's launches; drop it from --base-env", k)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", vocab.UsageError(err)
	}
	_, err = input.Regular(abs) // NCCL dlopens it: a FIFO would hang each launch
	var notRegular *input.NotRegularError
	if errors.As(err, &notRegular) {
		return "", vocab.UsageErrorf("--tuner-plugin: %w", err)
	}
	if err != nil {
		return "", vocab.UsageErrorf("--tuner-plugin %s: no such file here; build NCCL's example tuner plugin from NCCL 2.30.3 or newer source (cd plugins/tuner/example && gcc -Inccl -fPIC -shared -o libnccl-tuner-example.so plugin.c) and give its path, the same on every host", path)
	}
	return abs, nil
}

// tunerConfigFlag reads --tuner-config: a CSV that is there, made absolute.
func tunerConfigFlag(c *cli.Context, plugin string) (string, error) {
	path := c.String("tuner-config")
	if path == "" {
		return "", nil
	}
	if plugin == "" {
		return "", vocab.UsageErrorf("--tuner-config %s is a CSV for the example tuner plugin: give the plugin with --tuner-plugin FILE.so too", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", vocab.UsageError(err)
	}
	if _, err := input.Regular(abs); errors.Is(err, fs.ErrNotExist) {
		return "", vocab.UsageErrorf("--tuner-config %s: no such file here; give the CSV you deploy (nccltune export STUDY --format nccl-tuner --out FILE writes the study's), the same path on every host", path)
	} else if err != nil {
		return "", vocab.UsageErrorf("--tuner-config %s: %v; give the CSV you deploy (nccltune export STUDY --format nccl-tuner --out FILE writes the study's), the same path on every host", path, err)
	}
	return abs, nil
}

func studyExport(st *store.Store, query string) (*export.Recommendation, error) {
	study, err := st.Study(query)
	if err != nil {
		return nil, vocab.UsageError(err)
	}
	trials, launches, err := st.TrialsAndLaunches(study.ID)
	if err != nil {
		return nil, err
	}
	rec, err := export.NewRecommendation(study, trials, launches)
	if err != nil {
		return nil, vocab.UsageError(err)
	}
	return rec, nil
}

// writeTempCSV writes content to a new temporary tuner CSV and returns
// its path.
func writeTempCSV(content string) (string, error) {
	f, err := os.CreateTemp("", "nccltune-tuner-*.csv")
	if err != nil {
		return "", fmt.Errorf("writing the tuner CSV: %w", err)
	}
	_, werr := f.WriteString(content)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(f.Name()) // ours: a unique name made above
		return "", fmt.Errorf("writing the tuner CSV: %w", err)
	}
	return f.Name(), nil
}

// runInterleaved runs verify's or compare's interleaved comparison
// (studyrun.RunAB) and prints it.
func runInterleaved(ctx context.Context, st *store.Store, o verifyOptions, ab studyrun.AB) error {
	// Every launch measures the comparison's op (CheckRelaunch refused another --op for verify).
	o.Launch.Spec.Op = nccl.Op(ab.Collective).OrAllReduce()
	if err := preflight(o.Launch, "%s, which the comparison measures: %w", append(ab.Parts.Ops(), ab.GuardOps...)...); err != nil {
		return err
	}
	var checkOK func(*benchfmt.Launch) error
	if ab.CheckCand {
		checkOK = studyrun.TunerCheck
	}
	r, err := studyrun.RunAB(ctx, st, ab, studyrun.ABOptions{Launch: o.Launch, Launches: o.Launches, Name: o.naming.apply, CheckOK: checkOK,
		Started: ui.ABStarted(o.stderr, ab.Kind, ab.Base, ab.Cand, o.Launches), Progress: ui.ABProgress(o.stderr)})
	if err != nil {
		return err
	}
	res := studyrun.VerifyResultOf(ab, r, o.Launches)
	launches, err := st.Launches(r.Study.ID)
	if err != nil {
		return err
	}
	if err := ui.PrintVerify(o.stdout, o.json, r.Study, launches, res); err != nil {
		return err
	}
	if res.Failed {
		return errCheckFailed
	}
	return nil
}
