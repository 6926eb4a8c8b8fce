package nccl

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Op is a collective as nccl-tests names it ("all_reduce", "all_gather",
// …): the name of its benchmark without "_perf". The zero Op is not an op;
// code that reads stored records from before ops were recorded treats ""
// as AllReduce (OrAllReduce).
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

// opInfo is what differs between the collectives: how nccl-tests turns a
// time into bus bandwidth, and the names NCCL gives the function.
type opInfo struct {
	// busFactor gives busbw = algbw × factor for n ranks (nccl-tests'
	// src/*.cu, *GetBw).
	busFactor func(n int) float64
	// function is NCCL's name in its logs ("AllReduce: opCount …",
	// "AllReduce: 2048000 Bytes -> Algo …").
	function string
	// perFunction is the name NCCL_ALGO/NCCL_PROTO's per-function form
	// takes ("allreduce:^tree", NCCL 2.24+), and the example tuner
	// plugin's CSV name; "" where NCCL has none (alltoall and sendrecv run
	// as send/recv and never reach the tuner or the per-function lists).
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

// ParseOp reads an op in nccl-tests' spelling; it also takes the benchmark's
// name ("all_gather_perf"), NCCL's ("AllGather") and the tuner's
// ("allgather"), so a name copied from any of them works.
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

// OrAllReduce is o, or AllReduce for the zero Op (records from before ops
// were recorded were all all-reduce).
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
// busbw = algbw × BusFactor (all-reduce 2(n−1)/n; all-gather,
// reduce-scatter, all-to-all (n−1)/n, so 0 on one rank; sendrecv,
// broadcast, reduce 1).
func (o Op) BusFactor(n int) float64 { return ops[o.OrAllReduce()].busFactor(n) }

// String is nccl-tests' spelling.
func (o Op) String() string { return string(o.OrAllReduce()) }

// RowShape is what nccl-tests prints for a size asked for: the size
// column (the larger of send and receive bytes, NCCL's nBytes) and the
// count column (the count the op is called with). The ops that split the
// buffer among the n ranks round each rank's share down to 16 bytes
// (AllGatherGetCollByteCount and its kin), so 512 KiB all-gathered on 3
// ranks prints as 524256 with count 43688; the others print the size.
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
// 0: unknown, taken as one) with its default float (4 bytes), the type
// every launch runs: one element, or for the ops that split the buffer
// one aligned share per rank (RowShape); below it the count is 0 and
// nothing is timed.
func (o Op) MinBytes(n int) int64 {
	const elt = 4
	if !o.Splits() {
		return elt
	}
	return int64(max(n, 1)) * max(16/elt, 1) * elt
}

// SmallestSafe is the smallest size a launch of o may ask nccl-tests for
// on n ranks: MinBytes(n), or, for an op that splits its buffer on ranks
// nobody counted (n ≤ 0: mpirun with a hostfile, no --np), UnknownRanksFloor.
// MinBytes(0) takes one rank, and on 16 ranks or more nccl-tests prints
// rows of 0 bytes below the real smallest size, where the text parser may
// read a repeated 0 as a new sweep cycle.
func (o Op) SmallestSafe(n int) int64 {
	if n <= 0 && o.Splits() {
		return UnknownRanksFloor
	}
	return o.MinBytes(n)
}

// UnknownRanksFloor is SmallestSafe's floor for an op that splits its
// buffer on an unknown number of ranks: 32K holds 2048 ranks' share of
// 16 bytes.
const UnknownRanksFloor = 32 << 10

// Splits says whether nccl-tests gives each rank a share of the buffer
// (all-gather, reduce-scatter, alltoall), so its size column is nRanks ×
// count × element size.
func (o Op) Splits() bool {
	switch o.OrAllReduce() {
	case AllGather, ReduceScatter, AllToAll:
		return true
	}
	return false
}

// Reduces says whether o takes a reduction op (nccl-tests' -o); for the
// others nccl-tests prints the redop column as "none".
func (o Op) Reduces() bool {
	switch o.OrAllReduce() {
	case AllGather, AllToAll, Broadcast:
		return false
	}
	return true
}

// Rooted says whether o has a root (nccl-tests' -r, default 0; the
// others print -1 in the root column).
func (o Op) Rooted() bool {
	r := o.OrAllReduce()
	return r == Broadcast || r == Reduce
}

// Part is one part of a workload: a collective, the band of sizes it sends
// and its weight in the study's objective. A part read from a call
// (ParseCall: what a process's log gave) is timed: Calls is how often the
// process calls the op per step at the sizes Logged, measured at the one
// power of two nearest to them (Band), and the objective counts its time
// Calls times (Workload.Timed).
type Part struct {
	Op     Op
	Band   Band
	Weight float64
	// Calls per step (> 0 only for a timed part; Weight is Calls then).
	Calls float64
	// Logged are the sizes in bytes the process calls, ascending, that
	// this part measures at Band (several when calls merged: MergeCalls).
	Logged []int64
	// LoggedCalls are the calls per step at each of Logged, in its order,
	// so that the workload reads back as the process called it (show,
	// history: CallsText); nil in a part stored before they were kept.
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
// of op at a size the process calls (bytes, or a size like 8K), measured
// at the nearest power of two (NearestPowerOfTwo, as `nccltune workload`
// counts a call).
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
	op, err := ParseOp(fields[0])
	if err != nil {
		return "", 0, fmt.Errorf("%s %q: %w", what, s, err)
	}
	bytes, err := ParseSize(fields[1])
	if err == nil && (bytes <= 0 || bytes > MaxBandSize) {
		err = fmt.Errorf("size %s must be from 1 byte to %s", fields[1], FormatSize(MaxBandSize))
	}
	if err != nil {
		return "", 0, fmt.Errorf("%s %q: %w", what, s, err)
	}
	return op, bytes, nil
}

// MergeCalls is the workload of timed parts with the calls of one op that
// fall on one power of two merged into one part (calls summed, the logged
// sizes kept), in the order each op and size first appears: one part per
// (op, size) measured.
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
			j := slices.Index(q.Logged, b)
			if j < 0 {
				j = len(q.Logged)
				q.Logged = append(q.Logged, b)
				q.LoggedCalls = append(q.LoggedCalls, 0)
			}
			q.LoggedCalls[j] += p.LoggedCalls[k]
		}
		sortLogged(q)
	}
	return out
}

// sortLogged puts a part's logged sizes in ascending order, their calls
// with them.
func sortLogged(p *Part) {
	idx := make([]int, len(p.Logged))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(p.Logged[a], p.Logged[b]) })
	sizes, calls := make([]int64, len(idx)), make([]float64, len(idx))
	for k, i := range idx {
		sizes[k], calls[k] = p.Logged[i], p.LoggedCalls[i]
	}
	p.Logged, p.LoggedCalls = sizes, calls
}

// CallsText is a timed workload as show and history describe it: per op,
// each size it calls with its calls, "all_reduce 10240×760,
// 2048000×80; all_gather 1048576×13", never the band it is measured
// over. A part stored without per-size calls (LoggedCalls) says its
// sizes with their calls together ("9000+10240×800").
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

// CallsText is one timed part's calls in Workload.CallsText's words,
// without the op: "10240×760", or "9000×530, 10240×240" for calls
// merged onto one power of two (MergeCalls).
func (p Part) CallsText() string { return joinCalls(p.callEntries()) }

// callEntry is one size a part is called at, with its text.
type callEntry struct {
	size int64
	text string
}

// callEntries are p's calls, one per size it is called at, or one for
// all of them in a part stored without per-size calls.
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
	op, err := ParseOp(fields[0])
	if err != nil {
		return Part{}, fmt.Errorf("part %q: %w", s, err)
	}
	band, err := ParseBand(fields[1])
	if err != nil {
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

// ScoredByRounds reports whether a study of w is scored by rounds: a
// workload of several parts launches one op at a time, and only a round
// of every op's launch has the objective's score (a timed workload's
// time per step); a one-part study scores each launch over its band. The
// one rule every command, export and figure asks.
func (w Workload) ScoredByRounds() bool { return len(w) > 1 }

// BeyondOnePart reports whether a study of w that guards the ops guarded
// measures more than one part of one op: several parts, or guarded ops.
// verify, compare and the report then show every part and op.
func (w Workload) BeyondOnePart(guarded []Op) bool { return w.ScoredByRounds() || len(guarded) > 0 }

// LaunchOp is the op a stored launch of a study of w ran, from the op it
// names: a one-part study's launches of its part name none (search's
// requestOp keeps them as they were before workloads), and ran its
// part's op. The one rule search's resume and the export read it by.
func (w Workload) LaunchOp(named Op) Op {
	if named == "" && len(w) > 0 {
		return w[0].Op.OrAllReduce()
	}
	return named.OrAllReduce()
}

// Timed reports whether w's parts came from calls (ParseCall): its
// objective is the time a step spends in them, Σ calls × time.
func (w Workload) Timed() bool { return len(w) > 0 && w[0].Timed() }

// StepUS is a timed workload's time per step in µs from a study's score:
// a workload of several calls scores the step itself (Σ calls × time); a
// workload of one call is a one-part study, scored by its time per call.
// 0 for a workload that is not timed.
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

// OtherOps are the ops of Ops outside the workload, in nccl-tests' order:
// what a study of w measures only to guard it, or not at all.
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

// LoggedChoice is the algorithm and protocol a process's own NCCL chose
// for its calls of one op at one size, as its TUNING lines logged them
// ("AllReduce: 81920 Bytes -> Algo RING proto SIMPLE …"). Algo and Proto
// are normalised (NormName).
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

// ParseLoggedChoice reads OP:BYTES:ALGO:PROTO ("all_reduce:81920:ring:simple"):
// what NCCL chose, in the process's log, for its calls of op at a size it
// calls (written beside ParseCall's calls by `nccltune workload`).
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
