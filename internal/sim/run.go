package sim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

// testsVersion is the nccl-tests release the simulator imitates.
const testsVersion = "2.19.6"

// Hooks replaced by tests: the clock and the endless wait of the hangs.
var (
	now          = time.Now
	blockForever = func() {
		for {
			time.Sleep(time.Hour)
		}
	}
)

// exitHung is what Main returns if blockForever returns (in tests): the
// code a timeout kill would give.
const exitHung = 124

// launch is one run of the simulated all_reduce_perf.
type launch struct {
	p       *Profile
	o       options
	cfg     nccl.Config
	args    []string
	environ []string
	out     *bufio.Writer
	errw    io.Writer
	log     *ncclLog

	f     *ncclState
	fault *activeFault
	tuner *tunerPlugin // NCCL_TUNER_PLUGIN's; nil when none is named
	s     *sampler
	// replay, when set, is the recorded launch a replay returns: its
	// plan gives NCCL's choices and its times the samples.
	replay *replayDraw

	n      int
	ids    []logID // each process's host, pid and thread
	comms  []uint64
	commID uint64
	busID  int64
	nprocs int // processes: one per rank with -t 1 -g 1

	json     *jsonWriter
	jsonPath string

	errors   int
	bwSum    float64
	bwCount  int
	usedTree bool
}

// maxIterations bounds -n and -w (a usage error, exit 2, above it).
const maxIterations = 1_000_000

// checkOptions applies nccl-tests' checks after parsing (common.cu main).
// It returns false with the exit code when the test must stop.
func (l *launch) checkOptions() (int, bool) {
	o := &l.o
	ver := nccl.VersionCode(l.p.NCCLVersion)
	if o.localRegister == 2 && ver < 22700 {
		fmt.Fprintf(l.out, "Option -R 2 (symmetric) is not supported before NCCL 2.27. Defaulting to local registration\n")
		o.localRegister = 1
	}
	if o.ctaPolicy > 1 && ver < 22800 {
		fmt.Fprintf(l.out, "Option -x (cta_policy) %d is not supported before NCCL 2.28. Ignoring\n", o.ctaPolicy)
		o.ctaPolicy = -1
	}
	if o.deviceImpl != 0 && ver < 22800 {
		fmt.Fprintf(l.errw, "Option -D (device implementation) requires NCCL >= 2.28.0\n")
		return 255, false
	}
	if o.minBytes > o.maxBytes {
		fmt.Fprintf(l.errw, "invalid sizes for 'minbytes' and 'maxbytes': %d > %d\n", o.minBytes, o.maxBytes)
		return 255, false
	}
	if o.deviceImpl > 0 && o.localRegister != 2 {
		fmt.Fprintf(l.errw, "device implementation (-D > 0) requires enabling symmetric memory registration (-R 2)\n")
		return 255, false
	}
	// nccl-tests takes any count; the simulator draws each timed
	// iteration, so a huge -n would not fit in memory (nor -w in time).
	if o.iters > maxIterations {
		fmt.Fprintf(l.errw, "%s: -n %d: want at most %d iterations\n", programName, o.iters, maxIterations)
		return 2, false
	}
	if o.warmup > maxIterations {
		fmt.Fprintf(l.errw, "%s: -w %d: want at most %d warm-up iterations\n", programName, o.warmup, maxIterations)
		return 2, false
	}
	if o.perIter != 0 && o.perIter != 1 {
		fmt.Fprintf(l.errw, "per-iteration timing (-I) only supports 0=off or 1=on. Disabling.\n")
		o.perIter = 0
	}
	if o.perIter != 0 && o.graph >= 1 {
		fmt.Fprintf(l.errw, "per-iteration timing (-I) is incompatible with CUDA graph mode (-G). Disabling.\n")
		o.perIter = 0
	}
	if o.blocking == 3 && o.graph >= 1 {
		fmt.Fprintf(l.errw, "blocking mode (-z 3) is incompatible with CUDA graph mode (-G). Disabling.\n")
		o.blocking = 0
	}
	if o.perIterSkip < 0 || o.perIterSkip >= o.iters {
		fmt.Fprintf(l.errw, "per-iteration skip (-K) must be between 0 and %d. Disabling.\n", o.iters-1)
		o.perIterSkip = 0
	}
	if o.perIterSkip != 0 && o.perIter == 0 {
		fmt.Fprintf(l.errw, "per-iteration skip (-K) requires per-iteration timing (-I 1). Disabling.\n")
		o.perIterSkip = 0
	}
	if o.stepFactor <= 1 && o.stepBytes <= 0 {
		// nccl-tests would loop on one size forever.
		fmt.Fprintf(l.errw, "invalid size specified for 'stepBytes'\n")
		return 255, false
	}
	if o.iters < 1 {
		o.iters = 1
	}
	return 0, true
}

func (l *launch) run() int {
	if code, ok := l.checkOptions(); !ok {
		return code
	}
	p, o := l.p, l.o
	l.n = p.NRanks * max(1, o.nThreads*o.nGpus)
	l.nprocs = p.NRanks
	l.f = p.resolveOp(l.cfg, o.collective, true)
	l.f.n = l.n
	if l.replay != nil {
		// The config was recorded running: what the simulated NCCL
		// would refuse does not apply.
		l.f.usage = nil
		if c := l.replay.c.CommChannels; c > 0 {
			l.f.commChannels = c
		}
	}
	l.s = p.newSampler(l.f, o.noise, o.seed, o.launch)
	l.log = newNCCLLog(l.out, l.cfg["NCCL_DEBUG"], l.cfg["NCCL_DEBUG_SUBSYS"])
	l.identities()
	var err error
	if l.tuner, err = loadTunerPlugin(l.cfg, p.NCCLVersion, l.nprocs, l.n); err != nil {
		fmt.Fprintf(l.errw, "%s: SIMULATED fabric: %v\n", programName, err)
		return 2
	}
	l.f.pluginRetuned = l.tuner.retunes(p.GPU, l.nprocs)

	// Faults that strike before nccl-tests prints anything.
	if l.fault != nil {
		switch l.fault.kind {
		case FaultMPIWireup:
			l.mpiWireup()
			return 1
		case FaultSilent:
			return 0
		case FaultGarbage:
			l.garbage()
			return 0
		}
	}

	l.jsonInit()
	// nccl-tests' writeDeviceReport, plus the simulated line.
	l.testHeader()
	l.jsonConfig()
	if code, ok := l.devices(); !ok {
		l.jsonFinalize()
		return code
	}
	if !l.ncclInit() {
		l.jsonFinalize()
		return 3
	}
	if l.fault != nil && l.fault.kind == FaultInitHang {
		return l.hang()
	}
	l.resultHeader()
	if code, ok := l.collectives(); !ok {
		return code
	}
	l.destroy()
	bwFailed := l.footer()
	l.jsonFinalize()
	if l.errors > 0 || bwFailed {
		l.testFailed()
		return 7
	}
	return 0
}

// testFailed is nccl-tests' last failure line, from every rank.
func (l *launch) testFailed() {
	for r := range l.nprocs {
		fmt.Fprintf(l.out, " .. %s pid %d: Test failure common.cu:1454\n", l.ids[r].host, l.ids[r].pid)
	}
}

// identities derives host names, pids and pointers from seed and launch.
func (l *launch) identities() {
	rng := newRNG(l.o.seed, int64(l.o.launch), streamIdent)
	basePid := 1000 + rng.IntN(60000)
	for r := range l.nprocs {
		pid := basePid + r
		if !l.p.ColocatedRanks {
			pid = 1000 + rng.IntN(60000)
		}
		l.ids = append(l.ids, logID{host: fmt.Sprintf("%s%d", l.p.HostPrefix, r), pid: pid, tid: pid})
		l.comms = append(l.comms, 0x550000000000|uint64(rng.Int64N(0xffffffff0))&^0xf)
	}
	l.commID = rng.Uint64()
	l.busID, _ = parseBusID(l.p.BusID)
}

// mpiWireup is Open MPI's complaint when every host advertises the same
// docker0 address: it cannot tell its peers apart and never starts.
func (l *launch) mpiWireup() {
	peer := l.ids[len(l.ids)-1]
	fmt.Fprintf(l.errw, "[%s][[%d,1],%d][btl_tcp_endpoint.c:625:mca_btl_tcp_endpoint_recv_connect_ack] received unexpected process identifier [[%d,1],%d]\n",
		l.ids[0].host, 27129, 0, 27129, l.nprocs-1)
	fmt.Fprintf(l.errw, "--------------------------------------------------------------------------\n"+
		"WARNING: Open MPI accepted a TCP connection from what appears to be a\n"+
		"another Open MPI process but cannot find a corresponding process\n"+
		"entry for that peer.\n\n"+
		"This attempted connection will be ignored; your MPI job may or may not\n"+
		"continue properly.\n\n"+
		"  Local host: %s\n"+
		"  PID:        %d\n"+
		"--------------------------------------------------------------------------\n", peer.host, peer.pid)
}

// garbage writes random bytes, as a broken binary or pipe would.
func (l *launch) garbage() {
	rng := newRNG(l.o.seed, int64(l.o.launch), streamGarbage)
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(rng.UintN(256))
	}
	l.out.Write(buf)
}

// hang flushes what was printed and waits forever, as NCCL does when it
// hangs; the runner's timeout must kill the process group.
func (l *launch) hang() int {
	l.jsonPartial()
	l.out.Flush()
	blockForever()
	return exitHung
}

func (l *launch) jsonInit() {
	path := l.o.jsonFile
	if path == "" || !strings.EqualFold(jsonExt(path), "json") {
		return
	}
	try := path
	for i := 0; ; i++ {
		file, err := os.OpenFile(try, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			file.Close()
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			fmt.Fprintf(l.out, "# skipping json output; %s not accessible\n", try)
			return
		}
		try = fmt.Sprintf("%s.%d", path, i)
	}
	fmt.Fprintf(l.out, "# Writing JSON output to %s\n", try)
	l.jsonPath = try
	j := &jsonWriter{}
	l.json = j
	j.startObject()
	j.key("version").int(3)
	j.key("start_time").str(now().Format("2006-01-02 15:04:05"))
	j.strList("args", append([]string{l.o.program()}, l.args...)...)
	j.strList("env", l.environ...)
	j.key("nccl_version").int(int64(nccl.VersionCode(l.p.NCCLVersion)))
	// Not in nccl-tests: says that this document was simulated.
	j.key(benchfmt.SimulatedJSONKey).startObject()
	j.key("profile").str(l.p.Name)
	j.key("note").str("SIMULATED, not a measurement")
	j.finish()
}

// jsonExt is nccl-tests' getExtension: after the last dot, if no slash follows.
func jsonExt(path string) string {
	dot := strings.LastIndexByte(path, '.')
	if dot < 0 || dot < strings.LastIndexByte(path, '/') || dot == len(path)-1 {
		return ""
	}
	return path[dot+1:]
}

func (l *launch) jsonFinalize() {
	j := l.json
	if j == nil {
		return
	}
	if len(j.states) == 1 && (j.states[0] == 'o' || j.states[0] == 'O') {
		j.key("end_time").str(now().Format("2006-01-02 15:04:05"))
	}
	for len(j.states) > 0 {
		j.finish()
	}
	if err := os.WriteFile(l.jsonPath, []byte(j.b.String()), 0o644); err != nil {
		fmt.Fprintf(l.errw, "%s: write JSON output %s: %v\n", l.o.program(), l.jsonPath, err)
	}
	l.json = nil
}

// testHeader prints nccl-tests' header lines, plus the simulated label.
func (l *launch) testHeader() {
	o, p := l.o, l.p
	ver := nccl.VersionCode(p.NCCLVersion)
	w := l.out
	fmt.Fprintf(w, "# nccl-tests version %s nccl-headers=%d nccl-library=%d\n", testsVersion, ver, ver)
	fmt.Fprintln(w, benchfmt.SimulatedHeader(p.Name))
	fmt.Fprintf(w, "# Collective test starting: %s\n", o.program())
	step, unit := o.stepBytes, "bytes"
	if o.stepFactor > 1 {
		step, unit = o.stepFactor, "factor"
	}
	fmt.Fprintf(w, "# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s) warmup iters: %d iters: %d agg iters: %d validation: %d graph: %d unalign: %d\n",
		o.nThreads, o.nGpus, o.minBytes, o.maxBytes, step, unit, o.warmup, o.iters, o.agg, o.check, o.graph, o.unalign)
	switch o.blocking {
	case 1:
		fmt.Fprintf(w, "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n")
	case 2:
		fmt.Fprintf(w, "# Blocking Enabled: wait after each inner iteration (-m), no barrier \n")
	case 3:
		fmt.Fprintf(w, "# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier \n")
	}
	if o.perIter != 0 {
		fmt.Fprintf(w, "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows")
		if o.perIterSkip != 0 {
			fmt.Fprintf(w, "; summary skips first %d iterations", o.perIterSkip)
		}
		fmt.Fprintf(w, " \n")
	}
	if o.parallelInit != 0 {
		fmt.Fprintf(w, "# Parallel Init Enabled: threads call into NcclInitRank concurrently \n")
	}
	fmt.Fprintf(w, "#\n")
}

// jsonConfig opens the JSON "config" object (devices closes it).
func (l *launch) jsonConfig() {
	j, o := l.json, l.o
	j.key("config").startObject()
	stepKey, step := "step_bytes", o.stepBytes
	if o.stepFactor > 1 {
		stepKey, step = "step_factor", o.stepFactor
	}
	j.key("nthreads").int(int64(o.nThreads))
	j.key("ngpus").int(int64(o.nGpus))
	j.key("minimum_bytes").int(o.minBytes)
	j.key("maximum_bytes").int(o.maxBytes)
	j.key(stepKey).int(step)
	j.key("warmup_iters").int(int64(o.warmup))
	j.key("iterations").int(int64(o.iters))
	j.key("aggregated_iterations").int(int64(o.agg))
	j.key("validation").int(int64(o.check))
	j.key("graph").int(int64(o.graph))
	j.key("blocking_collectives").str(strconv.FormatBool(o.blocking != 0))
	j.key("per_iter_timing").str(strconv.FormatBool(o.perIter != 0))
	j.key("per_iter_skip").int(int64(o.perIterSkip))
	j.key("parallel_init").str(strconv.FormatBool(o.parallelInit != 0))
}

// devices lists each rank's device, or fails like nccl-tests when more
// GPUs are asked for than a node has.
func (l *launch) devices() (int, bool) {
	o, p, w := l.o, l.p, l.out
	fmt.Fprintf(w, "# Using devices\n")
	if o.nThreads*o.nGpus > p.GPUsPerNode {
		for range l.nprocs {
			fmt.Fprintf(l.errw, "Invalid number of GPUs: %d requested but only %d were found.\n", o.nThreads*o.nGpus, p.GPUsPerNode)
			fmt.Fprintf(l.errw, "Please check the number of processes and GPUs per process.\n")
		}
		l.testFailed()
		return 5, false
	}
	j := l.json
	j.key("devices").startList()
	for r := range l.nprocs {
		fmt.Fprintf(w, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s\n", r, 0, l.ids[r].pid, l.ids[r].host, 0, p.BusID, p.GPU)
		j.startObject()
		j.key("rank").int(int64(r))
		j.key("group").int(0)
		j.key("pid").int(int64(l.ids[r].pid))
		j.key("hostname").str(l.ids[r].host)
		j.key("device").int(0)
		j.key("device_hex").str(p.BusID)
		j.key("device_info").str(p.GPU)
		j.finish()
	}
	j.finish() // devices
	j.finish() // config
	return 0, true
}

// socketAddr is the rank's address on the profile's IP interface.
func (l *launch) socketAddr(r int) string {
	a := l.p.SocketIf.Addr
	if strings.Contains(a, "%d") {
		a = fmt.Sprintf(a, r+1)
	}
	return a
}

// ncclInit prints NCCL's initialisation log; false when NCCL refuses
// the environment.
func (l *launch) ncclInit() bool {
	for r := range l.nprocs {
		l.netInit(r)
	}
	for r := range l.nprocs {
		l.log.info(l.ids[r], subInit, "ncclCommInitRankConfig comm 0x%x rank %d nranks %d cudaDev 0 nvmlDev 0 busId %x commId 0x%016x - Init START",
			l.comms[r], r, l.n, l.busID, l.commID)
	}
	if l.fault != nil && l.fault.kind == FaultInitHang {
		return true
	}
	if u := l.f.usage; u != nil && u.AtInit {
		l.refuseAtInit(u)
		return false
	}
	for r := range l.nprocs {
		l.commInit(r)
	}
	return true
}

// netInit prints rank r's log up to the network plugin NCCL ends up with.
func (l *launch) netInit(r int) {
	f, p, lg := l.f, l.p, l.log
	id := l.ids[r]
	if v, ok := l.cfg["NCCL_SOCKET_IFNAME"]; ok {
		lg.info(id, subEnv, "NCCL_SOCKET_IFNAME set by environment to %s", v)
	}
	lg.info(id, subInit|subBootstrap, "Bootstrap: Using %s:%s<0>", p.SocketIf.Name, l.socketAddr(r))
	lg.info(id, subInit, "cudaDriverVersion %d", p.CUDADriver)
	lg.version(id, p.NCCLVersion+"+cuda"+p.CUDAVersion)
	if nccl.VersionCode(p.NCCLVersion) >= 22800 {
		lg.info(id, subInit, "Comm config nvlinkCentricSched set to 1")
	}
	for _, line := range f.envInfo {
		lg.info(id, subEnv, "%s", line)
	}
	lg.info(id, subInit|subNet, "NET/Plugin: Could not find: libnccl-net.so")
	if f.transport == transportIB {
		l.netIB(r)
	} else {
		switch f.socketWhy {
		case "nodev":
			lg.info(id, subInit|subNet, "NET/IB : No device found.")
			lg.info(id, subInit|subNet, "Failed to initialize NET plugin IB")
		case "disabled", "plugin":
			lg.info(id, subInit|subNet, "Failed to initialize NET plugin IB")
		}
		lg.info(id, subInit|subNet, "NET/Socket : Using [0]%s:%s<0>", p.SocketIf.Name, l.socketAddr(r))
	}
	lg.info(id, subInit|subNet, "Initialized NET plugin %s", f.transport)
	lg.info(id, subInit|subNet, "Assigned NET plugin %s to comm", f.transport)
	lg.info(id, subInit, "Using network %s", f.transport)
}

// netIB prints rank r's IB plugin lines up to the plugin's initialisation.
func (l *launch) netIB(r int) {
	f, p, lg := l.f, l.p, l.log
	id := l.ids[r]
	// The NIC reports its port speed, not what a throttled link
	// really carries: doctor compares busbw with this.
	var devs strings.Builder
	var names []string
	speed := 0
	for d, nic := range f.listed {
		lg.info(id, subNet, "NET/IB: [%d] %s:uverbs%d:%d/%s provider=Mlx5 speed=%d context=0x%x pciPath=/sys/devices/pci%s/%s.%d ar=%d",
			d, nic.Name, d, nic.Port, nic.Link, nic.Gbps*1000, l.comms[r]+uint64(0x1000*(d+1)), p.BusID[:7], p.BusID, d, b2i(nic.Link == "IB"))
		fmt.Fprintf(&devs, " [%d]%s:%d/%s", d, nic.Name, nic.Port, nic.Link)
		names = append(names, nic.Name)
		speed += nic.Gbps * 1000
	}
	ro := ""
	if p.RelaxedOrdering {
		ro = "[RO]"
	}
	lg.info(id, subInit|subNet, "NET/IB : Using%s %s; OOB %s:%s<0>", devs.String(), ro, p.SocketIf.Name, l.socketAddr(r))
	if f.merged {
		lg.info(id, subNet, "NET/IB : Made virtual device [%d] name=%s speed=%d ndevs=%d", len(f.listed), strings.Join(names, "+"), speed, len(f.listed))
	}
}

// refuseAtInit reports an environment NCCL refuses at init.
func (l *launch) refuseAtInit(u *UsageError) {
	for r := range l.nprocs {
		where := "graph/tuning.cc:97"
		if strings.HasPrefix(u.Warn, "Error: network") {
			where = "init.cc:478"
		}
		l.log.warn(l.ids[r], where, "%s", u.Warn)
	}
	l.invalidUsage("common.cu:222", "", "common.cu:1620", "common.cu:1454")
}

// invalidUsage is nccl-tests reporting NCCL's invalid usage at where from
// every rank, then the failure lines at each of stack.
func (l *launch) invalidUsage(where, warn string, stack ...string) {
	for r := range l.nprocs {
		fmt.Fprintf(l.out, "%s: Test NCCL failure %s 'invalid usage (run with NCCL_DEBUG=WARN for details) / %s'\n", l.ids[r].host, where, warn)
		for _, at := range stack {
			fmt.Fprintf(l.out, " .. %s pid %d: Test failure %s\n", l.ids[r].host, l.ids[r].pid, at)
		}
	}
}

// commInit prints rank r's communicator set-up to Init COMPLETE.
func (l *launch) commInit(r int) {
	f, lg := l.f, l.log
	id := l.ids[r]
	lg.info(id, subInit, "comm 0x%x rank %d nRanks %d nNodes %d localRanks 1 localRank 0 MNNVL 0", l.comms[r], r, l.n, l.nprocs)
	if r == 0 {
		var ring strings.Builder
		for k := range l.n {
			fmt.Fprintf(&ring, " %d", k)
		}
		for c := range f.commChannels {
			lg.info(id, subInit, "Channel %02d/%02d :%s", c, f.commChannels, ring.String())
		}
		l.tuningTable(id)
	}
	l.tunerInit(r)
	lg.info(id, subInit, "%d coll channels, %d collnet channels, 0 nvls channels, %d p2p channels, %d p2p channels per peer",
		f.commChannels, f.commChannels, f.commChannels, f.commChannels)
	lg.info(id, subInit, "ncclCommInitRankConfig comm 0x%x rank %d nranks %d cudaDev 0 nvmlDev 0 busId %x commId 0x%016x - Init COMPLETE",
		l.comms[r], r, l.n, l.busID, l.commID)
}

// resultHeader is nccl-tests' writeResultHeader.
func (l *launch) resultHeader() {
	w, o := l.out, l.o
	tsLbl, tsPad, tsFmt := "", 0, ""
	if o.timestamps != 0 {
		tsLbl, tsPad, tsFmt = "timestamp", 19, "%Y-%m-%d %H:%M:%S"
	}
	timeStr := "time"
	if o.cputime != 0 {
		timeStr = "cputime"
	}
	// Per place: time, algbw, busbw, #wrong, and under -I 1 i_min, i_max,
	// i_p99, i_cv%.
	place, title := "  %7s  %6s  %6s  %6s", "           out-of-place                       in-place          "
	if o.perIter != 0 {
		place += "  %7s  %7s  %7s  %7s"
		title = "              out-of-place (+ per-iteration)                                in-place (+ per-iteration)"
	}
	line := func(lead, cols, iter []any, last string) {
		args := lead
		for range 2 {
			args = append(args, cols...)
			if o.perIter != 0 {
				args = append(args, iter...)
			}
		}
		fmt.Fprintf(w, "# %10s  %12s  %8s  %6s  %6s"+place+place+" %*s\n", append(args, tsPad, last)...)
	}
	fmt.Fprintf(w, "#\n")
	fmt.Fprintf(w, "# %10s  %12s  %8s  %6s  %6s"+title+"\n", "", "", "", "", "")
	line([]any{"size", "count", "type", "redop", "root"}, []any{timeStr, "algbw", "busbw", "#wrong"}, []any{"i_min", "i_max", "i_p99", "i_cv%"}, tsLbl)
	line([]any{"(B)", "(elements)", "", "", ""}, []any{"(us)", "(GB/s)", "(GB/s)", ""}, []any{"(us)", "(us)", "(us)", "(%)"}, tsFmt)
	l.json.key("results").startList()
}

// connect prints the connection lines NCCL logs at the first collective.
func (l *launch) connect() {
	f, lg := l.f, l.log
	if l.n < 2 || !lg.enabled(subInit|subNet) && !lg.enabled(subInit) {
		return
	}
	gdr := ""
	if f.transport == transportIB && l.p.GDR {
		gdr = "/GDRDMA"
	}
	// Each channel enters and leaves a host through one rail; where the
	// profile makes NCCL_CROSS_NIC=1 cost bandwidth (cross_nic_penalty),
	// it is because rings then leave through the next rail, and the send
	// lines say so: the routes change exactly when the time does.
	netDev := func(c int, send bool) int {
		switch {
		case f.transport != transportIB:
			return 0
		case f.merged:
			return len(f.listed)
		}
		if send && f.crossesRails() {
			c++
		}
		return c % max(1, f.rails)
	}
	for r := range l.nprocs {
		id := l.ids[r]
		prev, next := (r+l.n-1)%l.n, (r+1)%l.n
		for c := range f.commChannels {
			lg.info(id, subInit|subNet, "Channel %02d/0 : %d[0] -> %d[0] [receive] via NET/%s/%d%s", c, prev, r, f.transport, netDev(c, false), gdr)
		}
		for c := range f.commChannels {
			lg.info(id, subInit|subNet, "Channel %02d/0 : %d[0] -> %d[0] [send] via NET/%s/%d%s", c, r, next, f.transport, netDev(c, true), gdr)
		}
	}
	for r := range l.nprocs {
		lg.info(l.ids[r], subInit, "Connected all rings, use ring PXN 0 GDR %d", b2i(gdr != ""))
	}
}

// sizes lists one sweep's sizes as nccl-tests' TimeTest loop visits them.
func (l *launch) sizes() []int64 {
	o := l.o
	var out []int64
	for size := o.minBytes; size <= o.maxBytes; {
		out = append(out, size)
		next := size + o.stepBytes
		if o.stepFactor > 1 {
			next = size * o.stepFactor
		}
		if next <= size {
			break
		}
		size = next
	}
	return out
}

// collectives runs every type, op, root, cycle and size, printing rows;
// false with an exit code when the launch dies or fails.
func (l *launch) collectives() (int, bool) {
	o := l.o
	types := []string{o.dtype}
	if o.dtype == "all" {
		types = typeNames
	}
	ops := []string{o.op}
	if o.op == "all" {
		ops = opNames
	}
	sizes := l.sizes()
	stopRow := len(sizes)
	if a := l.fault; a != nil && (a.kind == FaultHang || a.kind == FaultCrash) {
		stopRow = faultRow(a, sizes)
	}
	if !o.collective.Reduces() {
		ops = []string{"none"} // nccl-tests runs these once, with no redop
	}
	roots := []int{-1}
	if o.collective.Rooted() {
		roots = []int{o.root}
		if o.root == -1 {
			// -r -1: one sweep per root.
			roots = make([]int, l.n)
			for r := range roots {
				roots[r] = r
			}
		}
	}
	// The first collective (none with -N below 0) connects the rings, and
	// fails if NCCL has no algorithm for it.
	if o.cycles >= 0 {
		l.connect()
		if u := l.f.usage; u != nil {
			return l.enqueueFailure(u, types[0]), false
		}
	}
	for ti, typ := range types {
		for oi, op := range ops {
			for ri, root := range roots {
				for cycle := 0; o.cycles == 0 || cycle < o.cycles; cycle++ {
					key := cycle + 1000*(ti*len(ops)+oi) + 1000000*ri
					var cycleUS float64
					for si, size := range sizes {
						if si == stopRow && cycle == 0 && ti == 0 && oi == 0 && ri == 0 {
							if l.fault.kind == FaultHang {
								return l.hang(), false
							}
							return l.crash(), false
						}
						cycleUS += l.row(typ, op, root, size, key)
					}
					if o.cycles == 0 {
						// An endless run (-N 0) keeps the pace of the fabric.
						l.out.Flush()
						time.Sleep(time.Duration(math.Max(cycleUS*float64(o.iters), 10000)) * time.Microsecond)
					}
				}
			}
		}
	}
	return 0, true
}

// enqueueFailure is NCCL refusing the first collective (no algorithm or
// protocol left).
func (l *launch) enqueueFailure(u *UsageError, typ string) int {
	warn := strings.Replace(u.Warn, "ncclFloat32", ncclTypeNames[typ], 1)
	for r := range l.nprocs {
		l.log.warn(l.ids[r], "enqueue.cc:2063", "%s", warn)
	}
	src := sourceFile(l.o.collective)
	l.invalidUsage(src+":507", warn, "common.cu:597", "common.cu:928", src+":574", "common.cu:972", "common.cu:1768", "common.cu:1454")
	l.jsonFinalize()
	return 3
}

// jsonPartial writes the JSON document as far as it got, as if the
// process's buffer reached the file before it died or hung.
func (l *launch) jsonPartial() {
	if l.json != nil {
		os.WriteFile(l.jsonPath, []byte(l.json.b.String()), 0o644)
	}
}

// crash is a rank dying mid-run: NCCL's last words, then Open MPI's abort
// report.
func (l *launch) crash() int {
	l.jsonPartial()
	r := l.nprocs - 1
	id := l.ids[r]
	l.log.warn(logID{host: id.host, pid: id.pid, tid: id.pid + 21}, "transport/net.cc:1311",
		"Cuda failure 'unspecified launch failure'")
	l.out.Flush()
	for _, s := range []string{"*** Process received signal ***", "Signal: Aborted (6)", "Signal code:  (-6)", "*** End of error message ***"} {
		fmt.Fprintf(l.errw, "[%s:%05d] %s\n", id.host, id.pid, s)
	}
	return 134
}

// row prints one size's line, out-of-place then in-place, and returns the
// out-of-place mean.
func (l *launch) row(typ, op string, root int, size int64, key int) float64 {
	o, w, j := l.o, l.out, l.json
	bytes, count := o.collective.RowShape(size, typeSizes[typ], l.n)
	fmt.Fprintf(w, "%12d  %12d  %8s  %6s  %6s", bytes, count, typ, op, fmt.Sprintf("%6d", root))
	j.startObject()
	j.key("size").int(bytes)
	j.key("count").int(count)
	j.key("type").str(typ)
	j.key("redop").str(op)
	j.key("root").str(fmt.Sprintf("%6d", root))
	c := l.tunerChoose(l.choose(bytes), bytes)
	// NCCL's TUNING line prints the call's count times its element size:
	// one rank's part for all-gather and reduce-scatter (the count column),
	// the whole buffer otherwise; the tuner is handed the whole buffer.
	l.logChoice(c, count*int64(typeSizes[typ]))
	outMean := l.placeResult(c, bytes, count, key, 0)
	l.placeResult(c, bytes, count, key, 1)
	fmt.Fprintf(w, "\n")
	j.key("actual_iterations").int(int64(o.iters))
	j.key("experiment_name").str("")
	j.finish()
	return outMean
}

// logChoice logs NCCL's choice for a size (and the trees, at first use).
func (l *launch) logChoice(c Choice, bytes int64) {
	if c.Algo == algoTree && !l.usedTree {
		l.usedTree = true
		for r := range l.nprocs {
			l.log.info(l.ids[r], subInit, "Connected all trees")
		}
	}
	if c.Algo == p2pAlgo {
		return // send/recv never reaches the tuner's log line
	}
	l.log.info(l.ids[0], subTuning, "%s: %d Bytes -> Algo %s proto %s channel{Lo..Hi}={0..%d}", l.o.collective.Function(), bytes, c.LogAlgo(), c.LogProto(), c.Channels-1)
}

// placeResult times one size out of place (place 0) or in place (1),
// prints its columns and returns the mean time (µs).
func (l *launch) placeResult(c Choice, bytes, count int64, key, place int) float64 {
	o, w := l.o, l.out
	samples := l.times(c, bytes, key, place)
	var mean float64
	for _, t := range samples {
		mean += t
	}
	mean /= float64(len(samples))
	algBW := float64(bytes) / (mean * 1e3)
	busBW := algBW * o.collective.BusFactor(l.n) // nccl-tests' factor: 0 for one rank of a ring op
	var wrong int64
	if l.fault != nil && l.fault.kind == FaultWrong && l.fault.hits(bytes) {
		rng := newRNG(o.seed, int64(o.launch), streamWrong, bytes, int64(key), int64(place))
		wrong = 1 + count/16 + rng.Int64N(max(1, count/64))
	}
	check := o.check > 0
	if check && wrong > 0 {
		l.errors += l.nprocs
	}
	if check {
		fmt.Fprintf(w, "  %7s  %6s  %6s  %6s", floatStr(mean, 7), floatStr(algBW, 6), floatStr(busBW, 6), cG(float64(wrong)))
	} else {
		fmt.Fprintf(w, "  %7s  %6s  %6s    N/A", floatStr(mean, 7), floatStr(algBW, 6), floatStr(busBW, 6))
	}
	if place == 1 && o.timestamps != 0 && o.perIter == 0 {
		fmt.Fprintf(w, "%21s", now().Format("2006-01-02 15:04:05"))
	}
	timeKey := "time"
	if o.cputime != 0 {
		timeKey = "cpu_time"
	}
	j := l.json
	j.key(placeKeys[place]).startObject()
	j.key(timeKey).double(mean)
	j.key("alg_bw").double(algBW)
	j.key("bus_bw").double(busBW)
	j.key("nwrong")
	if check {
		j.double(float64(wrong))
	} else {
		j.null()
	}
	j.finish()
	if o.perIter != 0 {
		l.perIter(samples, bytes, key, place)
	}
	l.bwSum += busBW
	l.bwCount++
	return mean
}

// placeKeys are the JSON keys of the out-of-place (0) and in-place (1) results.
var placeKeys = [2]string{"out_of_place", "in_place"}

// choose is NCCL's choice for one size (a replay's: the recorded plan's).
func (l *launch) choose(bytes int64) Choice {
	if l.replay != nil {
		if c, ok := l.replay.c.choose(bytes); ok {
			return c
		}
	}
	return l.f.choose(bytes)
}

// times are one size's per-iteration samples; a replay's are the recorded
// ones for both places (the store keeps only the out-of-place ones).
func (l *launch) times(c Choice, bytes int64, key, place int) []float64 {
	if l.replay != nil {
		return l.replay.times(bytes, l.o.iters)
	}
	return l.s.times(c, bytes, l.o.iters, key, place)
}

// perIter prints nccl-tests' i_* columns and the JSON per-iteration block.
func (l *launch) perIter(samples []float64, bytes int64, key, place int) {
	o, w := l.o, l.out
	st := computeIterStats(samples[o.perIterSkip:])
	fmt.Fprintf(w, "  %7s  %7s  %7s  %7s", floatStr(st.min, 7), floatStr(st.max, 7), floatStr(st.p99, 7), floatStr(st.cvPct(), 7))
	if place == 1 && o.timestamps != 0 {
		fmt.Fprintf(w, "%21s", now().Format("2006-01-02 15:04:05"))
	}
	j := l.json
	if j == nil {
		return
	}
	j.key(placeKeys[place] + "_per_iter").startObject()
	j.key("skipped_iterations").int(int64(o.perIterSkip))
	j.key("min_us").double(st.min)
	j.key("max_us").double(st.max)
	j.key("avg_us").double(st.avg)
	j.key("p50_us").double(st.p50)
	j.key("p95_us").double(st.p95)
	j.key("p99_us").double(st.p99)
	j.key("stdev_us").double(st.stdev)
	j.key("cv_pct").double(st.cvPct())
	j.key("times_us").startList()
	for _, t := range samples {
		j.double(t)
	}
	j.finish()
	if l.nprocs > 1 {
		j.key("per_process_max_times_us").startList()
		for _, row := range l.s.rankTimes(samples, l.nprocs, bytes, key, place) {
			j.startList()
			for _, t := range row {
				j.double(t)
			}
			j.finish()
		}
		j.finish()
	}
	j.finish()
}

func (l *launch) destroy() {
	for r := range l.nprocs {
		l.log.info(l.ids[r], subInit, "comm 0x%x rank %d nranks %d cudaDev 0 busId %x - Destroy COMPLETE", l.comms[r], r, l.n, l.busID)
	}
}

// footer is nccl-tests' result footer; it reports whether the average bus
// bandwidth fell short of NCCL_TESTS_MIN_BW.
func (l *launch) footer() bool {
	w, j := l.out, l.json
	j.finish() // results
	status := "OK"
	if l.errors > 0 {
		status = "FAILED"
	}
	fmt.Fprintf(w, "# %-20s : %d %s\n", "Out of bounds values", l.errors, status)
	minBW := -1.0
	if v, ok := l.cfg["NCCL_TESTS_MIN_BW"]; ok {
		minBW = 0 // C's atof: 0 when it reads no number
		fmt.Sscanf(strings.TrimSpace(v), "%g", &minBW)
	}
	bw := l.bwSum / float64(max(l.bwCount, 1))
	bwStatus := ""
	if minBW != -1 {
		bwStatus = "OK"
		if bw < minBW*0.9 {
			bwStatus = "FAILED"
		}
	}
	fmt.Fprintf(w, "# %-20s : %s %s\n", "Avg bus bandwidth", cG(bw), bwStatus)
	fmt.Fprintf(w, "#\n")
	fmt.Fprintf(w, "# Collective test concluded: %s\n", l.o.program())
	j.key("out_of_bounds").startObject()
	j.key("count").int(int64(l.errors))
	j.key("okay").str(strconv.FormatBool(l.errors == 0))
	j.finish()
	okay := "unchecked"
	if minBW != -1 {
		okay = strconv.FormatBool(bw >= minBW*0.9)
	}
	j.key("average_bus_bandwidth").startObject()
	j.key("bandwidth").double(bw)
	j.key("okay").str(okay)
	j.finish()
	if l.o.memory != 0 {
		init := int64(512<<20) + int64(l.f.commChannels)*(8<<20)
		bufs := 2 * l.o.maxBytes
		if l.o.check > 0 {
			bufs = 3 * l.o.maxBytes
		}
		fmt.Fprintf(w, "# %-20s : Initialization %s | User-Allocated %s | Collective %s | Total  %s\n", "GPU memory usage",
			memString(init), memString(bufs), memString(0), memString(init+bufs))
	}
	fmt.Fprintf(w, "#\n")
	fmt.Fprintf(w, "\n")
	j.strList("errors", "")
	return bwStatus == "FAILED"
}

// memString is nccl-tests' getMemString.
func memString(b int64) string {
	v, unit := float64(b), " B"
	switch a := math.Abs(v); {
	case a >= 1<<30:
		v, unit = v/(1<<30), " GB"
	case a >= 1<<20:
		v, unit = v/(1<<20), " MB"
	case a >= 1<<10:
		v, unit = v/(1<<10), " KB"
	}
	prec := 0
	switch a := math.Abs(v); {
	case a < 10:
		prec = 2
	case a < 100:
		prec = 1
	}
	return fmt.Sprintf("%.*f%s", prec, v, unit)
}
