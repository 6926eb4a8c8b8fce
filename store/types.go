package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/record"
	"github.com/nccltune/nccltune/internal/vocab"
)

// Study is one search, sweep or import: what was asked, on which fabric,
// and what was concluded. Trials and launches are stored separately.
type Study struct {
	ID uint64 `json:"id"` // assigned by CreateStudy
	// Name: "s7-512K-4M", "s8-sweep", "s9-import" unless given.
	Name    string    `json:"name"`
	Kind    string    `json:"kind"`
	Created time.Time `json:"created"`
	// Labels are the user's --label K=V tags.
	Labels map[string]string `json:"labels,omitempty"`
	// Updated is the last write to the study, its trials or its launches.
	Updated time.Time `json:"updated"`

	// Band is the band as written ("512K-4M"); BandMin and BandMax in bytes.
	Band    string `json:"band"`
	BandMin int64  `json:"band_min"`
	BandMax int64  `json:"band_max"`
	// Sizes are the message sizes measured and scored; GuardSizes are
	// checked for regressions but not scored.
	Sizes      []int64 `json:"sizes,omitempty"`
	GuardSizes []int64 `json:"guard_sizes,omitempty"`
	// Collective is the nccl-tests collective (a workload's first part's).
	Collective string `json:"collective,omitempty"`
	// Workload is a search's parts when it tuned several; empty reads as
	// the one part of Band and Collective (Parts).
	Workload []Part `json:"workload,omitempty"`
	// LoggedChoices are what the process's own NCCL chose at the calls'
	// sizes (nccl.LoggedChoice's text; --chose); empty when not known.
	LoggedChoices []string `json:"logged_choices,omitempty"`
	// GuardOps are the collectives outside the workload measured for a
	// recommended candidate; GuardOpsSkipped those left out, each with why.
	GuardOps        []nccl.Op `json:"guard_ops,omitempty"`
	GuardOpsSkipped []string  `json:"guard_ops_skipped,omitempty"`
	// TunerCSV is the CSV a verify --tuner-plugin measured: its
	// NCCL_TUNER_CONFIG_FILE was a temporary file.
	TunerCSV string `json:"tuner_csv,omitempty"`

	// Space maps each searched knob to its choices (resume rebuilds
	// goptuna's categorical indices from it).
	Space   map[string][]string `json:"space,omitempty"`
	BaseEnv map[string]string   `json:"base_env,omitempty"` // the lane's fixed environment
	// BaselineEnv is --baseline-env; empty means NCCL's defaults.
	BaselineEnv map[string]string `json:"baseline_env,omitempty"`
	Launch      LaunchSettings    `json:"launch"`
	Platform    Platform          `json:"fabric"`

	Simulated bool   `json:"simulated"`
	Seed      int64  `json:"seed"`
	Budget    Budget `json:"budget"`
	// Search holds a search's settings that --resume keeps (nil in old
	// studies).
	Search *SearchSettings `json:"search,omitempty"`

	Status string `json:"status"`
	Reason string `json:"reason,omitempty"` // why failed or interrupted
	// Recommendation is nil until the study has decided.
	Recommendation *Recommendation `json:"recommendation"`
	// Refusals are a search's refusals while it has not decided, so that
	// it resumes after the last (Refusal.Restart); none once decided.
	Refusals []Refusal `json:"refusals_so_far,omitempty"`
	// Confirming is the design of the confirmation under way, fixed when
	// it began: a resumed study judges the same looks at the same levels.
	// nil once decided.
	Confirming *ConfirmDesign `json:"confirming,omitempty"`
	// Plans is what a search did with NCCL's own plan (nil for others).
	Plans *PlanSummary `json:"plans,omitempty"`

	// Trials and Launches are the store's counts, filled in when read;
	// CreateStudy and UpdateStudy ignore them.
	Trials   int `json:"-"`
	Launches int `json:"-"`
}

// UnmarshalJSON also reads parts stored under "workload_calls" (written
// so by mistake by one release).
func (s *Study) UnmarshalJSON(data []byte) error {
	type plain Study // without this method
	var v struct {
		plain
		WorkloadCalls []Part `json:"workload_calls"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*s = Study(v.plain)
	if len(s.Workload) == 0 {
		s.Workload = v.WorkloadCalls
	}
	s.Recommendation.oldLevels(s.Search)
	return nil
}

// Op is the collective the study measured, as nccl-tests names it
// (all_reduce for studies stored before the op was recorded).
func (s *Study) Op() nccl.Op { return nccl.Op(s.Collective).OrAllReduce() }

// LaunchSettings are the launch flags the study ran with.
type LaunchSettings struct {
	Launcher  string        `json:"launcher,omitempty"`
	NP        int           `json:"np,omitempty"`
	Hosts     []string      `json:"hosts,omitempty"`
	MPIArgs   []string      `json:"mpi_args,omitempty"`
	Bench     string        `json:"bench,omitempty"`
	BenchArgs []string      `json:"bench_args,omitempty"`
	Timeout   time.Duration `json:"timeout,omitempty"`
	// SimProfile, SimNoise and SimSeed describe the simulated fabric
	// (SimProfile is empty for a real one).
	SimProfile string `json:"sim_profile,omitempty"`
	// Instrument is "" or "nccl-tests", "torch"; Prefix what runs it
	// (torchrun, docker exec, a wrapper).
	Instrument string   `json:"instrument,omitempty"`
	Prefix     []string `json:"prefix,omitempty"`
	SimNoise   float64  `json:"sim_noise,omitempty"`
	SimSeed    int64    `json:"sim_seed,omitempty"`
	// Run is nil in old studies, whose flags resume and verify cannot check.
	Run *RunSettings `json:"run,omitempty"`
}

// RunSettings are launch flags that change how a real benchmark runs.
type RunSettings struct {
	Iters       int    `json:"iters,omitempty"`
	Warmup      int    `json:"warmup,omitempty"`
	MPIFlavor   string `json:"mpi_flavor,omitempty"`
	MPIRun      string `json:"mpirun,omitempty"`
	TorchScript string `json:"torch_script,omitempty"`
}

// Platform is what a study ran on: the fingerprint that keeps results
// from different fabrics apart (stored under "fabric").
type Platform struct {
	NCCLVersion  string `json:"nccl_version,omitempty"`
	TestsVersion string `json:"tests_version,omitempty"`
	Ranks        int    `json:"ranks,omitempty"`
	Nodes        int    `json:"nodes,omitempty"`
	GPU          string `json:"gpu,omitempty"`
	// Transport is benchfmt.Facts': "IB", "Socket", or "P2P", "SHM",
	// "P2P+SHM" when no network carried data.
	Transport string   `json:"transport,omitempty"`
	Hosts     []string `json:"hosts,omitempty"`
	// GDR is nil when unknown or no network carried data.
	GDR *bool `json:"gdr"`
	// TransportSummary (benchfmt.RoutesText) and Routes come from the
	// debug launches (NCCL_DEBUG=INFO).
	TransportSummary string           `json:"transport_summary,omitempty"`
	Routes           []benchfmt.Route `json:"routes,omitempty"`
	// Network is the network NCCL initialised, carrying data or not.
	Network string `json:"network,omitempty"`
}

// SearchSettings are the settings of a search, besides its band, space,
// seed and budget, that decide what it measures and concludes.
type SearchSettings struct {
	Sampler         string  `json:"sampler,omitempty"`
	ConfirmLaunches int     `json:"confirm_launches,omitempty"`
	MinEffect       float64 `json:"min_effect"`
	Alpha           float64 `json:"alpha,omitempty"`
	AllowDisabled   bool    `json:"allow_disabled,omitempty"` // --allow-disabled-protocols
	// GuardLaunches are per arm of each guarded op; ScopeLists: winning
	// lists are written in NCCL's per-function form.
	GuardLaunches int  `json:"guard_launches,omitempty"`
	ScopeLists    bool `json:"scope_lists,omitempty"`
	BatchSize     int  `json:"batch_size,omitempty"` // --batch, configs per batch; 0: none
}

// Part is one part of a stored workload: nccl.Part as the store keeps it.
type Part struct {
	Op      nccl.Op `json:"op"`
	Band    string  `json:"band"`
	BandMin int64   `json:"band_min"`
	BandMax int64   `json:"band_max"`
	Weight  float64 `json:"weight"`
	// Calls, Logged and LoggedCalls are a timed part's (nccl.ParseCall):
	// calls per step, the sizes the process called and the calls at each
	// (two sizes may share a power of two); absent for a --part part.
	Calls       float64   `json:"calls,omitempty"`
	Logged      []int64   `json:"logged_bytes,omitempty"`
	LoggedCalls []float64 `json:"logged_calls,omitempty"`
}

// WorkloadText is a timed workload's calls (nccl.Workload.CallsText), ""
// for a study of bands.
func WorkloadText(s *Study) string {
	if w := s.Parts(); w.Timed() {
		return w.CallsText()
	}
	return ""
}

// Chose are the study's LoggedChoices that parse.
func (s *Study) Chose() []nccl.LoggedChoice {
	var out []nccl.LoggedChoice
	for _, t := range s.LoggedChoices {
		if ch, err := nccl.ParseLoggedChoice(t); err == nil {
			out = append(out, ch)
		}
	}
	return out
}

// TakenOut are the study's chose: entries at an (op, size) its workload
// does not call: calls the user took out, whose NCCL choice a tuner CSV
// keeps.
func (s *Study) TakenOut() []nccl.LoggedChoice {
	parts := s.Parts()
	if !slices.ContainsFunc(parts, func(p nccl.Part) bool { return len(p.Logged) > 0 }) {
		return nil // old study: which call an entry belongs to is unknown
	}
	var out []nccl.LoggedChoice
	for _, ch := range s.Chose() {
		if !slices.ContainsFunc(parts, func(p nccl.Part) bool { return p.Op.OrAllReduce() == ch.Op && slices.Contains(p.Logged, ch.Bytes) }) {
			out = append(out, ch)
		}
	}
	return out
}

// PartOf is p as the store keeps it.
func PartOf(p nccl.Part) Part {
	return Part{Op: p.Op.OrAllReduce(), Band: p.Band.String(), BandMin: p.Band.Min, BandMax: p.Band.Max, Weight: p.Weight,
		Calls: p.Calls, Logged: p.Logged, LoggedCalls: p.LoggedCalls}
}

// Parts are the study's workload: its stored parts, or the one part of
// its band and collective with weight 1.
func (s *Study) Parts() nccl.Workload {
	if len(s.Workload) == 0 {
		return nccl.Workload{{Op: s.Op(), Band: nccl.Band{Min: s.BandMin, Max: s.BandMax}, Weight: 1}}
	}
	out := make(nccl.Workload, len(s.Workload))
	for i, p := range s.Workload {
		out[i] = nccl.Part{Op: p.Op.OrAllReduce(), Band: nccl.Band{Min: p.BandMin, Max: p.BandMax}, Weight: p.Weight,
			Calls: p.Calls, Logged: p.Logged, LoggedCalls: p.LoggedCalls}
	}
	return out
}

// PlanSummary is what a search did with NCCL's own plan.
type PlanSummary = record.PlanSummary

// MergeCount is how many configs one rule merged.
type MergeCount = record.MergeCount

// Budget is what the study was allowed to spend; zero means unlimited.
type Budget struct {
	Trials   int           `json:"trials,omitempty"`
	Launches int           `json:"launches,omitempty"`
	Time     time.Duration `json:"time,omitempty"`
}

// Recommendation is a study's conclusion (DESIGN.md's `search` contract).
// An empty Env with Significant false means "keep NCCL's defaults".
type Recommendation struct {
	Env       map[string]string `json:"env"`
	Speedup   float64           `json:"speedup"`
	SpeedupCI [2]float64        `json:"speedup_ci"`
	// CILevel is 1 − the level of the sequential look that decided, not
	// always 0.95; 0 in old studies (CILevel.Label).
	CILevel     CILevel `json:"ci_level,omitempty"`
	Significant bool    `json:"significant"`
	// PValue is meaningful only when both arms' launches are positive.
	PValue float64 `json:"p_value"`
	Reason string  `json:"reason"`
	// Ending names why the study ended (vocab.Ending* or the verdict).
	Ending          string  `json:"ending,omitempty"`
	MinEffect       float64 `json:"min_effect,omitempty"` // the smallest gain that counts (0.03 = 3 %)
	BaselineScoreUS float64 `json:"baseline_score_us"`
	ScoreUS         float64 `json:"score_us"`
	// TrialID is the recommended trial (0 when keeping the baseline);
	// CandidateTrialID the confirmed one, recommended or not (0: none).
	TrialID          uint64 `json:"trial_id,omitempty"`
	CandidateTrialID uint64 `json:"candidate_trial_id,omitempty"`
	// BaselineLaunches and CandidateLaunches count the confirmation's.
	BaselineLaunches  int              `json:"baseline_launches,omitempty"`
	CandidateLaunches int              `json:"candidate_launches,omitempty"`
	PerSize           []SizeComparison `json:"per_size"`
	// Dropped are knobs left out of Env because NCCL runs the same plan
	// without them.
	Dropped []nccl.Drop      `json:"dropped"`
	Guards  []SizeComparison `json:"guards,omitempty"` // the guard sizes, outside the band
	// Parts are a workload's confirmation part by part (nil for one part).
	Parts []PartComparison `json:"parts,omitempty"`
	// OpGuards are the guarded ops measured for the confirmed candidate
	// (nil when none were).
	OpGuards []OpGuard `json:"op_guards,omitempty"`
	// Scoped are the knobs Env writes in NCCL's per-function form
	// (NCCL_ALGO, NCCL_PROTO; NCCL 2.24+).
	Scoped []string `json:"scoped,omitempty"`
	// ScopedFromTrialID is the trial whose lists Scoped rewrote (0: none):
	// its debug log stands for the recommended trial's where that has none.
	ScopedFromTrialID uint64 `json:"scoped_from_trial_id,omitempty"`
	// Refusals are the candidates confirmed and refused before, in order:
	// a refusal does not end a study whose budget can confirm another.
	Refusals []Refusal `json:"refusals,omitempty"`
}

// Refusal is a candidate the study confirmed and refused.
type Refusal struct {
	TrialID uint64            `json:"trial_id"`
	Env     map[string]string `json:"env"`
	Ending  string            `json:"ending"` // why: vocab.EndingGuard, …
	Reason  string            `json:"reason"`
	// Speedup and SpeedupCI are its confirmation's: 1 and [0, 0] (no
	// interval) when it failed before a look; records stored before
	// 2026-12-05 13:00 have [1, 1].
	Speedup   float64    `json:"speedup"`
	SpeedupCI [2]float64 `json:"speedup_ci"`
	CILevel   CILevel    `json:"ci_level,omitempty"`
	// ScopedFromTrialID is Recommendation's, refused with it; 0 when none.
	ScopedFromTrialID uint64 `json:"scoped_from_trial_id,omitempty"`
	// SlowerAt are where it was refused: a resumed study ranks candidates
	// slower there last, as before the interruption.
	SlowerAt []Site `json:"slower_at,omitempty"`
	// Restart is where the confirmation after it began; nil when none.
	Restart *Restart `json:"restart,omitempty"`
}

// ConfirmDesign is the design a confirmation began with (search.Planned):
// its candidate's env (a new candidate has no id yet), its first launch,
// and the launches per arm at its first and last look.
type ConfirmDesign struct {
	Env           map[string]string `json:"env"`
	Seq           int               `json:"seq"`
	FirstLaunches int               `json:"first_launches"`
	MaxLaunches   int               `json:"max_launches"`
}

// Site is one op at one size (record.Site).
type Site = record.Site

// Restart is where the confirmation after a refusal began (search.Restart).
type Restart struct {
	Seq int `json:"seq"` // the launch it began at (Launch.Seq)
	// NextEnv is the refused list's per-function form confirmed in place
	// of the ranking's next candidate; empty for the ranking's.
	NextEnv        map[string]string `json:"next_env,omitempty"`
	ExploreStopped string            `json:"explore_stopped,omitempty"` // "budget", "time", "space"
	// ExactDone: a candidate's calls had been shown to stand at their own
	// sizes, and their launches were no longer held back.
	ExactDone bool `json:"exact_done,omitempty"`
}

// PartComparison is what the confirmation measured of one part of a
// workload: the candidate against the baseline over the part's sizes.
type PartComparison struct {
	Op   nccl.Op `json:"op"`
	Band string  `json:"band"`
	// Calls, Logged and LoggedCalls are a timed part's calls (Part's),
	// which name it (Name); absent for a band part.
	Calls       float64   `json:"calls,omitempty"`
	Logged      []int64   `json:"logged_bytes,omitempty"`
	LoggedCalls []float64 `json:"logged_calls,omitempty"`
	// Weight is the part's normalised weight in the study's objective.
	Weight      float64    `json:"weight"`
	Speedup     float64    `json:"speedup"`
	SpeedupCI   [2]float64 `json:"speedup_ci"`
	CILevel     CILevel    `json:"ci_level,omitempty"` // 0 in old studies
	Significant bool       `json:"significant"`
	// Slower: significantly slower by more than the minimum effect;
	// Refused: this part refused the recommendation (op-regression).
	Slower  bool `json:"slower"`
	Refused bool `json:"refused"`
	// NotShownSafe: a call was not shown safe (its upper bound over the
	// margin) rather than shown slower; without Refused, another call
	// not shown safe beside the one that refused.
	NotShownSafe bool `json:"not_shown_safe,omitempty"`
	// RefusedAt is the size called, off the power of two measured, where
	// the candidate was refused; 0 when the part's own comparison did.
	RefusedAt       int64            `json:"refused_at_bytes,omitempty"`
	PValue          float64          `json:"p_value"`
	BaselineScoreUS float64          `json:"baseline_score_us"`
	ScoreUS         float64          `json:"score_us"`
	PerSize         []SizeComparison `json:"per_size"`
}

// Sizes are what p measured in the user's words: a timed part's calls,
// "10240×760" (nccl.Part.CallsText), else its band, "512K-4M".
func (p PartComparison) Sizes() string {
	if p.Calls > 0 && len(p.Logged) > 0 {
		return nccl.Part{Op: p.Op, Calls: p.Calls, Logged: p.Logged, LoggedCalls: p.LoggedCalls}.CallsText()
	}
	return p.Band
}

// Name is p's op and Sizes, "all_reduce 10240×760": how every line names
// a part.
func (p PartComparison) Name() string { return string(p.Op) + " " + p.Sizes() }

// OpGuard is what the guard measured of one collective outside the
// workload: the candidate against the baseline at the guard's sizes.
type OpGuard struct {
	Op    nccl.Op `json:"op"`
	Sizes []int64 `json:"sizes"`
	// Speedup is the baseline's score ÷ the candidate's over Sizes (below
	// 1: slower); NaN (null) where no launch measured it.
	Speedup   JSONFloat    `json:"speedup"`
	SpeedupCI [2]JSONFloat `json:"speedup_ci"`
	CILevel   CILevel      `json:"ci_level,omitempty"` // 1 − alpha; 0 in old studies
	// Slower: at some size significantly slower (Holm across every guarded
	// op and size) by more than the minimum effect; Refused: this op
	// refused the recommendation.
	Slower  bool `json:"slower"`
	Refused bool `json:"refused"`
	// Worst is the size that decided (the slowest significant one, or
	// else the one where the candidate fares worst).
	WorstBytes        int64     `json:"worst_bytes"`
	WorstSpeedup      JSONFloat `json:"worst_speedup"`
	PValue            float64   `json:"p_value"`
	Level             float64   `json:"level"`
	BaselineLaunches  int       `json:"baseline_launches"`
	CandidateLaunches int       `json:"candidate_launches"`
	// Failed names the arm whose launch of the op failed, and why.
	Failed  string      `json:"failed,omitempty"`
	PerSize []GuardSize `json:"per_size"`
}

// GuardSize is one size of a guarded op: the ratio of the baseline's
// median time to the candidate's and the one-sided test of "slower".
type GuardSize struct {
	Bytes   int64     `json:"bytes"`
	Speedup JSONFloat `json:"speedup"` // NaN (null): not measured here
	PValue  float64   `json:"p_value"`
	Level   float64   `json:"level"`
	// Significant: Holm's procedure rejected "no slower" here; Slower:
	// significant and by more than the minimum effect.
	Significant bool `json:"significant"`
	Slower      bool `json:"slower"`
}

// SizeComparison is one message size of a baseline-versus-candidate
// comparison: the one per-size row every table prints. Intervals are NaN
// (null) where the launches are too few; the speedup (baseline ÷
// candidate) has its rank interval over this size alone. A row stored
// before the launches were (zero) holds the median in place of a missing
// interval and no speedup interval (NaN).
type SizeComparison struct {
	Bytes             int64   `json:"bytes"`
	BaselineUS        float64 `json:"baseline_us"`
	BaselineLo        float64 `json:"baseline_lo"`
	BaselineHi        float64 `json:"baseline_hi"`
	CandidateUS       float64 `json:"candidate_us"`
	CandidateLo       float64 `json:"candidate_lo"`
	CandidateHi       float64 `json:"candidate_hi"`
	Speedup           float64 `json:"speedup"`
	SpeedupLo         float64 `json:"speedup_lo"`
	SpeedupHi         float64 `json:"speedup_hi"`
	Significant       bool    `json:"significant"`
	PValue            float64 `json:"p_value,omitempty"`
	BaselineLaunches  int     `json:"baseline_launches,omitempty"`
	CandidateLaunches int     `json:"candidate_launches,omitempty"`
	// Op is the collective of a workload's row ("" in a one-part study).
	Op      nccl.Op `json:"op,omitempty"`
	CILevel CILevel `json:"ci_level,omitempty"` // of the three intervals; 0 in old rows
}

// Change is the candidate's time relative to the baseline's (-0.25 = 25 %
// less time): the one rule every table uses; the bus bandwidth changes by
// 1/(1+Change)−1.
func (c SizeComparison) Change() float64 { return 1/c.Speedup - 1 }

// Trial is one config of a study. A config is measured by one or more
// launches; a study never holds two trials with the same config.
type Trial struct {
	ID      uint64 `json:"id"`
	StudyID uint64 `json:"study_id"`
	// Number counts trials within the study from 0 (the baseline).
	Number int         `json:"number"`
	Config nccl.Config `json:"config"`
	// Key is Config.Key(), unique within the study.
	Key    string           `json:"key"`
	State  vocab.TrialState `json:"state"`
	Reason string           `json:"reason,omitempty"`
	Role   string           `json:"role,omitempty"`
	// Launches is counted by AddLaunch; ScoreUS (µs) is the latest scored
	// launch's, unless a TrialUpdate set it.
	Launches int       `json:"launches"`
	ScoreUS  float64   `json:"score_us,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
}

// Launch is one run of the benchmark for one trial.
type Launch struct {
	ID      uint64 `json:"id"`
	StudyID uint64 `json:"study_id"`
	TrialID uint64 `json:"trial_id"`
	// Seq orders launches within the study, from 0; AddLaunch assigns it.
	Seq   int    `json:"seq"`
	Phase string `json:"phase"`
	// Op is "" in old databases, all all-reduce (Op.OrAllReduce()).
	Op nccl.Op `json:"op,omitempty"`

	Start    time.Time        `json:"start"`
	Duration time.Duration    `json:"duration"`
	Outcome  benchfmt.Outcome `json:"outcome"`
	Reason   string           `json:"reason,omitempty"`
	ExitCode int              `json:"exit_code"`
	// Argv is the exact command run; Env the variables nccltune added.
	Argv      []string `json:"argv,omitempty"`
	Env       []string `json:"env,omitempty"`
	Simulated bool     `json:"simulated"`
	// Scored is false for launches kept but not counted (the warm-up).
	Scored  bool    `json:"scored"`
	ScoreUS float64 `json:"score_us,omitempty"` // band score, µs; 0 when not scored
	// Source is an imported launch's file.
	Source string          `json:"source,omitempty"`
	Sizes  []benchfmt.Size `json:"sizes"`
	Facts  *benchfmt.Facts `json:"facts,omitempty"`
	// Batch is set for one config's share of a batch launch.
	Batch *benchfmt.BatchMember `json:"batch,omitempty"`
	// MinBytes and MaxBytes are the sweep asked (-b, -e), and Debug says
	// it printed NCCL's debug log: what tells apart a resumed study's
	// launches of phase exact.
	MinBytes int64 `json:"min_bytes,omitempty"`
	MaxBytes int64 `json:"max_bytes,omitempty"`
	Debug    bool  `json:"debug,omitempty"`
}

// Raw is a launch's output as printed, kept for later inspection.
type Raw struct {
	Stdout []byte
	Stderr []byte
	// JSON is the bytes of nccl-tests' -J file, if any.
	JSON []byte
}

// StudySummary is the cheap view of a study that history lists.
type StudySummary struct {
	ID         uint64            `json:"id"`
	Name       string            `json:"name"`
	Kind       string            `json:"kind"`
	Band       string            `json:"band"`
	Workload   string            `json:"workload_calls,omitempty"` // WorkloadText
	Collective string            `json:"collective,omitempty"`
	Simulated  bool              `json:"simulated"`
	SimProfile string            `json:"sim_profile,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Status     string            `json:"status"`
	Created    time.Time         `json:"created"`
	Updated    time.Time         `json:"updated"`
	Trials     int               `json:"trials"`
	Launches   int               `json:"launches"`
	BatchSize  int               `json:"batch_size,omitempty"` // SearchSettings.BatchSize
	// Recommendation is nil until decided.
	Recommendation *RecommendationSummary `json:"recommendation"`
	// BaselineEnv is {} for NCCL's defaults.
	BaselineEnv map[string]string `json:"baseline_env"`
}

// RecommendationSummary is the headline of a Recommendation.
type RecommendationSummary struct {
	Env         map[string]string `json:"env"`
	Speedup     float64           `json:"speedup"`
	SpeedupCI   [2]float64        `json:"speedup_ci"`
	CILevel     CILevel           `json:"ci_level,omitempty"`
	Significant bool              `json:"significant"`
	// Refused and RefusedHow are Recommendation.RefusedBy's, Ending its
	// Ending: so history says them as show does.
	Refused    string `json:"refused,omitempty"`
	RefusedHow string `json:"refused_how,omitempty"`
	Ending     string `json:"ending,omitempty"`
}

// Summary is r's headline, as the study's summary (history) keeps it.
func (r *Recommendation) Summary() RecommendationSummary {
	what, how := r.RefusedBy()
	return RecommendationSummary{Env: r.Env, Speedup: r.Speedup, SpeedupCI: r.SpeedupCI, CILevel: r.CILevel, Significant: r.Significant, Refused: what, RefusedHow: how, Ending: r.Ending}
}

// RefusedBy names the part or guarded op that refused the confirmed
// candidate ("broadcast at 1M", "its part alltoall 512K-8M") and how
// (RefusedSlower, …); "" when none did.
func (r *Recommendation) RefusedBy() (what, how string) {
	for _, p := range r.Parts {
		if !p.Refused {
			continue
		}
		what, how := "its part "+p.Name(), RefusedSlower
		if p.NotShownSafe {
			what, how = "its call "+p.Name(), RefusedNotShownSafe
		}
		if p.RefusedAt > 0 {
			what = fmt.Sprintf("its call %s of %d bytes", p.Op, p.RefusedAt)
		}
		return what, how
	}
	for _, g := range r.OpGuards {
		if g.Refused && g.Failed != "" {
			return fmt.Sprintf("%s fail (%s)", g.Op, g.Failed), RefusedFails
		}
		if g.Refused {
			return fmt.Sprintf("%s at %s", g.Op, nccl.FormatSize(g.WorstBytes)), RefusedSlower
		}
	}
	return "", ""
}

// How a part or guarded op refused a candidate (RefusedBy).
const (
	RefusedSlower       = "slower"
	RefusedFails        = "fails"
	RefusedNotShownSafe = "not-shown-safe"
)
