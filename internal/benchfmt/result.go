package benchfmt

import (
	"fmt"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Result is everything parsed from one nccl-tests run's output (text or
// JSON), including NCCL_DEBUG facts when log lines were mixed in.
type Result struct {
	// Collective is the test's collective, e.g. "all_reduce" for
	// all_reduce_perf.
	Collective string `json:"collective"`
	// Instrument is InstrumentTorch for the torch instrument's output, ""
	// for nccl-tests (and the simulated fabric, which prints as nccl-tests).
	Instrument string `json:"instrument,omitempty"`
	// TestsVersion is nccl-tests' own version, e.g. "2.19.6".
	TestsVersion string `json:"tests_version,omitempty"`
	// NCCLVersion is "2.28.3" style, from the header's nccl-library code,
	// the JSON's nccl_version, or the NCCL INFO log.
	NCCLVersion string `json:"nccl_version"`
	// NRanks counts the "#  Rank" device lines (or the JSON's devices).
	NRanks  int      `json:"nranks"`
	Devices []Device `json:"devices,omitempty"`
	// Rows are the table rows in output order. With -N k the sweep repeats
	// and Row.Cycle counts repetitions from 0.
	Rows []Row `json:"rows"`
	// AvgBusBW is the footer's "Avg bus bandwidth"; 0 when absent.
	AvgBusBW float64 `json:"avg_busbw"`
	// OutOfBounds is the footer's count of out-of-bounds values, nil when
	// the footer is missing.
	OutOfBounds *int `json:"out_of_bounds"`
	// Simulated is true when the output came from nccltune's simulated
	// fabric (it says so in its header).
	Simulated bool `json:"simulated"`
	// SimProfile names the simulated profile, when Simulated.
	SimProfile string `json:"sim_profile,omitempty"`
	// Facts are what NCCL_DEBUG lines revealed, if any were present.
	Facts *Facts `json:"facts,omitempty"`
	// Errors are failure messages found in the output: nccl-tests'
	// "Test NCCL failure …" lines, NCCL WARN lines, MPI's error blocks.
	Errors []string `json:"errors,omitempty"`
	// Complete is true when the footer ("Collective test concluded" or the
	// JSON end) was seen: output that stops early is a failed launch.
	Complete bool `json:"complete"`
	// Runs counts the runs the output holds ("Collective test starting"
	// lines; a JSON document is one): more than one means several runs
	// were saved into one file, and their rows are mixed.
	Runs int `json:"-"`
	// Env is the NCCL_* variables the run recorded (nccl-tests' -J
	// "env"), nil when the output does not say.
	Env map[string]string `json:"-"`
	// Notes are what the parser noticed and tolerated: a row it skipped
	// because its columns were cut off, "nan" read as 0, an unknown JSON
	// version.
	Notes []string `json:"notes,omitempty"`
}

// Op is the collective the output measured, read from its program name
// ("all_gather_perf" is AllGather); "" when the output names none or a
// program that is not one of nccl-tests' collectives.
func (r *Result) Op() nccl.Op {
	if r == nil || r.Collective == "" {
		return ""
	}
	op, err := nccl.ParseOp(r.Collective)
	if err != nil {
		return ""
	}
	return op
}

// OpMismatch says why r cannot be read as op want: it names the program
// of another collective. "" when it is of want, when want is "", or when
// the output names no program (older nccl-tests print none): the
// caller then reads it as want. import and parse --op share this rule.
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
	// Out and In are the out-of-place and in-place columns. In is nil when
	// the output has no in-place columns.
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
	// Iter holds the per-iteration statistics of nccl-tests -I 1, nil
	// without them.
	Iter *IterStats `json:"iter,omitempty"`
}

// IterStats are nccl-tests' per-iteration columns (-I 1) and, from the
// JSON output, every iteration's time; the torch instrument's are its
// samples alone, the columns 0 (model.IterColumns computes them).
type IterStats struct {
	MinUS   float64   `json:"min_us"`
	MaxUS   float64   `json:"max_us"`
	P99US   float64   `json:"p99_us"`
	CVPct   float64   `json:"cv_pct"`
	TimesUS []float64 `json:"times_us,omitempty"`
}

// Facts are what NCCL_DEBUG=INFO lines (with subsystems INIT, ENV, NET,
// TUNING) say about the fabric and NCCL's choices.
type Facts struct {
	NCCLVersion string `json:"nccl_version,omitempty"`
	NRanks      int    `json:"nranks,omitempty"`
	NNodes      int    `json:"nnodes,omitempty"`
	// Transport is what carries data between the ranks, from the channel
	// connection lines ("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"): the
	// network's name ("IB", "Socket", a plugin's name; "IB+Socket" if
	// both) when the network carries data between any two ranks, else
	// "P2P" (NVLink or PCIe within a host), "SHM" (host shared memory) or
	// "P2P+SHM". Without channel lines it is the network NCCL initialised
	// ("Using network …") on more than one node, and "" on one node (where
	// the network carries nothing). "" when unseen.
	Transport string `json:"transport,omitempty"`
	// Network is the network NCCL initialised ("Using network IB"),
	// whether or not it carries data.
	Network string `json:"network,omitempty"`
	// Routes sum up what carries data between which ranks, one per kind
	// (P2P, SHM, and NET per network); Paths are the same per directed
	// rank pair. RankPlaces are the ranks' hosts and GPUs.
	Routes     []Route     `json:"routes,omitempty"`
	Paths      []Path      `json:"paths,omitempty"`
	RankPlaces []RankPlace `json:"rank_places,omitempty"`
	// NetRoutes are the network connections' channel-to-NIC routes, one
	// per channel line of NCCL's NET transport (NetRoute: "00/0 0[0]-1[0]
	// send IB/1"), sorted: NCCL_CROSS_NIC changes which NIC a channel
	// goes through, and a log with the same routes shows it changed none.
	NetRoutes []string `json:"net_routes,omitempty"`
	// NVLink: NCCL's topology (GRAPH lines) shows an NVLink on a GPU, to
	// another GPU or to an NVSwitch.
	NVLink bool `json:"nvlink,omitempty"`
	// P2PBlocked are NCCL's lines saying it could not enable P2P between
	// two GPUs ("P2P is disabled between NVLINK connected GPUs …").
	P2PBlocked []string `json:"p2p_blocked,omitempty"`
	// NICs are the devices NCCL's NET transport said it uses, e.g.
	// "mlx5_0:1/RoCE" or "lo:127.0.0.1<0>"; none when the channel lines
	// show that the network carries no data.
	NICs []string `json:"nics,omitempty"`
	// NICsPerHost is the most network devices one rank listed for its own
	// host; 0 in records from before it was read (then len(NICs) stands in).
	NICsPerHost int `json:"nics_per_host,omitempty"`
	// GDR is from "Connected all rings, use ring PXN 0 GDR 0" or the
	// "/GDRDMA" suffix of channel lines; nil when unseen or when the
	// network carries no data.
	GDR *bool `json:"gdr"`
	// Channels is the number of collective channels ("2 coll channels" or
	// the count of "Channel NN/MM" ring lines).
	Channels int `json:"channels,omitempty"`
	// Choices are per-size algorithm/protocol/channel decisions from
	// NCCL_DEBUG_SUBSYS=TUNING lines, one per distinct (collective, bytes).
	Choices []Choice `json:"choices,omitempty"`
	// Tuning is NCCL's TUNING table (NCCL_DEBUG_SUBSYS=TUNING, rank 0):
	// collective → algorithm → protocol → bandwidth, names normalised
	// (nccl.NormName); a bandwidth of 0 means NCCL disabled that choice or
	// has no such path. nil when the log has no table.
	Tuning map[string]map[string]map[string]float64 `json:"tuning,omitempty"`
	// Tuner is what the log says of a tuner plugin (NCCL_TUNER_PLUGIN):
	// loaded or not, its configs, what it did per call, a crash inside it;
	// nil when the log shows none.
	Tuner *TunerPlugin `json:"tuner_plugin,omitempty"`
	// NICErrors are the IB transport's lines saying an RDMA device or
	// port failed (an async error event, a completion with an error), once
	// per host, device and event; nil when none.
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

// PlanStep is NCCL's choice for one size, as a replay (internal/sim)
// records it in its plan.
type PlanStep struct {
	Bytes    int64  `json:"bytes"`
	Algo     string `json:"algo"`
	Proto    string `json:"proto"`
	Channels int    `json:"channels"`
}

// Invalid reports why a result cannot be trusted as a measurement: a
// non-zero #wrong on any row or out-of-bounds values. It returns "" for a
// valid result.
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
