package model

import (
	"encoding/json"
	"math"
)

// encoding/json refuses NaN and ±Inf, which this package uses for "not
// known": these methods write them as null and read null back as NaN.

func nullable(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

type sizeSummaryJSON struct {
	Bytes      int64    `json:"bytes"`
	Median     *float64 `json:"median_us"`
	Lo         *float64 `json:"lo_us"`
	Hi         *float64 `json:"hi_us"`
	Confidence *float64 `json:"confidence"`
	Launches   int      `json:"launches"`
	SpreadPct  *float64 `json:"spread_pct"`
}

// MarshalJSON writes NaN as null.
func (s SizeSummary) MarshalJSON() ([]byte, error) {
	return json.Marshal(sizeSummaryJSON{s.Bytes, nullable(s.Median), nullable(s.Lo), nullable(s.Hi),
		nullable(s.Confidence), s.Launches, nullable(s.SpreadPct)})
}

// UnmarshalJSON reads null as NaN.
func (s *SizeSummary) UnmarshalJSON(b []byte) error {
	var j sizeSummaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = SizeSummary{j.Bytes, orNaN(j.Median), orNaN(j.Lo), orNaN(j.Hi), orNaN(j.Confidence), j.Launches, orNaN(j.SpreadPct)}
	return nil
}

// summaryJSON shadows Summary's NaN-able score; the rest encodes as is.
type summaryJSON struct {
	*summaryAlias
	ScoreUS *float64 `json:"score_us"`
}

type summaryAlias Summary // no methods: no recursion

// MarshalJSON writes NaN as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	a := summaryAlias(s)
	return json.Marshal(summaryJSON{&a, nullable(s.ScoreUS)})
}

// UnmarshalJSON reads null as NaN.
func (s *Summary) UnmarshalJSON(b []byte) error {
	j := summaryJSON{summaryAlias: (*summaryAlias)(s)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	s.ScoreUS = orNaN(j.ScoreUS)
	return nil
}

type comparisonJSON struct {
	*comparisonAlias
	Speedup    *float64 `json:"speedup"`
	Lo         *float64 `json:"lo"`
	Hi         *float64 `json:"hi"`
	Confidence *float64 `json:"confidence"`
	SpeedupHL  *float64 `json:"speedup_hl"`
	P          *float64 `json:"p"`
}

type comparisonAlias Comparison

// MarshalJSON writes NaN as null.
func (c Comparison) MarshalJSON() ([]byte, error) {
	a := comparisonAlias(c)
	return json.Marshal(comparisonJSON{&a, nullable(c.Speedup), nullable(c.Lo), nullable(c.Hi),
		nullable(c.Confidence), nullable(c.SpeedupHL), nullable(c.P)})
}

// UnmarshalJSON reads null as NaN.
func (c *Comparison) UnmarshalJSON(b []byte) error {
	j := comparisonJSON{comparisonAlias: (*comparisonAlias)(c)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	c.Speedup, c.Lo, c.Hi = orNaN(j.Speedup), orNaN(j.Lo), orNaN(j.Hi)
	c.Confidence, c.SpeedupHL, c.P = orNaN(j.Confidence), orNaN(j.SpeedupHL), orNaN(j.P)
	return nil
}
