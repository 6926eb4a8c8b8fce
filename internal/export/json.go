package export

import (
	"encoding/json"
	"io"
	"math"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/store"
)

// Document is the json format: the recommendation with where it came
// from. Env is exactly what the other formats write.
type Document struct {
	// SchemaVersion is the document's shape version.
	SchemaVersion int    `json:"schema_version"`
	Study         string `json:"study"`
	StudyID       uint64 `json:"study_id"`
	Band          string `json:"band"`
	BandMin       int64  `json:"band_min"`
	BandMax       int64  `json:"band_max"`
	Collective    string `json:"collective,omitempty"`
	// Calls are a timed workload's calls ([] otherwise): Band is then only
	// the hull of their sizes.
	Calls []stored.Call `json:"calls"`
	// Env is what the other formats write.
	Env map[string]string `json:"env"`
	// Verdict is the study's conclusion (stored.Conclusion.Headline).
	Verdict      string `json:"verdict"`
	KeepDefaults bool   `json:"keep_defaults"`
	// BaselineEnv is what the study compared with ({} for NCCL's defaults);
	// KeepBaseline: the study kept it (Env is then it); Unset lists the
	// baseline's knobs to remove.
	BaselineEnv  map[string]string `json:"baseline_env"`
	KeepBaseline bool              `json:"keep_baseline"`
	Unset        []string          `json:"unset"`
	// RecommendedEnv is the recommendation as the study stored it.
	RecommendedEnv map[string]string `json:"recommended_env"`
	Dropped        []Dropped         `json:"dropped"`
	// BaseEnv is present only with --with-base.
	BaseEnv   map[string]string `json:"base_env,omitempty"`
	Speedup   *float64          `json:"speedup"`
	SpeedupCI [2]*float64       `json:"speedup_ci"`
	// CILevel is the confidence SpeedupCI was taken at (absent in old studies).
	CILevel     store.CILevel  `json:"ci_level,omitempty"`
	Significant bool           `json:"significant"`
	PValue      *float64       `json:"p_value"`
	MinEffect   float64        `json:"min_effect,omitempty"`
	Reason      string         `json:"reason,omitempty"`
	Simulated   bool           `json:"simulated"`
	SimProfile  string         `json:"sim_profile,omitempty"`
	NCCLVersion string         `json:"nccl_version"`
	Fabric      store.Platform `json:"fabric"`
	Created     time.Time      `json:"created"`
	Exported    time.Time      `json:"exported"`
	// Choices is what NCCL chose per size with its defaults and with the
	// recommendation; empty when not recorded.
	Choices []benchfmt.ChoiceRow `json:"choices"`
	// Parts and Guards are as show --json has them ([] when none).
	Parts  []store.PartComparison `json:"parts"`
	Guards []store.OpGuard        `json:"guards"`
}

// NewDocument builds the json format's document.
func NewDocument(b *Recommendation, o Options) *Document {
	s, r := b.Study, b.Study.Recommendation
	d := &Document{
		SchemaVersion: 1,
		Study:         s.Name, StudyID: s.ID, Band: s.Band, BandMin: s.BandMin, BandMax: s.BandMax, Collective: s.Collective, Calls: stored.Calls(s),
		Env: b.EnvMap(o.WithBase), KeepDefaults: b.KeepDefaults,
		BaselineEnv: nccl.Config(s.BaselineEnv).Clone(), KeepBaseline: b.KeepBaseline, Unset: append([]string{}, b.Unset...),
		RecommendedEnv: nccl.Config(r.Env).Clone(), Dropped: append([]Dropped{}, b.Dropped...),
		Speedup: finite(r.Speedup), SpeedupCI: [2]*float64{finite(r.SpeedupCI[0]), finite(r.SpeedupCI[1])}, CILevel: r.CILevel,
		Significant: r.Significant, PValue: finite(r.PValue), MinEffect: r.MinEffect, Reason: r.Reason,
		Simulated: s.Simulated, SimProfile: s.Launch.SimProfile, NCCLVersion: s.Platform.NCCLVersion, Fabric: s.Platform,
		Created: s.Created.UTC(), Exported: o.now(), Choices: benchfmt.CompareChoices(b.Defaults, b.Recommended),
		Parts: append([]store.PartComparison{}, r.Parts...), Guards: append([]store.OpGuard{}, r.OpGuards...),
	}
	d.Verdict, _, _ = stored.ConclusionOf(s).Headline()
	if o.WithBase {
		d.BaseEnv = nccl.Config(s.BaseEnv).Clone()
	}
	return d
}

// finite is nil (JSON null) for NaN and ±Inf, which JSON cannot hold.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func writeJSONDoc(w io.Writer, b *Recommendation, _ []Var, o Options) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(NewDocument(b, o))
}
