package stored

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// Field is one "key: value" line of a study's description.
type Field struct {
	Key, Value string
}

// Settings describes what a study asked for and where it ran, one field
// per line as `nccltune show` prints them; fields with nothing to say are
// left out. Times are shown in loc.
func Settings(s *store.Study, loc *time.Location) []Field {
	var out []Field
	add := func(key, value string) {
		if value != "" {
			out = append(out, Field{key, value})
		}
	}
	kind := s.Kind
	if s.Simulated {
		kind += " on a SIMULATED fabric"
		if s.Launch.SimProfile != "" {
			kind += " (" + s.Launch.SimProfile + ")"
		}
		kind += ", not a measurement"
	}
	add("study", fmt.Sprintf("%s: %s", s.Name, kind))
	status := s.Status
	if s.Reason != "" {
		status += ": " + s.Reason
	}
	add("status", status)
	add("created", fmt.Sprintf("%s, updated %s", s.Created.In(loc).Format("2006-01-02 15:04:05"), s.Updated.In(loc).Format("2006-01-02 15:04:05")))
	switch calls := store.WorkloadText(s); {
	case calls != "": // never the band around its sizes
		add("workload", calls+" (OP BYTES×CALLS; the objective is the time per step, Σ calls × time)")
		add("measured at", MeasuredAtText(s.Parts()))
		if len(s.GuardSizes) > 0 {
			add("guard", SizesText(s.GuardSizes))
		}
	case s.Parts().ScoredByRounds():
		add("band", BandText(s))
		add("workload", s.Parts().String()+" (OP:BAND:WEIGHT, scored together)")
	default:
		add("band", BandText(s))
		add("collective", s.Collective)
	}
	if len(s.GuardOps) > 0 {
		add("guarded ops", nccl.JoinOps(s.GuardOps))
	}
	add("space", SpaceText(s.Space))
	add("base env", strings.Join(nccl.Config(s.BaseEnv).Env(), " "))
	add("launch", LaunchText(s.Launch))
	if s.Launch.SimProfile != "" {
		add("simulator", fmt.Sprintf("profile %s, noise %g, seed %d", s.Launch.SimProfile, s.Launch.SimNoise, s.Launch.SimSeed))
	}
	add("fabric", FabricText(s.Platform))
	if s.Platform.TransportSummary != "" {
		add("data paths", s.Platform.TransportSummary)
	}
	if s.Kind == vocab.KindSearch || s.Seed != 0 {
		add("seed", strconv.FormatInt(s.Seed, 10))
	}
	add("budget", BudgetText(s.Budget))
	add("measured", texttable.Plural(s.Trials, "trial")+", "+texttable.Plural(s.Launches, "launch"))
	return out
}

// BatchText says how many of a study's launches were shares of batch
// launches, "" when none were; for a simulated study, also their modelled
// wall time.
func BatchText(launches []*store.Launch) string {
	batches := map[int]bool{}
	shares, simulated := 0, false
	var wall time.Duration
	for _, l := range launches {
		if l.Batch != nil {
			shares, batches[l.Batch.Seq], simulated, wall = shares+1, true, simulated || l.Simulated, wall+l.Batch.Modelled
		}
	}
	if shares == 0 {
		return ""
	}
	text := fmt.Sprintf("%s from %s (several configs in one process each, exploring; the confirmation's launches are their own)",
		texttable.Plural(shares, "launch"), texttable.Plural(len(batches), "batch launch"))
	if simulated {
		text += fmt.Sprintf("; their modelled wall time %s (SIMULATED)", wall.Round(100*time.Millisecond))
	}
	return text
}

// BandText is "512K-4M; sizes 512K 1M 2M 4M; guard 256M".
func BandText(s *store.Study) string {
	var parts []string
	if s.Band != "" {
		parts = append(parts, s.Band)
	}
	if len(s.Sizes) > 0 {
		parts = append(parts, "sizes "+SizesText(s.Sizes))
	}
	if len(s.GuardSizes) > 0 {
		parts = append(parts, "guard "+SizesText(s.GuardSizes))
	}
	return strings.Join(parts, "; ")
}

// WorkloadLine names a timed study's workload wherever a band would name
// a study: "workload all_reduce 10240×760 (OP BYTES×CALLS), measured at
// all_reduce 8K". "" for a study that is not timed.
func WorkloadLine(s *store.Study) string {
	calls := store.WorkloadText(s)
	if calls == "" {
		return ""
	}
	return "workload " + calls + " (OP BYTES×CALLS), measured at " + MeasuredAtText(s.Parts())
}

// Call is one call of a timed workload as the JSON documents hold it.
type Call struct {
	Op         nccl.Op `json:"op"`
	Bytes      int64   `json:"bytes"`
	Calls      float64 `json:"calls"`
	MeasuredAt int64   `json:"measured_at"`
}

// Calls are a timed study's calls, per op and size in the workload's
// order; [] for a study that is not timed. An old part without
// LoggedCalls is one call at the size it is measured at.
func Calls(s *store.Study) []Call {
	out := []Call{}
	w := s.Parts()
	if !w.Timed() {
		return out
	}
	for _, p := range w {
		op, at := p.Op.OrAllReduce(), p.Band.Min
		if len(p.LoggedCalls) != len(p.Logged) || len(p.Logged) == 0 {
			out = append(out, Call{Op: op, Bytes: at, Calls: p.Calls, MeasuredAt: at})
			continue
		}
		for i, b := range p.Logged {
			out = append(out, Call{Op: op, Bytes: b, Calls: p.LoggedCalls[i], MeasuredAt: at})
		}
	}
	return out
}

// MeasuredAtText is where a timed workload's calls are measured, per op:
// "all_reduce 8K 64K 2M; all_gather 1M".
func MeasuredAtText(w nccl.Workload) string {
	var ops []nccl.Op
	at := map[nccl.Op][]int64{}
	for _, p := range w {
		o := p.Op.OrAllReduce()
		if at[o] == nil {
			ops = append(ops, o)
		}
		at[o] = append(at[o], p.Band.Sizes()...)
	}
	out := make([]string, len(ops))
	for i, o := range ops {
		slices.Sort(at[o])
		out[i] = string(o) + " " + SizesText(slices.Compact(at[o]))
	}
	return strings.Join(out, "; ")
}

// SizesText is "512K 1M 2M".
func SizesText(sizes []int64) string { return nccl.FormatSizes(sizes, " ") }

// SpaceText is "NCCL_MAX_NCHANNELS: unset 2 4 8 | NCCL_PROTO: …"; an
// empty choice means the knob is left to NCCL.
func SpaceText(space map[string][]string) string {
	knobs := slices.Sorted(maps.Keys(space))
	parts := make([]string, len(knobs))
	for i, k := range knobs {
		choices := make([]string, len(space[k]))
		for j, c := range space[k] {
			choices[j] = cmp.Or(c, "unset")
		}
		parts[i] = k + ": " + strings.Join(choices, " ")
	}
	return strings.Join(parts, " | ")
}

// LaunchText is "mpirun, 4 ranks, hosts a,b, bench all_reduce_perf, timeout 2m0s".
func LaunchText(l store.LaunchSettings) string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if l.Launcher != "" {
		add("%s", l.Launcher)
	}
	if l.NP > 0 {
		add("%s", texttable.Plural(l.NP, "rank"))
	}
	if len(l.Hosts) > 0 {
		add("hosts %s", strings.Join(l.Hosts, ","))
	}
	if len(l.MPIArgs) > 0 {
		add("launcher args %s", strings.Join(l.MPIArgs, " "))
	}
	if l.Bench != "" || len(l.BenchArgs) > 0 {
		add("bench %s", strings.TrimSpace(l.Bench+" "+strings.Join(l.BenchArgs, " ")))
	}
	if l.Timeout > 0 {
		add("timeout %s", l.Timeout)
	}
	return strings.Join(parts, ", ")
}

// FabricText is "NCCL 2.28.3, 4 ranks on 4 nodes, NVIDIA GB10, IB, GDR off".
func FabricText(f store.Platform) string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if f.NCCLVersion != "" {
		add("NCCL %s", f.NCCLVersion)
	}
	if f.TestsVersion != "" {
		add("nccl-tests %s", f.TestsVersion)
	}
	switch {
	case f.Ranks > 0 && f.Nodes > 0:
		add("%s on %s", texttable.Plural(f.Ranks, "rank"), texttable.Plural(f.Nodes, "node"))
	case f.Ranks > 0:
		add("%s", texttable.Plural(f.Ranks, "rank"))
	}
	if f.GPU != "" {
		add("%s", f.GPU)
	}
	if f.Transport != "" {
		add("%s", f.Transport)
	}
	if f.GDR != nil {
		add("GDR %s", onOff(*f.GDR))
	}
	if len(f.Hosts) > 0 {
		add("hosts %s", strings.Join(f.Hosts, ","))
	}
	return strings.Join(parts, ", ")
}

// FabricFacts lists every fact of the fabric fingerprint, saying "not
// recorded" for those the logs did not give.
func FabricFacts(f store.Platform) []Field {
	or := func(s string) string { return cmp.Or(s, "not recorded") }
	num := func(n int) string {
		if n <= 0 {
			return "not recorded"
		}
		return strconv.Itoa(n)
	}
	gdr := "not recorded"
	switch {
	case f.GDR != nil:
		gdr = onOff(*f.GDR)
	case len(f.Routes) > 0 && !benchfmt.TransportNetwork(f.Transport):
		gdr = "not used: the network carried no data"
	}
	transport := "not recorded (no debug launch: NCCL prints the channel lines that tell it only with NCCL_DEBUG=INFO; nccltune doctor shows it)"
	if f.Transport != "" {
		transport = f.Transport
		if f.TransportSummary != "" {
			transport += ": " + f.TransportSummary
		}
	}
	return []Field{
		{"NCCL version", or(f.NCCLVersion)},
		{"nccl-tests version", or(f.TestsVersion)},
		{"ranks", num(f.Ranks)},
		{"nodes", num(f.Nodes)},
		{"GPU", or(f.GPU)},
		{"transport", transport},
		{"GPUDirect RDMA (GDR)", gdr},
		{"hosts", or(strings.Join(f.Hosts, ", "))},
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// BudgetText is "60 launches, 1h0m0s".
func BudgetText(b store.Budget) string {
	var parts []string
	if b.Trials > 0 {
		parts = append(parts, texttable.Plural(b.Trials, "trial"))
	}
	if b.Launches > 0 {
		parts = append(parts, texttable.Plural(b.Launches, "launch"))
	}
	if b.Time > 0 {
		parts = append(parts, b.Time.String())
	}
	return strings.Join(parts, ", ")
}
