package main

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/studyrun"
	"github.com/nccltune/nccltune/vocab"
)

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:      "sweep",
		Usage:     "measure one config's whole curve (bus bandwidth and time per size)",
		ArgsUsage: " ",
		Description: `sweep runs the benchmark for one config over a range of sizes (doubling), once
or --repeats times, and prints per size the median time with its confidence
interval and the bus bandwidth. A first warm-up launch is stored but not
counted: the first launch after a fabric starts can be slow.

Examples:
  nccltune sweep --sim spark4
  nccltune sweep --sim spark4 --env NCCL_PROTO=^LL128 --env NCCL_MAX_NCHANNELS=8
  nccltune sweep --launcher mpirun --np 2 --hosts a,b --min 8M --max 4G --repeats 5`,
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "env", Usage: "NCCL knob `K=V` of the config to measure, repeatable (none: NCCL's defaults)"},
			&cli.StringFlag{Name: "min", Value: "32K", Usage: "smallest size (nccl-tests -b)"},
			&cli.StringFlag{Name: "max", Value: "256M", Usage: "largest size (nccl-tests -e)"},
			&cli.IntFlag{Name: "repeats", Value: 1, Usage: "launches to measure (medians and intervals over launches)"},
			&cli.BoolFlag{Name: "no-warmup", Usage: "skip the uncounted warm-up launch"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"},
		}, append(namingFlags(), launchFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("sweep takes no arguments (got %q); set knobs with --env K=V", c.Args().First())
			}
			o, err := readSweepFlags(c)
			if err != nil {
				return err
			}
			if o.naming, err = readNaming(c); err != nil {
				return err
			}
			return runSweep(c.Context, o)
		},
	}
}

type sweepOptions struct {
	launch   launchOptions
	config   nccl.Config
	min, max int64
	repeats  int
	warmup   bool
	json     bool
	db       string
	stdout   io.Writer
	stderr   io.Writer
	naming   studyNaming
}

func readSweepFlags(c *cli.Context) (sweepOptions, error) {
	lo, err := readLaunchFlags(c)
	if err != nil {
		return sweepOptions{}, err
	}
	cfg, err := readEnvFlag(c, lo.spec.BaseEnv)
	if err != nil {
		return sweepOptions{}, err
	}
	min, max, err := readSizeRange(c)
	if err != nil {
		return sweepOptions{}, err
	}
	if c.Int("repeats") < 1 {
		return sweepOptions{}, usageErrorf("--repeats %d: measure at least once", c.Int("repeats"))
	}
	path, err := dbPath(c)
	if err != nil {
		return sweepOptions{}, err
	}
	return sweepOptions{launch: lo, config: cfg, min: min, max: max, repeats: c.Int("repeats"),
		warmup: !c.Bool("no-warmup"), json: c.Bool("json"), db: path,
		stdout: c.App.Writer, stderr: c.App.ErrWriter}, nil
}

// sweepRow is one size of a sweep's result.
type sweepRow struct {
	Bytes  int64   `json:"bytes"`
	TimeUS float64 `json:"time_us"`
	Lo     float64 `json:"time_lo_us"`
	Hi     float64 `json:"time_hi_us"`
	BusBW  float64 `json:"busbw"`
	AlgBW  float64 `json:"algbw"`
}

func runSweep(ctx context.Context, o sweepOptions) error {
	// Nothing is stored for a launch that cannot start.
	if err := preflight(o.launch); err != nil {
		return err
	}
	st, err := store.Open(o.db, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	band := nccl.Band{Min: o.min, Max: o.max}
	r := &studyrun.Repeated{Store: st, Launcher: &studyrun.Launcher{Base: o.launch.spec, Seed: o.launch.seed},
		Config: o.config, Role: vocab.RoleSweep, Phase: vocab.PhaseSweep,
		Min: o.min, Max: o.max, Repeats: o.repeats, Warmup: o.warmup, Progress: launchProgress(o.stderr),
		Study: &store.Study{Kind: vocab.KindSweep, Band: band.String(), BandMin: o.min, BandMax: o.max,
			Sizes: band.Sizes(), Collective: "all_reduce", BaseEnv: o.launch.spec.BaseEnv,
			Launch: launchSettings(o.launch), Simulated: o.launch.simulated, Seed: o.launch.seed,
			Budget: store.Budget{Launches: o.repeats}, Status: vocab.StatusRunning}}
	o.naming.apply(r.Study)
	if err := createStudy(st, r.Study); err != nil {
		return err
	}
	if err := r.Start(); err != nil {
		return err
	}
	study := r.Study
	fmt.Fprintf(o.stderr, "sweep %s: %s, %s to %s%s\n", study.Name, o.config, nccl.FormatSize(o.min), nccl.FormatSize(o.max), labelSuffix(study))
	launches, last, failed, err := r.Run(ctx)
	if err != nil {
		return err
	}
	if failed != nil {
		return fabricError(fmt.Errorf("launch %d %s: %s (log: nccltune show %s --trials)", r.FailedAt, failed.Outcome, failed.Reason, study.Name))
	}
	if err := r.Finish(""); err != nil {
		return err
	}
	rows := sweepRows(launches, last.Result)
	if o.json {
		return ui.WriteJSON(o.stdout, map[string]any{
			"study": study.Name, "simulated": study.Simulated, "sim_profile": study.Launch.SimProfile,
			"env": o.config.Clone(), "launches": len(launches), "rows": rows,
		})
	}
	printSweep(o.stdout, study, o.config, len(launches), rows)
	return nil
}

// noIntervalNote says why a sweep of n launches shows no intervals: the
// interval of a median over launches is an order-statistic interval, and
// with fewer than minLaunchesForCI launches none reaches 95 %.
func noIntervalNote(n int) string {
	need := minLaunchesForCI(0.95)
	if n <= 1 {
		return fmt.Sprintf("(no interval from one launch: --repeats %d or more gives a 95 %% interval over launches)", need)
	}
	return fmt.Sprintf("(no interval: %d launches are too few for a 95 %% interval of a median, which needs %d; use --repeats %d or more)", n, need, need)
}

// minLaunchesForCI is the fewest launches whose extremes bracket the
// median with the confidence asked: 1 - 2·0.5^n ≥ confidence.
func minLaunchesForCI(confidence float64) int {
	n := 1
	for 1-2*math.Pow(0.5, float64(n)) < confidence {
		n++
	}
	return n
}

// sweepRows summarises the launches per size: median over launches of
// each launch's median time, with bandwidths recomputed from that time
// using the benchmark's own bus-bandwidth factor.
func sweepRows(launches []model.Launch, last *runner.Result) []sweepRow {
	var rows []sweepRow
	seen := map[int64]bool{}
	for _, r := range last.Rows {
		if seen[r.Bytes] {
			continue
		}
		seen[r.Bytes] = true
		sum := model.Summarize(launches, []int64{r.Bytes}, model.DefaultOptions())
		if len(sum.Sizes) == 0 {
			continue
		}
		s := sum.Sizes[0]
		row := sweepRow{Bytes: r.Bytes, TimeUS: s.Median, Lo: ui.FiniteOr(s.Lo, s.Median), Hi: ui.FiniteOr(s.Hi, s.Median)}
		if s.Median > 0 {
			row.AlgBW = float64(r.Bytes) / s.Median / 1e3
			row.BusBW = row.AlgBW
			if r.Out.AlgBW > 0 {
				row.BusBW = row.AlgBW * r.Out.BusBW / r.Out.AlgBW
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func printSweep(w io.Writer, study *store.Study, cfg nccl.Config, n int, rows []sweepRow) {
	fmt.Fprintf(w, "sweep %s: %s, %d launch(es)", study.Name, cfg, n)
	if study.Simulated {
		fmt.Fprintf(w, "  [%s]", ui.SimLabel(true, study.Launch.SimProfile))
	}
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "size\ttime µs (95% CI)\tbusbw\talgbw\t")
	intervals := 0
	for _, r := range rows {
		t := fmt.Sprintf("%.1f", r.TimeUS)
		if !math.IsNaN(r.Lo) && !math.IsNaN(r.Hi) && r.Lo != r.Hi && n > 1 {
			t = fmt.Sprintf("%.1f [%.1f, %.1f]", r.TimeUS, r.Lo, r.Hi)
			intervals++
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t\n", nccl.FormatSize(r.Bytes), t, r.BusBW, r.AlgBW)
	}
	tw.Flush()
	if intervals == 0 && len(rows) > 0 {
		fmt.Fprintln(w, noIntervalNote(n))
	}
	fmt.Fprintln(w, "(busbw and algbw in GB/s, from the median time)")
}
