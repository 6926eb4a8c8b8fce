package main

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/report"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/vocab"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "put two configs (measured fresh, interleaved) or two stored studies side by side",
		ArgsUsage: "[STUDY-A STUDY-B]",
		Description: `compare has two forms.

With --env-a and --env-b (either may be empty: NCCL's defaults) it launches
A and B alternately (A B A B …, --launches each, after one uncounted warm-up
of A) over --band and compares them with the statistics of a search's
confirmation: per-size medians with intervals, and the band speedup of B
over A with its interval and Mann-Whitney p. The launches are stored as a
study.

With two stored studies it compares what each concluded: the launches of
the config each recommends (its confirmation launches when it has them),
or of its baseline, or of a sweep's or an import's one config. Those
launches were not interleaved: drift between the two studies (another day,
another driver) counts as a difference, which is sometimes the question.

Examples:
  nccltune compare --sim spark4 --band 512K-4M --env-b NCCL_PROTO=^LL128 --env-b NCCL_MAX_NCHANNELS=8
  nccltune compare --band 512K-4M --env-a NCCL_PROTO=^LL128 --env-b NCCL_PROTO=Simple <launch flags>
  nccltune compare s3-512K-4M s9-512K-4M`,
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "env-a", Usage: "config A, NCCL knob `K=V`, repeatable (none: NCCL's defaults)"},
			&cli.StringSliceFlag{Name: "env-b", Usage: "config B, NCCL knob `K=V`, repeatable (none: NCCL's defaults)"},
			&cli.StringFlag{Name: "band", Usage: "message sizes to compare over, e.g. 512K-4M (fresh form)"},
			&cli.IntFlag{Name: "launches", Value: 10, Usage: "interleaved launches per config (fresh form)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"},
		}, append(namingFlags(), launchFlags()...)...),
		Action: func(c *cli.Context) error {
			path, err := dbPath(c)
			if err != nil {
				return err
			}
			switch {
			case c.NArg() == 2:
				for _, f := range []string{"env-a", "env-b", "band", "launches"} {
					if c.IsSet(f) {
						return usageErrorf("compare STUDY-A STUDY-B compares stored launches; --%s is for a fresh comparison (without studies)", f)
					}
				}
				return compareStudies(c.App.Writer, path, c.Args().Get(0), c.Args().Get(1), c.Bool("json"))
			case c.NArg() != 0:
				return usageErrorf("compare takes two studies or none (got %d arguments); for two configs use --env-a K=V --env-b K=V", c.NArg())
			}
			return compareFresh(c, path)
		},
	}
}

// compareFresh measures --env-a against --env-b, interleaved.
func compareFresh(c *cli.Context, path string) error {
	lo, err := readLaunchFlags(c)
	if err != nil {
		return err
	}
	a, err := readConfigFlag(c, "env-a", lo.spec.BaseEnv)
	if err != nil {
		return err
	}
	b, err := readConfigFlag(c, "env-b", lo.spec.BaseEnv)
	if err != nil {
		return err
	}
	if a.Key() == b.Key() {
		return usageErrorf("--env-a and --env-b are the same config (%s): give B what differs, e.g. --env-b NCCL_PROTO=^LL128", a)
	}
	if c.String("band") == "" {
		return usageErrorf("compare needs --band, the message sizes to compare over, e.g. --band 512K-4M")
	}
	band, err := nccl.ParseBand(c.String("band"))
	if err != nil {
		return usageError(fmt.Errorf("--band: %w", err))
	}
	if n, need := c.Int("launches"), model.MinLaunchesForDecision(model.DefaultOptions()); n < need {
		return usageErrorf("--launches %d: at least %d per config are needed for any verdict", n, need)
	}
	naming, err := readNaming(c)
	if err != nil {
		return err
	}
	o := verifyOptions{launch: lo, launches: c.Int("launches"), json: c.Bool("json"), db: path,
		stdout: c.App.Writer, stderr: c.App.ErrWriter, naming: naming}
	if err := preflight(lo); err != nil {
		return err
	}
	st, err := store.Open(path, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	return runInterleaved(c.Context, st, o, abSpec{kind: vocab.KindCompare, band: band, bandText: band.String(),
		collective: "all_reduce", base: a, cand: b})
}

// readConfigFlag reads a repeatable K=V flag into a config of knobs, none
// of which the base env fixes.
func readConfigFlag(c *cli.Context, flag string, base map[string]string) (nccl.Config, error) {
	if err := checkNoRepeats(flag, c.StringSlice(flag)); err != nil {
		return nil, err
	}
	cfg, err := nccl.ParseConfig(c.StringSlice(flag))
	if err != nil {
		return nil, usageError(fmt.Errorf("--%s: %w", flag, err))
	}
	for k := range cfg {
		if _, fixed := base[k]; fixed {
			return nil, usageErrorf("%s is set by both --%s and --base-env; keep one", k, flag)
		}
	}
	return cfg, nil
}

// compareArm is one side of a comparison of stored studies.
type compareArm struct {
	Study     string            `json:"study"`
	Env       map[string]string `json:"env"`
	Trial     int               `json:"trial"`
	Launches  int               `json:"launches"`
	Simulated bool              `json:"simulated"`
	ScoreUS   *float64          `json:"score_us"`
}

// compareRow is one size of a comparison.
type compareRow struct {
	Bytes       int64    `json:"bytes"`
	AUS         float64  `json:"a_us"`
	ALo         *float64 `json:"a_lo_us"`
	AHi         *float64 `json:"a_hi_us"`
	BUS         float64  `json:"b_us"`
	BLo         *float64 `json:"b_lo_us"`
	BHi         *float64 `json:"b_hi_us"`
	Change      float64  `json:"change"`
	P           float64  `json:"p"`
	Significant bool     `json:"significant"`
}

// compareStudies compares what two stored studies concluded.
func compareStudies(w io.Writer, path, qa, qb string, asJSON bool) error {
	studies, err := loadStudies(path, []string{qa, qb})
	if err != nil {
		return err
	}
	opt := model.DefaultOptions()
	var arms [2]compareArm
	var launches [2][]model.Launch
	var sizes [2][]int64
	for i, s := range studies {
		t, ls := s.ResultLaunches()
		if t == nil || len(ls) == 0 {
			return usageErrorf("study %s has no usable launches to compare", s.Name())
		}
		launches[i] = report.ModelLaunches(ls)
		for b := range launches[i][0].Times {
			sizes[i] = append(sizes[i], b)
		}
		arms[i] = compareArm{Study: s.Name(), Env: t.Config.Clone(), Trial: t.Number, Launches: len(ls), Simulated: s.Study.Simulated}
	}
	var common []int64
	for _, b := range sizes[0] {
		if slices.Contains(sizes[1], b) {
			common = append(common, b)
		}
	}
	slices.Sort(common)
	if len(common) == 0 {
		return usageErrorf("studies %s and %s measured no size in common", arms[0].Study, arms[1].Study)
	}
	var rows []compareRow
	for _, b := range common {
		one := []int64{b}
		sa, sb := model.Summarize(launches[0], one, opt), model.Summarize(launches[1], one, opt)
		if len(sa.Sizes) == 0 || len(sb.Sizes) == 0 {
			continue
		}
		cmp := model.Compare(launches[0], launches[1], one, opt)
		x, y := sa.Sizes[0], sb.Sizes[0]
		rows = append(rows, compareRow{Bytes: b, AUS: x.Median, ALo: finitePtr(x.Lo), AHi: finitePtr(x.Hi),
			BUS: y.Median, BLo: finitePtr(y.Lo), BHi: finitePtr(y.Hi), Change: y.Median/x.Median - 1,
			P: finiteOr(cmp.P, 1), Significant: cmp.Significant})
	}
	band := model.Compare(launches[0], launches[1], common, opt)
	for i, s := range []model.Summary{band.Baseline, band.Candidate} {
		arms[i].ScoreUS = finitePtr(s.ScoreUS)
	}
	if asJSON {
		return ui.WriteJSON(w, map[string]any{"a": arms[0], "b": arms[1], "interleaved": false, "rows": rows,
			"speedup": jsonNumber(band.Speedup), "speedup_ci": []any{jsonNumber(band.Lo), jsonNumber(band.Hi)},
			"p_value": finiteOr(band.P, 1), "significant": band.Significant})
	}
	for i, name := range []string{"A", "B"} {
		a := arms[i]
		sim := ""
		if a.Simulated {
			sim = "  [SIMULATED]"
		}
		fmt.Fprintf(w, "%s: %s trial %d, %s, %d launches%s\n", name, a.Study, a.Trial, nccl.Config(a.Env), a.Launches, sim)
	}
	fmt.Fprintln(w, "median time over launches [95% CI]; ~ = no significant difference (p ≥ 0.05); not interleaved")
	tw := newTable(w)
	fmt.Fprintln(tw, "size\tA µs\tB µs\tB vs A\t")
	for _, r := range rows {
		change := "~"
		if r.Significant {
			change = fmt.Sprintf("%+.1f%%", 100*r.Change)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s (p=%.3f)\t\n", nccl.FormatSize(r.Bytes), ciPtrText(r.AUS, r.ALo, r.AHi), ciPtrText(r.BUS, r.BLo, r.BHi), change, r.P)
	}
	tw.Flush()
	if math.IsNaN(band.Speedup) {
		return nil
	}
	fmt.Fprintf(w, "over these sizes: B is %s as fast as A (95%% CI), p=%.3g%s\n", report.SpeedupText(band.Speedup, [2]float64{finiteOr(band.Lo, 0), finiteOr(band.Hi, 0)}),
		finiteOr(band.P, 1), map[bool]string{true: "", false: ": no significant difference"}[band.Significant])
	return nil
}

func finitePtr(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func ciPtrText(m float64, lo, hi *float64) string {
	if lo == nil || hi == nil {
		return fmt.Sprintf("%.1f", m)
	}
	return ciText(m, *lo, *hi)
}
