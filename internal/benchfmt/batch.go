package benchfmt

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/safetext"
)

// Batch is a batch launch's output, read: the torch instrument's --batch
// JSON lines, several configs in one launch, each on its own communicator.
// Its rows are torch size lines with "config" and "round", read by one
// torchParser per config and op.
type Batch struct {
	// Header holds what is said of the run as a whole; it has no rows.
	Header *Result `json:"header"`
	// Configs are the plan's configs in the plan's order.
	Configs []BatchConfig `json:"configs"`
	// CreationOrder indexes Configs in the order their communicators were made.
	CreationOrder []int `json:"creation_order"`
	// PlannedRounds is the plan's rounds; Rounds those completed.
	PlannedRounds int     `json:"planned_rounds"`
	Rounds        int     `json:"rounds"`
	Seconds       float64 `json:"seconds"`
	// Complete: the done line ended the output; Partial: the instrument's
	// watchdog cut it short.
	Complete      bool   `json:"complete"`
	Partial       bool   `json:"partial,omitempty"`
	PartialReason string `json:"partial_reason,omitempty"`
	// Notes are what the reader tolerated (and each op Result's own notes).
	Notes []string `json:"notes,omitempty"`
}

// BatchConfig is one config of a batch: its communicator, NCCL's verdict and its rows per op.
type BatchConfig struct {
	// Name is the plan's name as the output spells it (escape it to show it).
	Name string `json:"name"`
	// Created is true once its communicator line was read.
	Created    bool     `json:"created"`
	InitS      float64  `json:"init_s,omitempty"`
	TookEffect bool     `json:"took_effect"`
	Why        string   `json:"why,omitempty"`
	Channels   int      `json:"channels,omitempty"`
	Algo       string   `json:"algo,omitempty"`
	Proto      string   `json:"proto,omitempty"`
	Evidence   []string `json:"evidence,omitempty"`
	// Failed says why it was dropped from FailedRound on ("" when it ran
	// every round); its rows of earlier rounds stand.
	Failed      string `json:"failed,omitempty"`
	FailedRound int    `json:"failed_round,omitempty"`
	// Ops holds one Result per op of the plan, Row.Cycle being the round.
	Ops []*Result `json:"ops"`
}

// Excluded says why none of c's rows may be used ("" when they may): the
// one rule whoever reads a batch asks.
func (c *BatchConfig) Excluded() string {
	switch {
	case !c.Created && c.Failed != "":
		return "its communicator failed: " + c.Failed
	case !c.Created:
		return "the output has no line for its communicator"
	case !c.TookEffect:
		return "NCCL's log does not show its settings in its communicator: " + c.Why
	}
	return ""
}

// batchLine holds the fields a batch adds to the torch instrument's lines.
type batchLine struct {
	Batch         *jsonNum `json:"batch"`
	Configs       []string `json:"configs"`
	CreationOrder []int    `json:"creation_order"`
	Ops           []struct {
		Op string `json:"op"`
	} `json:"ops"`
	Simulated  bool     `json:"simulated"`
	Config     *string  `json:"config"`
	Round      *jsonNum `json:"round"`
	Comm       *string  `json:"comm"`
	InitS      *jsonNum `json:"init_s"`
	TookEffect *bool    `json:"took_effect"`
	Why        string   `json:"why"`
	Channels   *jsonNum `json:"channels"`
	Algo       *string  `json:"algo"`
	Proto      *string  `json:"proto"`
	Evidence   []string `json:"evidence"`
	Failed     *string  `json:"failed"`
	Rounds     *jsonNum `json:"rounds"`
	Seconds    *jsonNum `json:"seconds"`
	Partial    *bool    `json:"partial"`
	Reason     string   `json:"reason"`
	Done       *bool    `json:"done"`
}

// maxBatchText bounds each text a batch line carries into the record.
const maxBatchText = 300

type batchReader struct {
	header *torchParser
	b      Batch
	ops    []nccl.Op
	byName map[string]int
	parser map[[2]int]*torchParser // (config, op) → its rows
	seen   map[[4]int64]bool       // (config, op, round, bytes) already read
	meta   bool
}

// ParseBatch reads a batch launch's output. The error is nil only for a
// complete batch, a *FailureError (with the Batch) for one cut short or
// failed, and wraps ErrNoTable for output that holds no batch.
func ParseBatch(data []byte) (*Batch, error) {
	r := &batchReader{header: newTorchParser(), byName: map[string]int{},
		parser: map[[2]int]*torchParser{}, seen: map[[4]int64]bool{}}
	r.header.readText(splitJSONLines(data, r.line))
	return r.finish()
}

func (r *batchReader) note(msg string) { r.b.Notes = appendUnique(r.b.Notes, msg) }

// line reads one JSON line: batch lines here, the rest as the torch parser does.
func (r *batchReader) line(line []byte) bool {
	var l batchLine
	if err := json.Unmarshal(line, &l); err != nil && !isTypeError(err) {
		return false
	}
	switch {
	case l.Batch != nil:
		r.metadata(line, &l)
	case l.Config != nil && !r.meta:
		r.note("skipped a config's line before the batch's metadata line")
	case l.Config != nil:
		r.config(line, &l)
	case l.Partial != nil && *l.Partial:
		r.b.Partial, r.b.PartialReason = true, shorten(l.Reason, maxBatchText)
		r.b.Rounds, r.b.Seconds = r.count(l.Rounds), r.seconds(l.Seconds)
	case l.Done != nil:
		r.b.Complete = r.b.Complete || *l.Done
		r.b.Rounds, r.b.Seconds = r.count(l.Rounds), r.seconds(l.Seconds)
	default:
		return r.header.jsonLine(line)
	}
	return true
}

func (r *batchReader) count(n *jsonNum) int {
	if n == nil || !n.valid || n.v < 0 || n.v > float64(r.b.PlannedRounds) || n.v != math.Trunc(n.v) {
		r.note("the count of rounds is missing or out of bounds; read as 0")
		return 0
	}
	return int(n.v)
}

func (r *batchReader) seconds(n *jsonNum) float64 {
	if n == nil || !n.valid || n.v < 0 || n.v > MaxTimeUS/1e6 {
		return 0
	}
	return n.v
}

func (r *batchReader) metadata(line []byte, l *batchLine) {
	r.header.jsonLine(line)
	if r.meta {
		return // the torch parser noted the second metadata line
	}
	r.meta = true
	r.header.res.Simulated = l.Simulated
	if !l.Batch.valid || l.Batch.v != 1 {
		r.note("the batch's metadata is not batch format 1; read the fields that match")
	}
	for _, o := range l.Ops {
		op, err := nccl.ParseOp(o.Op)
		if err != nil {
			r.header.mixed = fmt.Sprintf("the batch's metadata names collective %q, which nccltune does not know (%v)", o.Op, err)
			return
		}
		r.ops = append(r.ops, op)
	}
	for _, name := range l.Configs {
		// Names are compared as they will be shown: two that escape alike
		// would be one config on every screen.
		for prev := range r.byName {
			if safetext.Escape(prev) == safetext.Escape(name) {
				r.header.mixed = fmt.Sprintf("the batch names two configs alike (%q and %q): its rows cannot be told apart", prev, name)
				return
			}
		}
		r.byName[name] = len(r.b.Configs)
		r.b.Configs = append(r.b.Configs, BatchConfig{Name: name})
	}
	for _, i := range l.CreationOrder {
		if i < 0 || i >= len(r.b.Configs) {
			r.note(fmt.Sprintf("the creation order names config %d of %d; dropped it", i, len(r.b.Configs)))
			continue
		}
		r.b.CreationOrder = append(r.b.CreationOrder, i)
	}
	if l.Rounds != nil && l.Rounds.valid && l.Rounds.v >= 0 && l.Rounds.v <= math.MaxInt32 {
		r.b.PlannedRounds = int(l.Rounds.v)
	}
}

func (r *batchReader) config(line []byte, l *batchLine) {
	ci, ok := r.byName[*l.Config]
	if !ok {
		r.note(fmt.Sprintf("skipped a line of config %q, which the metadata does not list", shorten(*l.Config, 80)))
		return
	}
	c := &r.b.Configs[ci]
	switch {
	case l.Comm != nil:
		if c.Created {
			r.note(fmt.Sprintf("config %q has two communicator lines; the first is kept", c.Name))
			return
		}
		c.Created = *l.Comm == "created"
		c.TookEffect = l.TookEffect != nil && *l.TookEffect
		c.Why = shorten(l.Why, maxBatchText)
		if l.InitS != nil && l.InitS.valid && l.InitS.v >= 0 {
			c.InitS = l.InitS.v
		}
		if l.Channels != nil && l.Channels.valid && l.Channels.v >= 0 && l.Channels.v <= math.MaxInt32 {
			c.Channels = int(l.Channels.v)
		}
		if l.Algo != nil {
			c.Algo = shorten(*l.Algo, 80)
		}
		if l.Proto != nil {
			c.Proto = shorten(*l.Proto, 80)
		}
		for _, e := range l.Evidence {
			c.Evidence = append(c.Evidence, shorten(e, maxBatchText))
		}
		if c.Created && !c.TookEffect && c.Why == "" {
			c.Why = "the instrument gave no reason"
		}
	case l.Failed != nil:
		if c.Failed == "" {
			c.Failed, c.FailedRound = shorten(*l.Failed, maxBatchText), r.round(l.Round)
		}
	case l.Round != nil:
		r.row(ci, line, l)
	default:
		r.note(fmt.Sprintf("skipped a line of config %q that is neither its communicator, a row nor a failure", c.Name))
	}
}

func (r *batchReader) round(n *jsonNum) int {
	if n == nil || !n.valid || n.v < 0 || n.v >= float64(r.b.PlannedRounds) || n.v != math.Trunc(n.v) {
		return -1
	}
	return int(n.v)
}

func (r *batchReader) row(ci int, line []byte, l *batchLine) {
	c := &r.b.Configs[ci]
	round := r.round(l.Round)
	if round < 0 {
		r.note(fmt.Sprintf("skipped a row of config %q: its round is not one of the plan's %d", c.Name, r.b.PlannedRounds))
		return
	}
	var tl torchLine
	_ = json.Unmarshal(line, &tl) // its type errors are the torch parser's to note
	oi := -1
	if tl.Collective != nil {
		if op, err := nccl.ParseOp(*tl.Collective); err == nil {
			for i, o := range r.ops {
				if o == op {
					oi = i
				}
			}
		}
	}
	if oi < 0 || tl.Bytes == nil {
		r.note(fmt.Sprintf("skipped a row of config %q: its collective is not one of the plan's ops", c.Name))
		return
	}
	key := [4]int64{int64(ci), int64(oi), int64(round), int64(tl.Bytes.v)}
	if r.seen[key] {
		r.note(fmt.Sprintf("config %q has two rows of %s, %d bytes, round %d; the first is kept", c.Name, r.ops[oi], key[3], round))
		return
	}
	r.seen[key] = true
	p := r.parser[[2]int{ci, oi}]
	if p == nil {
		p = r.opParser(oi)
		r.parser[[2]int{ci, oi}] = p
	}
	n := len(p.res.Rows)
	p.row(&tl)
	if len(p.res.Rows) > n {
		p.res.Rows[n].Cycle = round
	}
}

func (r *batchReader) opParser(oi int) *torchParser {
	p := newTorchParser()
	p.res.NRanks = r.header.res.NRanks
	p.meta, p.recognized = true, true
	op := string(r.ops[oi])
	p.collective(&op, "the batch's metadata")
	return p
}

func (r *batchReader) finish() (*Batch, error) {
	h, _ := r.header.finish() // its rows are the configs'; its errors are read below
	if h == nil || !r.meta {
		return nil, fmt.Errorf("%w: the output holds no batch metadata line (JSON with \"batch\")", ErrNoTable)
	}
	h.Rows, h.AvgBusBW = nil, 0
	r.b.Header = h
	for _, n := range h.Notes {
		r.note(n)
	}
	for ci := range r.b.Configs {
		c := &r.b.Configs[ci]
		for oi, op := range r.ops {
			p := r.parser[[2]int{ci, oi}]
			if p == nil {
				p = r.opParser(oi)
			}
			p.res.NCCLVersion, p.res.Devices, p.res.Simulated = h.NCCLVersion, h.Devices, h.Simulated
			p.done = r.b.Complete && !r.b.Partial
			res, _ := p.finish() // a config without rows has none to fail on: Excluded says why
			for _, n := range res.Notes {
				r.note(fmt.Sprintf("config %q, %s: %s", c.Name, op, n))
			}
			c.Ops = append(c.Ops, res)
		}
	}
	switch {
	case r.header.mixed != "":
		return &r.b, &FailureError{Message: r.header.mixed}
	case !r.b.Complete && len(h.Errors) > 0:
		return &r.b, &FailureError{Message: diagnoseTorch(h.Errors), Lines: h.Errors}
	case r.b.Partial:
		return &r.b, &FailureError{Message: fmt.Sprintf("the batch was cut short by the instrument's watchdog after %d of %d rounds (%s)",
			r.b.Rounds, r.b.PlannedRounds, safetext.Escape(r.b.PartialReason))}
	case !r.b.Complete:
		return &r.b, &FailureError{Message: `the batch's output ends without its closing {"done": true} line: the launch was cut short (killed, timed out or crashed)`}
	}
	return &r.b, nil
}
