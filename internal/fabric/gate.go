package fabric

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

// Basis is what a gate judges each size's bus bandwidth on.
type Basis string

const (
	// OnMedian judges the median over launches, the number gates in the
	// field are written from (a lower bound would fail a healthy fabric
	// whose plateau sits at the threshold about half the time).
	OnMedian Basis = "median"
	// OnLowerBound judges the one-sided 95 % lower confidence bound of
	// the median, for thresholds set with margin.
	OnLowerBound Basis = "lower_bound"
)

// ParseBasis reads "median" or "lower-bound" (also "lower_bound").
func ParseBasis(s string) (Basis, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "median":
		return OnMedian, nil
	case "lower-bound", "lower_bound", "lower", "lo":
		return OnLowerBound, nil
	}
	return "", fmt.Errorf("%q: judge on median or lower-bound", s)
}

// GateConfidence is the two-sided coverage of the interval a gate
// computes: 90 %, so that each bound alone is a one-sided 95 % bound. With
// 5 launches that interval is the slowest and fastest launch (93.75 %).
const GateConfidence = 0.90

// Threshold is one gate condition: at Bytes, bus bandwidth of at least
// MinBusBW GB/s.
type Threshold struct {
	Bytes    int64
	MinBusBW float64
}

func (t Threshold) String() string {
	return nccl.FormatSize(t.Bytes) + ":" + strconv.FormatFloat(t.MinBusBW, 'g', -1, 64)
}

// ParseThreshold reads "SIZE:GBPS", e.g. "1M:9" (at 1 MiB, at least
// 9 GB/s bus bandwidth). The size must be a power of two: the benchmark's
// doubling sweep measures no other.
func ParseThreshold(s string) (Threshold, error) {
	size, gbps, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Threshold{}, fmt.Errorf("%q: write SIZE:GBPS, e.g. 1M:9 (at 1 MiB, at least 9 GB/s bus bandwidth)", s)
	}
	b, err := nccl.ParseSize(size)
	if err == nil {
		err = nccl.CheckPowerOfTwo(b)
	}
	if err != nil {
		return Threshold{}, fmt.Errorf("%q: %w", s, err)
	}
	if b > nccl.MaxBandSize {
		return Threshold{}, fmt.Errorf("%q: sizes above %s are not supported", s, nccl.FormatSize(nccl.MaxBandSize))
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(gbps), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Threshold{}, fmt.Errorf("%q: %q is not a bus bandwidth in GB/s (e.g. 9 or 22.5)", s, gbps)
	}
	if v <= 0 {
		return Threshold{}, fmt.Errorf("%q: the bus bandwidth must be more than 0 GB/s", s)
	}
	return Threshold{Bytes: b, MinBusBW: v}, nil
}

// ParseThresholds reads every --at value, refusing duplicate sizes, and
// returns them sorted by size.
func ParseThresholds(items []string) ([]Threshold, error) {
	if len(items) == 0 {
		return nil, fmt.Errorf("no threshold given: add --at SIZE:GBPS, e.g. --at 1M:9 --at 256M:22")
	}
	var out []Threshold
	seen := map[int64]string{}
	for _, it := range items {
		t, err := ParseThreshold(it)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[t.Bytes]; dup {
			return nil, fmt.Errorf("%q and %q name the same size %s: keep one threshold per size", prev, it, nccl.FormatSize(t.Bytes))
		}
		seen[t.Bytes] = it
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Bytes < out[j].Bytes })
	return out, nil
}

// Measured is one size's bus bandwidth over launches (GB/s): BusBW from
// the median over launches of the per-launch median time, Lo and Hi from
// the ends of its GateConfidence interval (NaN when too few launches).
type Measured struct {
	Bytes    int64
	BusBW    float64
	Lo, Hi   float64
	Launches int
}

// BusBWFactor is the benchmark's own busbw/algbw, read from the row whose
// algbw is largest (rounding matters least); 1 when no row has both.
func BusBWFactor(res *benchfmt.Result) float64 {
	best, factor := 0.0, 1.0
	if res == nil {
		return factor
	}
	for _, r := range res.Rows {
		if r.Out.AlgBW > best && r.Out.BusBW > 0 {
			best, factor = r.Out.AlgBW, r.Out.BusBW/r.Out.AlgBW
		}
	}
	return factor
}

// Check is one threshold's outcome.
type Check struct {
	Bytes    int64
	MinBusBW float64
	// BusBW is the median's bandwidth; BusBWLo and BusBWHi the interval's
	// ends (NaN when unknown).
	BusBW, BusBWLo, BusBWHi float64
	Launches                int
	Pass                    bool
	// Note says why a check could not be judged ("" when it was).
	Note string
}

// MarshalJSON writes unknown bandwidths as null.
func (c Check) MarshalJSON() ([]byte, error) {
	num := func(x float64) any {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return x
	}
	m := map[string]any{"bytes": c.Bytes, "min_busbw": c.MinBusBW, "busbw": num(c.BusBW),
		"busbw_lo": num(c.BusBWLo), "busbw_hi": num(c.BusBWHi), "launches": c.Launches, "pass": c.Pass}
	if c.Note != "" {
		m["note"] = c.Note
	}
	return json.Marshal(m)
}

// Verdict is a gate's outcome: it passes only if every check does.
type Verdict struct {
	Pass     bool    `json:"pass"`
	JudgedOn Basis   `json:"judged_on"`
	Checks   []Check `json:"checks"`
}

// Judge checks each threshold against the measured bandwidth at its size.
// A size not measured, or without a lower bound when one is asked for,
// fails with a note (needLo: the launches needed for one).
func Judge(thresholds []Threshold, measured []Measured, on Basis, needLo int) Verdict {
	v := Verdict{Pass: len(thresholds) > 0, JudgedOn: on, Checks: []Check{}}
	byBytes := map[int64]Measured{}
	for _, m := range measured {
		byBytes[m.Bytes] = m
	}
	for _, t := range thresholds {
		c := Check{Bytes: t.Bytes, MinBusBW: t.MinBusBW, BusBW: math.NaN(), BusBWLo: math.NaN(), BusBWHi: math.NaN()}
		m, ok := byBytes[t.Bytes]
		if ok {
			c.BusBW, c.BusBWLo, c.BusBWHi, c.Launches = m.BusBW, m.Lo, m.Hi, m.Launches
		}
		value := c.BusBW
		if on == OnLowerBound {
			value = c.BusBWLo
		}
		switch {
		case !ok || math.IsNaN(c.BusBW):
			c.Note = "not measured"
		case math.IsNaN(value):
			c.Note = fmt.Sprintf("no lower bound from %d launch(es); %d are needed", c.Launches, needLo)
		default:
			c.Pass = value >= t.MinBusBW
		}
		v.Pass = v.Pass && c.Pass
		v.Checks = append(v.Checks, c)
	}
	return v
}

// FailedChecks names the checks that failed: "1M median 1.38 < 9 GB/s".
func (v Verdict) FailedChecks() string {
	var parts []string
	for _, c := range v.Checks {
		if c.Pass {
			continue
		}
		value, what := c.BusBW, "median"
		if v.JudgedOn == OnLowerBound {
			value, what = c.BusBWLo, "lower bound"
		}
		if c.Note != "" {
			parts = append(parts, nccl.FormatSize(c.Bytes)+" "+c.Note)
		} else {
			parts = append(parts, fmt.Sprintf("%s %s %.2f < %g GB/s", nccl.FormatSize(c.Bytes), what, value, c.MinBusBW))
		}
	}
	return strings.Join(parts, ", ")
}
