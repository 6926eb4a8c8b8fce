package benchfmt

import (
	"fmt"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Result is everything parsed from one nccl-tests run's output (text or
// JSON), including NCCL_DEBUG facts when log lines were mixed in.
type Result struct {
	// Collective is the test's collective, e.g. "all_reduce".
	Collective string `json:"collective"`
	// Instrument is InstrumentTorch for the torch instrument's output, ""
	// for nccl-tests (and the simulated fabric).
	Instrument   string `json:"instrument,omitempty"`
	TestsVersion string `json:"tests_version,omitempty"`
	// NCCLVersion is "2.28.3" style.
	NCCLVersion string `json:"nccl_version"`
	// NRanks counts the "#  Rank" device lines (or the JSON's devices).
	NRanks  int      `json:"nranks"`
	Devices []Device `json:"devices,omitempty"`
	// Rows are the table rows in output order; with -N k Row.Cycle counts
	// repetitions from 0.
	Rows []Row `json:"rows"`
	// AvgBusBW and OutOfBounds are the footer's (0 and nil without it).
	AvgBusBW    float64 `json:"avg_busbw"`
	OutOfBounds *int    `json:"out_of_bounds"`
	// Simulated: the output came from nccltune's simulated fabric, with
	// profile SimProfile.
	Simulated  bool   `json:"simulated"`
	SimProfile string `json:"sim_profile,omitempty"`
	// Facts are what NCCL_DEBUG lines revealed; nil without any.
	Facts *Facts `json:"facts,omitempty"`
	// Errors are the failure messages found in the output.
	Errors []string `json:"errors,omitempty"`
	// Complete is true when the footer was seen: output that stops early
	// is a failed launch.
	Complete bool `json:"complete"`
	// Runs counts the runs the output holds: more than one means several
	// runs were saved into one file, and their rows are mixed.
	Runs int `json:"-"`
	// Env is the NCCL_* variables nccl-tests' -J recorded; nil when it does not say.
	Env map[string]string `json:"-"`
	// Notes are what the parser noticed and tolerated.
	Notes []string `json:"notes,omitempty"`
}

// Op is the collective the output measured, read from its program name
// ("all_gather_perf" is AllGather); "" when the output names none or a
// program that is not one of nccl-tests' collectives.
func (r *Result) Op() nccl.Op {
	if r == nil || r.Collective == "" {
		return ""
	}
	op, _ := nccl.ParseOp(r.Collective)
	return op
}

// OpMismatch says why r cannot be read as op want: it names the program of
// another collective. "" when it is of want, want is "", or the output
// names no program (older nccl-tests print none).
func (r *Result) OpMismatch(want nccl.Op) string {
	got := r.Op()
	if want == "" || got == "" || got == want {
		return ""
	}
	return fmt.Sprintf("--op %s: the output is of %s (its program is %s); leave out --op, or pass --op %s", want, got, got.Benchmark(), got)
}

// Device is one "#  Rank  0 Group  0 Pid 1397 on fakehost0 device 0 [0000:00:06] NVIDIA H200" line.
type Device struct {
	Rank     int    `json:"rank"`
	Host     string `json:"host"`
	Device   int    `json:"device"`
	BusID    string `json:"bus_id,omitempty"`
	Name     string `json:"name"`
	Pid      int    `json:"pid,omitempty"`
	GroupIdx int    `json:"group,omitempty"`
}

// Row is one size's line of the results table.
type Row struct {
	Bytes int64  `json:"bytes"`
	Count int64  `json:"count"`
	Type  string `json:"type"`
	Redop string `json:"redop"`
	Root  int    `json:"root"`
	Cycle int    `json:"cycle"`
	// Out and In are the out-of-place and in-place columns (In nil when none).
	Out Measure  `json:"out_of_place"`
	In  *Measure `json:"in_place,omitempty"`
}

// Measure is one side (out-of-place or in-place) of a row.
type Measure struct {
	TimeUS float64 `json:"time_us"`
	AlgBW  float64 `json:"algbw"`
	BusBW  float64 `json:"busbw"`
	// Wrong is the #wrong column; nil when the output says N/A (-c 0).
	Wrong *int64 `json:"wrong"`
	// Iter holds nccl-tests -I 1's per-iteration statistics, nil without them.
	Iter *IterStats `json:"iter,omitempty"`
}

// IterStats are nccl-tests' per-iteration columns (-I 1) and, from the JSON
// output, every iteration's time; the torch instrument gives samples alone.
type IterStats struct {
	MinUS   float64   `json:"min_us"`
	MaxUS   float64   `json:"max_us"`
	P99US   float64   `json:"p99_us"`
	CVPct   float64   `json:"cv_pct"`
	TimesUS []float64 `json:"times_us,omitempty"`
}

// Facts are what NCCL_DEBUG=INFO lines say about the fabric and NCCL's choices.
type Facts struct {
	NCCLVersion string `json:"nccl_version,omitempty"`
	NRanks      int    `json:"nranks,omitempty"`
	NNodes      int    `json:"nnodes,omitempty"`
	// Transport is what carries data between the ranks, from the channel
	// lines: the network's name ("IB", "IB+Socket") when the network
	// carries data between any two ranks, else "P2P", "SHM" or "P2P+SHM".
	// Without channel lines it is the network NCCL initialised on more
	// than one node, and "" on one node.
	Transport string `json:"transport,omitempty"`
	// Network is the network NCCL initialised, whether or not it carries data.
	Network string `json:"network,omitempty"`
	// Routes sum up what carries data between which ranks, one per kind
	// (and network); Paths are the same per directed rank pair.
	Routes     []Route     `json:"routes,omitempty"`
	Paths      []Path      `json:"paths,omitempty"`
	RankPlaces []RankPlace `json:"rank_places,omitempty"`
	// NetRoutes are the NET channel lines' channel-to-NIC routes (NetRoute),
	// sorted: the same routes show NCCL_CROSS_NIC changed no NIC.
	NetRoutes []string `json:"net_routes,omitempty"`
	// NVLink: NCCL's topology shows an NVLink on a GPU.
	NVLink bool `json:"nvlink,omitempty"`
	// P2PBlocked are NCCL's lines saying it could not enable P2P.
	P2PBlocked []string `json:"p2p_blocked,omitempty"`
	// NICs are the devices NCCL's NET transport said it uses; none when the
	// network carries no data.
	NICs []string `json:"nics,omitempty"`
	// NICsPerHost is the most network devices one rank listed for its own
	// host; 0 in records from before it was read (then len(NICs) stands in).
	NICsPerHost int `json:"nics_per_host,omitempty"`
	// GDR is nil when unseen or when the network carries no data.
	GDR *bool `json:"gdr"`
	// Channels is the number of collective channels.
	Channels int `json:"channels,omitempty"`
	// Choices are NCCL's TUNING decisions, one per (collective, bytes).
	Choices []Choice `json:"choices,omitempty"`
	// Tuning is NCCL's TUNING table: collective → algorithm → protocol →
	// bandwidth (names normalised); 0 means disabled or no such path.
	Tuning map[string]map[string]map[string]float64 `json:"tuning,omitempty"`
	// Tuner is what the log says of a tuner plugin; nil when it shows none.
	Tuner *TunerPlugin `json:"tuner_plugin,omitempty"`
	// NICErrors are the IB transport's failing devices, once per host,
	// device and event.
	NICErrors []NICError `json:"nic_errors,omitempty"`
	// Hosts are the host names seen in log line prefixes.
	Hosts []string `json:"hosts,omitempty"`
	// Warnings are NCCL WARN lines, verbatim minus the prefix.
	Warnings []string `json:"warnings,omitempty"`
}

// Choice is one "AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}" line.
type Choice struct {
	Collective string `json:"collective"`
	Bytes      int64  `json:"bytes"`
	Algo       string `json:"algo"`
	Proto      string `json:"proto"`
	ChannelLo  int    `json:"channel_lo"`
	ChannelHi  int    `json:"channel_hi"`
	// Channels is ChannelHi-ChannelLo+1.
	Channels int `json:"channels"`
}

// PlanStep is NCCL's choice for one size, as a replay (internal/sim) records it.
type PlanStep struct {
	Bytes    int64  `json:"bytes"`
	Algo     string `json:"algo"`
	Proto    string `json:"proto"`
	Channels int    `json:"channels"`
}

// Invalid reports why a result cannot be trusted as a measurement (#wrong
// or out-of-bounds values); "" for a valid result.
func (r *Result) Invalid() string {
	var wrong []string
	for _, row := range r.Rows {
		for _, m := range []*Measure{&row.Out, row.In} {
			if m != nil && m.Wrong != nil && *m.Wrong > 0 {
				wrong = append(wrong, fmt.Sprintf("%s (#wrong %d)", nccl.FormatSize(row.Bytes), *m.Wrong))
				break
			}
		}
	}
	switch {
	case len(wrong) > 0:
		return "wrong results at " + strings.Join(wrong, ", ") + ": never use this config; it corrupts data"
	case r.OutOfBounds != nil && *r.OutOfBounds > 0:
		return fmt.Sprintf("%d out-of-bounds values reported: the results cannot be trusted", *r.OutOfBounds)
	}
	return ""
}
