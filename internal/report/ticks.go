package report

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"

	"github.com/nccltune/nccltune/internal/nccl"
)

// linearTicks labels a linear axis every "nice" step (1, 2, 2.5 or 5
// times a power of ten), 5 to 10 of them, with as many decimals as the
// step needs: gonum's default labels as few as two ("0.00", "25.00").
type linearTicks struct {
	Prefix string // before every label ("×")
}

func (t linearTicks) Ticks(min, max float64) []plot.Tick {
	step, decimals := niceStep(min, max, 6)
	if step <= 0 {
		return []plot.Tick{{Value: min, Label: t.Prefix + strconv.FormatFloat(min, 'f', -1, 64)}}
	}
	var ticks []plot.Tick
	first := math.Ceil(min/step - 1e-9)
	for i := first; i*step <= max+step*1e-9; i++ {
		v := i * step
		if v == 0 {
			v = 0 // not -0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: t.Prefix + strconv.FormatFloat(v, 'f', decimals, 64)})
		// Minor ticks halfway, unlabelled.
		if h := v + step/2; h <= max {
			ticks = append(ticks, plot.Tick{Value: h})
		}
	}
	return ticks
}

// niceStep is the step that gives about want ticks over [min, max], and
// the decimals its labels need.
func niceStep(min, max float64, want int) (float64, int) {
	span := max - min
	if !(span > 0) || math.IsInf(span, 0) {
		return 0, 0
	}
	raw := span / float64(want)
	exp := math.Floor(math.Log10(raw))
	base := math.Pow(10, exp)
	step := 10 * base
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*base >= raw {
			step = m * base
			break
		}
	}
	// As many decimals as the step has: 0.1 → 1, 0.25 → 2, 5 → 0.
	decimals := 0
	for d := 0; d < 12; d++ {
		scaled := step * math.Pow(10, float64(d))
		if math.Abs(scaled-math.Round(scaled)) < 1e-6*scaled {
			decimals = d
			break
		}
	}
	return step, decimals
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten;
// over a span too narrow for three such labels, as linearTicks does.
type logTicks struct {
	Prefix string
}

func (t logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return linearTicks(t).Ticks(min, max)
	}
	var ticks []plot.Tick
	labelled := 0
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		base := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * base
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			tk := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				tk.Label = t.Prefix + strconv.FormatFloat(roundSig(v), 'f', -1, 64)
				labelled++
			}
			ticks = append(ticks, tk)
		}
	}
	if labelled >= 3 {
		return ticks
	}
	return linearTicks(t).Ticks(min, max)
}

// roundSig removes the float noise of 0.1 × 3 and the like.
func roundSig(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return f
}

// log2Ticks puts a tick at every power of two, labelled as nccl-tests
// writes sizes (32K, 1M), fewer when there are too many to read.
type log2Ticks struct{}

func (log2Ticks) Ticks(min, max float64) []plot.Tick {
	lo, hi := int(math.Ceil(math.Log2(min))), int(math.Floor(math.Log2(max)))
	if hi < lo {
		return nil
	}
	step := 1
	for (hi-lo)/step+1 > 16 {
		step++
	}
	var ticks []plot.Tick
	for e := lo; e <= hi; e++ {
		t := plot.Tick{Value: math.Exp2(float64(e))}
		if e%step == 0 && e >= 0 {
			t.Label = nccl.FormatSize(int64(1) << e)
		}
		ticks = append(ticks, t)
	}
	return ticks
}
