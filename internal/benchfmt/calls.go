package benchfmt

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Call is one collective call as one rank recorded it: a COLL line (with its
// TUNING line's choice and its communicator's INIT line), or an Inspector
// record. A comm pointer is an address in one process; the commId is the
// communicator's identity across processes.
type Call struct {
	// Process is "host:pid" of the rank that logged the call.
	Process string `json:"process"`
	// CommPtr is the communicator's address in that process ("0x55d…");
	// "" for Inspector records.
	CommPtr string `json:"comm_ptr,omitempty"`
	// CommID names the communicator across processes: NCCL's commId
	// (Inspector: its header id), "PARENT split N color C" for a split one,
	// " #2" … after a process's second one of that name and rank; "" when
	// the log has no INIT lines.
	CommID string `json:"comm_id,omitempty"`
	// Rank is the rank in the communicator; -1 when the log does not say.
	Rank   int `json:"rank"`
	NRanks int `json:"nranks"`
	// Function is NCCL's name of the call ("AllReduce", "Send", "Gather").
	Function string `json:"function"`
	// Op is the nccl-tests collective that measures the call; "" for
	// Gather, Scatter and Recv (the other end of a Send).
	Op nccl.Op `json:"op,omitempty"`
	// Count and Datatype are the call's arguments; where only the bytes per
	// rank are known (TUNING, Inspector) Count is those bytes of int8.
	Count    int64         `json:"count"`
	Datatype nccl.Datatype `json:"datatype"`
	// Bytes is nccl-tests' size of the call (nccl.CallSize); 0 when it
	// needs a rank count the log does not give.
	Bytes int64 `json:"bytes"`
	// Stream is the CUDA stream the call was enqueued on.
	Stream string `json:"stream,omitempty"`
	// Seq is Inspector's coll_sn, or the call's place among its process's
	// collectives on that communicator (the same on every rank);
	// point-to-point calls are numbered apart.
	Seq int64 `json:"seq"`
	// TimeUS is Inspector's execution time; 0 when not known.
	TimeUS float64 `json:"time_us,omitempty"`
	// Algo and Proto are what NCCL chose (a TUNING line); "" when not logged.
	Algo  string `json:"algo,omitempty"`
	Proto string `json:"proto,omitempty"`
	// Captured: logged while the server announced CUDA-graph capture.
	Captured bool `json:"captured,omitempty"`
}

// int8Type is the type of a call known only by its bytes.
const int8Type nccl.Datatype = 0

// Call log formats.
const (
	FormatNCCLLog   = "nccl-log"
	FormatInspector = "inspector"
)

// CallLog is what ParseCalls read from one input.
type CallLog struct {
	// Format is FormatNCCLLog or FormatInspector.
	Format string `json:"format"`
	Calls  []Call `json:"calls"`
	Facts  *Facts `json:"facts,omitempty"`
	// FromTuning: no COLL line was logged; the calls were read from TUNING
	// lines (rank 0 of each communicator, not told apart).
	FromTuning bool `json:"from_tuning,omitempty"`
	// GraphCapture are the process's own lines that announced CUDA-graph
	// capture, as "line N: text".
	GraphCapture []string `json:"graph_capture,omitempty"`
	// Skipped are the records left out (out of bounds, cut short), per reason.
	Skipped []Skip   `json:"skipped,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// ChoicesForced names what made the TUNING choices not NCCL's own (an
	// NCCL_ALGO or NCCL_PROTO from the environment, a tuner plugin); "" when
	// the log shows none: only then does a workload keep the log's choices.
	ChoicesForced string `json:"choices_forced,omitempty"`
}

// ErrNoCalls is an input that holds no collective call NCCL logged.
var ErrNoCalls = errors.New("no NCCL collective calls found: expected NCCL_DEBUG=INFO log lines with NCCL_DEBUG_SUBSYS=COLL (\"NCCL INFO AllReduce: opCount … count … datatype …\"), TUNING lines, or NCCL Inspector JSON records")

// ParseCalls reads the collective calls in an NCCL_DEBUG log (or a
// process's output with NCCL lines mixed in) or NCCL Inspector's JSON;
// ErrNoCalls when it holds none.
func ParseCalls(data []byte) (*CallLog, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		if cl, ok := parseInspector(data); ok {
			return noCalls(cl)
		}
	}
	return parseCallLog(data)
}

// noCalls is ErrNoCalls for a log whose every call was skipped, saying why.
func noCalls(cl *CallLog) (*CallLog, error) {
	if len(cl.Calls) > 0 {
		return cl, nil
	}
	return nil, fmt.Errorf("%w; its records are out of bounds: %s", ErrNoCalls, cl.skippedText())
}

// commInit is what an INIT line says of one communicator in one process.
type commInit struct {
	rank, nranks int
	commID       string // root communicators
	parent       string // split ones: the parent's pointer
	split        string // " split N color C" (" color C" before NCCL 2.24)
	// nth counts this process's earlier communicators of its name at its
	// rank: NCCL 2.21 to 2.23 name a split by parent and colour only.
	nth int
}

type callReader struct {
	log     ncclLogReader
	cl      CallLog
	inits   map[string]map[string]commInit // process → comm pointer → INIT line
	named   map[string]int                 // communicators per process, name and rank
	seq     map[string]int64               // process + comm pointer → calls so far
	pending map[string][]int               // process → calls waiting for their TUNING line
	tuning  []Call                         // calls from TUNING lines, for a log without COLL lines
	capture bool                           // inside announced CUDA-graph capture
}

func parseCallLog(data []byte) (*CallLog, error) {
	r := callReader{cl: CallLog{Format: FormatNCCLLog}, inits: map[string]map[string]commInit{}, named: map[string]int{},
		seq: map[string]int64{}, pending: map[string][]int{}}
	n := 0
	for raw := range bytes.Lines(data) {
		n++
		// Each line its own string: what the reader keeps of one then keeps
		// that line alive, not the whole input.
		line := string(bytes.TrimRight(bytes.TrimSuffix(raw, []byte("\n")), "\r"))
		// A log collector may colour the lines (SGR only; other escapes stay).
		// Most lines have none: skip the regexp for them.
		if strings.Contains(line, "\x1b[") {
			line = colourSeq.ReplaceAllString(line, "")
		}
		content, log, _ := r.log.read(line)
		// Processes that share one stdout write it in blocks, so a line
		// cut short can have another process's whole line after it: that
		// line is read, and the cut call said.
		for log.kind == logNCCL {
			cut, next, _ := splitLogLine(log.msg, r.log.known)
			if next.kind != logNCCL {
				break
			}
			if strings.Contains(cut, ": opCount ") {
				r.cl.skip(outOfBounds(cutShort, "%.60s", cut))
			}
			_, log, _ = r.log.read(log.msg)
		}
		if log.kind != logNCCL {
			r.ownLine(n, content)
			continue
		}
		if log.level != "INFO" {
			continue
		}
		switch {
		case strings.Contains(log.msg, " opCount "):
			r.addColl(log.proc, log.msg)
		case strings.Contains(log.msg, " Bytes -> Algo "):
			r.addTuning(log.proc, log.msg)
		case strings.Contains(log.msg, "- Init "):
			r.addInit(log.proc, log.msg)
		}
		r.cl.ChoicesForced = cmp.Or(r.cl.ChoicesForced, choicesForcedBy(log.msg))
	}
	r.cl.Facts = r.log.facts.result()
	if f := r.cl.Facts; r.cl.ChoicesForced == "" && f != nil && f.Tuner != nil && (f.Tuner.Loaded || f.Tuner.Applied > 0) {
		r.cl.ChoicesForced = "a tuner plugin"
	}
	if len(r.cl.Calls) == 0 && len(r.tuning) > 0 {
		r.useTuning()
	}
	switch {
	case len(r.cl.Calls) > 0 || len(r.cl.Skipped) > 0:
		return noCalls(&r.cl)
	case r.cl.Facts != nil:
		return nil, fmt.Errorf("%w; it holds NCCL log lines, but none of a call: add COLL to NCCL_DEBUG_SUBSYS (NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING), or leave out the file of a process that made no collective", ErrNoCalls)
	}
	return nil, ErrNoCalls
}

// colourSeq is an ANSI colour sequence (SGR).
var colourSeq = regexp.MustCompile("\x1b\\[[0-9;]*m")

// ownLine reads a line the process itself printed: servers announce CUDA
// graph capture ("Capturing CUDA graphs …") and its end ("… finished").
func (r *callReader) ownLine(n int, content string) {
	low := strings.ToLower(content)
	if !strings.Contains(low, "graph") || !strings.Contains(low, "captur") {
		return
	}
	if len(r.cl.GraphCapture) < 8 {
		text := strings.TrimSpace(content)
		if len(text) > 160 {
			text = text[:160] + "…"
		}
		r.cl.GraphCapture = append(r.cl.GraphCapture, fmt.Sprintf("line %d: %s", n, text))
	}
	r.capture = !slices.ContainsFunc([]string{" end", "finished", " done", "complete"},
		func(w string) bool { return strings.Contains(low, w) })
}

func (r *callReader) addColl(proc, msg string) {
	c, err := parseCollLine(msg)
	var bad *boundError
	if errors.As(err, &bad) {
		r.cl.skip(bad)
		return
	}
	if err != nil {
		return
	}
	c.Process = proc
	c.Rank = -1
	if in, ok := r.inits[proc][c.CommPtr]; ok {
		c.Rank = in.rank
		c.NRanks = cmp.Or(c.NRanks, in.nranks)
		c.CommID = r.commID(proc, c.CommPtr, 0)
	}
	if bad := checkCall(&c); bad != nil {
		r.cl.skip(bad)
		return
	}
	// Every rank makes a communicator's collectives in the same order;
	// sends and receives differ per rank and are numbered apart.
	key := proc + " " + c.CommPtr
	if PointToPoint(c.Function) {
		key += " p2p"
	}
	c.Seq = r.seq[key]
	r.seq[key]++
	c.Captured = r.capture
	r.cl.Calls = append(r.cl.Calls, c)
	// NCCL logs TUNING lines on rank 0 of a communicator only, within a
	// few calls (one group) of the call.
	if c.Rank > 0 {
		return
	}
	r.pending[proc] = append(r.pending[proc], len(r.cl.Calls)-1)
	if p := r.pending[proc]; len(p) > 64 {
		r.pending[proc] = p[len(p)-64:]
	}
}

const cutShort = "a COLL line cut short"

var errNotColl = errors.New("not a COLL line")

// parseCollLine reads "AllReduce: opCount 0 sendbuff 0x… recvbuff 0x…
// count 1024000 datatype 9 op 0 root 0 comm 0x… [nranks=4] stream 0x…"
// (NCCL's format from 2.3.7 to 2.30: opCount in hex, count %zi or %zu).
// A number that does not read is a *boundError; checkCall bounds the rest.
func parseCollLine(msg string) (Call, error) {
	fn, rest, ok := strings.Cut(msg, ": opCount ")
	if !ok || !isWord(fn) {
		return Call{}, errNotColl
	}
	c := Call{Function: fn, Datatype: -1}
	fields := strings.Fields("opCount " + rest)
	seen := 0
	// Every NCCL since 2.3.7 ends the line with "[nranks=N] stream 0x…": a
	// line without both was cut short, maybe inside the comm or the nranks.
	nranks, stream := false, false
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if n, ok := strings.CutPrefix(f, "[nranks="); ok {
			n, nranks = strings.CutSuffix(n, "]")
			if !nranks {
				break
			}
			v, err := strconv.Atoi(n)
			if err != nil {
				return Call{}, badNumber("nranks", n)
			}
			c.NRanks = v
			continue
		}
		stream = stream || f == "stream" && nranks
		if i+1 >= len(fields) {
			break
		}
		val := fields[i+1]
		var err error
		switch f {
		case "count":
			c.Count, err = strconv.ParseInt(val, 10, 64)
			seen++
		case "datatype":
			var v int
			v, err = strconv.Atoi(val)
			c.Datatype = nccl.Datatype(v)
			seen++
		case "comm":
			c.CommPtr = val
			seen++
		case "stream":
			c.Stream = val
		default:
			continue
		}
		if err != nil {
			return Call{}, badNumber(f, val)
		}
		i++
	}
	if seen < 3 {
		return Call{}, errNotColl
	}
	if !stream {
		return Call{}, outOfBounds(cutShort, "%s: %.60s", fn, strings.Join(fields, " "))
	}
	c.Op = opOfFunction(fn)
	return c, nil
}

// PointToPoint says whether NCCL's function is one a rank calls on its own,
// with one peer (Send, Recv, NCCL 2.29's one-sided calls): Seq numbers them
// apart from the communicator's collectives.
func PointToPoint(function string) bool {
	switch function {
	case "Send", "Recv", "PutSignal", "Signal", "WaitSignal":
		return true
	}
	return false
}

// opOfFunction is the nccl-tests collective that measures NCCL's function:
// a Send is one transfer of sendrecv; Recv, Gather and Scatter have none.
func opOfFunction(fn string) nccl.Op {
	switch fn {
	case "Send":
		return nccl.SendRecv
	case "Recv", "Gather", "Scatter":
		return ""
	}
	op, _ := nccl.OpFromFunction(fn)
	return op
}

// addTuning reads a TUNING line: what NCCL chose for this process's earliest
// waiting call of that function and per-rank bytes.
func (r *callReader) addTuning(proc, msg string) {
	ch, ok := parseChoice(msg)
	if !ok {
		return
	}
	r.tuning = append(r.tuning, Call{Process: proc, Rank: 0, Function: ch.Collective, Op: opOfFunction(ch.Collective),
		Count: ch.Bytes, Datatype: int8Type, Algo: ch.Algo, Proto: ch.Proto, Captured: r.capture})
	p := r.pending[proc]
	for i, idx := range p {
		c := &r.cl.Calls[idx]
		if c.Function == ch.Collective && c.Count*c.Datatype.Size() == ch.Bytes {
			c.Algo, c.Proto = keep(ch.Algo), keep(ch.Proto)
			r.pending[proc] = append(p[:i:i], p[i+1:]...)
			return
		}
	}
}

// useTuning makes the calls of a log without COLL lines from its TUNING
// lines (bytes per rank, read as int8s); the rank count is the INIT lines'
// when they agree on one.
func (r *callReader) useTuning() {
	counts := map[int]bool{}
	for _, procInits := range r.inits {
		for _, in := range procInits {
			counts[in.nranks] = true
		}
	}
	ns := slices.Sorted(maps.Keys(counts))
	nranks := 0
	if len(ns) == 1 {
		nranks = ns[0]
	}
	dropped := 0
	for i, c := range r.tuning {
		c.NRanks = nranks
		c.Seq = int64(i)
		if bad := checkCall(&c); bad != nil {
			r.cl.skip(bad)
			continue
		}
		if c.Op != "" && c.Bytes == 0 && c.Count > 0 {
			dropped++
		}
		r.cl.Calls = append(r.cl.Calls, c)
	}
	r.cl.FromTuning = true
	r.cl.Notes = append(r.cl.Notes, "no COLL lines: calls counted from TUNING lines, which rank 0 of each communicator logs; communicators are not told apart (log with NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING)")
	if len(ns) > 1 {
		text := make([]string, len(ns))
		for i, n := range ns {
			text[i] = strconv.Itoa(n)
		}
		r.cl.Notes = append(r.cl.Notes, fmt.Sprintf("the INIT lines name communicators of %s ranks, which TUNING lines do not tell apart: their calls are pooled as one workload of no known rank count", strings.Join(text, ", ")))
	}
	if dropped > 0 {
		r.cl.Notes = append(r.cl.Notes, fmt.Sprintf("%d all-gather, reduce-scatter or all-to-all calls have no size: their rank count is not logged (add INIT to NCCL_DEBUG_SUBSYS)", dropped))
	}
}

// addInit reads an INIT line naming a communicator of this process.
func (r *callReader) addInit(proc, msg string) {
	fields := strings.Fields(msg)
	in := commInit{rank: -1}
	var ptr, splitCount, color string
	for i := 0; i+1 < len(fields); i++ {
		val := fields[i+1]
		var err error
		switch fields[i] {
		case "comm":
			ptr = val
		case "rank":
			in.rank, err = strconv.Atoi(val)
		case "nranks":
			in.nranks, err = strconv.Atoi(val)
		case "commId":
			in.commID = val
		case "parent":
			in.parent = val
		case "splitCount":
			splitCount = val
		case "color":
			color = val
		default:
			continue
		}
		if err != nil {
			r.cl.skip(badNumber(fields[i], val))
			return
		}
		i++
	}
	if ptr == "" || in.nranks == 0 && in.rank < 0 {
		return // not a line that names a communicator
	}
	// Bounded here, where read: they size every later call (an INIT line
	// always logs both, so 0 and -1 are not "not logged" here).
	bad := checkRanks(in.nranks, in.rank)
	if bad == nil && (in.nranks == 0 || in.rank < 0) {
		bad = outOfBounds("rank outside its communicator", "rank %d of %d", in.rank, in.nranks)
	}
	if bad != nil {
		r.cl.skip(bad)
		return
	}
	if in.parent != "" {
		in.split = " color " + color
		if splitCount != "" {
			in.split = " split " + splitCount + in.split
		}
	}
	if r.inits[proc] == nil {
		r.inits[proc] = map[string]commInit{}
	}
	old, again := r.inits[proc][ptr]
	r.inits[proc][ptr] = in
	// A second name of one rank in one process is another communicator,
	// numbered in the order made; a pointer's START and COMPLETE lines are
	// one communicator.
	if id := r.commID(proc, ptr, 0); id != "" {
		if again && old.commID == in.commID && old.parent == in.parent && old.split == in.split {
			in.nth = old.nth
		} else {
			key := proc + " " + strconv.Itoa(in.rank) + " " + id
			in.nth = r.named[key]
			r.named[key]++
		}
		r.inits[proc][ptr] = in
	}
}

// commID is the communicator's identity across processes: its commId, or
// its parent's identity with the split's count and colour; "" when unknown.
func (r *callReader) commID(proc, ptr string, depth int) string {
	in, ok := r.inits[proc][ptr]
	if !ok || depth > 16 {
		return ""
	}
	id := in.commID
	if in.parent != "" {
		parent := r.commID(proc, in.parent, depth+1)
		if parent == "" {
			return ""
		}
		id = parent + in.split
	}
	if id != "" && in.nth > 0 {
		id += " #" + strconv.Itoa(in.nth+1)
	}
	return id
}

// choicesForcedBy says whether an NCCL log line sets NCCL_ALGO or
// NCCL_PROTO from the environment. The names only come from the fixed list
// here, never from the line.
func choicesForcedBy(msg string) string {
	for _, env := range []string{"NCCL_ALGO", "NCCL_PROTO"} {
		if strings.HasPrefix(msg, env+" set by environment to ") {
			return env + " set by the environment"
		}
	}
	return ""
}
