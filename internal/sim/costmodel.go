package sim

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// NCCL's names, in NCCL's own order (the tuner scans algorithms then
// protocols in this order and keeps the first strictly best entry).
const (
	algoTree = "Tree"
	algoRing = "Ring"

	protoLL     = "LL"
	protoLL128  = "LL128"
	protoSimple = "Simple"

	transportIB     = "IB"
	transportSocket = "Socket"
)

var (
	protoNames = []string{protoLL, protoLL128, protoSimple}
	// algoNames is NCCL's list; only Tree and Ring can run an all-reduce
	// on a network fabric without NVLink SHARP or CollNet.
	algoNames = []string{algoTree, algoRing, "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT"}
	// funcNames are the prefixes NCCL accepts in "allreduce:^LL" (its
	// ncclFuncStr: send/recv and all-to-all have none, and NCCL refuses
	// them as "Unrecognized prefix token").
	funcNames = nccl.PerFunctionNames()
)

// wireFactor is the bytes a protocol puts on the wire per payload byte:
// LL sends a flag with every 8 data bytes, LL128 one 8-byte flag per
// 128-byte line, Simple none.
var wireFactor = map[string]float64{protoLL: 2, protoLL128: 128.0 / 120.0, protoSimple: 1}

// slotBytes is the payload of one buffer slot per protocol (NCCL splits a
// channel's buffer into 8 steps); Simple's is NCCL_BUFFSIZE/8.
var slotBytes = map[string]float64{protoLL: 32 << 10, protoLL128: 576 << 10}

// defaultNThreads is NCCL's thread count per channel for LL and Simple.
const defaultNThreads = 512

// Choice is what NCCL decides for one all-reduce ("Algo RING proto LL128
// channel{Lo..Hi}={0..63}" is Ring, LL128, 64).
type Choice struct {
	Algo     string `json:"algo"`
	Proto    string `json:"proto"`
	Channels int    `json:"channels"`
}

// LogAlgo and LogProto are the names NCCL's TUNING log uses ("RING").
func (c Choice) LogAlgo() string  { return strings.ToUpper(c.Algo) }
func (c Choice) LogProto() string { return strings.ToUpper(c.Proto) }

// UsageError is NCCL refusing the configuration with ncclInvalidUsage,
// Warn its WARN text. AtInit: a value NCCL cannot parse fails while
// creating the communicator; a valid setting that leaves no algorithm or
// protocol fails at the first collective (since NCCL 2.24, instead of
// falling back to Ring).
type UsageError struct {
	AtInit bool
	Warn   string
}

func (e *UsageError) Error() string {
	return "NCCL invalid usage: " + e.Warn
}

// ncclState is the state NCCL reaches from a profile and an environment:
// everything the log lines and the costs need.
type ncclState struct {
	p    *Profile
	n    int
	op   nccl.Op
	cost *Transport
	// transport is "IB" or "Socket"; socketWhy says why IB was not used.
	transport string
	socketWhy string
	// listed are the NICs NCCL lists; rails how many carry traffic.
	listed []NIC
	rails  int
	merged bool

	protoOn map[string]bool
	algoOn  map[string]bool
	usage   *UsageError // set when NCCL refuses the environment
	// pluginRetuned: the example tuner plugin retuned NCCL's constants
	// at init (tunerPlugin.retunes).
	pluginRetuned bool

	commChannels int
	minChannels  int
	nthreads     int
	buffSize     float64
	sockThreads  int
	sockPerThr   int
	qps          int
	crossNIC     int
	// envInfo are NCCL's "X set by environment to V" lines, collected
	// only with logEnv (formatting them costs more than the model).
	logEnv  bool
	envInfo []string
}

// resolveOp works out what NCCL would set up for op under cfg (NCCL_*
// variables, knobs or not). The steps run in the order NCCL reads the
// variables, so that with logEnv the ENV lines come out in NCCL's order.
func (p *Profile) resolveOp(cfg nccl.Config, op nccl.Op, logEnv bool) *ncclState {
	f := &ncclState{p: p, n: p.NRanks, op: op.OrAllReduce(), crossNIC: 2, qps: 1, nthreads: 0, buffSize: 4 << 20, logEnv: logEnv}
	env := envReader{cfg: cfg, f: f}
	f.resolveTransport(env)
	f.resolveAlgorithms(env)
	f.resolveChannels(env)
	f.resolveBuffers(env)
	return f
}

// envReader reads NCCL_* variables the way NCCL does, adding NCCL's ENV
// log line for each read to the state.
type envReader struct {
	cfg nccl.Config
	f   *ncclState
}

func (e envReader) info(format string, args ...any) {
	if e.f.logEnv {
		e.f.envInfo = append(e.f.envInfo, fmt.Sprintf(format, args...))
	}
}

// get is a variable's value; an empty value counts as unset.
func (e envReader) get(name string) (string, bool) {
	v, ok := e.cfg[name]
	return v, ok && v != ""
}

// intParam reads an integer parameter the way NCCL_PARAM reads it: an
// invalid value (not an integer, or refused by its knob) is reported and
// ignored.
func (e envReader) intParam(name string) (int, bool) {
	v, ok := e.get(name)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if knob, kerr := nccl.LookupKnob(name); err == nil && kerr == nil && knob.Name == name {
		err = knob.Validate(v)
	}
	if err != nil {
		e.info("Invalid value %s for %s, using default.", v, name)
		return 0, false
	}
	e.info("%s set by environment to %d.", name, n)
	return n, true
}

// setInt sets *dst to an integer parameter when it is set and valid.
func (e envReader) setInt(name string, dst *int) {
	if v, ok := e.intParam(name); ok {
		*dst = v
	}
}

func (e envReader) strParam(name string) (string, bool) {
	v, ok := e.get(name)
	if ok {
		e.info("%s set by environment to %s", name, v)
	}
	return v, ok
}

// resolveTransport picks the transport (IB unless disabled, not found,
// forced to Socket, or failing on purpose) and the NICs that carry it.
func (f *ncclState) resolveTransport(env envReader) {
	p, cfg := f.p, env.cfg
	ibDisabled, _ := env.intParam("NCCL_IB_DISABLE")
	merge, _ := env.intParam("NCCL_IB_MERGE_NICS")
	netName, netSet := env.strParam("NCCL_NET")
	hca, hcaSet := env.strParam("NCCL_IB_HCA")
	f.listed = p.NICs
	if hcaSet {
		f.listed = matchHCA(p.NICs, hca)
	}
	switch {
	case strings.EqualFold(cfg[FaultEnv], "socket-fallback") || p.ruleFault(cfg, "socket-fallback"):
		f.transport, f.socketWhy = transportSocket, "plugin"
	case ibDisabled == 1:
		f.transport, f.socketWhy = transportSocket, "disabled"
	case len(f.listed) == 0:
		f.transport, f.socketWhy = transportSocket, "nodev"
	default:
		f.transport = transportIB
	}
	if netSet {
		switch {
		case strings.EqualFold(netName, transportSocket):
			f.transport, f.socketWhy = transportSocket, "forced"
		case !strings.EqualFold(netName, transportIB) || f.transport != transportIB:
			f.usage = &UsageError{AtInit: true, Warn: fmt.Sprintf("Error: network %s not found.", netName)}
		}
	}
	f.cost = p.Transports[f.transport]
	if f.transport == transportIB {
		f.rails = min(p.RailsWithoutMerge, len(f.listed))
		if merge == 1 && len(f.listed) > 1 {
			f.rails, f.merged = len(f.listed), true
		}
	}
}

// resolveAlgorithms works out the protocols and algorithms the op may use;
// none left is NCCL's invalid usage at the first collective.
func (f *ncclState) resolveAlgorithms(env envReader) {
	fn := f.op.Function()
	protoEnable := map[string]int{protoLL: 1, protoLL128: 2, protoSimple: 1}
	if v, ok := env.strParam("NCCL_PROTO"); ok {
		if err := parseList(v, protoNames, protoEnable, fn); err != nil {
			f.usage = &UsageError{AtInit: true, Warn: err.Error()}
		}
	}
	algoEnable := map[string]int{}
	for _, a := range algoNames {
		algoEnable[a] = 1
	}
	algo, algoSet := env.strParam("NCCL_ALGO")
	if algoSet {
		if err := parseList(algo, algoNames, algoEnable, fn); err != nil && f.usage == nil {
			f.usage = &UsageError{AtInit: true, Warn: err.Error()}
		}
	}
	f.protoOn = map[string]bool{
		protoLL:     protoEnable[protoLL] == 1,
		protoLL128:  protoEnable[protoLL128] == 1 || (protoEnable[protoLL128] == 2 && f.cost.LL128Default),
		protoSimple: protoEnable[protoSimple] == 1,
	}
	// Only Ring and Tree can run an all-reduce here (no CollNet or NVLink
	// SHARP; PAT serves AllGather/ReduceScatter with one GPU per node,
	// which these profiles leave to Ring); the other collectives run Ring.
	f.algoOn = map[string]bool{algoRing: algoEnable[algoRing] == 1, algoTree: algoEnable[algoTree] == 1 && f.p.NRanks > 1 && f.op == nccl.AllReduce}
	if opGeometry(f.op, f.n).p2p {
		// Send/recv ops take neither list: NCCL runs them as p2p.
		f.algoOn, f.protoOn = map[string]bool{algoRing: true}, map[string]bool{protoLL: true, protoSimple: true}
		return
	}
	anyAlgo := f.algoOn[algoRing] || f.algoOn[algoTree]
	anyProto := f.protoOn[protoLL] || f.protoOn[protoLL128] || f.protoOn[protoSimple]
	if f.usage == nil && (!anyAlgo || !anyProto) {
		warn := "No algorithm/protocol available for function " + fn + " with datatype ncclFloat32."
		if algoSet {
			warn += " NCCL_ALGO was set to " + algo + "."
		}
		if v, ok := env.get("NCCL_PROTO"); ok {
			warn += " NCCL_PROTO was set to " + v + "."
		}
		f.usage = &UsageError{Warn: warn}
	}
}

// resolveChannels applies the channel caps (the smaller wins), then the floor.
func (f *ncclState) resolveChannels(env envReader) {
	f.commChannels = f.cost.CommChannels
	capped := false
	for _, name := range []string{"NCCL_MAX_NCHANNELS", "NCCL_MAX_CTAS"} {
		if v, ok := env.intParam(name); ok && v >= 1 {
			f.commChannels = min(f.commChannels, v)
		}
		_, set := env.get(name)
		capped = capped || set
	}
	for _, name := range []string{"NCCL_MIN_NCHANNELS", "NCCL_MIN_CTAS"} {
		if v, ok := env.intParam(name); ok && v >= 1 {
			f.minChannels = max(f.minChannels, v)
		}
	}
	f.minChannels = min(f.minChannels, 64)
	if f.minChannels > f.commChannels {
		// NCCL duplicates channels up to the floor, unless a cap says no.
		if !capped {
			f.commChannels = f.minChannels
		}
		f.minChannels = min(f.minChannels, f.commChannels)
	}
}

// resolveBuffers reads the per-connection resources.
func (f *ncclState) resolveBuffers(env envReader) {
	if c := f.p.Transports[transportSocket]; c != nil {
		f.sockThreads, f.sockPerThr = c.SocketThreads, c.SocketsPerThread
	}
	env.setInt("NCCL_NTHREADS", &f.nthreads)
	if v, ok := env.get("NCCL_BUFFSIZE"); ok {
		if knob, err := nccl.LookupKnob("NCCL_BUFFSIZE"); err == nil && knob.Validate(v) == nil {
			n, _ := strconv.ParseInt(v, 10, 64)
			f.buffSize = float64(n)
			env.info("NCCL_BUFFSIZE set by environment to %d.", n)
		} else {
			env.info("Invalid value %s for NCCL_BUFFSIZE, using default.", v)
		}
	}
	env.setInt("NCCL_IB_QPS_PER_CONNECTION", &f.qps)
	env.setInt("NCCL_CROSS_NIC", &f.crossNIC)
	env.setInt("NCCL_SOCKET_NTHREADS", &f.sockThreads)
	env.setInt("NCCL_NSOCKS_PERTHREAD", &f.sockPerThr)
	if f.sockThreads*f.sockPerThr > 64 {
		// NCCL caps the product at 64 sockets by lowering sockets per thread.
		f.sockPerThr = max(1, 64/f.sockThreads)
	}
}

// parseList applies one NCCL_PROTO or NCCL_ALGO value ("LL,Simple",
// "^LL128", "LL,Simple;allreduce:^LL") to one function's enable flags: a
// listed name is set to 1 and the others to 0; an excluded name to 0 and
// the others to 1 (which forces LL128 on).
func parseList(value string, elems []string, enable map[string]int, function string) error {
	for i, entry := range strings.Split(value, ";") {
		if entry == "" {
			continue
		}
		prefix, list, hasPrefix := strings.Cut(entry, ":")
		if !hasPrefix {
			list, prefix = prefix, ""
			if i > 0 {
				return fmt.Errorf("All entries except the first must have a prefix: \"%s\"", value)
			}
		} else if !slices.ContainsFunc(funcNames, func(name string) bool { return strings.EqualFold(name, prefix) }) {
			return fmt.Errorf("Unrecognized prefix token \"%s\" when parsing \"%s\"", prefix, value)
		}
		set, unset := 1, 0
		if l, ok := strings.CutPrefix(list, "^"); ok {
			set, unset, list = 0, 1, l
		}
		next := map[string]int{}
		for _, e := range elems {
			next[e] = unset
		}
		for _, tok := range strings.Split(list, ",") {
			if tok == "" {
				continue
			}
			i := slices.IndexFunc(elems, func(e string) bool { return strings.EqualFold(tok, e) })
			if i < 0 {
				return fmt.Errorf("Unrecognized element token \"%s\" when parsing \"%s\"", tok, value)
			}
			next[elems[i]] = set
		}
		if prefix == "" || strings.EqualFold(prefix, function) {
			maps.Copy(enable, next)
		}
	}
	return nil
}

// matchHCA filters NICs with NCCL_IB_HCA's syntax: a comma list of device
// names (optionally ":port"), matched as prefixes; a leading "=" asks for
// exact names, a leading "^" excludes the listed devices.
func matchHCA(nics []NIC, spec string) []NIC {
	s, exclude := strings.CutPrefix(strings.TrimSpace(spec), "^")
	s, exact := strings.CutPrefix(s, "=")
	type want struct {
		name string
		port int // -1: any port
	}
	var wants []want
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, portStr, hasPort := strings.Cut(item, ":")
		w := want{name: name, port: -1}
		if n, err := strconv.Atoi(portStr); hasPort && err == nil {
			w.port = n
		}
		wants = append(wants, w)
	}
	matches := func(nic NIC) bool {
		for _, w := range wants {
			nameOK := nic.Name == w.name || !exact && strings.HasPrefix(nic.Name, w.name)
			if nameOK && (w.port < 0 || w.port == nic.Port) {
				return true
			}
		}
		return false
	}
	var out []NIC
	for _, nic := range nics {
		if matches(nic) != exclude {
			out = append(out, nic)
		}
	}
	return out
}

// TrueTimeUS is the noise-free time in µs of one all-reduce of bytes under
// cfg, as the simulated NCCL runs it; a *UsageError when NCCL would refuse
// cfg. Fault rules do not change it.
func (p *Profile) TrueTimeUS(cfg nccl.Config, bytes int64) (float64, error) {
	return p.OpTimeUS(nccl.AllReduce, cfg, bytes)
}

// Choose is the simulated NCCL's own decision for an all-reduce of bytes
// under cfg.
func (p *Profile) Choose(cfg nccl.Config, bytes int64) (Choice, error) {
	return p.ChooseOp(nccl.AllReduce, cfg, bytes)
}

// busFactor is nccl-tests' all-reduce bus bandwidth factor 2(n-1)/n.
func busFactor(n int) float64 {
	if n <= 1 {
		return 1
	}
	return 2 * float64(n-1) / float64(n)
}

// busBytes are the bytes each rank sends for an op of bytes (for one
// rank, the all-reduce's factor is 1).
func (f *ncclState) busBytes(g geometry, bytes int64) float64 {
	if f.op == nccl.AllReduce {
		return busFactor(f.n) * float64(bytes)
	}
	return g.bus * float64(bytes)
}

// choose picks like NCCL: predicted time decides algorithm and protocol
// (first strictly best in NCCL's order), the channel rule decides channels.
func (f *ncclState) choose(bytes int64) Choice {
	g := opGeometry(f.op, f.n)
	if g.p2p {
		return f.chooseP2P(bytes)
	}
	// NCCL's model credits a comm with its full bandwidth from 4 channels
	// on (or from all it has, if fewer); below that, proportionally less.
	share := math.Min(1, float64(f.commChannels)/float64(min(f.cost.CommChannels, 4)))
	bus := f.busBytes(g, bytes)
	best, bestT := Choice{}, math.Inf(1)
	for _, a := range []string{algoTree, algoRing} {
		for _, pr := range protoNames {
			if !f.algoOn[a] || !f.protoOn[pr] {
				continue
			}
			m := f.cost.NCCLModel[a][pr]
			t := m.LatUS + bus/(m.GBps*f.pluginCap(a, pr)*share*1e3)
			if t < bestT {
				best, bestT = Choice{Algo: a, Proto: pr}, t
			}
		}
	}
	best.Channels = f.channelsFor(best.Proto, bytes)
	return best
}

// pluginCap is the share of its predicted bandwidth for a and pr that NCCL
// keeps after the example plugin's pluginInit capped its per-channel
// bandwidths (plugin.c:304 and :307 in NCCL 2.30.7): Tree all-reduce from
// 24 GB/s to 15 (perChMaxTreeBws, Blackwell at 4 nodes), Ring LL128 from
// 40 to 20 (perChMaxRingLL128Bws). The model has no per-channel
// prediction, so it scales by the cap's ratio, as if the cap binds.
func (f *ncclState) pluginCap(a, pr string) float64 {
	switch {
	case !f.pluginRetuned:
		return 1
	case a == algoTree && f.op == nccl.AllReduce:
		return 15.0 / 24
	case a == algoRing && pr == protoLL128:
		return 20.0 / 40
	}
	return 1
}

// channelsFor is NCCL's per-size channel rule: drop channels while each
// would carry less than its threshold, never below the floor.
func (f *ncclState) channelsFor(proto string, bytes int64) int {
	per := f.p.ChannelBytes[proto]
	if f.nthreads > 0 && proto != protoLL128 {
		per *= float64(f.nthreads) / defaultNThreads
	}
	nc := int(float64(bytes) / per)
	nc = max(nc, 1, f.minChannels)
	return min(nc, f.commChannels)
}

// crossesRails reports whether rings cross from one rail to another:
// NCCL_CROSS_NIC=1 on IB with several rails, where the profile gives it a
// CrossNICPenalty (with none, NCCL keeps rings on their rail).
func (f *ncclState) crossesRails() bool {
	return f.transport == transportIB && f.crossNIC == 1 && f.rails > 1 && f.cost != nil && f.cost.CrossNICPenalty > 0
}

// linkGBps is the payload bandwidth the transport offers between two
// ranks, after rails, throttling, cross-NIC rings and socket threads.
func (f *ncclState) linkGBps() float64 {
	c := f.cost
	bw := c.LinkGBps * f.p.Throttle
	if f.transport == transportIB {
		bw *= float64(max(1, f.rails))
		if f.crossesRails() {
			bw *= 1 - c.CrossNICPenalty
		}
		return bw
	}
	// Socket helper threads: every connection (2 per channel) gets
	// NCCL_SOCKET_NTHREADS of them; past the host's cores they time-slice.
	hosts := 1
	if f.p.ColocatedRanks {
		hosts = f.n
	}
	busy := float64(hosts * f.commChannels * 2 * f.sockThreads)
	if over := busy / float64(f.p.HostCores); over > 1 {
		bw /= math.Pow(over, 2.0/3.0)
	}
	bw /= 1 + 0.006*float64(f.sockThreads*f.sockPerThr-1)
	return bw
}

// trueTime is the cost model of the package comment.
func (f *ncclState) trueTime(c Choice, bytes int64) float64 {
	p, n := f.p, f.n
	g := opGeometry(f.op, n)
	bus := f.busBytes(g, bytes)
	if bytes <= 0 {
		// A zero-count all-reduce returns at once.
		return 2
	}
	if p.Flat != nil {
		return p.Flat.LatUS + bus/(p.Flat.GBps*1e3)
	}
	cost := f.cost
	pc := cost.Protocols[c.Proto]
	oc := f.opCost()
	pc.BaseUS *= scale(oc.BaseScale)
	pc.StepUS *= scale(oc.StepScale)
	pc.OpUS *= scale(oc.OpScale)
	pc.ChannelGBps *= scale(oc.ChannelScale)
	// A tree takes 2⌈log2 n⌉ steps (up, then down), but beyond two ranks an
	// inner node serves a parent and two children, so each step costs the
	// proxy more and the tree moves its bytes less efficiently.
	steps, fan := g.steps, 1.0
	if c.Algo == algoTree {
		steps = 2 * math.Ceil(math.Log2(float64(n)))
		if n > 2 {
			// Two ranks make a one-link "tree", as efficient as a ring.
			fan = 1.5
			bus *= cost.TreeBusFactor
		}
	}
	if n == 1 {
		// One rank: a local copy, no network.
		return pc.BaseUS + float64(bytes)/(cost.LinkGBps*50*1e3)
	}
	nc := float64(c.Channels)
	chBW := pc.ChannelGBps
	if f.nthreads > 0 && c.Proto != protoLL128 {
		chBW *= math.Pow(math.Min(1, float64(f.nthreads)/defaultNThreads), 0.6)
	}
	op := pc.OpUS
	if f.transport == transportIB && f.qps > 1 {
		chBW *= 1 + cost.QPGain*math.Log2(float64(f.qps))
		op *= 1 + cost.QPOpCost*float64(f.qps-1)
	}
	if f.transport == transportSocket {
		op *= 1 + 0.02*float64(f.sockThreads*f.sockPerThr-1)
	}
	wire := bus * wireFactor[c.Proto] / (math.Min(f.linkGBps()*scale(oc.LinkScale), nc*chBW) * 1e3)
	slot := slotBytes[c.Proto]
	if c.Proto == protoSimple {
		slot = f.buffSize / 8
	}
	seg := float64(bytes) / (g.split * nc)
	slots := math.Max(1, math.Ceil(seg/slot))
	proxy := steps * (pc.StepUS + fan*nc*slots*op)
	if cost.ProxyGBps > 0 {
		proxy += bus / (cost.ProxyGBps * 1e3)
	}
	return pc.BaseUS + softMax(wire, proxy, cost.Overlap)
}

// softMax joins two pipeline stages: k = 1 adds them (no overlap), a
// large k approaches the slower one (full overlap).
func softMax(a, b, k float64) float64 {
	if k <= 1 {
		return a + b
	}
	m := math.Max(a, b)
	if m == 0 {
		return 0
	}
	return m * math.Pow(math.Pow(a/m, k)+math.Pow(b/m, k), 1/k)
}
