package model

import (
	"cmp"
	"fmt"
	"math"

	"github.com/nccltune/nccltune/internal/vocab"
)

// Options are the statistical settings shared by summaries, comparisons and
// the launch planner. A zero field means its default (see DefaultOptions).
type Options struct {
	// Alpha is the significance level of the Mann-Whitney test (default 0.05).
	Alpha float64
	// Confidence is the coverage asked of every interval (default 0.95).
	Confidence float64
	// MinEffect is the smallest speedup worth recommending (0.03: ≥ 1.03);
	// to accept any significant gain pass a tiny value such as 1e-9.
	MinEffect float64
	// HighSpreadPct is the launch-to-launch robust coefficient of variation
	// (percent) above which a size gets a "high-spread" warning (default 10).
	HighSpreadPct float64
	// OutlierZ is the robust z-score beyond which a launch is an outlier
	// (default 3.5; robustOutliers).
	OutlierZ float64
}

// Defaults of Options.
const (
	DefaultHighSpreadPct = 10
	DefaultOutlierZ      = 3.5
	// DefaultMaxPerArm caps launches per config in PlanNext when the
	// caller passes no cap.
	DefaultMaxPerArm = 20
)

// DefaultOptions returns alpha 0.05, 95 % intervals, a 3 % minimum effect,
// a 10 % high-spread threshold and outlier z 3.5.
func DefaultOptions() Options {
	return Options{
		Alpha:         vocab.DefaultAlpha,
		Confidence:    vocab.DefaultConfidence,
		MinEffect:     vocab.DefaultMinEffect,
		HighSpreadPct: DefaultHighSpreadPct,
		OutlierZ:      DefaultOutlierZ,
	}
}

// Validate reports the first setting that makes no sense, naming the fix.
func (o Options) Validate() error {
	o = o.fill()
	switch {
	case !(o.Alpha > 0 && o.Alpha < 1):
		return fmt.Errorf("significance level alpha %v is outside (0, 1) — use e.g. 0.05", o.Alpha)
	case !(o.Confidence > 0 && o.Confidence < 1):
		return fmt.Errorf("confidence %v is outside (0, 1) — use e.g. 0.95", o.Confidence)
	case !(o.MinEffect >= 0 && o.MinEffect < 10):
		return fmt.Errorf("minimum effect %v is not a fraction ≥ 0 — use e.g. 0.03 for 3 %%", o.MinEffect)
	case !(o.HighSpreadPct > 0) || math.IsInf(o.HighSpreadPct, 0):
		return fmt.Errorf("high-spread threshold %v %% must be positive — use e.g. 10", o.HighSpreadPct)
	case !(o.OutlierZ > 0) || math.IsInf(o.OutlierZ, 0):
		return fmt.Errorf("outlier z %v must be positive — use e.g. 3.5", o.OutlierZ)
	}
	return nil
}

// fill replaces zero fields by their defaults.
func (o Options) fill() Options {
	d := DefaultOptions()
	o.Alpha, o.Confidence, o.MinEffect = cmp.Or(o.Alpha, d.Alpha), cmp.Or(o.Confidence, d.Confidence), cmp.Or(o.MinEffect, d.MinEffect)
	o.HighSpreadPct, o.OutlierZ = cmp.Or(o.HighSpreadPct, d.HighSpreadPct), cmp.Or(o.OutlierZ, d.OutlierZ)
	return o
}

// resolve fills defaults and, when a setting is invalid, falls back to the
// defaults with a warning (callers should Validate user input first).
func (o Options) resolve() (Options, []Warning) {
	if err := o.Validate(); err != nil {
		return DefaultOptions(), []Warning{{Code: WarnBadOptions,
			Message: err.Error() + "; the defaults were used instead"}}
	}
	return o.fill(), nil
}

// Warning is a caveat about a summary or comparison.
type Warning = vocab.Warning

// Warning codes.
const (
	WarnNoLaunches    = "no-launches"    // nothing to summarise or compare
	WarnNoSizes       = "no-sizes"       // no (valid) message sizes were given
	WarnFewLaunches   = "few-launches"   // too few launches for a per-size interval: Lo and Hi are NaN
	WarnHighSpread    = "high-spread"    // launch-to-launch spread above Options.HighSpreadPct
	WarnOutliers      = "outliers"       // launches far from the others by a robust rule
	WarnBimodal       = "bimodal"        // launches (or one launch's iterations) fall in two groups
	WarnInvalidLaunch = "invalid-launch" // NaN, infinite, zero or negative times: left out
	WarnMissingSize   = "missing-size"   // no samples at a size: no launch score, left out of comparisons
	WarnNoCI          = "ci-unavailable" // no speedup interval at this confidence (CIOK false)
	// WarnTooFewForDecision: these launches cannot reach significance at
	// alpha whatever the data.
	WarnTooFewForDecision = "too-few-for-decision"
	// WarnEstimateOutsideCI: the band-score ratio lies outside the launch
	// scores' interval (per-size medians and launch scores disagree).
	WarnEstimateOutsideCI = "estimate-outside-ci"
	WarnBadOptions        = "bad-options" // invalid Options: the defaults were used
)
