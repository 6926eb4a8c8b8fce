package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/nccltune/nccltune/internal/nccl"
)

// JSONFloat is a statistic that can be undefined (a p-value or speedup
// with no spread, a guard size no launch measured): NaN, which JSON
// cannot hold. It is written as null and null is read back as NaN, so a
// decision with an undefined number is still stored, and no NaN reaches
// JSON: the one such float of the store and of every --json document.
type JSONFloat float64

func (f JSONFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
}

func (f *JSONFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = JSONFloat(math.NaN())
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*f = JSONFloat(x)
	return nil
}

// FiniteOr is x, or fallback when x is NaN or infinite: where a number
// that cannot be undefined is written (JSON cannot hold NaN).
func FiniteOr(x, fallback float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fallback
	}
	return x
}

type sizeComparisonJSON struct {
	Bytes             int64     `json:"bytes"`
	BaselineUS        JSONFloat `json:"baseline_us"`
	BaselineLo        JSONFloat `json:"baseline_lo"`
	BaselineHi        JSONFloat `json:"baseline_hi"`
	CandidateUS       JSONFloat `json:"candidate_us"`
	CandidateLo       JSONFloat `json:"candidate_lo"`
	CandidateHi       JSONFloat `json:"candidate_hi"`
	Speedup           JSONFloat `json:"speedup"`
	SpeedupLo         JSONFloat `json:"speedup_lo"`
	SpeedupHi         JSONFloat `json:"speedup_hi"`
	Significant       bool      `json:"significant"`
	PValue            JSONFloat `json:"p_value,omitempty"`
	BaselineLaunches  int       `json:"baseline_launches,omitempty"`
	CandidateLaunches int       `json:"candidate_launches,omitempty"`
	Op                nccl.Op   `json:"op,omitempty"`
	CILevel           CILevel   `json:"ci_level,omitempty"`
}

func (c SizeComparison) MarshalJSON() ([]byte, error) {
	return json.Marshal(sizeComparisonJSON{c.Bytes, JSONFloat(c.BaselineUS), JSONFloat(c.BaselineLo), JSONFloat(c.BaselineHi),
		JSONFloat(c.CandidateUS), JSONFloat(c.CandidateLo), JSONFloat(c.CandidateHi), JSONFloat(c.Speedup),
		JSONFloat(c.SpeedupLo), JSONFloat(c.SpeedupHi), c.Significant, JSONFloat(c.PValue), c.BaselineLaunches, c.CandidateLaunches, c.Op, c.CILevel})
}

func (c *SizeComparison) UnmarshalJSON(b []byte) error {
	// A row stored before the speedup's interval was has none: NaN.
	j := sizeComparisonJSON{SpeedupLo: JSONFloat(math.NaN()), SpeedupHi: JSONFloat(math.NaN())}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = SizeComparison{j.Bytes, float64(j.BaselineUS), float64(j.BaselineLo), float64(j.BaselineHi),
		float64(j.CandidateUS), float64(j.CandidateLo), float64(j.CandidateHi), float64(j.Speedup),
		float64(j.SpeedupLo), float64(j.SpeedupHi), j.Significant, float64(j.PValue), j.BaselineLaunches, j.CandidateLaunches, j.Op, j.CILevel}
	return nil
}

// recommendationNumbers are Recommendation's floats, which a decision
// may leave undefined.
type recommendationNumbers struct {
	Speedup         JSONFloat    `json:"speedup"`
	SpeedupCI       [2]JSONFloat `json:"speedup_ci"`
	PValue          JSONFloat    `json:"p_value"`
	MinEffect       JSONFloat    `json:"min_effect,omitempty"`
	BaselineScoreUS JSONFloat    `json:"baseline_score_us"`
	ScoreUS         JSONFloat    `json:"score_us"`
}

// recommendationRest is Recommendation without its floats (a distinct
// type, so its own MarshalJSON does not recurse).
type recommendationRest Recommendation

func (r Recommendation) MarshalJSON() ([]byte, error) {
	// Zero the floats that recommendationNumbers writes in their place.
	plain := r
	plain.Speedup, plain.SpeedupCI, plain.PValue, plain.MinEffect, plain.BaselineScoreUS, plain.ScoreUS = 0, [2]float64{}, 0, 0, 0, 0
	return marshalSplit(recommendationRest(plain), recommendationNumbers{JSONFloat(r.Speedup), jsonPair(r.SpeedupCI),
		JSONFloat(r.PValue), JSONFloat(r.MinEffect), JSONFloat(r.BaselineScoreUS), JSONFloat(r.ScoreUS)})
}

func (r *Recommendation) UnmarshalJSON(b []byte) error {
	var rest recommendationRest
	var nums recommendationNumbers
	// The floats may be null, which float64 fields accept as "leave
	// alone"; any other error is real.
	if err := cmp.Or(json.Unmarshal(b, &rest), json.Unmarshal(b, &nums)); err != nil {
		return err
	}
	*r = Recommendation(rest)
	r.Speedup, r.SpeedupCI = float64(nums.Speedup), floatPair(nums.SpeedupCI)
	r.PValue, r.MinEffect = float64(nums.PValue), float64(nums.MinEffect)
	r.BaselineScoreUS, r.ScoreUS = float64(nums.BaselineScoreUS), float64(nums.ScoreUS)
	return nil
}

type summaryNumbers struct {
	Speedup   JSONFloat    `json:"speedup"`
	SpeedupCI [2]JSONFloat `json:"speedup_ci"`
}

type summaryRest RecommendationSummary

func (r RecommendationSummary) MarshalJSON() ([]byte, error) {
	plain := r
	plain.Speedup, plain.SpeedupCI = 0, [2]float64{}
	return marshalSplit(summaryRest(plain), summaryNumbers{JSONFloat(r.Speedup), jsonPair(r.SpeedupCI)})
}

func (r *RecommendationSummary) UnmarshalJSON(b []byte) error {
	var rest summaryRest
	var nums summaryNumbers
	if err := cmp.Or(json.Unmarshal(b, &rest), json.Unmarshal(b, &nums)); err != nil {
		return err
	}
	*r = RecommendationSummary(rest)
	r.Speedup, r.SpeedupCI = float64(nums.Speedup), floatPair(nums.SpeedupCI)
	return nil
}

func jsonPair(p [2]float64) [2]JSONFloat { return [2]JSONFloat{JSONFloat(p[0]), JSONFloat(p[1])} }

func floatPair(p [2]JSONFloat) [2]float64 { return [2]float64{float64(p[0]), float64(p[1])} }

// marshalSplit writes rest (a type without its floats) with the keys of
// nums (those floats, NaN as null) overlaid.
func marshalSplit(rest, nums any) ([]byte, error) {
	a, err := json.Marshal(rest)
	b, err2 := json.Marshal(nums)
	if err := cmp.Or(err, err2); err != nil {
		return nil, err
	}
	return mergeObjects(a, b)
}

// mergeObjects overlays the keys of JSON object b on JSON object a,
// keeping a's key order (b's keys are all a's).
func mergeObjects(a, b []byte) ([]byte, error) {
	var over map[string]json.RawMessage
	if err := json.Unmarshal(b, &over); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(a))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	out := []byte{'{'}
	put := func(key string, val []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(key)
		out = append(append(append(out, k...), ':'), val...)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if v, ok := over[key]; ok {
			val = v
			delete(over, key)
		}
		put(key, val)
	}
	// Keys omitted by omitempty in a and set in b go last, in sorted order:
	// map order would make the stored bytes vary once two such keys exist.
	for _, key := range slices.Sorted(maps.Keys(over)) {
		put(key, over[key])
	}
	return append(out, '}'), nil
}
