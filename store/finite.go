package store

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/nccltune/nccltune/internal/nccl"
)

// A statistic can be undefined (a p-value or speedup with no spread, a
// guard size no launch measured): NaN, which JSON cannot hold. The store
// writes such a value as null and reads null back as NaN, so a decision
// with an undefined number is still stored, and no NaN reaches JSON.
type maybeFloat float64

func (f maybeFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
}

func (f *maybeFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = maybeFloat(math.NaN())
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*f = maybeFloat(x)
	return nil
}

type sizeComparisonJSON struct {
	Bytes       int64      `json:"bytes"`
	BaselineUS  maybeFloat `json:"baseline_us"`
	BaselineLo  maybeFloat `json:"baseline_lo"`
	BaselineHi  maybeFloat `json:"baseline_hi"`
	CandidateUS maybeFloat `json:"candidate_us"`
	CandidateLo maybeFloat `json:"candidate_lo"`
	CandidateHi maybeFloat `json:"candidate_hi"`
	Speedup     maybeFloat `json:"speedup"`
	Significant bool       `json:"significant"`
	PValue      maybeFloat `json:"p_value,omitempty"`
	Op          nccl.Op    `json:"op,omitempty"`
}

func (c SizeComparison) MarshalJSON() ([]byte, error) {
	return json.Marshal(sizeComparisonJSON{c.Bytes, maybeFloat(c.BaselineUS), maybeFloat(c.BaselineLo), maybeFloat(c.BaselineHi),
		maybeFloat(c.CandidateUS), maybeFloat(c.CandidateLo), maybeFloat(c.CandidateHi), maybeFloat(c.Speedup), c.Significant, maybeFloat(c.PValue), c.Op})
}

func (c *SizeComparison) UnmarshalJSON(b []byte) error {
	var j sizeComparisonJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = SizeComparison{j.Bytes, float64(j.BaselineUS), float64(j.BaselineLo), float64(j.BaselineHi),
		float64(j.CandidateUS), float64(j.CandidateLo), float64(j.CandidateHi), float64(j.Speedup), j.Significant, float64(j.PValue), j.Op}
	return nil
}

// recommendationNumbers are Recommendation's floats, which a decision
// may leave undefined.
type recommendationNumbers struct {
	Speedup         maybeFloat    `json:"speedup"`
	SpeedupCI       [2]maybeFloat `json:"speedup_ci"`
	PValue          maybeFloat    `json:"p_value"`
	MinEffect       maybeFloat    `json:"min_effect,omitempty"`
	BaselineScoreUS maybeFloat    `json:"baseline_score_us"`
	ScoreUS         maybeFloat    `json:"score_us"`
}

// recommendationRest is Recommendation without its floats (a distinct
// type, so its own MarshalJSON does not recurse).
type recommendationRest Recommendation

func (r Recommendation) MarshalJSON() ([]byte, error) {
	rest, err := json.Marshal(recommendationRest(finiteRecommendation(r)))
	if err != nil {
		return nil, err
	}
	nums, err := json.Marshal(recommendationNumbers{maybeFloat(r.Speedup), [2]maybeFloat{maybeFloat(r.SpeedupCI[0]), maybeFloat(r.SpeedupCI[1])},
		maybeFloat(r.PValue), maybeFloat(r.MinEffect), maybeFloat(r.BaselineScoreUS), maybeFloat(r.ScoreUS)})
	if err != nil {
		return nil, err
	}
	return mergeObjects(rest, nums)
}

func (r *Recommendation) UnmarshalJSON(b []byte) error {
	var rest recommendationRest
	if err := json.Unmarshal(b, &rest); err != nil {
		// The floats may be null, which float64 fields accept as "leave
		// alone"; any other error is real.
		return err
	}
	var nums recommendationNumbers
	if err := json.Unmarshal(b, &nums); err != nil {
		return err
	}
	*r = Recommendation(rest)
	r.Speedup, r.SpeedupCI = float64(nums.Speedup), [2]float64{float64(nums.SpeedupCI[0]), float64(nums.SpeedupCI[1])}
	r.PValue, r.MinEffect = float64(nums.PValue), float64(nums.MinEffect)
	r.BaselineScoreUS, r.ScoreUS = float64(nums.BaselineScoreUS), float64(nums.ScoreUS)
	return nil
}

// finiteRecommendation zeroes the floats that recommendationNumbers
// writes in their place.
func finiteRecommendation(r Recommendation) Recommendation {
	r.Speedup, r.SpeedupCI, r.PValue, r.MinEffect, r.BaselineScoreUS, r.ScoreUS = 0, [2]float64{}, 0, 0, 0, 0
	return r
}

type summaryNumbers struct {
	Speedup   maybeFloat    `json:"speedup"`
	SpeedupCI [2]maybeFloat `json:"speedup_ci"`
}

type summaryRest RecommendationSummary

func (r RecommendationSummary) MarshalJSON() ([]byte, error) {
	plain := r
	plain.Speedup, plain.SpeedupCI = 0, [2]float64{}
	rest, err := json.Marshal(summaryRest(plain))
	if err != nil {
		return nil, err
	}
	nums, err := json.Marshal(summaryNumbers{maybeFloat(r.Speedup), [2]maybeFloat{maybeFloat(r.SpeedupCI[0]), maybeFloat(r.SpeedupCI[1])}})
	if err != nil {
		return nil, err
	}
	return mergeObjects(rest, nums)
}

func (r *RecommendationSummary) UnmarshalJSON(b []byte) error {
	var rest summaryRest
	if err := json.Unmarshal(b, &rest); err != nil {
		return err
	}
	var nums summaryNumbers
	if err := json.Unmarshal(b, &nums); err != nil {
		return err
	}
	*r = RecommendationSummary(rest)
	r.Speedup, r.SpeedupCI = float64(nums.Speedup), [2]float64{float64(nums.SpeedupCI[0]), float64(nums.SpeedupCI[1])}
	return nil
}

// mergeObjects overlays the keys of JSON object b on JSON object a,
// keeping a's key order (b's keys are all a's).
func mergeObjects(a, b []byte) ([]byte, error) {
	var over map[string]json.RawMessage
	if err := json.Unmarshal(b, &over); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(a))
	var out []byte
	out = append(out, '{')
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	first := true
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
		if !first {
			out = append(out, ',')
		}
		first = false
		k, _ := json.Marshal(key)
		out = append(append(append(out, k...), ':'), val...)
	}
	for key, val := range over { // omitted by omitempty in a, set in b
		if !first {
			out = append(out, ',')
		}
		first = false
		k, _ := json.Marshal(key)
		out = append(append(append(out, k...), ':'), val...)
	}
	return append(out, '}'), nil
}
