package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// Study is one search, sweep or import: what was asked, on which fabric,
// and what was concluded. Trials and launches are stored separately.
type Study struct {
	// ID is assigned by CreateStudy.
	ID uint64 `json:"id"`
	// Name is short and readable: "s7-512K-4M" for a search over 512K-4M,
	// "s8-sweep", "s9-import". CreateStudy fills it in when empty.
	Name    string    `json:"name"`
	Kind    string    `json:"kind"`
	Created time.Time `json:"created"`
	// Labels are the user's K=V tags (lane, cluster, ticket), set at
	// creation with --label.
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
	// Collective is the nccl-tests collective, e.g. "all_reduce" (a
	// workload of several parts: its first part's).
	Collective string `json:"collective,omitempty"`
	// Workload is a search's parts when it tuned several (--part): each
	// op, band and weight. Empty in a one-part study and in databases from
	// before workloads, which read as the one part of Band and Collective
	// (Parts).
	Workload []Part `json:"workload,omitempty"`
	// LoggedChoices are what the process's own NCCL chose at sizes a
	// timed workload calls, as its log's TUNING lines gave them
	// (nccl.LoggedChoice's text, OP:BYTES:ALGO:PROTO; --chose). Empty
	// when not known, as in every study stored before they were kept.
	LoggedChoices []string `json:"logged_choices,omitempty"`
	// GuardOps are the collectives outside the workload a search measured
	// for a recommended candidate (--guard-ops); GuardOpsSkipped the ones
	// it left out because this build or fabric cannot launch them, each
	// with why.
	GuardOps        []nccl.Op `json:"guard_ops,omitempty"`
	GuardOpsSkipped []string  `json:"guard_ops_skipped,omitempty"`
	// TunerCSV is the tuner CSV a verify --tuner-plugin measured, as NCCL
	// read it: its candidate's NCCL_TUNER_CONFIG_FILE names a temporary
	// file, gone once verify ended.
	TunerCSV string `json:"tuner_csv,omitempty"`

	// Space maps each searched knob to its choices, in a stable order
	// (resume rebuilds goptuna's categorical indices from it).
	Space map[string][]string `json:"space,omitempty"`
	// BaseEnv is the lane's fixed environment, held constant.
	BaseEnv map[string]string `json:"base_env,omitempty"`
	// BaselineEnv is what a study compared with and started from when it
	// was not NCCL's defaults: the user's current knob settings
	// (--baseline-env). Empty means NCCL's defaults.
	BaselineEnv map[string]string `json:"baseline_env,omitempty"`
	Launch      LaunchSettings    `json:"launch"`
	Platform    Platform          `json:"fabric"`

	// Simulated is true when the simulated fabric produced the launches.
	Simulated bool   `json:"simulated"`
	Seed      int64  `json:"seed"`
	Budget    Budget `json:"budget"`
	// Search holds a search's sampling and decision settings, which
	// --resume keeps (nil in studies stored before they were recorded).
	Search *SearchSettings `json:"search,omitempty"`

	Status string `json:"status"`
	// Reason explains a failed or interrupted status.
	Reason string `json:"reason,omitempty"`
	// Recommendation is nil until the study has decided.
	Recommendation *Recommendation `json:"recommendation"`
	// Refusals are a search's refusals so far while it has not decided,
	// each stored as the confirmation after it began (Refusal.Restart),
	// so that the study resumes from there; none once Recommendation
	// holds them, and none in studies stored before they were kept
	// (those resume from their first confirmation).
	Refusals []Refusal `json:"refusals_so_far,omitempty"`
	// Confirming is the design of a search's confirmation under way, as
	// it was fixed when the confirmation began: a study resumed during
	// it judges the same looks at the same levels, not a design planned
	// again from the budget the resume left. nil once the study decided,
	// and in studies stored before it was kept.
	Confirming *ConfirmDesign `json:"confirming,omitempty"`
	// Plans is what a search did with NCCL's own plan (nil for other
	// studies and for searches stored before it was recorded).
	Plans *PlanSummary `json:"plans,omitempty"`

	// Trials and Launches are counted by the store and filled in when a
	// study is read; values passed to CreateStudy or UpdateStudy are ignored.
	Trials   int `json:"-"`
	Launches int `json:"-"`
}

// UnmarshalJSON reads a study as every nccltune stored it: its parts under
// "workload", or under "workload_calls", the key the release of
// 2026-12-04 wrote them under by mistake. One rule at load; the study is
// written back under "workload".
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
	// Instrument is the benchmark kind ("" or "nccl-tests", "torch");
	// Prefix the command put in front of it (torchrun, docker exec, a wrapper).
	Instrument string   `json:"instrument,omitempty"`
	Prefix     []string `json:"prefix,omitempty"`
	SimNoise   float64  `json:"sim_noise,omitempty"`
	SimSeed    int64    `json:"sim_seed,omitempty"`
	// Run holds the launch flags stored since nccltune began recording
	// them; it is nil in a study stored before, whose values for these
	// flags are unknown (resume and verify cannot check them).
	Run *RunSettings `json:"run,omitempty"`
}

// RunSettings are launch flags that change how a real benchmark runs:
// nccl-tests' iteration counts, the MPI flavour and executable, the torch
// instrument's script.
type RunSettings struct {
	Iters       int    `json:"iters,omitempty"`
	Warmup      int    `json:"warmup,omitempty"`
	MPIFlavor   string `json:"mpi_flavor,omitempty"`
	MPIRun      string `json:"mpirun,omitempty"`
	TorchScript string `json:"torch_script,omitempty"`
}

// Platform is what a study ran on: NCCL and nccl-tests versions, ranks,
// nodes, GPU and what carried the data. It is the fingerprint that keeps
// results from different fabrics apart (stored under "fabric", its name
// before "fabric" came to mean only the package that diagnoses one).
type Platform struct {
	NCCLVersion  string `json:"nccl_version,omitempty"`
	TestsVersion string `json:"tests_version,omitempty"`
	Ranks        int    `json:"ranks,omitempty"`
	Nodes        int    `json:"nodes,omitempty"`
	GPU          string `json:"gpu,omitempty"`
	// Transport is what carried data between the ranks, as benchfmt.Facts
	// has it: the network's name ("IB", "Socket") when the network
	// carried data between any two ranks, else "P2P", "SHM" or "P2P+SHM".
	Transport string   `json:"transport,omitempty"`
	Hosts     []string `json:"hosts,omitempty"`
	// GDR is nil when the logs did not say, and when the network carried
	// no data.
	GDR *bool `json:"gdr"`
	// TransportSummary says what carried data between which ranks
	// (benchfmt.RoutesText); Routes are the same, structured. Both come from
	// the study's debug (explain) launches: NCCL prints the channel lines
	// they are read from only with NCCL_DEBUG=INFO.
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
	// AllowDisabled: the study may try protocols and algorithms NCCL's
	// defaults disabled (--allow-disabled-protocols).
	AllowDisabled bool `json:"allow_disabled,omitempty"`
	// GuardLaunches are the launches per arm of each guarded op;
	// ScopeLists says the study wrote a winning NCCL_ALGO/NCCL_PROTO in
	// NCCL's per-function form for the workload's ops.
	GuardLaunches int  `json:"guard_launches,omitempty"`
	ScopeLists    bool `json:"scope_lists,omitempty"`
	// BatchSize is --batch, the configs per batch launch of exploration;
	// 0, as in studies stored before batches, launches each on its own.
	BatchSize int `json:"batch_size,omitempty"`
}

// Part is one part of a stored workload: nccl.Part as the store keeps it.
type Part struct {
	Op      nccl.Op `json:"op"`
	Band    string  `json:"band"`
	BandMin int64   `json:"band_min"`
	BandMax int64   `json:"band_max"`
	Weight  float64 `json:"weight"`
	// Calls and Logged are a timed part's (nccl.ParseCall): calls per step
	// at the sizes the process called; absent for a --part part.
	Calls  float64 `json:"calls,omitempty"`
	Logged []int64 `json:"logged_bytes,omitempty"`
	// LoggedCalls are the calls at each of Logged: the workload as the
	// process called it, even where two sizes share a power of two.
	LoggedCalls []float64 `json:"logged_calls,omitempty"`
}

// WorkloadText is the one description of what a study of a timed
// workload measured, for show, history and the study's summary: its
// calls per op and size ("all_reduce 10240×760, 2048000×80; all_gather
// 1048576×13", nccl.Workload.CallsText), never the band around them; ""
// for a study whose workload is bands.
func WorkloadText(s *Study) string {
	if w := s.Parts(); w.Timed() {
		return w.CallsText()
	}
	return ""
}

// Chose are the study's LoggedChoices as read; one that does not read
// (none that nccltune stored) is left out.
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
// does not call: calls the user took out of the study (one made once, at
// start-up), which it neither weighs nor guards and whose NCCL choice a
// tuner CSV keeps.
func (s *Study) TakenOut() []nccl.LoggedChoice {
	parts := s.Parts()
	if !slices.ContainsFunc(parts, func(p nccl.Part) bool { return len(p.Logged) > 0 }) {
		// A study stored before parts kept their logged sizes: which call
		// its chose: entries belong to is unknown, so none is said out.
		return nil
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

// Parts are the study's workload: its stored parts, or for a one-part
// study (and every study stored before workloads) the one part of its
// band and collective with weight 1.
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

// PlanSummary is what a search did with NCCL's own plan: how many configs
// its space had, how many it explored and how many distinct plans they
// ran, and the configs it merged (per rule) or refused.
type PlanSummary struct {
	// Read is true when NCCL's plan was read from a debug launch of the
	// defaults; Note says why not, and that configs were then not merged.
	Read            bool   `json:"read"`
	Note            string `json:"note,omitempty"`
	SpaceConfigs    int    `json:"space_configs"`
	ConfigsExplored int    `json:"configs_explored"`
	PlansExplored   int    `json:"plans_explored"`
	// Merged counts, per rule, the proposed configs NCCL provably runs
	// like a config already tried (not launched as new trials).
	Merged        []MergeCount `json:"merged"`
	MergedConfigs int          `json:"merged_configs"`
	// Refused counts configs never launched because they switch on a
	// protocol or algorithm NCCL's defaults disabled.
	Refused int `json:"refused"`
	// WrongResults: per protocol or algorithm that gave wrong results, why
	// no later config allowing it was launched.
	WrongResults []string `json:"wrong_results,omitempty"`
	// Checks counts the debug launches spent settling uncertain rules.
	Checks int `json:"plan_checks"`
}

// MergeCount is how many configs one rule merged.
type MergeCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// Budget is what the study was allowed to spend; zero means unlimited.
type Budget struct {
	Trials   int           `json:"trials,omitempty"`
	Launches int           `json:"launches,omitempty"`
	Time     time.Duration `json:"time,omitempty"`
}

// Recommendation is a study's conclusion. An empty Env with Significant
// false means "keep NCCL's defaults". The JSON fields follow DESIGN.md's
// `search` contract.
type Recommendation struct {
	Env       map[string]string `json:"env"`
	Speedup   float64           `json:"speedup"`
	SpeedupCI [2]float64        `json:"speedup_ci"`
	// CILevel is the confidence SpeedupCI was taken at: 1 − the level of
	// the sequential look that decided (0.9926), not always 0.95; 0 in a
	// study stored before it was recorded (CILevel.Label).
	CILevel     CILevel `json:"ci_level,omitempty"`
	Significant bool    `json:"significant"`
	// PValue is the confirmation test's p-value; meaningful only when
	// BaselineLaunches and CandidateLaunches are both positive (the CLI
	// prints null otherwise: no test ran).
	PValue float64 `json:"p_value"`
	Reason string  `json:"reason"`
	// Ending names why the study ended as it did (vocab.Ending* or the
	// confirmation's verdict, e.g. "recommended", "not-significant",
	// "futile", "guard-regression", "no-candidate").
	Ending string `json:"ending,omitempty"`
	// MinEffect is the smallest gain that counts (0.03 = 3 %).
	MinEffect       float64 `json:"min_effect,omitempty"`
	BaselineScoreUS float64 `json:"baseline_score_us"`
	ScoreUS         float64 `json:"score_us"`
	// TrialID is the recommended trial (0 when keeping the defaults).
	TrialID uint64 `json:"trial_id,omitempty"`
	// CandidateTrialID is the trial that was confirmed against the
	// baseline, recommended or not (0 when none was).
	CandidateTrialID uint64 `json:"candidate_trial_id,omitempty"`
	// BaselineLaunches and CandidateLaunches count the confirmation launches.
	BaselineLaunches  int              `json:"baseline_launches,omitempty"`
	CandidateLaunches int              `json:"candidate_launches,omitempty"`
	PerSize           []SizeComparison `json:"per_size"`
	// Dropped are the confirmed candidate's knobs left out of Env because
	// NCCL runs the same plan without them, each with its reason.
	Dropped []nccl.Drop `json:"dropped"`
	// Guards compares the guard sizes (regression checks outside the band).
	Guards []SizeComparison `json:"guards,omitempty"`
	// Parts are the confirmation part by part, for a workload of several
	// parts (nil for one part, whose comparison is the fields above).
	Parts []PartComparison `json:"parts,omitempty"`
	// OpGuards are the collectives outside the workload measured for the
	// confirmed candidate, interleaved with the baseline (nil when none
	// were: no guarded ops, or the confirmation kept the baseline).
	OpGuards []OpGuard `json:"op_guards,omitempty"`
	// Scoped are the knobs Env writes in NCCL's per-function form for the
	// workload's ops (NCCL_ALGO, NCCL_PROTO; NCCL 2.24+).
	Scoped []string `json:"scoped,omitempty"`
	// ScopedFromTrialID is the trial whose lists Scoped rewrote (0 when
	// none): it runs the workload's ops as the recommendation does, so its
	// debug log stands for the recommended trial's where that has none.
	ScopedFromTrialID uint64 `json:"scoped_from_trial_id,omitempty"`
	// Refusals are the candidates confirmed and refused before the one
	// above, in order, each with why: a refusal does not end a study
	// while its budget can confirm another candidate.
	Refusals []Refusal `json:"refusals,omitempty"`
}

// Refusal is a candidate the study confirmed and refused.
type Refusal struct {
	TrialID uint64            `json:"trial_id"`
	Env     map[string]string `json:"env"`
	// Ending is why (vocab.EndingGuard, vocab.EndingOpRegression, …),
	// Reason the study's sentence.
	Ending string `json:"ending"`
	Reason string `json:"reason"`
	// Speedup and SpeedupCI are its confirmation's, over what the study
	// scores (1 and no interval, [0, 0], when it failed before a look;
	// records stored before 2026-12-05 13:00 have [1, 1] there).
	Speedup   float64    `json:"speedup"`
	SpeedupCI [2]float64 `json:"speedup_ci"`
	// CILevel is the confidence SpeedupCI was taken at (Recommendation's).
	CILevel CILevel `json:"ci_level,omitempty"`
	// ScopedFromTrialID is the trial whose lists the refused candidate's
	// rewrote (Recommendation.ScopedFromTrialID), refused with it; 0 when
	// none.
	ScopedFromTrialID uint64 `json:"scoped_from_trial_id,omitempty"`
	// SlowerAt are the (op, size) sites where it was refused: a resumed
	// study ranks a candidate exploration measured slower there after the
	// others, as the study did before the interruption.
	SlowerAt []Site `json:"slower_at,omitempty"`
	// Restart is where the confirmation after this refusal began; nil
	// when none followed it.
	Restart *Restart `json:"restart,omitempty"`
}

// ConfirmDesign is the design a confirmation began with
// (search.Planned): its candidate's env (a candidate first launched by
// the confirmation has no id yet when it begins), the launch it began
// at, and the launches per arm at its first and its last look
// (model.PlanConfirm plans the looks between and their levels from
// them).
type ConfirmDesign struct {
	Env           map[string]string `json:"env"`
	Seq           int               `json:"seq"`
	FirstLaunches int               `json:"first_launches"`
	MaxLaunches   int               `json:"max_launches"`
}

// Site is one op at one size.
type Site struct {
	Op    nccl.Op `json:"op"`
	Bytes int64   `json:"bytes"`
}

// Restart is where the confirmation after a refusal began, as a study
// resumed during it needs it (search.Restart).
type Restart struct {
	// Seq is the launch it began at (Launch.Seq).
	Seq int `json:"seq"`
	// NextEnv is the refused list's per-function form it confirmed in
	// place of the ranking's next candidate; empty for the ranking's.
	NextEnv map[string]string `json:"next_env,omitempty"`
	// ExploreStopped is why exploration had ended ("budget", "time",
	// "space").
	ExploreStopped string `json:"explore_stopped,omitempty"`
	// ExactDone: a candidate's calls had been shown to stand at their own
	// sizes, and their launches were no longer held back.
	ExactDone bool `json:"exact_done,omitempty"`
}

// PartComparison is what the confirmation measured of one part of a
// workload: the candidate against the baseline over the part's sizes.
type PartComparison struct {
	Op   nccl.Op `json:"op"`
	Band string  `json:"band"`
	// Calls, Logged and LoggedCalls are a timed part's calls as the user
	// gave them (Part's), so that it is named by them (Name), not by the
	// power of two it is measured at; absent for a band part, and in a
	// study stored before they were kept.
	Calls       float64   `json:"calls,omitempty"`
	Logged      []int64   `json:"logged_bytes,omitempty"`
	LoggedCalls []float64 `json:"logged_calls,omitempty"`
	// Weight is the part's normalised weight in the study's objective.
	Weight    float64    `json:"weight"`
	Speedup   float64    `json:"speedup"`
	SpeedupCI [2]float64 `json:"speedup_ci"`
	// CILevel is the confidence SpeedupCI was taken at (the part's own
	// comparison); 0 in a study stored before it was recorded.
	CILevel     CILevel `json:"ci_level,omitempty"`
	Significant bool    `json:"significant"`
	// Slower: significantly slower by more than the minimum effect;
	// Refused: this part refused the recommendation (op-regression).
	Slower  bool `json:"slower"`
	Refused bool `json:"refused"`
	// NotShownSafe: a timed workload's call refused the recommendation
	// because it was not shown safe (its upper bound over the margin),
	// not because it was shown slower; without Refused, another call not
	// shown safe beside the one that refused.
	NotShownSafe bool `json:"not_shown_safe,omitempty"`
	// RefusedAt is the size the process calls, off the power of two the
	// part is measured at, where the candidate was judged and refused; 0
	// when the part's own comparison (Speedup, SpeedupCI) refused it.
	RefusedAt       int64            `json:"refused_at_bytes,omitempty"`
	PValue          float64          `json:"p_value"`
	BaselineScoreUS float64          `json:"baseline_score_us"`
	ScoreUS         float64          `json:"score_us"`
	PerSize         []SizeComparison `json:"per_size"`
}

// Sizes are what p measured in the words the user gave them: a timed
// part's calls at their own sizes as logged, "10240×760"
// (nccl.Part.CallsText, the words show and history say a timed workload
// in); a band part's band, "512K-4M" (and a timed part's stored before
// its calls were kept).
func (p PartComparison) Sizes() string {
	if p.Calls > 0 && len(p.Logged) > 0 {
		return nccl.Part{Op: p.Op, Calls: p.Calls, Logged: p.Logged, LoggedCalls: p.LoggedCalls}.CallsText()
	}
	return p.Band
}

// Name is p's op and Sizes: "all_reduce 10240×760", "all_gather 1M-8M".
// Every per-part line (show's parts table, the exports' per-collective
// lines, the report, RefusedBy) names a part so.
func (p PartComparison) Name() string { return string(p.Op) + " " + p.Sizes() }

// OpGuard is what the guard measured of one collective outside the
// workload: the candidate against the baseline at the guard's sizes.
type OpGuard struct {
	Op    nccl.Op `json:"op"`
	Sizes []int64 `json:"sizes"`
	// Speedup is the baseline's score ÷ the candidate's over Sizes, with
	// its interval (below 1: the candidate is slower); NaN (null) where
	// no launch measured it.
	Speedup   JSONFloat    `json:"speedup"`
	SpeedupCI [2]JSONFloat `json:"speedup_ci"`
	// CILevel is the confidence SpeedupCI was taken at (1 − alpha); 0 in
	// a study stored before it was recorded.
	CILevel CILevel `json:"ci_level,omitempty"`
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
// comparison: the one per-size row, which the study stores, search, show,
// the report's table and compare A B print. Medians with their confidence
// intervals (NaN, null, where the launches are too few for one), the
// speedup (baseline ÷ candidate) with its rank interval over this size
// alone, the two-sided test and the launches of each arm that measured
// the size. A row stored before the launches were (zero) holds the median
// in place of a missing interval and no speedup interval (NaN).
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
	Op nccl.Op `json:"op,omitempty"`
	// CILevel is the confidence of the row's three intervals (the
	// study's, 0.95); 0 in a row stored before it was recorded.
	CILevel CILevel `json:"ci_level,omitempty"`
}

// Change is the candidate's time relative to the baseline's (-0.25 = 25 %
// less time), from the row's speedup: the one rule every table that says
// a change uses; the bus bandwidth changes by 1/(1+Change)−1.
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
	// Launches is counted by AddLaunch. ScoreUS is the band score (µs) of
	// the latest scored launch, unless the caller sets it with a
	// TrialUpdate.
	Launches int       `json:"launches"`
	ScoreUS  float64   `json:"score_us,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
}

// Launch is one run of the benchmark for one trial: what was launched and
// what it measured. What a launch changes about its trial is written by
// the store call that adds it (AddLaunchUpdatingTrial, AddTrialWithLaunch).
type Launch struct {
	ID      uint64 `json:"id"`
	StudyID uint64 `json:"study_id"`
	TrialID uint64 `json:"trial_id"`
	// Seq orders launches within the study, from 0; AddLaunch assigns it.
	Seq   int    `json:"seq"`
	Phase string `json:"phase"`
	// Op is the collective the launch measured; "" in databases from
	// before ops were recorded, all all-reduce (Op.OrAllReduce()).
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
	Scored bool `json:"scored"`
	// ScoreUS is this launch's band score in µs (0 when not scored).
	ScoreUS float64 `json:"score_us,omitempty"`
	// Source names where the launch came from when it was imported.
	Source string          `json:"source,omitempty"`
	Sizes  []benchfmt.Size `json:"sizes"`
	Facts  *benchfmt.Facts `json:"facts,omitempty"`
	// Batch is set for one config's share of a batch launch; absent in
	// databases from before batches, whose launches were all their own.
	Batch *benchfmt.BatchMember `json:"batch,omitempty"`
	// MinBytes and MaxBytes are the sizes the launch was asked to sweep
	// (nccl-tests -b, -e), and Debug says it printed NCCL's debug log (a
	// read of NCCL's plan, its times no measurement): what a resumed study
	// needs of its launches at the calls' own sizes (phase exact), which
	// share one phase and differ by these. Absent in databases from before
	// they were kept.
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
	ID   uint64 `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind"`
	Band string `json:"band"`
	// Workload is a timed workload's calls (WorkloadText), what history
	// says instead of the band around them; "" for other studies.
	Workload   string            `json:"workload_calls,omitempty"`
	Collective string            `json:"collective,omitempty"`
	Simulated  bool              `json:"simulated"`
	SimProfile string            `json:"sim_profile,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Status     string            `json:"status"`
	Created    time.Time         `json:"created"`
	Updated    time.Time         `json:"updated"`
	Trials     int               `json:"trials"`
	Launches   int               `json:"launches"`
	// BatchSize is a search's SearchSettings.BatchSize: it explored in
	// batch launches of this many configs (0: none).
	BatchSize int `json:"batch_size,omitempty"`
	// Recommendation is the study's conclusion without per-size detail;
	// nil until decided.
	Recommendation *RecommendationSummary `json:"recommendation"`
	// BaselineEnv is what the study compared with (--baseline-env), {}
	// for NCCL's defaults: "keep" means keep it. Summaries written before
	// it was recorded read it from their study (Studies).
	BaselineEnv map[string]string `json:"baseline_env"`
}

// RecommendationSummary is the headline of a Recommendation.
type RecommendationSummary struct {
	Env         map[string]string `json:"env"`
	Speedup     float64           `json:"speedup"`
	SpeedupCI   [2]float64        `json:"speedup_ci"`
	CILevel     CILevel           `json:"ci_level,omitempty"`
	Significant bool              `json:"significant"`
	// Refused is Recommendation.RefusedBy: what refused the confirmed
	// candidate, so history says it as show does. Summaries written
	// before it was recorded say "" for every study.
	Refused string `json:"refused,omitempty"`
	// RefusedHow is how it refused (RefusedSlower, RefusedFails,
	// RefusedNotShownSafe).
	RefusedHow string `json:"refused_how,omitempty"`
	// Ending is Recommendation.Ending, so history says why a study kept
	// its baseline as show does; "" in summaries written before it was
	// recorded.
	Ending string `json:"ending,omitempty"`
}

// Summary is r's headline, as the study's summary (history) keeps it.
func (r *Recommendation) Summary() RecommendationSummary {
	what, how := r.RefusedBy()
	return RecommendationSummary{Env: r.Env, Speedup: r.Speedup, SpeedupCI: r.SpeedupCI, CILevel: r.CILevel, Significant: r.Significant, Refused: what, RefusedHow: how, Ending: r.Ending}
}

// RefusedBy names the part or guarded op that refused the confirmed
// candidate ("broadcast at 1M", "its part alltoall 512K-8M", "its call
// broadcast 1M", "alltoall fail (the candidate failed)"), and how it
// refused (RefusedSlower, RefusedFails, RefusedNotShownSafe); "" when none
// did. The words around them are stored.Conclusion.Headline's.
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
