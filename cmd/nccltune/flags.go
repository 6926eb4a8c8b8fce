package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/store"
)

// measureOptions are what the commands that measure one config
// repeatedly (sweep, gate) share; verify reads its launch flags and --env
// through it too.
type measureOptions struct {
	cmdIO
	launch  studyrun.LaunchSettings
	config  nccl.Config // --env
	repeats int
	warmup  bool // not --no-warmup
	naming  studyNaming
}

// readMeasureFlags reads the launch flags, --env, --repeats (checked by
// the caller, checkRepeats), --no-warmup, --json and the database.
func readMeasureFlags(c *cli.Context) (measureOptions, error) {
	lo, err := launchflags.Read(c)
	if err != nil {
		return measureOptions{}, err
	}
	cfg, err := launchflags.ReadConfig(c, "env", lo.Spec.BaseEnv)
	if err != nil {
		return measureOptions{}, err
	}
	path, err := dbPath(c)
	if err != nil {
		return measureOptions{}, err
	}
	return measureOptions{cmdIO: ioOf(c, path), launch: lo, config: cfg, repeats: c.Int("repeats"), warmup: !c.Bool("no-warmup")}, nil
}

func checkRepeats(n int) error {
	if n < 1 {
		return vocab.UsageErrorf("--repeats %d: measure at least once", n)
	}
	return nil
}

// noWarmupFlag is --no-warmup of the commands that measure one config
// repeatedly (sweep, gate).
func noWarmupFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-warmup", Usage: "skip the uncounted warm-up launch"}
}

func checkFinite(flag string, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return vocab.UsageErrorf("--%s %v: give a finite number", flag, x)
	}
	return nil
}

// preflight refuses a launch that cannot start, of lo's op or of any of
// ops (worded by format), before a command opens the database, so no
// study is stored for it.
func preflight(lo studyrun.LaunchSettings, format string, ops ...nccl.Op) error {
	if err := runner.Preflight(lo.Spec); err != nil {
		return launchRefusal(err)
	}
	for _, op := range ops {
		if err := launchflags.CanLaunchOp(lo, op); err != nil {
			return launchRefusal(fmt.Errorf(format, op, err))
		}
	}
	return nil
}

// launchRefusal is err as the exit codes say it: a missing benchmark is
// the fabric's (exit 3), anything else a usage error.
func launchRefusal(err error) error {
	if errors.Is(err, vocab.ErrFabric) {
		return err
	}
	return vocab.UsageError(err)
}

func openForLaunch(lo studyrun.LaunchSettings, path string) (*store.Store, error) {
	if err := preflight(lo, ""); err != nil {
		return nil, err
	}
	return store.Open(path, store.Options{})
}

// repeat is how studyrun measures the config of these options; started
// hears of the study once it is stored.
func (o measureOptions) repeat(started func(*store.Study)) studyrun.RepeatOptions {
	return studyrun.RepeatOptions{Config: o.config, Repeats: o.repeats, Warmup: o.warmup,
		Launch: o.launch, Name: o.naming.apply, Progress: ui.RepeatProgress(o.stderr), Started: started}
}

// studyNaming is what --name and --label give a new study.
type studyNaming struct {
	name   string
	labels map[string]string
}

// namingFlags are the flags of every command that creates a study.
func namingFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "name", Usage: "the new study's `NAME`: letters, digits, -, _ and ., starting with a letter or digit, at most 64, not s<N> or s<N>-… (default: s<ID>-<band or kind>)"},
		labelFlag("tag the new study with `K=V` (lane=spark4, ticket=OPS-12), repeatable; show and history --json list them"),
	}
}

func readNaming(c *cli.Context) (studyNaming, error) {
	n := studyNaming{name: c.String("name")}
	if n.name != "" {
		if err := store.CheckName(n.name); err != nil {
			return n, vocab.UsageError(fmt.Errorf("--name: %w", err))
		}
	}
	for _, kv := range flagvalue.Items(c, "label") {
		k, v, _ := strings.Cut(kv, "=")
		if n.labels == nil {
			n.labels = map[string]string{}
		}
		n.labels[strings.TrimSpace(k)] = v
	}
	return n, nil
}

// labelFlag is --label K=V, repeatable, each key once.
func labelFlag(usage string) *flagvalue.List {
	return &flagvalue.List{GenericFlag: cli.GenericFlag{Name: "label", Usage: usage, Value: &flagvalue.KV{Flag: "label",
		Check: func(kv string) error {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return vocab.UsageErrorf("--label %q: write KEY=VALUE, e.g. --label lane=spark4", kv)
			}
			if err := store.CheckLabel(strings.TrimSpace(k), v); err != nil {
				return vocab.UsageErrorf("--label: %w", err)
			}
			return nil
		},
		Repeated: func(k, _, _ string) error { return vocab.UsageErrorf("--label %s is given twice; give it once", k) },
	}}}
}

func (n studyNaming) apply(st *store.Study) {
	st.Name, st.Labels = n.name, n.labels
}
