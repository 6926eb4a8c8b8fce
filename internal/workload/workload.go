// Package workload turns what a real process called (benchfmt.Call) into
// what nccltune tunes for: per communicator and collective the calls,
// bytes, histogram of sizes and time share, and the proposed workload,
// every (op, size) the process calls with its calls (search --calls).
package workload

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/texttable"
)

// Input is one file's calls.
type Input struct {
	Name string
	Log  *benchfmt.CallLog
}

// Options shape the summary and the proposal.
type Options struct {
	// Ranks picks the communicators of that many ranks for the proposal (0:
	// the rank count that holds the most calls or time).
	Ranks int
	// GraphCaptured: the counts are CUDA-graph captures, not replays.
	GraphCaptured bool
}

// Summary is what the inputs say and the workload proposed from them.
type Summary struct {
	Sources     []Source `json:"sources"`
	NCCLVersion string   `json:"nccl_version,omitempty"`
	// ChoicesForced is the first input's: the proposal then keeps no logged choice.
	ChoicesForced string         `json:"choices_forced,omitempty"`
	Communicators []Communicator `json:"communicators"`
	// Calls counts every call once per communicator.
	Calls int64 `json:"calls"`
	// TimeKnown: every counted call has an execution time (Inspector).
	TimeKnown bool `json:"time_known"`
	// GraphCaptured: the counts are not how often the calls run.
	GraphCaptured bool     `json:"graph_captured"`
	Proposal      Proposal `json:"proposal"`
	Notes         []string `json:"notes,omitempty"`
}

// Source is one input file.
type Source struct {
	File   string `json:"file"`
	Format string `json:"format"`
	// Records are the calls the file holds (each rank's own).
	Records      int             `json:"records"`
	GraphCapture []string        `json:"graph_capture,omitempty"`
	Skipped      []benchfmt.Skip `json:"skipped,omitempty"`
}

// Communicator is one NCCL communicator, every rank's calls counted once.
type Communicator struct {
	// ID is NCCL's commId (Inspector's id), "PARENT split N color C",
	// or "unnamed-N" when the log has no INIT lines.
	ID     string `json:"id"`
	NRanks int    `json:"nranks"`
	// Ranks are the ranks that logged calls on it; nil when not logged.
	Ranks     []int    `json:"ranks,omitempty"`
	Processes []string `json:"processes"`
	Calls     int64    `json:"calls"`
	Bytes     int64    `json:"bytes"`
	TimeUS    float64  `json:"time_us,omitempty"`
	// Captured counts the calls logged under CUDA-graph capture.
	Captured int64 `json:"captured,omitempty"`
	Ops      []Op  `json:"ops"`
	// Other counts calls no nccl-tests collective measures, by NCCL's name.
	Other map[string]int64 `json:"other,omitempty"`
	// Unsized counts calls whose size needs a rank count the log lacks;
	// ZeroBytes calls of 0 bytes (nothing to tune), apart from Calls.
	Unsized   int64 `json:"unsized,omitempty"`
	ZeroBytes int64 `json:"zero_bytes,omitempty"`
}

// Op is one collective of a communicator.
type Op struct {
	Op     nccl.Op `json:"op"`
	Calls  int64   `json:"calls"`
	Bytes  int64   `json:"bytes"`
	TimeUS float64 `json:"time_us,omitempty"`
	// Share is the op's share of the calls, or of the time when known.
	Share     float64 `json:"share"`
	Captured  int64   `json:"captured,omitempty"`
	Histogram []Bin   `json:"histogram"`
}

// Bin is one power of two of a histogram: the calls nearest to it on a log scale.
type Bin struct {
	Size   int64   `json:"bytes"`
	Calls  int64   `json:"calls"`
	Bytes  int64   `json:"total_bytes"`
	TimeUS float64 `json:"time_us,omitempty"`
	// Algo and Proto are what NCCL chose for most of these calls.
	Algo  string `json:"algo,omitempty"`
	Proto string `json:"proto,omitempty"`
	// Sizes are the sizes logged in this bin, ascending.
	Sizes []Size `json:"sizes"`
}

// Size is one size a process called, as logged, with its calls and time.
type Size struct {
	Bytes  int64   `json:"bytes"`
	Calls  int64   `json:"calls"`
	TimeUS float64 `json:"time_us,omitempty"`
	// Algo and Proto are what NCCL chose for every call at this size that
	// logged one; "" when none or several were logged.
	Algo  string `json:"algo,omitempty"`
	Proto string `json:"proto,omitempty"`
}

// BinOf is the power of two nearest to size on a log scale. nccl.ParseCall
// measures a call at the same power of two, by the same rule.
func BinOf(size int64) int64 { return nccl.NearestPowerOfTwo(size) }

// BinRange is the sizes BinOf counts at bin: lo ≤ size ≤ hi, found by
// asking BinOf itself, never a second copy of its rule (the tuner CSV
// gives a size measured at bin to every size counted there).
func BinRange(bin int64) (lo, hi int64) {
	lo = int64(sort.Search(math.MaxInt64, func(s int) bool { return BinOf(int64(s)) >= bin }))
	next := sort.Search(math.MaxInt64, func(s int) bool { return BinOf(int64(s)) > bin })
	if next == math.MaxInt64 {
		return lo, math.MaxInt64
	}
	return lo, int64(next) - 1
}

// Summarize reads the inputs' calls into communicators and proposes the workload.
func Summarize(inputs []Input, opt Options) (*Summary, error) {
	s := &Summary{GraphCaptured: opt.GraphCaptured}
	records := 0
	for _, in := range inputs {
		src := Source{File: in.Name, Format: in.Log.Format, Records: len(in.Log.Calls), GraphCapture: in.Log.GraphCapture, Skipped: in.Log.Skipped}
		s.Sources = append(s.Sources, src)
		for _, k := range in.Log.Skipped {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: %s skipped, %s (e.g. %s): not real NCCL values", in.Name, texttable.Plural(k.Records, "record"), k.Reason, k.Example))
		}
		s.GraphCaptured = s.GraphCaptured || len(in.Log.GraphCapture) > 0
		if s.ChoicesForced == "" && in.Log.ChoicesForced != "" {
			s.ChoicesForced = in.Log.ChoicesForced
			s.Notes = append(s.Notes, fmt.Sprintf("%s: NCCL's choices were forced (%s): the proposal keeps none of them (no chose:), since they are not NCCL's own", in.Name, in.Log.ChoicesForced))
		}
		if s.NCCLVersion == "" && in.Log.Facts != nil {
			s.NCCLVersion = in.Log.Facts.NCCLVersion
		}
		for _, n := range in.Log.Notes {
			if n := in.Name + ": " + n; !slices.Contains(s.Notes, n) {
				s.Notes = append(s.Notes, n)
			}
		}
		records += len(in.Log.Calls)
	}
	if records == 0 {
		return nil, benchfmt.ErrNoCalls
	}
	s.Communicators = communicators(eachCall(inputs), opt.GraphCaptured)
	s.TimeKnown = true
	for _, c := range s.Communicators {
		s.Calls += c.Calls
		s.GraphCaptured = s.GraphCaptured || c.Captured > 0
		for _, o := range c.Ops {
			for _, b := range o.Histogram {
				if b.Calls > 0 && !(b.TimeUS > 0) {
					s.TimeKnown = false
				}
			}
		}
		if c.Unsized > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("communicator %s: %d calls have no size (their rank count is not logged) and are left out", c.ID, c.Unsized))
		}
		if c.ZeroBytes > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("communicator %s: %d calls of 0 bytes move nothing: counted here, left out of the calls and the proposal", c.ID, c.ZeroBytes))
		}
	}
	if len(s.Communicators) > 0 && s.Communicators[0].ID == unnamed(1) {
		s.Notes = append(s.Notes, "no INIT lines: communicators told apart by their rank count and calls, so identical ones (data-parallel replicas) are counted as one; log with NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING to name them")
	}
	p, err := propose(s, opt)
	if err != nil {
		return nil, err
	}
	s.Proposal = p
	return s, nil
}

func unnamed(n int) string { return fmt.Sprintf("unnamed-%d", n) }

// eachCall is every input's calls in order, not copied: a run's calls are
// most of its memory.
func eachCall(inputs []Input) iter.Seq[benchfmt.Call] {
	return func(yield func(benchfmt.Call) bool) {
		for _, in := range inputs {
			for _, c := range in.Log.Calls {
				if !yield(c) {
					return
				}
			}
		}
	}
}

// seqKey is a collective's place in its communicator: Inspector numbers
// each function's calls apart, a COLL log all in one sequence: with the
// function both are unique.
type seqKey struct {
	function string
	seq      int64
}

// streamKey is one rank's view of one communicator: a COLL log's process
// and comm pointer, or Inspector's process, communicator id and rank count
// (nranks so that a TP group beside the world communicator stays apart).
type streamKey struct {
	process, ptr, id string
	nranks           int
}

func streamOf(c benchfmt.Call) streamKey {
	if c.CommPtr != "" {
		return streamKey{process: c.Process, ptr: c.CommPtr}
	}
	return streamKey{process: c.Process, id: c.CommID, nranks: c.NRanks}
}

// commKey is one communicator: its identity and rank count.
type commKey struct {
	id     string
	nranks int
}

// communicators groups the calls by communicator and counts each call
// once: a collective by its place in the sequence, a send per rank.
func communicators(calls iter.Seq[benchfmt.Call], allCaptured bool) []Communicator {
	ids := commIDs(calls)
	type agg struct {
		comm    Communicator
		ranks   map[int]bool
		procs   map[string]bool
		seen    map[seqKey]int // a collective's place → index into counted
		counted []benchfmt.Call
	}
	groups := map[commKey]*agg{}
	var order []commKey
	for c := range calls {
		k := commKey{ids[streamOf(c)], c.NRanks}
		g := groups[k]
		if g == nil {
			g = &agg{comm: Communicator{ID: k.id, NRanks: c.NRanks}, ranks: map[int]bool{}, procs: map[string]bool{}, seen: map[seqKey]int{}}
			groups[k] = g
			order = append(order, k)
		}
		g.procs[c.Process] = true
		if c.Rank >= 0 {
			g.ranks[c.Rank] = true
		}
		switch {
		case c.Function == "Recv":
			continue // the other end of a send, counted there
		case benchfmt.PointToPoint(c.Function):
			// A send (or one-sided call) once per rank that made it.
			g.counted = append(g.counted, c)
			continue
		}
		key := seqKey{c.Function, c.Seq}
		if i, dup := g.seen[key]; dup {
			// The same collective on another rank: the slowest rank's time.
			g.counted[i].TimeUS = math.Max(g.counted[i].TimeUS, c.TimeUS)
			if g.counted[i].Algo == "" {
				g.counted[i].Algo, g.counted[i].Proto = c.Algo, c.Proto
			}
			continue
		}
		g.seen[key] = len(g.counted)
		g.counted = append(g.counted, c)
	}
	var out []Communicator
	for _, k := range order {
		g := groups[k]
		comm := g.comm
		comm.Ranks = slices.Sorted(maps.Keys(g.ranks))
		comm.Processes = slices.Sorted(maps.Keys(g.procs))
		fillOps(&comm, g.counted, allCaptured)
		out = append(out, comm)
	}
	// The busiest communicator first.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Calls > out[j].Calls })
	return out
}

// commIDs names each rank's stream of calls with its communicator: the log's
// commId, or one shared by the streams of equal rank count and first calls.
func commIDs(calls iter.Seq[benchfmt.Call]) map[streamKey]string {
	ids := map[streamKey]string{}
	sig := map[streamKey]*strings.Builder{}
	var unnamedOrder []streamKey
	for c := range calls {
		k := streamOf(c)
		if c.CommID != "" {
			ids[k] = c.CommID
			continue
		}
		b := sig[k]
		if b == nil {
			b = &strings.Builder{}
			fmt.Fprintf(b, "n%d", c.NRanks)
			sig[k] = b
			unnamedOrder = append(unnamedOrder, k)
		}
		if !benchfmt.PointToPoint(c.Function) && c.Seq < 32 {
			fmt.Fprintf(b, " %s/%d/%d", c.Function, c.Count, c.Datatype)
		}
	}
	names := map[string]string{}
	for _, k := range unnamedOrder {
		if _, named := ids[k]; named {
			continue
		}
		s := sig[k].String()
		if names[s] == "" {
			names[s] = unnamed(len(names) + 1)
		}
		ids[k] = names[s]
	}
	return ids
}

// fillOps counts a communicator's calls per op and size.
func fillOps(comm *Communicator, calls []benchfmt.Call, allCaptured bool) {
	type binAgg struct {
		bin    Bin
		choice map[string]int64
		sizes  map[int64]*Size
		// sizeChoice is the choice logged at each size, "" for several.
		sizeChoice map[int64]string
	}
	perOp := map[nccl.Op]map[int64]*binAgg{}
	opAgg := map[nccl.Op]*Op{}
	for _, c := range calls {
		if c.Op == "" {
			if comm.Other == nil {
				comm.Other = map[string]int64{}
			}
			comm.Other[c.Function]++
			continue
		}
		if c.Count == 0 {
			comm.ZeroBytes++
			continue
		}
		if c.Bytes <= 0 {
			comm.Unsized++
			continue
		}
		o := opAgg[c.Op]
		if o == nil {
			o = &Op{Op: c.Op}
			opAgg[c.Op] = o
			perOp[c.Op] = map[int64]*binAgg{}
		}
		o.Calls++
		o.Bytes += c.Bytes
		o.TimeUS += c.TimeUS
		comm.Calls++
		comm.Bytes += c.Bytes
		comm.TimeUS += c.TimeUS
		if c.Captured || allCaptured {
			o.Captured++
			comm.Captured++
		}
		size := BinOf(c.Bytes)
		b := perOp[c.Op][size]
		if b == nil {
			b = &binAgg{bin: Bin{Size: size}, choice: map[string]int64{}, sizes: map[int64]*Size{}, sizeChoice: map[int64]string{}}
			perOp[c.Op][size] = b
		}
		b.bin.Calls++
		b.bin.Bytes += c.Bytes
		b.bin.TimeUS += c.TimeUS
		sz := b.sizes[c.Bytes]
		if sz == nil {
			sz = &Size{Bytes: c.Bytes}
			b.sizes[c.Bytes] = sz
		}
		sz.Calls++
		sz.TimeUS += c.TimeUS
		if c.Algo != "" {
			ch := c.Algo + " " + c.Proto
			b.choice[ch]++
			if prev, seen := b.sizeChoice[c.Bytes]; seen && prev != ch {
				ch = ""
			}
			b.sizeChoice[c.Bytes] = ch
		}
	}
	for _, op := range nccl.Ops {
		o := opAgg[op]
		if o == nil {
			continue
		}
		for _, b := range perOp[op] {
			if ch := mostCommon(b.choice); ch != "" {
				b.bin.Algo, b.bin.Proto, _ = strings.Cut(ch, " ")
			}
			for bytes, sz := range b.sizes {
				if ch := b.sizeChoice[bytes]; ch != "" {
					sz.Algo, sz.Proto, _ = strings.Cut(ch, " ")
				}
				b.bin.Sizes = append(b.bin.Sizes, *sz)
			}
			slices.SortFunc(b.bin.Sizes, func(x, y Size) int { return cmp.Compare(x.Bytes, y.Bytes) })
			o.Histogram = append(o.Histogram, b.bin)
		}
		slices.SortFunc(o.Histogram, func(a, b Bin) int { return cmp.Compare(a.Size, b.Size) })
		if comm.TimeUS > 0 {
			o.Share = o.TimeUS / comm.TimeUS
		} else if comm.Calls > 0 {
			o.Share = float64(o.Calls) / float64(comm.Calls)
		}
		comm.Ops = append(comm.Ops, *o)
	}
}

// mostCommon is the key with the largest count (ties: the first in order).
func mostCommon(m map[string]int64) string {
	best, n := "", int64(0)
	for k, v := range m {
		if v > n || v == n && k < best {
			best, n = k, v
		}
	}
	return best
}
