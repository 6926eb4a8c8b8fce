package benchfmt

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// A real process's collective calls, as NCCL logs them: with
// NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL every rank writes one line per
// call (enqueue.cc, ncclEnqueueCheck):
//
//	host:pid:tid [dev] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f… recvbuff 0x7f… count 1024000 datatype 9 op 0 root 0 comm 0x55… [nranks=4] stream 0x55…
//
// with TUNING rank 0 of each communicator adds what it chose per call:
//
//	host:pid:tid [dev] NCCL INFO AllReduce: 2048000 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}
//
// and with INIT every rank names its communicators once:
//
//	… NCCL INFO ncclCommInitRank comm 0x55… rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x8d3c… - Init COMPLETE
//	… NCCL INFO ncclCommSplit comm 0x56… rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 parent 0x55… splitCount 1 color 0 key 0 - Init COMPLETE
//
// The comm pointer is an address in one process; the commId (or, for a
// split, the parent's identity with the split's count and colour) is the
// communicator's identity across processes. NCCL Inspector (a profiler
// plugin, ext-profiler/inspector since 2.28.3) writes JSON records instead
// (inspector.go).

// Call is one collective call as one rank recorded it.
type Call struct {
	// Process is "host:pid" of the rank that logged the call.
	Process string `json:"process"`
	// CommPtr is the communicator's address in that process ("0x55d…");
	// "" for Inspector records.
	CommPtr string `json:"comm_ptr,omitempty"`
	// CommID names the communicator across processes: NCCL's commId hash
	// from its INIT line (Inspector: its header id), "PARENT/split N color
	// C" for a split one, with " #2" … after the name of a process's second
	// communicator of that name and rank (commInit.nth); "" when the log
	// does not say (no INIT lines).
	CommID string `json:"comm_id,omitempty"`
	// Rank is the rank in the communicator; -1 when the log does not say.
	Rank   int `json:"rank"`
	NRanks int `json:"nranks"`
	// Function is NCCL's name of the call ("AllReduce", "Send", "Gather").
	Function string `json:"function"`
	// Op is the nccl-tests collective that measures the call; "" for what
	// none measures (Gather, Scatter) and for Recv (the other end of a
	// Send, which is the call counted as sendrecv).
	Op nccl.Op `json:"op,omitempty"`
	// Count and Datatype are the call's arguments; where only the bytes
	// per rank are known (TUNING lines, Inspector) Count is those bytes
	// and Datatype int8.
	Count    int64         `json:"count"`
	Datatype nccl.Datatype `json:"datatype"`
	// Bytes is nccl-tests' size of the call (nccl.CallSize): what a band
	// names. 0 when it needs a rank count the log does not give.
	Bytes int64 `json:"bytes"`
	// Stream is the CUDA stream the call was enqueued on.
	Stream string `json:"stream,omitempty"`
	// Seq numbers the calls: Inspector's coll_sn, or the call's place
	// among its process's collectives on that communicator, from 0 (the
	// same call has the same place on every rank); point-to-point calls
	// (PointToPoint) are numbered apart.
	Seq int64 `json:"seq"`
	// TimeUS is Inspector's execution time; 0 when not known.
	TimeUS float64 `json:"time_us,omitempty"`
	// Algo and Proto are what NCCL chose (a TUNING line of the same
	// process, function and size); "" when not logged.
	Algo  string `json:"algo,omitempty"`
	Proto string `json:"proto,omitempty"`
	// Captured: logged between a server's own lines announcing that it
	// captures CUDA graphs and that it finished.
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
	// FromTuning: no COLL line was logged, and the calls were read from
	// TUNING lines (rank 0 of each communicator; communicators are not
	// told apart).
	FromTuning bool `json:"from_tuning,omitempty"`
	// GraphCapture are the lines of the process's own output that
	// announced CUDA-graph capture, as "line N: text".
	GraphCapture []string `json:"graph_capture,omitempty"`
	// Skipped are the records left out because a number in them is out
	// of bounds (checkCall) or their line was cut short, counted per reason.
	Skipped []Skip   `json:"skipped,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// ChoicesForced names what made the log's TUNING choices not NCCL's
	// own (an NCCL_ALGO or NCCL_PROTO the environment set, a tuner plugin
	// that applied a row), "" when the log shows nothing of the kind: a
	// workload keeps the log's choices (nccl.LoggedChoice) only then. A
	// log without INIT/ENV lines may not show an env setting.
	ChoicesForced string `json:"choices_forced,omitempty"`
}

// ErrNoCalls is an input that holds no collective call NCCL logged.
var ErrNoCalls = errors.New("no NCCL collective calls found: expected NCCL_DEBUG=INFO log lines with NCCL_DEBUG_SUBSYS=COLL (\"NCCL INFO AllReduce: opCount … count … datatype …\"), TUNING lines, or NCCL Inspector JSON records")

// ParseCalls reads the collective calls in data: an NCCL_DEBUG log (a
// NCCL_DEBUG_FILE, or a process's output with NCCL lines mixed in) or
// NCCL Inspector's JSON. ErrNoCalls when it holds none.
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
	// nth counts the communicators of this process before this one that
	// carry its name at its rank (0: none): NCCL 2.21 to 2.23 name a split
	// by its parent and colour only, so two splits of one parent with one
	// colour share a name, and a process holds one rank of a communicator.
	nth int
}

// callReader gathers calls from one NCCL log.
type callReader struct {
	log ncclLogReader
	cl  CallLog
	// inits: process → comm pointer → its INIT line.
	inits map[string]map[string]commInit
	// named counts the communicators of a process per name and rank.
	named map[string]int
	// seq: process + comm pointer → calls so far.
	seq map[string]int64
	// pending: process → calls of it waiting for their TUNING line.
	pending map[string][]int
	tuning  []Call // calls read from TUNING lines, kept for a log without COLL lines
	capture bool   // inside announced CUDA-graph capture
	nranks  map[int]bool
}

func parseCallLog(data []byte) (*CallLog, error) {
	r := callReader{cl: CallLog{Format: FormatNCCLLog}, inits: map[string]map[string]commInit{}, named: map[string]int{},
		seq: map[string]int64{}, pending: map[string][]int{}, nranks: map[int]bool{}}
	n := 0
	for raw := range bytes.Lines(data) {
		n++
		// Each line its own string, not a piece of one string of the whole
		// input: what the reader keeps of a line (a fact, a capture note)
		// then keeps that line alive, not the input (checkCall makes a
		// call's strings its own).
		line := string(bytes.TrimRight(bytes.TrimSuffix(raw, []byte("\n")), "\r"))
		// A log collector may colour the lines: colours are no part of
		// the process or the call (any other escape stays, as data).
		if strings.Contains(line, "\x1b[") {
			line = stripColours(line)
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
		proc := log.proc
		switch {
		case strings.Contains(log.msg, " opCount "):
			r.addColl(proc, log.msg)
		case strings.Contains(log.msg, " Bytes -> Algo "):
			r.addTuning(proc, log.msg)
		case strings.Contains(log.msg, " - Init ") || strings.Contains(log.msg, "- Init "):
			r.addInit(proc, log.msg)
		}
		if r.cl.ChoicesForced == "" {
			r.cl.ChoicesForced = choicesForcedBy(log.msg)
		}
	}
	r.cl.Facts = r.log.facts.result()
	if f := r.cl.Facts; r.cl.ChoicesForced == "" && f != nil && f.Tuner != nil && (f.Tuner.Loaded || f.Tuner.Applied > 0) {
		r.cl.ChoicesForced = "a tuner plugin"
	}
	if len(r.cl.Calls) == 0 && len(r.tuning) > 0 {
		r.useTuning()
	}
	if len(r.cl.Calls) == 0 && len(r.cl.Skipped) > 0 {
		return noCalls(&r.cl)
	}
	if len(r.cl.Calls) == 0 {
		if r.cl.Facts != nil {
			return nil, fmt.Errorf("%w; it holds NCCL log lines, but none of a call: add COLL to NCCL_DEBUG_SUBSYS (NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING), or leave out the file of a process that made no collective", ErrNoCalls)
		}
		return nil, ErrNoCalls
	}
	return &r.cl, nil
}

// stripColours removes ANSI colour sequences (SGR: ESC '[', digits and
// ';', then 'm') from s.
func stripColours(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
			j++
		}
		if j < len(s) && s[j] == 'm' {
			b.WriteString(s[:i])
		} else {
			j = i + 1 // not a colour: kept
			b.WriteString(s[:j])
			s = s[j:]
			continue
		}
		s = s[j+1:]
	}
}

// ownLine reads a line the process itself printed: servers announce CUDA
// graph capture ("Capture cuda graph begin", vLLM's "Capturing CUDA
// graphs …") and its end ("Capture cuda graph end", "Graph capturing
// finished in 5 secs").
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

// addColl reads a COLL line.
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
		if c.NRanks == 0 {
			c.NRanks = in.nranks
		}
		c.CommID = r.commID(proc, c.CommPtr, 0)
	}
	if bad := checkCall(&c); bad != nil {
		r.cl.skip(bad)
		return
	}
	if c.NRanks > 0 {
		r.nranks[c.NRanks] = true
	}
	// Every rank makes a communicator's collectives in the same order, so
	// their places agree across ranks; sends and receives differ per rank
	// and are numbered apart.
	key := proc + " " + c.CommPtr
	if PointToPoint(c.Function) {
		key += " p2p"
	}
	c.Seq = r.seq[key]
	r.seq[key]++
	c.Captured = r.capture
	r.cl.Calls = append(r.cl.Calls, c)
	// NCCL logs TUNING lines on rank 0 of a communicator only: a call of
	// another rank waits for none, and must not take the line of a call
	// of the same size on a communicator this process is rank 0 of.
	if c.Rank > 0 {
		return
	}
	r.pending[proc] = append(r.pending[proc], len(r.cl.Calls)-1)
	// A TUNING line follows its call within a few calls (one group); an
	// old pending call will not be matched any more.
	if p := r.pending[proc]; len(p) > 64 {
		r.pending[proc] = p[len(p)-64:]
	}
}

// cutShort is the reason a COLL line that did not reach its end is skipped.
const cutShort = "a COLL line cut short"

// errNotColl is a line that is not a COLL line.
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
	// Every NCCL since 2.3.7 ends the line with "[nranks=N] stream 0x…":
	// a line without both was cut short (the last line of a killed
	// process, a write cut by another), maybe inside the comm pointer
	// that names its communicator or the rank count that sizes it.
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
		if f == "stream" && nranks {
			stream = true
		}
		if i+1 >= len(fields) {
			break
		}
		val := fields[i+1]
		switch f {
		case "count":
			v, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return Call{}, badNumber("count", val)
			}
			c.Count = v
			seen++
		case "datatype":
			v, err := strconv.Atoi(val)
			if err != nil {
				return Call{}, badNumber("datatype", val)
			}
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

// PointToPoint says whether NCCL's function is one a rank calls on its
// own, with one peer: Send and Recv, and the one-sided PutSignal, Signal
// and WaitSignal of NCCL 2.29 (which log COLL lines too). Ranks make
// different ones, so they are no place in the communicator's sequence of
// collectives: Seq numbers them apart, and each rank's call is its own.
func PointToPoint(function string) bool {
	switch function {
	case "Send", "Recv", "PutSignal", "Signal", "WaitSignal":
		return true
	}
	return false
}

// opOfFunction is the nccl-tests collective that measures NCCL's function:
// a Send is one transfer of sendrecv (its Recv is the other end, not
// counted again); Gather and Scatter have no nccl.Op.
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

// addTuning reads a TUNING line: it says what NCCL chose for the earliest
// call of this process still waiting whose function and per-rank bytes
// (count × type size) match.
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
// lines: rank 0 of each communicator logs one per call, in bytes per rank
// (read as count int8s); the rank count is the INIT lines' when they agree
// on one.
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
	var ptr string
	var splitCount, color string
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
	// A communicator's rank count and this process's rank in it give
	// every later call on it its size: bounded here, where they are read
	// (an INIT line always logs both: 0 and -1 are not "not logged" here).
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
	// A second name of one rank in one process is another communicator
	// (a split of the same colour, or one made again): numbered in the
	// order the process made them, the same in every process. A pointer's
	// Init START and COMPLETE lines are one communicator.
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
// for a split one its parent's identity with the split's count and colour
// (what NCCL hashes into the child's identity). "" when unknown.
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
// NCCL_PROTO from the environment, which makes the choices its TUNING
// lines record not NCCL's own; "" for any other line. The names only
// come from the fixed list here, never from the line. (A tuner plugin is
// read from the log's facts: Facts.Tuner, loaded or applying rows.)
func choicesForcedBy(msg string) string {
	for _, env := range []string{"NCCL_ALGO", "NCCL_PROTO"} {
		if strings.HasPrefix(msg, env+" set by environment to ") {
			return env + " set by the environment"
		}
	}
	return ""
}
