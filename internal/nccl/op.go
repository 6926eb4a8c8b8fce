package nccl

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Op is a collective as nccl-tests names it ("all_reduce"): its benchmark
// without "_perf". Stored records read "" as AllReduce (OrAllReduce).
type Op string

// The collectives of one nccl-tests build (its *_perf binaries).
const (
	AllReduce     Op = "all_reduce"
	AllGather     Op = "all_gather"
	ReduceScatter Op = "reduce_scatter"
	AllToAll      Op = "alltoall"
	SendRecv      Op = "sendrecv"
	Broadcast     Op = "broadcast"
	Reduce        Op = "reduce"
)

// opInfo is what differs between the collectives: nccl-tests' busbw
// factor for n ranks, NCCL's name in its logs, and the per-function and
// tuner CSV name ("" for ops NCCL runs as send/recv).
type opInfo struct {
	busFactor   func(n int) float64
	function    string
	perFunction string
}

// ringFactor is (n−1)/n: 0 for one rank, as nccl-tests prints it.
func ringFactor(n int) float64 {
	if n <= 1 {
		return 0
	}
	return float64(n-1) / float64(n)
}

var ops = map[Op]opInfo{
	AllReduce:     {busFactor: func(n int) float64 { return 2 * ringFactor(n) }, function: "AllReduce", perFunction: "allreduce"},
	AllGather:     {busFactor: ringFactor, function: "AllGather", perFunction: "allgather"},
	ReduceScatter: {busFactor: ringFactor, function: "ReduceScatter", perFunction: "reducescatter"},
	AllToAll:      {busFactor: ringFactor, function: "AlltoAll"},
	SendRecv:      {busFactor: func(int) float64 { return 1 }, function: "SendRecv"},
	Broadcast:     {busFactor: func(int) float64 { return 1 }, function: "Broadcast", perFunction: "broadcast"},
	Reduce:        {busFactor: func(int) float64 { return 1 }, function: "Reduce", perFunction: "reduce"},
}

// Ops are every collective nccltune measures, in nccl-tests' order.
var Ops = []Op{AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv, Broadcast, Reduce}

// OpNames are Ops as strings, for flag help and "did you mean".
func OpNames() []string { return opStrings(Ops) }

// JoinOps is ops as "all_gather, broadcast", for messages and tables.
func JoinOps(ops []Op) string { return strings.Join(opStrings(ops), ", ") }

func opStrings(ops []Op) []string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = string(o)
	}
	return s
}

// ParseOp reads an op in nccl-tests' spelling, or as the benchmark
// ("all_gather_perf"), NCCL ("AllGather") or the tuner ("allgather") name it.
func ParseOp(s string) (Op, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "_mpi"), "_perf")
	if _, ok := ops[Op(t)]; ok {
		return Op(t), nil
	}
	if o, ok := OpFromFunction(t); ok {
		return o, nil
	}
	var hint string
	if near := Nearest(t, OpNames()); near != "" {
		hint = " (did you mean " + near + "?)"
	}
	return "", fmt.Errorf("unknown collective %q%s: use one of %s", s, hint, JoinOps(Ops))
}

// OpFromFunction maps NCCL's function name ("AllReduce", "AlltoAll",
// case and underscores ignored) or the tuner's ("allreduce") to the op.
func OpFromFunction(name string) (Op, bool) {
	n := strings.ToLower(strings.ReplaceAll(name, "_", ""))
	for o, info := range ops {
		if strings.ToLower(info.function) == n || string(o) == n || strings.ReplaceAll(string(o), "_", "") == n {
			return o, true
		}
	}
	return "", false
}

// Valid says whether o is one of Ops.
func (o Op) Valid() bool { _, ok := ops[o]; return ok }

// OrAllReduce is o, or AllReduce for the zero Op.
func (o Op) OrAllReduce() Op { return cmp.Or(o, AllReduce) }

// Benchmark is the nccl-tests binary that measures o ("all_gather_perf").
func (o Op) Benchmark() string { return string(o.OrAllReduce()) + "_perf" }

// Function is NCCL's name for o in its logs ("AllGather").
func (o Op) Function() string { return ops[o.OrAllReduce()].function }

// PerFunction is o's name in NCCL_ALGO/NCCL_PROTO's per-function form and
// the tuner CSV ("allgather"); ok is false for ops NCCL runs as send/recv.
func (o Op) PerFunction() (string, bool) {
	f := ops[o.OrAllReduce()].perFunction
	return f, f != ""
}

// BusFactor is nccl-tests' bus-bandwidth factor for o on n ranks:
// busbw = algbw × BusFactor.
func (o Op) BusFactor(n int) float64 { return ops[o.OrAllReduce()].busFactor(n) }

// String is nccl-tests' spelling.
func (o Op) String() string { return string(o.OrAllReduce()) }

// RowShape is the size and count columns nccl-tests prints for a size
// asked for. The ops that split the buffer round each rank's share down to
// 16 bytes: 512 KiB all-gathered on 3 ranks prints as 524256, count 43688.
func (o Op) RowShape(size, eltSize int64, n int) (bytes, count int64) {
	eltSize = max(eltSize, 1)
	count = size / eltSize
	if o.Splits() {
		nr := int64(max(n, 1))
		align := max(16/eltSize, 1)
		base := (count / nr) &^ (align - 1)
		return base * nr * eltSize, base
	}
	return count * eltSize, count
}

// MinBytes is the smallest size nccl-tests measures of o on n ranks (n ≤
// 0 taken as one) with 4-byte floats: one element, or one aligned share
// per rank for the ops that split the buffer.
func (o Op) MinBytes(n int) int64 {
	const elt = 4
	if !o.Splits() {
		return elt
	}
	return int64(max(n, 1)) * max(16/elt, 1) * elt
}

// SmallestSafe is the smallest size a launch of o may ask nccl-tests for
// on n ranks: MinBytes(n), or UnknownRanksFloor for an op that splits its
// buffer on uncounted ranks (rows of 0 bytes would read as a new cycle).
func (o Op) SmallestSafe(n int) int64 {
	if n <= 0 && o.Splits() {
		return UnknownRanksFloor
	}
	return o.MinBytes(n)
}

// UnknownRanksFloor is SmallestSafe's floor: 32K holds 2048 ranks' share
// of 16 bytes.
const UnknownRanksFloor = 32 << 10

// Splits says whether nccl-tests gives each rank a share of the buffer.
func (o Op) Splits() bool {
	return slices.Contains([]Op{AllGather, ReduceScatter, AllToAll}, o.OrAllReduce())
}

// Reduces says whether o takes a reduction op (nccl-tests' -o).
func (o Op) Reduces() bool {
	return !slices.Contains([]Op{AllGather, AllToAll, Broadcast}, o.OrAllReduce())
}

// Rooted says whether o has a root (nccl-tests' -r).
func (o Op) Rooted() bool {
	r := o.OrAllReduce()
	return r == Broadcast || r == Reduce
}

// Part is one part of a workload: a collective, its band of sizes and its
// weight in the objective. A part read from a call (ParseCall) is timed:
// Calls per step (also its Weight) at the sizes Logged, ascending,
// measured at the nearest power of two (Band); LoggedCalls are the calls
// at each of Logged (nil in older records).
type Part struct {
	Op          Op
	Band        Band
	Weight      float64
	Calls       float64
	Logged      []int64
	LoggedCalls []float64
}

// Timed reports whether p came from a call (ParseCall).
func (p Part) Timed() bool { return p.Calls > 0 }

// String writes a part as ParsePart reads it: "all_gather:1M-8M:0.2"; a
// timed part as ParseCall reads it, "all_reduce:10240:760" (a part of
// merged calls with the size it is measured at: "all_reduce:8K:770").
func (p Part) String() string {
	if p.Timed() {
		size := FormatSize(p.Band.Min)
		if len(p.Logged) == 1 {
			size = strconv.FormatInt(p.Logged[0], 10)
		}
		return string(p.Op.OrAllReduce()) + ":" + size + ":" + strconv.FormatFloat(p.Calls, 'g', -1, 64)
	}
	return string(p.Op.OrAllReduce()) + ":" + p.Band.String() + ":" + strconv.FormatFloat(p.Weight, 'g', -1, 64)
}

// ParseCall reads OP:BYTES:CALLS ("all_reduce:10240:760"): calls per step
// of op at a size, measured at the nearest power of two.
func ParseCall(s string) (Part, error) {
	fields := strings.Split(strings.TrimSpace(s), ":")
	if len(fields) != 3 {
		return Part{}, fmt.Errorf("call %q: write OP:BYTES:CALLS, the calls per step of one op at one size, e.g. all_reduce:10240:760", s)
	}
	op, bytes, err := parseOpBytes("call", s, fields)
	if err != nil {
		return Part{}, err
	}
	calls, err := strconv.ParseFloat(fields[2], 64)
	if err != nil || !(calls > 0) || calls > 1e12 {
		return Part{}, fmt.Errorf("call %q: calls %q must be a positive number (calls per step)", s, fields[2])
	}
	at := NearestPowerOfTwo(bytes)
	return Part{Op: op, Band: Band{Min: at, Max: at}, Weight: calls, Calls: calls, Logged: []int64{bytes}, LoggedCalls: []float64{calls}}, nil
}

// parseOpBytes reads the OP and BYTES fields a call and a choice (what
// names s in errors) begin with.
func parseOpBytes(what, s string, fields []string) (Op, int64, error) {
	op, opErr := ParseOp(fields[0])
	bytes, err := ParseSize(fields[1])
	if err == nil && (bytes <= 0 || bytes > MaxBandSize) {
		err = fmt.Errorf("size %s must be from 1 byte to %s", fields[1], FormatSize(MaxBandSize))
	}
	if err = cmp.Or(opErr, err); err != nil {
		return "", 0, fmt.Errorf("%s %q: %w", what, s, err)
	}
	return op, bytes, nil
}

// MergeCalls merges timed parts of one op on one power of two into one
// part (calls summed, logged sizes kept ascending), in first-appearance
// order. Each part's Logged must be ascending, as ParseCall's (one size) are.
func MergeCalls(parts []Part) Workload {
	var out Workload
	for _, p := range parts {
		i := slices.IndexFunc(out, func(q Part) bool { return q.Op.OrAllReduce() == p.Op.OrAllReduce() && q.Band == p.Band })
		if i < 0 {
			p.Logged, p.LoggedCalls = slices.Clone(p.Logged), slices.Clone(p.LoggedCalls)
			out = append(out, p)
			continue
		}
		q := &out[i]
		q.Calls += p.Calls
		q.Weight += p.Weight
		for k, b := range p.Logged {
			j, found := slices.BinarySearch(q.Logged, b) // Logged stays ascending
			if !found {
				q.Logged, q.LoggedCalls = slices.Insert(q.Logged, j, b), slices.Insert(q.LoggedCalls, j, 0)
			}
			q.LoggedCalls[j] += p.LoggedCalls[k]
		}
	}
	return out
}

// CallsText is a timed workload's calls per op: "all_reduce 10240×760,
// 2048000×80; all_gather 1048576×13" ("9000+10240×800" without
// LoggedCalls).
func (w Workload) CallsText() string {
	var ops []Op
	per := map[Op][]callEntry{}
	for _, p := range w {
		o := p.Op.OrAllReduce()
		if per[o] == nil {
			ops = append(ops, o)
		}
		per[o] = append(per[o], p.callEntries()...)
	}
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = string(o) + " " + joinCalls(per[o])
	}
	return strings.Join(out, "; ")
}

// CallsText is one timed part's calls without the op: "9000×530, 10240×240".
func (p Part) CallsText() string { return joinCalls(p.callEntries()) }

// callEntry is one size a part is called at, with its text.
type callEntry struct {
	size int64
	text string
}

// callEntries are p's calls, one per size (or one without LoggedCalls).
func (p Part) callEntries() []callEntry {
	calls := func(c float64) string { return strconv.FormatFloat(c, 'g', -1, 64) }
	if len(p.LoggedCalls) == len(p.Logged) && len(p.Logged) > 0 {
		out := make([]callEntry, len(p.Logged))
		for i, b := range p.Logged {
			out[i] = callEntry{b, fmt.Sprintf("%d×%s", b, calls(p.LoggedCalls[i]))}
		}
		return out
	}
	sizes := make([]string, len(p.Logged))
	for i, b := range p.Logged {
		sizes[i] = strconv.FormatInt(b, 10)
	}
	if len(sizes) == 0 {
		sizes = []string{FormatSize(p.Band.Min)}
	}
	return []callEntry{{p.Band.Min, strings.Join(sizes, "+") + "×" + calls(p.Calls)}}
}

// joinCalls writes entries in increasing size, comma-separated.
func joinCalls(es []callEntry) string {
	es = slices.Clone(es)
	slices.SortStableFunc(es, func(a, b callEntry) int { return cmp.Compare(a.size, b.size) })
	texts := make([]string, len(es))
	for k, e := range es {
		texts[k] = e.text
	}
	return strings.Join(texts, ", ")
}

// ParsePart reads OP:BAND[:WEIGHT] ("all_reduce:512K-4M:0.8"); a missing
// weight is 1 (weights are normalised by the workload).
func ParsePart(s string) (Part, error) {
	fields := strings.Split(strings.TrimSpace(s), ":")
	if len(fields) < 2 || len(fields) > 3 {
		return Part{}, fmt.Errorf("part %q: write OP:BAND[:WEIGHT], e.g. all_reduce:512K-4M:0.8", s)
	}
	op, opErr := ParseOp(fields[0])
	band, bandErr := ParseBand(fields[1])
	if err := cmp.Or(opErr, bandErr); err != nil {
		return Part{}, fmt.Errorf("part %q: %w", s, err)
	}
	p := Part{Op: op, Band: band, Weight: 1}
	if len(fields) == 3 {
		w, err := strconv.ParseFloat(fields[2], 64)
		if err != nil || !(w > 0) || w > 1e6 {
			return Part{}, fmt.Errorf("part %q: weight %q must be a positive number", s, fields[2])
		}
		p.Weight = w
	}
	return p, nil
}

// Workload is what a study tunes for: one or more parts. A one-part
// workload with weight 1 is an ordinary one-band study.
type Workload []Part

// ScoredByRounds reports whether a study of w is scored by rounds of one
// launch per op (several parts), not per launch over its band.
func (w Workload) ScoredByRounds() bool { return len(w) > 1 }

// BeyondOnePart reports whether a study of w guarding guarded measures
// more than one part of one op.
func (w Workload) BeyondOnePart(guarded []Op) bool { return w.ScoredByRounds() || len(guarded) > 0 }

// LaunchOp is the op a stored launch of a study of w ran: a one-part
// study's launches name none and ran its part's op.
func (w Workload) LaunchOp(named Op) Op {
	if named == "" && len(w) > 0 {
		return w[0].Op.OrAllReduce()
	}
	return named.OrAllReduce()
}

// Timed reports whether w's parts came from calls (ParseCall): its
// objective is the time a step spends in them, Σ calls × time.
func (w Workload) Timed() bool { return len(w) > 0 && w[0].Timed() }

// StepUS is a timed workload's time per step in µs from a study's score
// (a one-call study scores the time per call); 0 when not timed.
func (w Workload) StepUS(score float64) float64 {
	switch {
	case !w.Timed():
		return 0
	case !w.ScoredByRounds():
		return w[0].Calls * score
	}
	return score
}

// Validate refuses an empty workload and two parts of one op whose bands
// overlap (they would count the same sizes twice).
func (w Workload) Validate() error {
	if len(w) == 0 {
		return fmt.Errorf("a workload needs at least one part (OP:BAND[:WEIGHT])")
	}
	for i, p := range w {
		if p.Timed() != w.Timed() {
			band, call := p, w[0]
			if p.Timed() {
				band, call = w[0], p
			}
			return fmt.Errorf("%s is a part (OP:BAND[:WEIGHT]) and %s a call (OP:BYTES:CALLS): give the workload as calls or as parts, not both", band, call)
		}
		if !p.Op.OrAllReduce().Valid() {
			return fmt.Errorf("part %d: unknown collective %q", i+1, p.Op)
		}
		if err := p.Band.Validate(); err != nil {
			return fmt.Errorf("part %d (%s): %w", i+1, p, err)
		}
		if !(p.Weight > 0) {
			return fmt.Errorf("part %d (%s): weight must be positive", i+1, p)
		}
		for _, q := range w[:i] {
			if q.Op.OrAllReduce() == p.Op.OrAllReduce() && q.Band.Min <= p.Band.Max && p.Band.Min <= q.Band.Max {
				return fmt.Errorf("parts %s and %s overlap: give one op's sizes once", q, p)
			}
		}
	}
	return nil
}

// Weights are the parts' weights normalised to sum to 1, in order.
func (w Workload) Weights() []float64 {
	var sum float64
	for _, p := range w {
		sum += p.Weight
	}
	out := make([]float64, len(w))
	for i, p := range w {
		if sum > 0 {
			out[i] = p.Weight / sum
		}
	}
	return out
}

// Ops are the distinct ops of the workload, in nccl-tests' order.
func (w Workload) Ops() []Op { return w.opsIn(true) }

// OtherOps are the ops of Ops outside the workload, in nccl-tests' order.
func (w Workload) OtherOps() []Op { return w.opsIn(false) }

// opsIn lists the ops of Ops that are (in) or are not in the workload.
func (w Workload) opsIn(in bool) []Op {
	seen := map[Op]bool{}
	for _, p := range w {
		seen[p.Op.OrAllReduce()] = true
	}
	var out []Op
	for _, o := range Ops {
		if seen[o] == in {
			out = append(out, o)
		}
	}
	return out
}

// Sizes are the sizes the workload measures for op, ascending (the union
// of that op's parts' bands).
func (w Workload) Sizes(op Op) []int64 {
	set := map[int64]bool{}
	for _, p := range w {
		if p.Op.OrAllReduce() == op.OrAllReduce() {
			for _, s := range p.Band.Sizes() {
				set[s] = true
			}
		}
	}
	out := slices.AppendSeq(make([]int64, 0, len(set)), maps.Keys(set))
	slices.Sort(out)
	return out
}

// String writes the workload as its parts, space-separated.
func (w Workload) String() string {
	s := make([]string, len(w))
	for i, p := range w {
		s[i] = p.String()
	}
	return strings.Join(s, " ")
}

// LoggedChoice is the algorithm and protocol (NormName) a process's own
// NCCL logged for its calls of one op at one size.
type LoggedChoice struct {
	Op    Op
	Bytes int64
	Algo  string
	Proto string
}

// String writes c as ParseLoggedChoice reads it: "all_reduce:81920:ring:simple".
func (c LoggedChoice) String() string {
	return string(c.Op.OrAllReduce()) + ":" + strconv.FormatInt(c.Bytes, 10) + ":" + strings.ToLower(c.Algo) + ":" + strings.ToLower(c.Proto)
}

// ParseLoggedChoice reads OP:BYTES:ALGO:PROTO ("all_reduce:81920:ring:simple").
func ParseLoggedChoice(s string) (LoggedChoice, error) {
	fields := strings.Split(strings.TrimSpace(s), ":")
	if len(fields) != 4 {
		return LoggedChoice{}, fmt.Errorf("choice %q: write OP:BYTES:ALGO:PROTO, what NCCL chose for one op at one size, e.g. all_reduce:81920:ring:simple", s)
	}
	op, bytes, err := parseOpBytes("choice", s, fields)
	if err != nil {
		return LoggedChoice{}, err
	}
	algo, proto := NormName(fields[2]), NormName(fields[3])
	if !slices.Contains(planAlgos, algo) {
		return LoggedChoice{}, fmt.Errorf("choice %q: algorithm %q is not one NCCL knows (%s)", s, fields[2], strings.ToLower(strings.Join(planAlgos, ", ")))
	}
	if !slices.Contains(planProtos, proto) {
		return LoggedChoice{}, fmt.Errorf("choice %q: protocol %q is not one NCCL knows (%s)", s, fields[3], strings.ToLower(strings.Join(planProtos, ", ")))
	}
	return LoggedChoice{Op: op.OrAllReduce(), Bytes: bytes, Algo: algo, Proto: proto}, nil
}
