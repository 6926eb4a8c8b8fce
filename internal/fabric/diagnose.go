package fabric

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

// Warning codes. They are stable: scripts and tests match on them.
const (
	CodeSocketFallback  = "socket-fallback"  // TCP sockets where RDMA was expected
	CodeSocketTransport = "socket-transport" // TCP sockets on purpose or for want of RDMA
	CodeGDROff          = "gdr-off"          // GPUDirect RDMA off on the RDMA transport
	CodeOneNIC          = "one-nic"          // fewer NICs carry traffic than were listed
	CodeNoProgress      = "no-progress"      // no progress within the timeout, or a log stops early
	CodeWrongResults    = "wrong-results"    // #wrong > 0 or out-of-bounds values
	CodeMPIWireup       = "mpi-wireup"       // MPI could not wire its ranks up (docker0)
	CodeLaunchFailed    = "launch-failed"    // the launch failed for another reason
	CodeThrottledLink   = "throttled-link"   // large-message busbw far below the link
	CodeNCCLVersion     = "nccl-version"     // NCCL too old for the GPU
	CodeNoNCCLLog       = "no-nccl-log"      // no NCCL_DEBUG lines to diagnose from
	CodeP2PDisabled     = "p2p-shm-disabled" // the env disables P2P or SHM within a host
	CodeP2PUnavailable  = "p2p-unavailable"  // NVLink (or failed P2P) yet no P2P, nothing disabling it
	CodeMixedFabric     = "mixed-fabric"     // some ranks of one host talk over the network
)

// Warning is one trap found, with its evidence and the fix.
// Code is one of the Code* constants; Message names the evidence and the
// cause; Fix is what to change, as the field found it.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// Context is what the caller knows about the launch besides its output.
type Context struct {
	// BaseEnv is the environment the launch was given; NCCL's own "set by
	// environment" lines add to it.
	BaseEnv map[string]string
	// LinkGbps is the link speed per rank in Gb/s as the user states it;
	// 0 takes it from the port speeds NCCL logs for the NICs it uses.
	LinkGbps float64
	// Outcome is how the launch ended ("" for a saved log), Reason the
	// runner's reason when not OK, Timeout its limit (0: none).
	Outcome benchfmt.Outcome
	Reason  string
	Timeout time.Duration
}

// SizeBW is one measured size (out-of-place, first cycle).
type SizeBW struct {
	Bytes  int64   `json:"bytes"`
	TimeUS float64 `json:"time_us"`
	AlgBW  float64 `json:"algbw"`
	BusBW  float64 `json:"busbw"`
}

// Link is the link speed the diagnosis compared bandwidths with.
// Gbps is per rank (0 when unknown); Source says where it came from.
type Link struct {
	Gbps   float64 `json:"gbps"`
	Source string  `json:"source,omitempty"`
}

// GBps is the link's payload rate in GB/s (10^9 B/s), as busbw is written.
func (l Link) GBps() float64 { return l.Gbps / 8 }

// Report is what a launch shows about its fabric, and the traps found.
type Report struct {
	Simulated  bool   `json:"simulated"`
	SimProfile string `json:"sim_profile,omitempty"`
	// Outcome and Reason: how the launch ended ("" for a saved log).
	Outcome benchfmt.Outcome `json:"outcome,omitempty"`
	Reason  string           `json:"reason,omitempty"`

	NCCLVersion string `json:"nccl_version"`
	NRanks      int    `json:"nranks"`
	NNodes      int    `json:"nnodes"`
	// GPU is the first device's name from nccl-tests' "Using devices".
	GPU string `json:"gpu,omitempty"`
	// Transport is what carries the data (benchfmt.Facts' Transport): the
	// network's name, else "P2P", "SHM" or "P2P+SHM"; "" when unknown.
	Transport string `json:"transport"`
	// TransportSummary says in words what carries data between which ranks.
	TransportSummary string `json:"transport_summary,omitempty"`
	// Routes group the channel connection lines per kind; Paths list them
	// per directed rank pair.
	Routes []benchfmt.Route `json:"routes"`
	Paths  []benchfmt.Path  `json:"paths,omitempty"`
	// Network is the network NCCL initialised, whether or not it carries data.
	Network string `json:"network,omitempty"`
	// Hosts are the distinct hosts of the ranks.
	Hosts []string `json:"hosts,omitempty"`
	// NICs are the network's devices; empty when it carries no data.
	NICs []string `json:"nics"`
	// MergedNICs: NCCL_IB_MERGE_NICS fused them into one virtual device.
	MergedNICs bool `json:"merged_nics"`
	// GDR is GPUDirect RDMA in use; nil when the log does not say.
	GDR      *bool    `json:"gdr"`
	Channels int      `json:"channels"`
	Rings    []string `json:"rings"`
	// Choices are NCCL's per-size algorithm, protocol and channels.
	Choices []benchfmt.Choice `json:"choices"`
	// TunerPlugin is what the log says of a tuner plugin; nil when none shows.
	TunerPlugin *benchfmt.TunerPlugin `json:"tuner_plugin,omitempty"`
	// Sizes are the measured bandwidths per size.
	Sizes []SizeBW `json:"sizes"`
	Link  Link     `json:"link"`
	// NCCLWarnings are NCCL's own WARN lines and the output's failure lines.
	NCCLWarnings []string  `json:"nccl_warnings,omitempty"`
	Warnings     []Warning `json:"warnings"`
	// HasLog reports whether the output held NCCL_DEBUG lines at all.
	HasLog bool `json:"has_nccl_log"`
}

// Thresholds of the diagnosis.
const (
	// LargeMessage is the smallest size whose bus bandwidth is compared
	// with the link: below it the latency dominates.
	LargeMessage = 32 * nccl.MiB
	// ThrottleFraction: a large-message busbw under this share of the link
	// is no protocol overhead (healthy RDMA reaches 40–90 %).
	ThrottleFraction = 0.25
	// GB10MinNCCL is the first NCCL release with GB10 (sm_121) support.
	GB10MinNCCL = "2.28.9"
)

// Diagnose builds the report of one launch or saved log. res may be nil;
// log is benchfmt.ParseNCCLInit of the same output, nil without NCCL lines.
func Diagnose(res *benchfmt.Result, log *benchfmt.NCCLInit, c Context) Report {
	d := diagnosis{res: res, log: log, c: c, facts: &benchfmt.Facts{}}
	if res != nil && res.Facts != nil {
		d.facts = res.Facts
	}
	if d.log == nil {
		d.log = &benchfmt.NCCLInit{}
	}
	d.fill()
	d.tunerWarnings()
	d.launchWarnings()
	d.nicWarnings()
	d.gpuWarnings()
	d.hostWarnings()
	d.transportWarnings()
	return d.r
}

type diagnosis struct {
	res    *benchfmt.Result
	log    *benchfmt.NCCLInit
	facts  *benchfmt.Facts
	c      Context
	r      Report
	hostOf map[int]string // each rank's host
}

// env returns a variable as the ranks ran with it (NCCL's log) or as the
// launch was given it.
func (d *diagnosis) env(name string) (string, bool) {
	if v, ok := d.log.Env[name]; ok {
		return v, true
	}
	v, ok := d.c.BaseEnv[name]
	return v, ok
}

func (d *diagnosis) warn(code, fix, format string, args ...any) {
	d.r.Warnings = append(d.r.Warnings, Warning{Code: code, Message: fmt.Sprintf(format, args...), Fix: fix})
}

func (d *diagnosis) fill() {
	r, f := &d.r, d.facts
	r.Outcome, r.Reason = d.c.Outcome, d.c.Reason
	r.HasLog = d.res != nil && d.res.Facts != nil
	r.NCCLVersion, r.NRanks, r.NNodes = f.NCCLVersion, f.NRanks, f.NNodes
	r.Transport, r.GDR, r.Channels = f.Transport, f.GDR, f.Channels
	r.Network = f.Network
	r.Routes = append([]benchfmt.Route{}, f.Routes...)
	r.Paths = append([]benchfmt.Path{}, f.Paths...)
	r.TransportSummary = benchfmt.RoutesText(f.Routes)
	r.NICs = append([]string{}, f.NICs...)
	r.Choices = append([]benchfmt.Choice{}, f.Choices...)
	r.Rings = append([]string{}, d.log.Rings...)
	r.MergedNICs = d.log.MergedNICs
	r.NCCLWarnings = append(r.NCCLWarnings, f.Warnings...)
	r.Sizes = []SizeBW{}
	if res := d.res; res != nil {
		r.Simulated, r.SimProfile = res.Simulated, res.SimProfile
		r.NCCLVersion, r.NRanks = cmp.Or(res.NCCLVersion, r.NCCLVersion), cmp.Or(r.NRanks, res.NRanks)
		if len(res.Devices) > 0 {
			r.GPU = res.Devices[0].Name
		}
		for _, row := range res.Rows {
			if row.Cycle == 0 {
				r.Sizes = append(r.Sizes, SizeBW{Bytes: row.Bytes, TimeUS: row.Out.TimeUS, AlgBW: row.Out.AlgBW, BusBW: row.Out.BusBW})
			}
		}
		for _, e := range res.Errors {
			if !slices.Contains(r.NCCLWarnings, strings.TrimPrefix(e, "NCCL WARN ")) {
				r.NCCLWarnings = append(r.NCCLWarnings, e)
			}
		}
	}
	d.placeRanks()
	r.Link = d.link()
}

// link is the stated link speed, else the port speeds of the NICs NCCL
// uses on the first host that lists them.
func (d *diagnosis) link() Link {
	if d.c.LinkGbps > 0 {
		return Link{Gbps: d.c.LinkGbps, Source: "--link-gbps"}
	}
	devs := d.hostDevices()
	if len(devs) == 0 {
		return Link{}
	}
	used := devs
	switch {
	case d.log.MergedNICs:
	case len(d.log.ChannelNetDevs) > 0:
		used = nil
		for _, i := range d.log.ChannelNetDevs {
			if i < len(devs) {
				used = append(used, devs[i])
			}
		}
	default:
		used = devs[:1]
	}
	note := ""
	if len(used) < len(devs) && len(d.log.ChannelNetDevs) == 0 {
		note = " (one port: the log shows no channel lines to tell how many carry traffic)"
	}
	var mbps int
	var parts []string
	for _, n := range used {
		if n.SpeedMbps <= 0 {
			return Link{}
		}
		mbps += n.SpeedMbps
		parts = append(parts, fmt.Sprintf("%s %d Gb/s", n.Name, n.SpeedMbps/1000))
	}
	if mbps == 0 {
		return Link{}
	}
	return Link{Gbps: float64(mbps) / 1000, Source: "port speed NCCL logged for " + strings.Join(parts, " + ") + note}
}

// hostDevices are the RDMA devices NCCL found on the first host it listed
// them for, in NCCL's order (the index of "via NET/IB/N").
func (d *diagnosis) hostDevices() []benchfmt.NetDevice {
	var out []benchfmt.NetDevice
	for _, n := range d.log.IBDevices {
		if len(out) > 0 && n.Host != out[0].Host {
			continue
		}
		out = append(out, n)
	}
	return out
}

// deviceNames are the names of hostDevices.
func (d *diagnosis) deviceNames() []string {
	var names []string
	for _, n := range d.hostDevices() {
		names = append(names, n.Name)
	}
	return names
}

// peak is the highest bus bandwidth measured at sizes of at least from,
// and its size; 0 when none was measured.
func (d *diagnosis) peak(from int64) (bw float64, at int64) {
	for _, s := range d.r.Sizes {
		if s.Bytes >= from && s.BusBW > bw {
			bw, at = s.BusBW, s.Bytes
		}
	}
	return bw, at
}

// launchWarnings: how the launch ended.
func (d *diagnosis) launchWarnings() {
	res := d.res
	if line, ok := d.mpiWireupLine(); ok {
		d.warn(CodeMPIWireup,
			"pin MPI's wire-up to the link both hosts really share: --mpi-arg=--mca --mpi-arg=oob_tcp_if_include --mpi-arg=10.0.0.0/30 "+
				"--mpi-arg=--mca --mpi-arg=btl_tcp_if_include --mpi-arg=10.0.0.0/30 (your link's subnet or interface name), "+
				"and NCCL_SOCKET_IFNAME=<that interface> in --base-env for NCCL's own bootstrap",
			"MPI could not tell its ranks apart and stopped before NCCL started: %q. Both hosts advertise an identical "+
				"interface (docker0's 172.17.0.1/16 on every Docker host), so Open MPI wires up over it and cannot find "+
				"the peer", shorten(line, 220))
	}
	switch {
	case d.c.Outcome == benchfmt.TimedOut:
		d.noProgress(true)
	case d.c.Outcome == "" && res != nil && res.Collective != "" && !res.Complete && len(res.Errors) == 0: // a cut saved log
		d.noProgress(false)
	}
	if res != nil {
		d.wrongResults()
	}
	if d.c.Outcome == benchfmt.Failed && !d.has(CodeMPIWireup) && !d.has(CodeWrongResults) && !d.has(CodeNoProgress) && !d.has(CodeTunerPluginCrash) {
		d.warn(CodeLaunchFailed,
			"fix the cause named here and run nccltune doctor again; the launch's full output is what doctor --log FILE reads",
			"the launch failed: %s", d.c.Reason)
	}
}

// tunerWarnings: a tuner plugin's traps; a SIGSEGV while NCCL_TUNER_PLUGIN
// was set is the plugin's crash even without the log to show it.
func (d *diagnosis) tunerWarnings() {
	tp := d.facts.Tuner
	d.r.TunerPlugin = tp
	d.r.Warnings = append(d.r.Warnings, TunerWarnings(tp, TunerRun{Version: d.r.NCCLVersion, GPU: d.r.GPU, NNodes: d.r.NNodes})...)
	if plugin, ok := d.env("NCCL_TUNER_PLUGIN"); ok && plugin != "" && (tp == nil || tp.Crash == "") &&
		d.c.Outcome == benchfmt.Failed && strings.Contains(d.c.Reason, "signal 11") {
		d.r.Warnings = append(d.r.Warnings, TunerCrashWarning("killed by signal 11 with NCCL_TUNER_PLUGIN="+plugin, d.r.NCCLVersion))
	}
}

// mpiWireupLine finds MPI's complaint that it cannot identify a peer.
func (d *diagnosis) mpiWireupLine() (string, bool) {
	var lines []string
	if d.res != nil {
		lines = append(lines, d.res.Errors...)
	}
	lines = append(lines, d.c.Reason)
	for _, l := range lines {
		low := strings.ToLower(l)
		for _, key := range []string{"cannot find a corresponding process", "received unexpected process identifier",
			"failed to tcp connect", "did not complete the initial handshake", "failed to handshake with a connecting peer"} {
			if strings.Contains(low, key) {
				return l, true
			}
		}
	}
	return "", false
}

func (d *diagnosis) has(code string) bool {
	return slices.ContainsFunc(d.r.Warnings, func(w Warning) bool { return w.Code == code })
}

// noProgress says which step hung: NCCL's initialisation, the first
// collective, or the size after the last row printed.
func (d *diagnosis) noProgress(timedOut bool) {
	what := "the launch made no progress"
	if timedOut && d.c.Timeout > 0 {
		what = fmt.Sprintf("the launch made no progress within the %s timeout and was killed", d.c.Timeout)
	} else if !timedOut {
		what = "the output stops before nccl-tests' closing lines (the run hung or was killed)"
	}
	collectiveFix := "a collective that starts and never ends is the network dropping traffic or a setting this fabric " +
		"cannot run: rerun without forced NCCL_ALGO/NCCL_PROTO values, check the RDMA error counters " +
		"(/sys/class/infiniband/*/ports/1/hw_counters: out_of_sequence, local_ack_timeout_err), and that " +
		"NCCL_IB_GID_INDEX names the RoCEv2 GID (show_gids)"
	rows := d.r.Sizes
	switch {
	case len(rows) > 0:
		last := rows[len(rows)-1].Bytes
		d.warn(CodeNoProgress, collectiveFix,
			"%s: it hung after the %s row, in the collective of the next size (%s)", what, nccl.FormatSize(last), nccl.FormatSize(last*2))
	case d.log.InitStarts > 0 && d.log.InitCompletes < d.log.InitStarts:
		d.warn(CodeNoProgress,
			"an NCCL too old for the GPU hangs here forever: GB10 (sm_121) needs NCCL ≥ "+GB10MinNCCL+" (the NGC pytorch:25.08 "+
				"container's 2.27.7 hangs) — build NCCL v2.28.9-1 or later with NVCC_GENCODE=\"-gencode=arch=compute_121,code=sm_121\", "+
				"build nccl-tests against it and put its lib on LD_LIBRARY_PATH; otherwise check that NCCL_SOCKET_IFNAME names "+
				"an interface every host reaches",
			"%s: it hung during NCCL initialisation (%d rank(s) logged \"Init START\", %d \"Init COMPLETE\")",
			what, d.log.InitStarts, d.log.InitCompletes)
	case d.log.InitStarts > 0:
		d.warn(CodeNoProgress, collectiveFix,
			"%s: NCCL finished initialising (\"Init COMPLETE\") but the first collective never did", what)
	case d.res != nil && d.res.Facts != nil:
		d.warn(CodeNoProgress,
			"run nccltune doctor (NCCL_DEBUG=INFO with the INIT subsystem) to see whether initialisation completes; "+
				"an NCCL too old for the GPU (GB10 needs ≥ "+GB10MinNCCL+") hangs there",
			"%s: it hung before the first size finished; the log does not show NCCL's initialisation lines", what)
	case d.res != nil && d.res.Collective != "":
		d.warn(CodeNoProgress,
			"run nccltune doctor, which turns on NCCL_DEBUG=INFO, to see whether NCCL's initialisation or the first "+
				"collective hangs; an NCCL too old for the GPU (GB10 needs ≥ "+GB10MinNCCL+") hangs at initialisation",
			"%s: it hung before the first size finished (no NCCL log to tell initialisation from the first collective)", what)
	default:
		d.warn(CodeNoProgress,
			"a launch that prints nothing hangs in the launcher or MPI's wire-up: pin MPI to the real link with "+
				"--mpi-arg=--mca --mpi-arg=oob_tcp_if_include --mpi-arg=IFACE (and btl_tcp_if_include), and check that "+
				"passwordless ssh works between the hosts",
			"%s: it hung before the benchmark printed anything", what)
	}
}

func (d *diagnosis) wrongResults() {
	res := d.res
	var wrong []string
	for _, row := range res.Rows {
		for _, m := range []*benchfmt.Measure{&row.Out, row.In} {
			if m != nil && m.Wrong != nil && *m.Wrong > 0 {
				wrong = append(wrong, fmt.Sprintf("%s (#wrong %d)", nccl.FormatSize(row.Bytes), *m.Wrong))
				break
			}
		}
	}
	var parts []string
	if len(wrong) > 0 {
		parts = append(parts, "nccl-tests found wrong results at "+strings.Join(wrong, ", "))
	}
	if res.OutOfBounds != nil && *res.OutOfBounds > 0 {
		parts = append(parts, fmt.Sprintf("\"# Out of bounds values : %d FAILED\"", *res.OutOfBounds))
	}
	if len(parts) == 0 {
		return
	}
	d.warn(CodeWrongResults,
		"never use this configuration, whatever its speed: drop forced NCCL_PROTO/NCCL_ALGO/NCCL_*CHANNELS values and rerun; "+
			"if NCCL's defaults also return wrong results, the fabric corrupts data — check dmesg and the NIC error counters, "+
			"and update NCCL, the GPU driver and the NIC firmware",
		"%s: the collective corrupts data, so its timings mean nothing", strings.Join(parts, "; "))
}

// transportWarnings: sockets, GPUDirect, NICs, throttling.
func (d *diagnosis) transportWarnings() {
	if d.res == nil || (d.res.Facts == nil && len(d.res.Rows) == 0) {
		return
	}
	if d.res.Facts == nil {
		d.warn(CodeNoNCCLLog,
			"rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,NET,GRAPH,TUNING (nccltune doctor does), or pass such a "+
				"saved log to nccltune doctor --log FILE",
			"the output has no NCCL_DEBUG lines: the transport, GPUDirect RDMA and NCCL's choices are unknown, so a fallback "+
				"to TCP sockets cannot be ruled out")
		d.throttled()
		return
	}
	if d.r.NNodes == 1 || !d.r.NetworkCarriesData() {
		return // one node, or channel lines without the network: NCCL's network transport carries nothing
	}
	if d.allNetWithinHosts() {
		return // the network carries data only between ranks of one host: hostWarnings said why
	}
	if d.r.Transport == "Socket" {
		d.socket()
		return
	}
	d.throttled()
	d.oneNIC()
	d.gdrOff()
}

// socket tells a fallback (RDMA was expected) from a deliberate or
// unavoidable TCP transport.
func (d *diagnosis) socket() {
	var deliberate string
	if v, ok := d.env("NCCL_IB_DISABLE"); ok && v == "1" {
		deliberate = "NCCL_IB_DISABLE=1"
	} else if v, ok := d.env("NCCL_NET"); ok && strings.EqualFold(v, "Socket") {
		deliberate = "NCCL_NET=Socket"
	}
	var evidence []string
	if names := d.deviceNames(); len(names) > 0 {
		evidence = append(evidence, "NCCL found RDMA devices ("+strings.Join(names, ", ")+")")
	}
	if v, ok := d.env("NCCL_IB_HCA"); ok && !strings.HasPrefix(v, "^") {
		evidence = append(evidence, "NCCL_IB_HCA="+v+" asks for RDMA devices")
	}
	if d.log.IBInitFailed && !d.log.IBNoDevice && deliberate == "" {
		evidence = append(evidence, "NCCL logged \"Failed to initialize NET plugin IB\" although IB was not disabled and no \"No device found\" came before it")
	}
	peak, at := d.peak(0)
	if l := d.r.Link; l.Gbps > 0 && peak > 0 && peak < ThrottleFraction*l.GBps() {
		evidence = append(evidence, fmt.Sprintf("busbw peaks at %.2f GB/s (%s), %.0f %% of the %g Gb/s link (%.1f GB/s)",
			peak, nccl.FormatSize(at), 100*peak/l.GBps(), l.Gbps, l.GBps()))
	}
	measured := ""
	if peak > 0 {
		measured = fmt.Sprintf("; busbw peaks at %.2f GB/s (%s)", peak, nccl.FormatSize(at))
	}
	if deliberate == "" && len(evidence) > 0 {
		d.warn(CodeSocketFallback,
			"force NCCL's native RDMA path: NCCL_NET_PLUGIN=none (a bundled net plugin such as the NGC container's aws-ofi-nccl "+
				"fails on GB10 and falls back silently) and NCCL_IB_MERGE_NICS=1, list the RDMA devices in NCCL_IB_HCA "+
				"(e.g. NCCL_IB_HCA==rocep1s0f1,roceP2p1s0f1), then run doctor again and confirm \"Using network IB\", not NET/Socket",
			"NCCL fell back to TCP sockets (\"Using network Socket\") where RDMA was expected: %s%s. Socket busbw is ~1–3 GB/s "+
				"and is easily mistaken for the RDMA number", strings.Join(evidence, "; "), measured)
		return
	}
	why := ""
	switch {
	case deliberate != "":
		why = " because " + deliberate + " is set"
	case d.log.IBNoDevice:
		why = " because it found no RDMA device (\"NET/IB : No device found\")"
	}
	d.warn(CodeSocketTransport,
		"fine on a loopback or TCP-only test fabric; on hosts with RDMA NICs remove NCCL_IB_DISABLE / NCCL_NET=Socket, "+
			"check the devices with ibv_devices and NCCL_IB_HCA, and confirm \"Using network IB\" in doctor's output",
		"NCCL moved data over TCP sockets (\"Using network Socket\")%s%s: these are TCP numbers, not RDMA ones", why, measured)
}

func (d *diagnosis) gdrOff() {
	if d.r.GDR == nil || *d.r.GDR {
		return
	}
	fix := "load the nvidia-peermem module (or use DMA-BUF with the open GPU kernel driver), check that NCCL_NET_GDR_LEVEL " +
		"does not disable it, and that GPU and NIC share a PCIe switch (nvidia-smi topo -m)"
	if d.isGB10() {
		fix = "nothing to switch on: GB10's unified memory gives no GPUDirect RDMA path, so NCCL stages through host memory — " +
			"expect NCCL busbw well under ib_write_bw (seen: ~10 GB/s against 24.6 GB/s on one 200G link) and compare " +
			"configurations, not against the wire"
	}
	d.warn(CodeGDROff, fix,
		"NCCL logged \"GDR 0\" (\"Connected all rings, use ring PXN 0 GDR 0\"): GPUDirect RDMA is off, so every transfer is "+
			"staged through host memory, a copy ib_write_bw never pays")
}

// oneNIC finds NICs listed but not carrying traffic.
func (d *diagnosis) oneNIC() {
	if d.r.Transport != "IB" && d.r.Transport != "" {
		return
	}
	names := d.deviceNames()
	if len(names) == 0 {
		for _, n := range d.r.NICs {
			name, _, _ := strings.Cut(n, ":")
			names = appendUnique(names, name)
		}
	}
	if len(names) == 0 {
		return
	}
	mergeFix := "set NCCL_IB_MERGE_NICS=1 so NCCL drives both rails as one device (seen on GB10: ~13.5 GB/s on one rail, " +
		"~20–22 GB/s with both merged), and list both rails in NCCL_IB_HCA with the exact-match operator, e.g. " +
		"NCCL_IB_HCA==rocep1s0f1,roceP2p1s0f1"
	if hca, ok := d.env("NCCL_IB_HCA"); ok && !strings.HasPrefix(strings.TrimSpace(hca), "^") {
		asked := hcaNames(hca)
		if len(asked) > len(names) {
			d.warn(CodeOneNIC,
				"list every rail's device name in NCCL_IB_HCA with the exact-match operator (==; a single = is a prefix match) "+
					"and check each with ibv_devices on every host — the two ends of one cable can name their ports differently "+
					"(…f1 on one box, …f0 on the other), so list both and let each node match its own; then "+mergeFix,
				"NCCL_IB_HCA=%s lists %d devices but NCCL uses %d on a host (%s)", hca, len(asked), len(names), strings.Join(names, ", "))
			return
		}
	}
	if len(names) < 2 || d.log.MergedNICs {
		return
	}
	if used := d.log.ChannelNetDevs; len(used) > 0 {
		if len(used) < len(names) {
			var via []string
			for _, i := range used {
				via = append(via, "NET/IB/"+strconv.Itoa(i))
			}
			d.warn(CodeOneNIC, mergeFix,
				"NCCL found %d RDMA devices (%s) but every channel connects through %s: %d of them carries all the traffic",
				len(names), strings.Join(names, ", "), strings.Join(via, ", "), len(used))
		}
		return
	}
	merge, _ := d.env("NCCL_IB_MERGE_NICS")
	if merge != "1" && d.r.NRanks > 0 && d.r.NRanks == d.r.NNodes {
		d.warn(CodeOneNIC, mergeFix,
			"NCCL lists %d RDMA devices (%s) for one GPU per node, NCCL_IB_MERGE_NICS is not 1 and the log has no channel "+
				"lines to show both carry traffic: on a GB10 the two logical NICs behind one port are used one at a time unless merged",
			len(names), strings.Join(names, ", "))
	}
}

// hcaNames reads NCCL_IB_HCA's device names: "==a,b:1" gives a and b.
func hcaNames(v string) []string {
	v = strings.TrimLeft(strings.TrimSpace(v), "=")
	var out []string
	for _, item := range strings.Split(v, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(item), ":")
		if name != "" {
			out = appendUnique(out, name)
		}
	}
	return out
}

func (d *diagnosis) throttled() {
	l := d.r.Link
	peak, at := d.peak(LargeMessage)
	if l.Gbps <= 0 || peak <= 0 || peak >= ThrottleFraction*l.GBps() {
		return
	}
	d.warn(CodeThrottledLink,
		"measure the wire first: ib_write_bw on every rail (-q 4, both rails at once). If it reads ~13–15 Gb/s per rail on a "+
			"200G link, update the ConnectX-7 firmware and driver on every node (DGX Dashboard update, or apt full-upgrade and "+
			"fwupdmgr upgrade) and fully power-drain the NIC — a reboot is not enough; also set MTU 9000 on the RDMA interfaces "+
			"(an RDMA path MTU of 1024 costs throughput)",
		"busbw peaks at %.2f GB/s at %s, %.0f %% of the %g Gb/s link (%.1f GB/s; %s): far below what RDMA carries even without "+
			"GPUDirect (40–90 %% in the field) — the signature of a throttled link, such as the ConnectX-7 firmware that "+
			"carries 13–15 Gb/s on a port negotiated at 200G",
		peak, nccl.FormatSize(at), 100*peak/l.GBps(), l.Gbps, l.GBps(), l.Source)
}

// gpuWarnings: an NCCL too old for the GPU.
func (d *diagnosis) gpuWarnings() {
	v := d.r.NCCLVersion
	if !d.isGB10() || v == "" || !versionLess(v, GB10MinNCCL) {
		return
	}
	d.warn(CodeNCCLVersion,
		"build NCCL "+GB10MinNCCL+" or later with GB10 kernels (git clone -b v2.28.9-1 https://github.com/NVIDIA/nccl; "+
			"make src.build NVCC_GENCODE=\"-gencode=arch=compute_121,code=sm_121\"), build nccl-tests against it, and put its "+
			"lib on LD_LIBRARY_PATH on every node; avoid the container's NCCL",
		"NCCL %s predates GB10 (sm_121) support, which arrived in %s: collectives hang and never complete", v, GB10MinNCCL)
}

func (d *diagnosis) isGB10() bool { return strings.Contains(d.r.GPU, "GB10") }

// versionLess compares "2.27.7" with "2.28.9" by nccl.VersionCode;
// unknown versions are not less.
func versionLess(a, b string) bool {
	ca, cb := nccl.VersionCode(a), nccl.VersionCode(b)
	return ca > 0 && cb > 0 && ca < cb
}

// SortedChoices returns the choices sorted by collective and size.
func (r Report) SortedChoices() []benchfmt.Choice {
	out := append([]benchfmt.Choice{}, r.Choices...)
	slices.SortStableFunc(out, func(a, b benchfmt.Choice) int {
		return cmp.Or(strings.Compare(a.Collective, b.Collective), cmp.Compare(a.Bytes, b.Bytes))
	})
	return out
}

func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
