package search

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/sim"
)

// timedFabric is a simulated fabric and the workload a process runs on it
// (its calls), for the timed-workload quality table.
type timedFabric struct {
	name, profile string
	ranks         int
	calls         []string
	// null: nothing helps; any recommendation is a false one.
	null bool
}

func (f timedFabric) workload(t testing.TB) nccl.Workload {
	t.Helper()
	var parts []nccl.Part
	for _, c := range f.calls {
		p, err := nccl.ParseCall(c)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	return nccl.MergeCalls(parts)
}

func (f timedFabric) launcher(t testing.TB, seed int64) *simLauncher {
	l := newSimLauncher(t, f.profile, 1, seed)
	if f.ranks > 0 {
		l = l.withRanks(t, f.ranks)
	}
	// A workload of one op is a study of that op: its launcher measures
	// it (Request.Op "").
	if ops := f.workload(t).Ops(); len(ops) == 1 {
		l.op = ops[0]
	}
	return l
}

// timedStudy runs the timed study of workload w (its calls, each guarded
// at its own size, lists scoped per op) at the default budget on f with
// seed, as search --calls does.
func (f timedFabric) timedStudy(t testing.TB, w nccl.Workload, seed int64) *Result {
	t.Helper()
	res, _ := f.timedRun(t, w, seed)
	return res
}

// timedRun is timedStudy with the recorder that kept its launches.
func (f timedFabric) timedRun(t testing.TB, w nccl.Workload, seed int64) (*Result, *memRecorder) {
	t.Helper()
	return f.timedRunOn(t, w, f.launcher(t, seed), seed)
}

// timedRunOn is timedRun on launcher l, which keeps the requests.
func (f timedFabric) timedRunOn(t testing.TB, w nccl.Workload, l *simLauncher, seed int64) (*Result, *memRecorder) {
	t.Helper()
	o := DefaultOptions()
	o.Seed = seed
	o.Workload, o.Op, o.Band = w, w[0].Op, Hull(w)
	o.Guard, o.GuardOps = DefaultGuardFor(w), DefaultGuardOps(w)
	o.ScopeLists = true
	o.Budget = o.DefaultBudget()
	rec := newMemRecorder(t)
	res, err := Run(context.Background(), o, l, rec, nil, 0, nil)
	if err != nil {
		t.Fatalf("%s seed %d: %v", f.name, seed, err)
	}
	return res, rec
}

// stepTruth is what a config truly does to a timed workload: the time a
// step spends in its calls (µs) and its worst ratio to the defaults' time
// over the (op, size) cells it calls (above 1.05: truly unsafe). A config
// an op refuses is unsafe (ratio +Inf).
type stepTruth struct {
	step, worst float64
	at          string
}

// unsafe reports whether the config makes a call more than 5 % slower
// than NCCL's defaults: the tables' "unsafe".
func (s stepTruth) unsafe() bool { return s.worst > 1.05 }

// bestSafe reports whether the config is safe and within 5 % of the best
// safe step time, safeStep: the tables' "best safe".
func (s stepTruth) bestSafe(safeStep float64) bool { return !s.unsafe() && s.step <= 1.05*safeStep }

// calledSizes are the sizes in bytes a part's process calls with the calls
// per step at each (Logged, LoggedCalls): where the truth judges a config,
// as outside checks do with traces whose sizes are not powers of two. A
// part without them (a band, or one stored before they were kept) is its
// band's smallest size with all its calls.
func calledSizes(p nccl.Part) ([]int64, []float64) {
	if len(p.Logged) > 0 && len(p.LoggedCalls) == len(p.Logged) {
		return p.Logged, p.LoggedCalls
	}
	return []int64{p.Band.Min}, []float64{p.Calls}
}

// timedTruth judges cfg at every size the process calls (calledSizes), not
// at the power of two each call is measured at: NCCL's channel rule may
// plan a call otherwise between two powers of two.
func timedTruth(p *sim.Profile, w nccl.Workload, cfg nccl.Config) stepTruth {
	tr := stepTruth{worst: 1}
	for _, part := range w {
		sizes, calls := calledSizes(part)
		for i, b := range sizes {
			d, err1 := p.OpTimeUS(part.Op, nccl.Config{}, b)
			c, err2 := p.OpTimeUS(part.Op, cfg, b)
			if err1 != nil {
				continue
			}
			if err2 != nil {
				return stepTruth{step: math.Inf(1), worst: math.Inf(1), at: fmt.Sprintf("%s %d fails", part.Op, b)}
			}
			tr.step += calls[i] * c
			if r := c / d; r > tr.worst {
				tr.worst, tr.at = r, fmt.Sprintf("%s %d (measured at %s)", part.Op, b, nccl.FormatSize(part.Band.Min))
			}
		}
	}
	return tr
}

// bestSafe is the config of the space, in its process-wide form or its
// lists' per-function form for any set of w's ops, with the least time per
// step among those no call of w finds more than 5 % slower (the defaults
// count), and the best config with no regard for safety.
func bestSafe(p *sim.Profile, w nccl.Workload, space Space, version string) (safe nccl.Config, safeStep float64, any nccl.Config, anyStep float64) {
	safeStep, anyStep = timedTruth(p, w, nccl.Config{}).step, timedTruth(p, w, nccl.Config{}).step
	safe, any = nccl.Config{}, nccl.Config{}
	seen := map[string]bool{}
	for _, cfg := range space.All() {
		if cfg.Validate() != nil {
			continue
		}
		// Every set of the workload's ops, not only one op or all of
		// them: a study scopes a list to the ops that gained
		// (perFunctionForm), which on three ops may be two of them.
		forms := []nccl.Config{cfg}
		ops := w.Ops()
		for set := 1; set < 1<<len(ops); set++ {
			var scope []nccl.Op
			for i, op := range ops {
				if set&(1<<i) != 0 {
					scope = append(scope, op)
				}
			}
			if sc, knobs := nccl.ScopeConfig(cfg, scope, version); len(knobs) > 0 {
				forms = append(forms, sc)
			}
		}
		for _, f := range forms {
			if seen[f.Key()] || enablesLL128(f) {
				continue
			}
			seen[f.Key()] = true
			tr := timedTruth(p, w, f)
			if tr.step < anyStep {
				any, anyStep = f, tr.step
			}
			if tr.worst <= 1.05 && tr.step < safeStep {
				safe, safeStep = f, tr.step
			}
		}
	}
	return safe, safeStep, any, anyStep
}

// enablesLL128 reports whether cfg's NCCL_PROTO switches LL128 on, which
// the simulated fabrics' defaults keep off and a study refuses
// (vocab.EndingSwitchesOnDisabled): never a valid answer there.
func enablesLL128(cfg nccl.Config) bool {
	v, ok := cfg["NCCL_PROTO"]
	if !ok {
		return false
	}
	for _, entry := range strings.Split(v, ";") {
		if i := strings.Index(entry, ":"); i >= 0 {
			entry = entry[i+1:]
		}
		list, excl := strings.CutPrefix(entry, "^")
		has := false
		for _, p := range strings.Split(list, ",") {
			has = has || strings.EqualFold(p, "LL128")
		}
		if has != excl {
			return true
		}
	}
	return false
}

// timedQuality is one row of the table: over seeds, how often a study
// recommends a config truly > 5 % slower at a call of the workload, how
// often it ships the best safe setting (its true time per step within 5 %
// of bestSafe's; keeping the defaults counts with the defaults' time),
// how often it recommends any change, and its median launches.
type timedQuality struct {
	seeds, unsafe, best, changed int
	// afterRefusal counts recommendations made by a confirmation that
	// followed a refusal; noOp those carrying a knob that changes nothing
	// (noOpKnob).
	afterRefusal, noOp int
	launches           []int
	endings            map[string]int
	// shipped is each seed's answer (the defaults when it kept them), for
	// a caller that judges it against another truth (the unseen probe's
	// called sizes).
	shipped []nccl.Config
	// results are each seed's study, for a caller that explains a miss
	// (the unseen probe's -unseen-explain).
	results []*Result
}

func (q timedQuality) medianLaunches() float64 {
	s := append([]int(nil), q.launches...)
	sort.Ints(s)
	if len(s) == 0 {
		return 0
	}
	return float64(s[len(s)/2])
}

func (q timedQuality) String() string {
	var ends []string
	for e, n := range q.endings {
		ends = append(ends, fmt.Sprintf("%s %d", e, n))
	}
	sort.Strings(ends)
	return fmt.Sprintf("unsafe %d/%d, best safe %d/%d, changed %d/%d (%d after a refusal), with a no-op knob %d, median launches %.0f, endings: %s",
		q.unsafe, q.seeds, q.best, q.seeds, q.changed, q.seeds, q.afterRefusal, q.noOp, q.medianLaunches(), strings.Join(ends, ", "))
}

// runTimedQuality runs the fabric's study over seeds: timed (--calls:
// objective Σ calls × time, every call guarded at its own size, no other
// guard) or, band-only, today's --band study of the all-reduce sizes'
// hull with its default guard.
func runTimedQuality(t testing.TB, f timedFabric, timed bool, first int64, seeds int) timedQuality {
	t.Helper()
	w := f.workload(t)
	prof := f.launcher(t, 0).prof
	_, safeStep, _, _ := bestSafe(prof, w, DefaultSpace(), prof.NCCLVersion)
	q := timedQuality{seeds: seeds, endings: map[string]int{}}
	for seed := first; seed < first+int64(seeds); seed++ {
		o := DefaultOptions()
		o.Seed = seed
		if timed {
			o.Workload, o.Op, o.Band = w, w[0].Op, Hull(w)
			o.Guard, o.GuardOps = DefaultGuardFor(w), DefaultGuardOps(w)
			o.ScopeLists = true
		} else {
			var ar nccl.Workload
			for _, p := range w {
				if p.Op == nccl.AllReduce {
					ar = append(ar, p)
				}
			}
			o.Band, o.Op = Hull(ar), nccl.AllReduce
			o.Guard = DefaultGuard(o.Band)
		}
		o.Budget = o.DefaultBudget()
		l := f.launcher(t, seed)
		res, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil)
		if err != nil {
			t.Fatalf("%s seed %d: %v", f.name, seed, err)
		}
		tr := timedTruth(prof, w, res.Env())
		if tr.worst > 1.05 {
			q.unsafe++
			if testing.Verbose() {
				t.Logf("%s timed=%v seed %d: %s is %.1f%% slower at %s (%s)", f.name, timed, seed, res.Env(), 100*(tr.worst-1), tr.at, res.Ending)
			}
		}
		if tr.bestSafe(safeStep) {
			q.best++
		} else if testing.Verbose() && tr.worst <= 1.05 {
			t.Logf("%s timed=%v seed %d: %s (%s) is ×%.2f of the best safe step time; refused %d", f.name, timed, seed, res.Env(), res.Ending, tr.step/safeStep, len(res.Refused))
		}
		if res.Recommend {
			q.changed++
			if len(res.Refused) > 0 {
				q.afterRefusal++
			}
			if k := noOpKnob(prof, w, res.Env()); k != "" {
				q.noOp++
				if testing.Verbose() {
					t.Logf("%s timed=%v seed %d: %s carries %s, which changes no call", f.name, timed, seed, res.Env(), k)
				}
			}
			if f.null && testing.Verbose() {
				t.Logf("%s timed=%v seed %d: recommended %s after %d refusals: %s", f.name, timed, seed, res.Env(), len(res.Refused), res.Reason)
			}
		}
		q.launches = append(q.launches, res.Launches)
		q.endings[res.Ending]++
		q.shipped = append(q.shipped, res.Env())
		q.results = append(q.results, res)
	}
	return q
}

// noOpKnob is a knob of cfg (of two or more) without which the simulated
// NCCL truly makes the same choice, channels included, at every (op, size)
// w calls (calledSizes); "" when every knob changes some call.
func noOpKnob(p *sim.Profile, w nccl.Workload, cfg nccl.Config) string {
	if len(cfg) < 2 {
		return ""
	}
	for _, k := range cfg.Names() {
		same := true
		for _, part := range w {
			sizes, _ := calledSizes(part)
			for _, size := range sizes {
				a, errA := p.ChooseOp(part.Op, cfg, size)
				b, errB := p.ChooseOp(part.Op, without(cfg, k), size)
				same = same && errA == nil && errB == nil && a == b
			}
		}
		if same {
			return k
		}
	}
	return ""
}

// TestTimedFabricsTruth prints each fabric's truth: the best setting,
// and the best safe one, as the quality table judges them.
func TestTimedFabricsTruth(t *testing.T) {
	t.Parallel()
	for _, f := range timedFabrics {
		w := f.workload(t)
		prof := f.launcher(t, 0).prof
		safe, safeStep, any, anyStep := bestSafe(prof, w, DefaultSpace(), prof.NCCLVersion)
		def := timedTruth(prof, w, nccl.Config{})
		tr := timedTruth(prof, w, any)
		t.Logf("%s: defaults %.1f µs/step; best %s %.1f (×%.2f, worst %.2f at %s); best safe %s %.1f (×%.2f)",
			f.name, def.step, any, anyStep, def.step/anyStep, tr.worst, tr.at, safe, safeStep, def.step/safeStep)
	}
}

var timedFabrics = []timedFabric{
	{name: "loopback: the all-reduce winner slows alltoall", profile: "h200-loopback", ranks: 4,
		calls: []string{"all_reduce:10240:760", "all_reduce:81920:100", "all_reduce:327680:50", "alltoall:8M:2"}},
	// Only a per-function form is safe: NCCL_ALGO=Tree speeds all-reduce,
	// but NCCL runs Tree for all-reduce only, so the global list fails the
	// all-gathers (NCCL 2.24+), and the one-channel cap slows them.
	{name: "per-function only: global Tree fails all_gather", profile: "testdata/perfunction-only.json",
		calls: []string{"all_reduce:10240:760", "all_reduce:81920:100", "all_reduce:327680:50", "all_gather:4M:20"}},
	{name: "flat: nothing helps", profile: "flat", null: true,
		calls: []string{"all_reduce:10240:760", "all_reduce:81920:100", "all_gather:1M:20"}},
}

// TestTimedQuality: guarded timed-workload studies over seeds ship the
// best safe setting in at least 80 % of them and nothing unsafe, and on
// the null fabric nothing beyond the confirmation's level, never after a
// refusal. Beside them, for the record, the
// band-only study of the same all-reduce sizes. TIMED_QUALITY_SEEDS sets
// the seeds (default 6; the table in the report used 100).
func TestTimedQuality(t *testing.T) {
	t.Parallel()
	seeds := 6
	if testing.Short() {
		seeds = 3
	}
	if s, err := strconv.Atoi(os.Getenv("TIMED_QUALITY_SEEDS")); err == nil && s > 0 {
		seeds = s
	}
	for _, f := range timedFabrics {
		q := runTimedQuality(t, f, true, 1, seeds)
		t.Logf("%s, timed: %s", f.name, q)
		if os.Getenv("TIMED_QUALITY_SEEDS") != "" {
			b := runTimedQuality(t, f, false, 1, seeds)
			t.Logf("%s, band-only: %s", f.name, b)
		}
		if q.unsafe > 0 {
			t.Errorf("%s: %d of %d timed studies recommended a setting truly slower at a call", f.name, q.unsafe, seeds)
		}
		if q.noOp > 0 {
			t.Errorf("%s: %d of %d timed studies recommended a knob that changes no call", f.name, q.noOp, seeds)
		}
		// On the null fabric a confirmation recommends at most at its level
		// (alpha 0.05: 1 of 20 seeds seen, from a first confirmation); one
		// after a refusal would be the refusal loop's own false positive.
		if f.null && (q.afterRefusal > 0 || float64(q.changed) > 0.05*float64(seeds)+1) {
			t.Errorf("%s: %d of %d timed studies recommended a change on a fabric where nothing helps (%d after a refusal)", f.name, q.changed, seeds, q.afterRefusal)
		}
		// At least 80 % of the seeds; with -short's 3 seeds that would ask
		// for all 3 of a rate measured at 86 % over 100 (a coin flip's
		// worth of failures), so one miss is allowed there.
		if need := (8*seeds + 9) / 10; q.best < need && !(testing.Short() && q.best >= seeds-1) {
			t.Errorf("%s: the best safe setting in %d of %d timed studies, want at least 80 %%", f.name, q.best, seeds)
		}
	}
}
