package sim

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// BuildOptions say what a replay is built from: the store's recording,
// `nccltune doctor --json [--env K=V…]` outputs (NCCL's choices per size
// with the defaults or a config), the replay's name (default: the store's
// file name without extension) and a note added to its description.
type BuildOptions struct {
	Recording *Recording
	Plans     []string
	Name      string
	Note      string
}

// PlansBeside lists the JSON files beside a store, where a recording keeps
// its doctor outputs; BuildReplay skips those that are not doctor reports.
func PlansBeside(storePath string) []string {
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(storePath), "*.json"))
	sort.Strings(files)
	return files
}

// Recording is the studies of a nccltune store (Source: its path), each
// with its launches under their trial's config, in the store's order. It
// is filled where studies are read (studyrun.RecordingOf), so the
// simulated fabric never links the store.
type Recording struct {
	Source  string
	Studies []RecordedStudy
}

// RecordedStudy is one study of a recording, with its platform
// fingerprint (zero fields when not recorded).
type RecordedStudy struct {
	Name                        string
	Simulated                   bool
	Ranks                       int
	NCCLVersion, GPU, Transport string
	Launches                    []RecordedLaunch
}

// RecordedLaunch is one launch of a recorded study, under its trial's
// config: Env is the variables nccltune added.
type RecordedLaunch struct {
	Config  nccl.Config
	Seq     int
	Phase   string
	Start   time.Time
	Outcome benchfmt.Outcome
	Reason  string
	Env     []string
	Sizes   []benchfmt.Size
	Facts   *benchfmt.Facts
}

// recorded is one launch of the recording a replay times.
type recorded struct {
	study string
	cfg   nccl.Config
	l     *RecordedLaunch
}

// BuildReplay groups every launch of a recording by config (canonical,
// knobs only), in time order, the first one the fabric's cold start.
// Plans come from doctor files and, for configs they do not cover, from
// launches' NCCL_DEBUG TUNING lines. Debug and explain launches give plans,
// not times (logging slows them and they run fewer iterations).
// Interrupted launches are left out; other failed launches replay as
// failures; OK launches that missed a recorded size are dropped.
func BuildReplay(o BuildOptions) (*Replay, error) {
	source := o.Recording.Source
	name := cmp.Or(o.Name, strings.TrimSuffix(filepath.Base(source), filepath.Ext(source)))
	r := &Replay{Format: ReplayFormat, Name: name, Source: source}
	rec, err := readRecording(o.Recording, r)
	if err != nil {
		return nil, err
	}
	r.Sizes = recordedSizes(rec.launches)
	if len(r.Sizes) == 0 {
		return nil, fmt.Errorf("replay: no launch in %s ended OK", source)
	}
	configs, dropped := groupByConfig(rec.launches, r.Sizes)
	def := configs[""]
	if def == nil {
		return nil, fmt.Errorf("replay: %s has no launch of NCCL's defaults, which every search starts with (record it: `nccltune sweep --no-warmup …` without --env)", source)
	}
	for _, k := range slices.Sorted(maps.Keys(configs)) { // "" (the defaults) first
		r.Configs = append(r.Configs, configs[k])
	}
	defDoc, err := attachPlans(r, configs, rec.debugPlans, o)
	if err != nil {
		return nil, err
	}
	fillFabric(r, defDoc, rec.defaultsFacts, def)
	if r.NRanks == 0 {
		return nil, fmt.Errorf("replay: %s does not say how many ranks ran (no fabric fingerprint and no doctor file)", source)
	}
	if err := requirePlans(r.Configs); err != nil {
		return nil, err
	}
	r.Description = describeReplay(r, rec.launches, dropped, o.Note)
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// replayInput is what BuildReplay reads from the recording: the launches
// to replay in time order, and the plans NCCL's debug lines showed.
type replayInput struct {
	launches []recorded
	// debugPlans are by config key the plan of the first launch with
	// TUNING lines (Env, Plan, PlanSource and CommChannels).
	debugPlans map[string]*ReplayConfig
	// defaultsFacts are the facts of the first launch of NCCL's defaults
	// that logged its plan: the fabric, when no doctor file says it.
	defaultsFacts *benchfmt.Facts
}

// readRecording reads every study of the recording, filling the replay's
// fabric fields from the studies' fingerprints (the first to say each
// wins) and the defaults' tuning table.
func readRecording(recording *Recording, r *Replay) (*replayInput, error) {
	rec := &replayInput{debugPlans: map[string]*ReplayConfig{}}
	for i := range recording.Studies {
		rec.readStudy(&recording.Studies[i], r)
	}
	if len(rec.launches) == 0 {
		return nil, fmt.Errorf("replay: %s holds no measured launch (record some with `nccltune sweep --no-warmup --env K=V …`)", recording.Source)
	}
	sort.SliceStable(rec.launches, func(i, j int) bool { return rec.launches[i].l.Start.Before(rec.launches[j].l.Start) })
	return rec, nil
}

// readStudy adds one study's launches: each under its trial's config,
// its debug lines as that config's plan, and only the launches whose
// times a replay can use (no explain or debug launch, none interrupted).
func (rec *replayInput) readStudy(study *RecordedStudy, r *Replay) {
	r.FromSimulated = r.FromSimulated || study.Simulated
	r.NRanks, r.NCCLVersion = cmp.Or(r.NRanks, max(study.Ranks, 0)), cmp.Or(r.NCCLVersion, study.NCCLVersion)
	r.GPU, r.Transport = cmp.Or(r.GPU, study.GPU), cmp.Or(r.Transport, study.Transport)
	for i := range study.Launches {
		l := &study.Launches[i]
		cfg := knobsOf(l.Config)
		if l.Facts != nil && len(allReduceSteps(l.Facts.Choices)) > 0 {
			rec.notePlan(r, study.Name, cfg, l)
		}
		if l.Phase == vocab.PhaseExplain || isDebugLaunch(l) || l.Outcome != benchfmt.OK && strings.Contains(l.Reason, "interrupted") {
			continue
		}
		rec.launches = append(rec.launches, recorded{study: study.Name, cfg: cfg, l: l})
	}
}

// notePlan keeps the first plan a config's debug lines showed; a
// defaults launch also gives the fabric's facts and the tuning table.
func (rec *replayInput) notePlan(r *Replay, study string, cfg nccl.Config, l *RecordedLaunch) {
	key := cfg.Key()
	if _, seen := rec.debugPlans[key]; !seen {
		rec.debugPlans[key] = &ReplayConfig{Env: cfg, Plan: allReduceSteps(l.Facts.Choices), CommChannels: l.Facts.Channels,
			PlanSource: fmt.Sprintf("NCCL_DEBUG lines of launch %d of study %s", l.Seq, study)}
	}
	if len(cfg) == 0 && rec.defaultsFacts == nil {
		rec.defaultsFacts = l.Facts
	}
	if len(cfg) == 0 && r.Tuning == nil {
		r.Tuning = allReduceTable(l.Facts.Tuning)
	}
}

// recordedSizes is the set of sizes most OK launches measured (on a tie,
// the larger set): the sizes a replay times.
func recordedSizes(recs []recorded) []int64 {
	count := map[string]int{}
	setOf := map[string][]int64{}
	for _, rc := range recs {
		if rc.l.Outcome != benchfmt.OK {
			continue
		}
		s := launchSizes(rc.l)
		k := fmt.Sprint(s)
		count[k]++
		setOf[k] = s
	}
	bestKey := ""
	for k, n := range count {
		if n > count[bestKey] || n == count[bestKey] && len(setOf[k]) > len(setOf[bestKey]) {
			bestKey = k
		}
	}
	return setOf[bestKey]
}

// groupByConfig turns the recorded launches into each config's replay
// launches; it counts the OK launches dropped for a missed size.
func groupByConfig(recs []recorded, sizes []int64) (map[string]*ReplayConfig, int) {
	configs := map[string]*ReplayConfig{}
	dropped := 0
	for i, rc := range recs {
		rl := ReplayLaunch{Start: rc.l.Start, Study: rc.study, Cold: i == 0}
		if rc.l.Outcome != benchfmt.OK {
			rl.Failed = string(rc.l.Outcome) + ": " + rc.l.Reason
		} else {
			times, ok := launchTimes(rc.l, sizes)
			if !ok {
				dropped++
				continue
			}
			rl.TimesUS = times
		}
		key := rc.cfg.Key()
		c := configs[key]
		if c == nil {
			c = &ReplayConfig{Env: rc.cfg}
			configs[key] = c
		}
		c.Launches = append(c.Launches, rl)
	}
	return configs, dropped
}

// attachPlans gives each config its plan, from doctor files first, then
// debug lines; plans of configs never timed become plan-only configs. It
// returns the defaults' doctor file, which knows the fabric best.
func attachPlans(r *Replay, byKey map[string]*ReplayConfig, debugPlans map[string]*ReplayConfig, o BuildOptions) (*doctorDoc, error) {
	docs, err := readPlans(o.Plans, len(o.Plans) > 0 && !slices.Equal(o.Plans, PlansBeside(o.Recording.Source)))
	if err != nil {
		return nil, err
	}
	var defDoc *doctorDoc
	planOnly := map[string]*ReplayConfig{}
	for _, d := range docs {
		if d.Choices != nil && (defDoc == nil || len(d.CompareEnv) == 0) {
			defDoc = d
		}
		src, compare := "doctor "+filepath.Base(d.path), len(d.CompareEnv) > 0
		if compare {
			key := knobsOf(d.CompareEnv).Key()
			c := cmp.Or(byKey[key], planOnly[key])
			if c == nil {
				c = &ReplayConfig{Env: knobsOf(d.CompareEnv)}
				planOnly[key] = c
			}
			c.Plan, c.PlanSource = d.withSteps(), src
		}
		// The defaults' plan: a doctor file without --env says it, one with
		// --env fills in until one without does.
		if c := byKey[""]; c != nil && (compare && c.Plan == nil || !compare && len(d.Choices) > 0) {
			c.Plan, c.PlanSource, c.CommChannels = allReduceSteps(d.Choices), src, d.Channels
		}
	}
	for _, c := range r.Configs {
		if d, ok := debugPlans[c.Env.Key()]; ok && c.Plan == nil {
			c.Plan, c.PlanSource, c.CommChannels = d.Plan, d.PlanSource, d.CommChannels
		}
	}
	for key, d := range debugPlans {
		if byKey[key] == nil && planOnly[key] == nil {
			planOnly[key] = d
		}
	}
	for _, k := range slices.Sorted(maps.Keys(planOnly)) {
		r.PlanOnly = append(r.PlanOnly, planOnly[k])
	}
	return defDoc, nil
}

// fillFabric completes the replay's fabric: the defaults' doctor file, or
// else their logged facts, override the fingerprints.
func fillFabric(r *Replay, defDoc *doctorDoc, facts *benchfmt.Facts, def *ReplayConfig) {
	if defDoc != nil && r.Tuning == nil {
		r.Tuning = allReduceTable(defDoc.Tuning)
	}
	if defDoc != nil {
		r.NRanks, r.NCCLVersion, r.GPU = cmp.Or(defDoc.NRanks, r.NRanks), cmp.Or(defDoc.NCCLVersion, r.NCCLVersion), cmp.Or(defDoc.GPU, r.GPU)
		r.Transport, r.NICs, r.Channels = cmp.Or(defDoc.Transport, r.Transport), defDoc.NICs, defDoc.Channels
		r.FromSimulated = r.FromSimulated || defDoc.Simulated
	} else if facts != nil {
		r.NRanks, r.NCCLVersion = cmp.Or(facts.NRanks, r.NRanks), cmp.Or(facts.NCCLVersion, r.NCCLVersion)
		r.Transport, r.NICs, r.Channels = cmp.Or(facts.Transport, r.Transport), facts.NICs, facts.Channels
	}
	r.Channels = cmp.Or(r.Channels, def.CommChannels)
	r.Transport = cmp.Or(r.Transport, transportSocket)
}

// requirePlans refuses timed configs without a plan.
func requirePlans(configs []*ReplayConfig) error {
	var noPlan []string
	for _, c := range configs {
		if c.Plan == nil {
			noPlan = append(noPlan, c.Env.String())
		}
	}
	if len(noPlan) > 0 {
		// Name a few: a search's store lacks plans for most of its configs,
		// and the whole list was one line of thousands of characters.
		const shown = 3
		list := strings.Join(noPlan[:min(shown, len(noPlan))], "; ")
		if len(noPlan) > shown {
			list += fmt.Sprintf("; and %d more", len(noPlan)-shown)
		}
		return fmt.Errorf("replay: %d of %d recorded configs have no plan (NCCL's choices per size), e.g. %s — a search records NCCL's plan only in its debug launches; give `nccltune doctor --json --env K=V…` outputs beside the store or with --plans, or record launches with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING",
			len(noPlan), len(configs), list)
	}
	return nil
}

// describeReplay says what the replay holds and what was left out.
func describeReplay(r *Replay, recs []recorded, dropped int, note string) string {
	n := 0
	for _, c := range r.Configs {
		n += len(c.Launches)
	}
	first, last := recs[0].l.Start, recs[len(recs)-1].l.Start
	kind := "real"
	if r.FromSimulated {
		kind = "SIMULATED (a test recording)"
	}
	desc := fmt.Sprintf("%d %s launches of %d configs, %s to %s, %d ranks, NCCL %s, %s to %s; the first launch is the cold one",
		n, kind, len(r.Configs), first.UTC().Format("2006-01-02 15:04"), last.UTC().Format("15:04 MST"), r.NRanks, r.NCCLVersion,
		nccl.FormatSize(r.Sizes[0]), nccl.FormatSize(r.Sizes[len(r.Sizes)-1]))
	if len(r.PlanOnly) > 0 {
		desc += fmt.Sprintf("; plans only (not timed) for %d more configs", len(r.PlanOnly))
	}
	if dropped > 0 {
		desc += fmt.Sprintf("; %d launches that missed a recorded size were left out", dropped)
	}
	if note != "" {
		desc += ". " + note
	}
	return desc
}

// knobsOf keeps a config's knobs, canonical.
func knobsOf(c map[string]string) nccl.Config { return nccl.KnobsOf(c).Canonical() }

func isDebugLaunch(l *RecordedLaunch) bool {
	for _, kv := range l.Env {
		if strings.HasPrefix(kv, "NCCL_DEBUG=") && !strings.EqualFold(kv, "NCCL_DEBUG=WARN") && !strings.EqualFold(kv, "NCCL_DEBUG=VERSION") {
			return true
		}
	}
	return false
}

// launchSizes are the distinct sizes of a launch's first cycle, ascending.
func launchSizes(l *RecordedLaunch) []int64 {
	var out []int64
	for _, s := range l.Sizes {
		if s.Cycle == 0 {
			out = append(out, s.Bytes)
		}
	}
	slices.Sort(out)
	return out
}

// launchTimes are a launch's per-iteration times (or single time) at each
// size; ok is false when a size is missing.
func launchTimes(l *RecordedLaunch, sizes []int64) ([][]float64, bool) {
	out := make([][]float64, len(sizes))
	for i, b := range sizes {
		j := slices.IndexFunc(l.Sizes, func(s benchfmt.Size) bool { return s.Bytes == b && s.Cycle == 0 })
		switch {
		case j < 0:
			return nil, false
		case len(l.Sizes[j].Samples) > 0:
			out[i] = slices.Clone(l.Sizes[j].Samples)
		case l.Sizes[j].TimeUS > 0:
			out[i] = []float64{l.Sizes[j].TimeUS}
		default:
			return nil, false
		}
	}
	return out, true
}

func allReduceSteps(cs []benchfmt.Choice) []benchfmt.PlanStep {
	var out []benchfmt.PlanStep
	for _, c := range cs {
		if c.Collective != "" && !strings.EqualFold(c.Collective, "AllReduce") {
			continue
		}
		out = append(out, benchfmt.PlanStep{Bytes: c.Bytes, Algo: canonAlgo(c.Algo), Proto: canonProto(c.Proto), Channels: c.Channels})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Bytes < out[j].Bytes })
	return out
}

// allReduceTable is the all-reduce's part of a TUNING table, nil if none.
func allReduceTable(t map[string]map[string]map[string]float64) map[string]map[string]float64 {
	for coll, table := range t {
		if nccl.NormName(coll) == "ALLREDUCE" {
			return table
		}
	}
	return nil
}

// doctorDoc is the part of `nccltune doctor --json` a replay needs.
type doctorDoc struct {
	path string // the file it was read from

	Source      string            `json:"source"`
	Simulated   bool              `json:"simulated"`
	NCCLVersion string            `json:"nccl_version"`
	NRanks      int               `json:"nranks"`
	GPU         string            `json:"gpu"`
	Transport   string            `json:"transport"`
	NICs        []string          `json:"nics"`
	Channels    int               `json:"channels"`
	Failed      bool              `json:"failed"`
	Choices     []benchfmt.Choice `json:"choices"`
	// Tuning is NCCL's TUNING table, in benchfmt.Facts' shape.
	Tuning     map[string]map[string]map[string]float64 `json:"tuning"`
	CompareEnv nccl.Config                              `json:"compare_env"`
	Compare    []struct {
		Collective  string  `json:"collective"`
		Bytes       int64   `json:"bytes"`
		Recommended *Choice `json:"recommended"`
	} `json:"compare"`
}

// withSteps is NCCL's plan under the doctor's --env config.
func (d *doctorDoc) withSteps() []benchfmt.PlanStep {
	var cs []benchfmt.Choice
	for _, row := range d.Compare {
		if p := row.Recommended; p != nil {
			cs = append(cs, benchfmt.Choice{Collective: row.Collective, Bytes: row.Bytes, Algo: p.Algo, Proto: p.Proto, Channels: p.Channels})
		}
	}
	return allReduceSteps(cs)
}

// readPlans reads doctor JSON files; unless strict (the user named them),
// files that are not doctor reports are skipped.
func readPlans(paths []string, strict bool) ([]*doctorDoc, error) {
	var out []*doctorDoc
	for _, p := range paths {
		data, err := input.Load(context.Background(), p, input.MaxBytes)
		if err != nil {
			return nil, fmt.Errorf("replay: plan file: %w", err)
		}
		d := doctorDoc{path: p}
		err = json.NewDecoder(bytes.NewReader(data)).Decode(&d)
		if err == nil && (d.Source != "launch" && d.Source != "log") {
			err = errors.New("not the output of `nccltune doctor --json` (no \"source\": \"launch\")")
		}
		if err == nil && d.Failed {
			err = errors.New("the doctor launch failed")
		}
		if err == nil && len(d.CompareEnv) > 0 && len(d.withSteps()) == 0 {
			err = errors.New("it compares with --env but records no choice under it (run doctor with NCCL_DEBUG's TUNING lines)")
		}
		if err != nil {
			if strict {
				return nil, fmt.Errorf("replay: plan file %s: %w", p, err)
			}
			continue
		}
		out = append(out, &d)
	}
	return out, nil
}
