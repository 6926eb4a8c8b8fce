package nccl

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Choice is what NCCL runs for one message size: the algorithm and
// protocol its tuner picked and how many channels it spreads the work on.
// Names are normalised (see NormName): RING, TREE, NVLS…; LL, LL128, SIMPLE.
type Choice struct {
	Algo     string `json:"algo"`
	Proto    string `json:"proto"`
	Channels int    `json:"channels"`
}

func (c Choice) String() string { return fmt.Sprintf("%s/%s/%d", c.Algo, c.Proto, c.Channels) }

// Plan is what NCCL runs per message size (bytes → choice).
type Plan map[int64]Choice

// Sizes returns the plan's sizes, ascending.
func (p Plan) Sizes() []int64 { return slices.Sorted(maps.Keys(p)) }

// Key is the plan's canonical text, "524288:RING/SIMPLE/2 1048576:…",
// sizes ascending: equal plans have equal keys, usable as a map key.
func (p Plan) Key() string {
	parts := make([]string, 0, len(p))
	for _, s := range p.Sizes() {
		parts = append(parts, strconv.FormatInt(s, 10)+":"+p[s].String())
	}
	return strings.Join(parts, " ")
}

// Equal reports whether p and q make the same choices at the same sizes.
func (p Plan) Equal(q Plan) bool { return maps.Equal(p, q) }

// SendRecvAlgo is the algorithm a send/recv op's plan names (SendRecvPlan).
const SendRecvAlgo = "P2P"

// SendRecvPlan is the plan of an op NCCL runs as grouped send/recv
// (alltoall, sendrecv; no TUNING line): at every size, the communicator's
// channels (NCCL's p2p channels follow them), the protocol left blank.
// nil without a channel count.
func SendRecvPlan(sizes []int64, channels int) Plan {
	if channels <= 0 {
		return nil
	}
	out := Plan{}
	for _, s := range sizes {
		out[s] = Choice{Algo: SendRecvAlgo, Channels: channels}
	}
	return out
}

// Restrict returns the plan at the given sizes only; sizes the plan does
// not hold are left out (Covers says whether any is missing).
func (p Plan) Restrict(sizes []int64) Plan {
	out := Plan{}
	for _, s := range sizes {
		if c, ok := p[s]; ok {
			out[s] = c
		}
	}
	return out
}

// Covers reports whether the plan holds a choice for every size.
func (p Plan) Covers(sizes []int64) bool {
	for _, s := range sizes {
		if _, ok := p[s]; !ok {
			return false
		}
	}
	return len(sizes) > 0
}

// Clone returns a copy of the plan.
func (p Plan) Clone() Plan {
	out := make(Plan, len(p))
	maps.Copy(out, p)
	return out
}

// used returns the algorithms and protocols the plan chooses, and the
// most channels it uses at one size.
func (p Plan) used() (algos, protos map[string]bool, channels int) {
	algos, protos = map[string]bool{}, map[string]bool{}
	for _, c := range p {
		algos[c.Algo] = true
		protos[c.Proto] = true
		channels = max(channels, c.Channels)
	}
	return algos, protos, channels
}

// NormName normalises an algorithm or protocol name ("CollNetDirect",
// "COLLNET_DIRECT"; "Simple") to upper case without '_'.
func NormName(s string) string {
	return strings.ReplaceAll(strings.ToUpper(strings.TrimSpace(s)), "_", "")
}

// The protocols and algorithms NCCL knows (knob.go's lists), normalised.
var (
	planProtos = normNames(protocols)
	planAlgos  = normNames(algorithms)
)

func normNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = NormName(n)
	}
	return out
}

// Status says whether NCCL's defaults enable a protocol or an algorithm.
type Status int

const (
	// Unknown: the log did not show it (no TUNING table).
	Unknown Status = iota
	Enabled
	// Disabled by NCCL's defaults on this platform: switching it on may
	// give wrong results or fail.
	Disabled
	// Unavailable: an algorithm this fabric has no path for (NVLS without
	// NVLink SHARP): listing it changes nothing.
	Unavailable
)

func (s Status) String() string {
	return cmp.Or(map[Status]string{Enabled: "enabled", Disabled: "disabled", Unavailable: "unavailable"}[s], "unknown")
}

// Native is what NCCL decided and has under one config (NCCL's defaults
// when Config is empty), as one debug launch's log shows it.
type Native struct {
	// Collective is NCCL's name ("AllReduce"); "" when unknown.
	Collective string `json:"collective,omitempty"`
	// Config is the config the log was read under; empty = the defaults.
	Config Config `json:"config,omitempty"`
	// Plan is NCCL's choice per size.
	Plan Plan `json:"-"`
	// Channels is the collective channels NCCL set up; 0 when unknown.
	Channels int `json:"channels,omitempty"`
	// NICs is the number of distinct network devices NCCL uses; 0 when unknown.
	NICs int `json:"nics,omitempty"`
	// NoNetwork: the log shows that no data crosses the network.
	NoNetwork bool `json:"no_network,omitempty"`
	// NetRoutes are the channel-to-NIC routes as the log prints them
	// (benchfmt.NetRoute), sorted; nil when the log shows none.
	NetRoutes []string `json:"-"`
	// SameRoutes are the NCCL_CROSS_NIC values proved to route every
	// channel as these NetRoutes do (LearnRoutes): no-ops here.
	SameRoutes map[string]bool `json:"-"`
	// Version is NCCL's version, "" when unknown.
	Version string `json:"nccl_version,omitempty"`
	// SendRecv: NCCL runs the collective as grouped send/recv, which no
	// tuner plans and no list reaches; its Plan is SendRecvPlan's.
	SendRecv bool `json:"send_recv,omitempty"`
	// Table is NCCL's TUNING table of the defaults (algorithm → protocol
	// → bandwidth, 0 disabled), always the defaults' even in a Native of
	// another config; nil when the log had none.
	Table map[string]map[string]float64 `json:"-"`
}

// ProtoStatus says whether NCCL's defaults enable protocol p for ring and
// tree. Without a table, LL and Simple count as enabled, LL128 unknown.
func (n Native) ProtoStatus(p string) Status {
	p = NormName(p)
	if n.Table == nil {
		if p == "LL" || p == "SIMPLE" {
			return Enabled
		}
		return Unknown
	}
	on, off := 0, 0
	for _, a := range []string{"RING", "TREE"} {
		if !n.algoAvailable(a) {
			continue
		}
		if n.Table[a][p] > 0 {
			on++
		} else {
			off++
		}
	}
	switch {
	case off > 0:
		// Off for one of them: listing it explicitly turns it on there.
		return Disabled
	case on > 0:
		return Enabled
	}
	return Unknown
}

// AlgoStatus says whether NCCL's defaults enable algorithm a. Without a
// table, Ring and Tree count as enabled, the others as unknown.
func (n Native) AlgoStatus(a string) Status {
	a = NormName(a)
	if n.Table == nil {
		if a == "RING" || a == "TREE" {
			return Enabled
		}
		return Unknown
	}
	if n.algoAvailable(a) {
		return Enabled
	}
	return Unavailable
}

func (n Native) algoAvailable(a string) bool {
	for _, bw := range n.Table[a] {
		if bw > 0 {
			return true
		}
	}
	return false
}

// Drop is a knob left out of a config because it changes nothing, and why.
type Drop struct {
	Knob   string `json:"knob"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
	// Rule names the rule that proved it, without values, for counting.
	Rule string `json:"rule,omitempty"`
}

// The rules that prove a knob changes nothing (Drop.Rule).
const (
	RuleNoNetwork    = "NCCL_CROSS_NIC where no data crosses the network"
	RuleOneNIC       = "NCCL_CROSS_NIC with one NIC"
	RuleCapAbove     = "a channel or CTA cap at or above the channels NCCL uses"
	RuleFloorOne     = "a channel or CTA floor of 1"
	RuleOtherColl    = "an algorithm or protocol list for other collectives only"
	RuleSendRecv     = "an algorithm or protocol list, which send/recv ops (alltoall, sendrecv) never read"
	RuleOnlyDisabled = "an algorithm or protocol list that leaves out only what NCCL's defaults disabled"
	RuleHoldsChoices = "an algorithm or protocol list that holds every choice NCCL makes in the band"
)

// Resolution is what Resolve predicts for one config.
type Resolution struct {
	// Plan is the predicted plan, a best guess unless Certain (the rules
	// prove it).
	Plan    Plan
	Certain bool
	// Reduced is the config without the knobs proved to change nothing
	// (Dropped, each with its reason).
	Reduced Config
	Dropped []Drop
	// Enables lists what the config switches on that NCCL's defaults had
	// disabled or may have, each with why.
	Enables []string
	// Conditional are lists holding every choice of the known plan that
	// stay in Reduced because another knob changes the plan: no-ops only if
	// NCCL still makes the same choices, which only its log can tell.
	Conditional []Drop
	// Key identifies what NCCL runs: "plan:" and the plan's key when
	// Certain, else "config:" and the reduced config's key.
	Key string
}

// Explain predicts what NCCL runs under cfg from what it ran under
// n.Config, which must be a part of cfg. The rules, each proved by how
// NCCL reads its env:
//   - NCCL_CROSS_NIC changes nothing with one NIC, or where its own log
//     routes every channel through the defaults' NICs (LearnRoutes).
//   - A channel or CTA cap at or above the channels NCCL uses changes
//     nothing; a floor of 1 changes nothing.
//   - An NCCL_ALGO or NCCL_PROTO list that holds every choice NCCL made and
//     switches on nothing the defaults had off changes nothing while the
//     rest of the config changes nothing either (the tuner picks the
//     fastest enabled choice); a list for other collectives only neither.
//   - A list that leaves out a choice NCCL made changes the plan; a
//     single name forces it.
//
// Anything else is uncertain: the plan is a best guess.
func (n Native) Explain(cfg Config) Resolution {
	cfg = cfg.Canonical()
	res := Resolution{Plan: n.Plan.Clone(), Certain: true, Reduced: cfg.Clone()}
	for k, v := range n.Config.Canonical() {
		if cfg[k] != v {
			res.Certain = false
			res.Key = "config:" + cfg.Key()
			return res
		}
		delete(res.Reduced, k)
	}
	e := explanation{n: n, cfg: cfg, res: &res}
	e.algos, e.protos, e.used = n.Plan.used()
	if len(n.Plan) == 0 {
		res.Certain = false
	}
	for _, k := range res.Reduced.Names() {
		e.knob(k, res.Reduced[k])
	}
	e.conclude()
	return res
}

// explanation is Explain at work: pending are no-ops that hold only if
// nothing else changes the plan; algos, protos and used what the
// defaults' plan uses.
type explanation struct {
	n             Native
	cfg           Config
	res           *Resolution
	pending       []Drop
	algos, protos map[string]bool
	used          int
}

// drop records knob k as changing nothing, by rule, and takes it out of
// the reduced config.
func (e *explanation) drop(k, rule, reason string) {
	e.res.Dropped = append(e.res.Dropped, Drop{Knob: k, Value: e.res.Reduced[k], Reason: reason, Rule: rule})
	delete(e.res.Reduced, k)
}

// ShownByTuning reports whether NCCL's TUNING line shows every effect of
// knob k: the lists and channel limits (the plan knobs) act only through
// what it prints.
func ShownByTuning(k string) bool { return IsPlanKnob(k) }

// knob works out what one knob of the config does to the plan: dropped
// as a no-op, pending, or applied to the plan as a guess (uncertain).
func (e *explanation) knob(k, v string) {
	n, res := e.n, e.res
	switch k {
	case "NCCL_CROSS_NIC":
		if rule, reason := n.crossNICNoOp(v); rule != "" {
			e.drop(k, rule, reason)
			return
		}
		res.Certain = false
	case "NCCL_MAX_NCHANNELS", "NCCL_MAX_CTAS":
		e.channelCap(k)
	case "NCCL_MIN_NCHANNELS", "NCCL_MIN_CTAS":
		if e.cfg.Int(k, 0) == 1 {
			e.drop(k, RuleFloorOne, "a floor of 1 channel changes nothing")
			return
		}
		res.Certain = false
	case "NCCL_PROTO", "NCCL_ALGO":
		e.choiceList(k, v)
	default:
		// Threads, buffers, sockets: the defaults' log cannot say.
		res.Certain = false
	}
}

// channelCap is a cap on channels: a no-op at or above what NCCL uses,
// else the plan's channels capped.
func (e *explanation) channelCap(k string) {
	n, res := e.n, e.res
	limit := e.cfg.Int(k, 0)
	if n.Channels > 0 && limit >= n.Channels && limit >= e.used {
		e.drop(k, RuleCapAbove, fmt.Sprintf("a cap of %d is at or above the %d channels NCCL uses", limit, n.Channels))
		return
	}
	for s, c := range res.Plan {
		c.Channels = min(c.Channels, max(limit, 1))
		res.Plan[s] = c
	}
	res.Certain = false
}

// choiceList is an NCCL_PROTO or NCCL_ALGO list: a no-op when it sets
// other collectives only or leaves out only what the defaults had off;
// pending when it holds every choice NCCL made; else the plan changes,
// and a single name forces it.
func (e *explanation) choiceList(k, v string) {
	n, res := e.n, e.res
	universe, chosen, status := planProtos, e.protos, n.ProtoStatus
	what := "protocol"
	if k == "NCCL_ALGO" {
		universe, chosen, status, what = planAlgos, e.algos, n.AlgoStatus, "algorithm"
	}
	if n.SendRecv {
		e.drop(k, RuleSendRecv, fmt.Sprintf("%s runs as send/recv, which no algorithm or protocol list reaches", n.Collective))
		return
	}
	set, applies, ok := n.listFor(v, universe)
	if !ok {
		res.Certain = false
		return
	}
	if !applies {
		e.drop(k, RuleOtherColl, fmt.Sprintf("sets only other collectives than %s", n.Collective))
		return
	}
	adds := e.enables(set, status, what)
	leavesOutOnlyDisabled := !slices.ContainsFunc(universe, func(u string) bool {
		return (set[u] && status(u) != Unavailable) != (status(u) == Enabled)
	})
	if !adds && n.Table != nil && leavesOutOnlyDisabled {
		// It leaves out only what the defaults had off: a no-op whatever the rest.
		e.drop(k, RuleOnlyDisabled, fmt.Sprintf("leaves out only %s NCCL's defaults disabled here", listText(universe, set)))
		return
	}
	holds := len(chosen) > 0
	for name := range chosen {
		holds = holds && set[name]
	}
	if holds && !adds && len(n.Plan) > 0 {
		// A no-op only while the rest of the config keeps NCCL's choices.
		e.pending = append(e.pending, Drop{Knob: k, Value: v, Rule: RuleHoldsChoices,
			Reason: fmt.Sprintf("holds every %s NCCL chooses here (%s)", what, strings.Join(slices.Sorted(maps.Keys(chosen)), ", "))})
		return
	}
	res.Certain = false
	if !holds && len(set) == 1 {
		forced := slices.Sorted(maps.Keys(set))[0]
		for s, c := range res.Plan {
			if k == "NCCL_PROTO" {
				c.Proto = forced
			} else {
				c.Algo = forced
			}
			res.Plan[s] = c
		}
	}
}

// enables notes what a list switches on that the defaults had off (or
// may have), and reports whether it switches on anything.
func (e *explanation) enables(set map[string]bool, status func(string) Status, what string) bool {
	adds := false
	for _, name := range slices.Sorted(maps.Keys(set)) {
		switch status(name) {
		case Disabled:
			adds = true
			e.res.Enables = append(e.res.Enables, fmt.Sprintf("%s: NCCL's defaults disabled this %s here", name, what))
		case Unknown:
			adds = true
			e.res.Enables = append(e.res.Enables, fmt.Sprintf("%s: the log does not show whether NCCL's defaults enable this %s", name, what))
		}
	}
	return adds
}

// conclude keys the resolution: when certain, the pending no-ops are
// dropped and the key is the plan plus the knobs that act beside it;
// else they stay conditional and the key is the reduced config.
func (e *explanation) conclude() {
	res := e.res
	if !res.Certain {
		res.Conditional = e.pending
		// Since NCCL 2.17 both names of a cap bind the same channels.
		res.Key = "config:" + e.n.CapsAsCTAs(res.Reduced).Key()
		return
	}
	for _, d := range e.pending {
		e.drop(d.Knob, d.Rule, d.Reason)
	}
	sort.Slice(res.Dropped, func(i, j int) bool { return res.Dropped[i].Knob < res.Dropped[j].Knob })
	res.Key = "plan:" + res.Plan.Key()
	// Knobs that act beside the plan make a different run on the same plan.
	beside := Config{}
	for k, v := range e.cfg {
		if _, gone := FindDrop(res.Dropped, k); !IsPlanKnob(k) && !gone {
			beside[k] = v
		}
	}
	if len(beside) > 0 {
		res.Key += " | " + beside.Key()
	}
}

// FindDrop is the drop of knob among ds, false when knob is not dropped.
func FindDrop(ds []Drop, knob string) (Drop, bool) {
	for _, d := range ds {
		if d.Knob == knob {
			return d, true
		}
	}
	return Drop{}, false
}

// CapsAsCTAs returns c with each limit spelt by its NCCL_*_CTAS name where
// NCCL reads both alike (2.17+, or version unknown).
func (n Native) CapsAsCTAs(c Config) Config {
	if v := VersionCode(n.Version); v > 0 && v < 21700 {
		return c.Clone()
	}
	return c.CapsAsCTAs()
}

// VersionCode turns NCCL version "2.28.3" into NCCL_VERSION_CODE 22803; 0
// (unknown) when v is not major.minor.patch from 2 on.
func VersionCode(v string) int {
	var major, minor, patch int
	if n, err := fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch); n != 3 || err != nil || major < 2 {
		return 0
	}
	return major*10000 + minor*100 + patch
}

// listText names what a set leaves out of universe ("LL128").
func listText(universe []string, set map[string]bool) string {
	var out []string
	for _, u := range universe {
		if !set[u] {
			out = append(out, u)
		}
	}
	return strings.Join(out, ", ") + ", which"
}

// Forbids reports whether cfg's NCCL_PROTO or NCCL_ALGO list, read for
// n's collective, leaves out c's protocol or algorithm, so that NCCL never
// runs c under cfg. false where no list applies or reads with certainty.
func (n Native) Forbids(cfg Config, c Choice) bool {
	if n.SendRecv {
		return false
	}
	cfg = cfg.Canonical()
	for _, l := range []struct {
		knob, name string
		universe   []string
	}{{"NCCL_PROTO", c.Proto, planProtos}, {"NCCL_ALGO", c.Algo, planAlgos}} {
		v, set := cfg[l.knob]
		if !set || l.name == "" {
			continue
		}
		if on, applies, ok := n.listFor(v, l.universe); ok && applies && !on[NormName(l.name)] {
			return true
		}
	}
	return false
}

// listFor reads an NCCL_PROTO or NCCL_ALGO value for n's collective: the
// set of names it enables, whether it applies to the collective at all,
// and ok false when the value cannot be read with certainty.
func (n Native) listFor(v string, universe []string) (set map[string]bool, applies, ok bool) {
	var list string // the collective's own entry, else the generic one
	hasGeneric, hasSpecific := false, false
	for _, part := range strings.Split(v, ";") {
		if coll, rest, isColl := strings.Cut(part, ":"); isColl {
			if n.Collective == "" {
				return nil, false, false
			}
			if strings.EqualFold(coll, n.Collective) {
				list, hasSpecific = rest, true
			}
			continue
		}
		hasGeneric = true
		if !hasSpecific {
			list = part
		}
	}
	if !hasGeneric && !hasSpecific {
		return nil, false, true
	}
	set = map[string]bool{}
	body, exclude := strings.CutPrefix(list, "^")
	names := map[string]bool{}
	for _, name := range strings.Split(body, ",") {
		nn := NormName(name)
		if !slices.Contains(universe, nn) {
			return nil, true, false
		}
		names[nn] = true
	}
	for _, u := range universe {
		if names[u] != exclude {
			set[u] = true
		}
	}
	return set, true, true
}

// AtCall is p's choice at a call of b bytes (RanFor's size of p's);
// ok false when p has none.
func (p Plan) AtCall(b, grain int64) (Choice, bool) {
	x, ok := RanFor(p.Sizes(), b, grain)
	if !ok {
		return Choice{}, false
	}
	return p[x], true
}

// LadderSize is the size of one ladder launch's sizes (-f 2) that
// nccl-tests ran for a call of b bytes: its sizes double, so the one in
// (b/2, b] is b's; ok false when there is none.
func LadderSize(sizes []int64, b int64) (int64, bool) {
	return RanFor(sizes, b, (b+1)/2)
}

// RanFor is the size of sizes that stands for a call of b bytes: b, else
// b rounded down to whole elements (less than grain below b); ok false
// when there is neither.
func RanFor(sizes []int64, b, grain int64) (int64, bool) {
	best, found := int64(0), false
	for _, x := range sizes {
		if x <= b && b-x < max(grain, 1) && (!found || x > best) {
			best, found = x, true
		}
	}
	return best, found
}
