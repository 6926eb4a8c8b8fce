package benchfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Instruments: what measured a launch, and so which format its output is
// in: nccl-tests (the default), or the torch.distributed script
// nccltune_allreduce.py (every collective, despite its name).
const (
	InstrumentNCCLTests = "nccl-tests"
	InstrumentTorch     = "torch"
)

// TorchInstrumentName is the "instrument" value of the script's metadata line.
const TorchInstrumentName = "nccltune-torch"

// TorchFormatVersion is the version of the JSON-lines format ParseTorch reads.
const TorchFormatVersion = 1

// torchLine is any line of the torch instrument's output; its fields say which kind.
type torchLine struct {
	// Metadata line.
	Instrument *string       `json:"instrument"`
	Version    *jsonNum      `json:"version"`
	World      *jsonNum      `json:"world"`
	Hosts      []string      `json:"hosts"`
	Devices    []torchDevice `json:"devices"`
	Device     string        `json:"device"`
	DryRun     bool          `json:"dry_run"`
	// Collective is on the metadata line and every size line; absent
	// before the script took --op (all_reduce only).
	Collective *string `json:"collective"`
	// Size line (also the seed's bare format).
	Arm     *string   `json:"arm"`
	Bytes   *jsonNum  `json:"bytes"`
	Count   *jsonNum  `json:"count"`
	TimeUS  *jsonNum  `json:"time_us"`
	AlgBW   *jsonNum  `json:"algbw"`
	BusBW   *jsonNum  `json:"busbw"`
	OK      *bool     `json:"ok"`
	Wrong   *jsonNum  `json:"wrong"`
	Samples []jsonNum `json:"samples_us"`
	Ranks   *jsonNum  `json:"ranks"`
	// Both.
	NCCLVersion *string `json:"nccl_version"`
	// Last line, or a rank's failure.
	Done  *bool    `json:"done"`
	Error *string  `json:"error"`
	Rank  *jsonNum `json:"rank"`
}

type torchDevice struct {
	Rank   int    `json:"rank"`
	Host   string `json:"host"`
	Device int    `json:"device"`
	Pid    int    `json:"pid"`
}

// isTorchLine says whether line is a JSON object of the torch instrument:
// its metadata line, a size line, or a rank's failure line, {"error",
// "rank"} and nothing else (any JSON with "error" would take in other
// tools' output).
func isTorchLine(line []byte) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(line, &keys) != nil {
		return false
	}
	has := func(k string) bool {
		_, ok := keys[k]
		return ok
	}
	return has("instrument") || has("error") && has("rank") && len(keys) == 2 ||
		has("bytes") && (has("arm") || has("time_us"))
}

// looksLikeTorch says whether Parse should read data with ParseTorch: its
// first non-blank line is a torch instrument line, or its metadata line
// comes later, after NCCL log lines or a launcher's warnings.
func looksLikeTorch(data []byte) bool {
	for line := range bytes.Lines(data) {
		if len(bytes.TrimSpace(line)) > 0 {
			if isTorchLine(line) {
				return true
			}
			break
		}
	}
	if !bytes.Contains(data, []byte(`"`+TorchInstrumentName+`"`)) {
		return false
	}
	for line := range bytes.Lines(data) {
		var meta struct {
			Instrument string `json:"instrument"`
		}
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &meta) == nil && meta.Instrument == TorchInstrumentName {
			return true
		}
	}
	return false
}

// ParseTorch reads the torch instrument's output: JSON lines (a metadata
// line, one line per size, {"done": true} last), with any other lines read
// for NCCL facts and failures as in nccl-tests' text output. It also reads
// the seed's bare format, one {"arm", "bytes", "time_us", …} object per
// size; having no end marker, it counts as complete whenever it has a row.
//
// Rows are out-of-place float rows of the collective the output names
// (all_reduce when none), with nccl-tests' redop and root for that op; Iter
// holds the slowest rank's samples alone; Wrong is the count of elements
// that failed the check, 1 for a bare "ok": false. Output that names two
// collectives is refused. The error follows Parse's contract.
func ParseTorch(data []byte) (*Result, error) {
	p := newTorchParser()
	p.readText(splitJSONLines(data, p.jsonLine))
	return p.finish()
}

func newTorchParser() *torchParser {
	return &torchParser{res: Result{Collective: string(nccl.AllReduce), Instrument: InstrumentTorch}}
}

// splitJSONLines hands every line that starts with '{' to jsonLine and
// returns the others, and those jsonLine refused, as text.
func splitJSONLines(data []byte, jsonLine func([]byte) bool) []byte {
	var text bytes.Buffer
	for raw := range bytes.Lines(data) {
		raw = bytes.TrimSuffix(bytes.TrimSuffix(raw, []byte("\n")), []byte("\r"))
		line := bytes.TrimSpace(raw)
		if len(line) == 0 || line[0] == '{' && jsonLine(line) {
			continue
		}
		text.Write(raw)
		text.WriteByte('\n')
	}
	return text.Bytes()
}

// readText reads NCCL_DEBUG lines, launcher errors and tracebacks as text output.
func (p *torchParser) readText(text []byte) {
	if len(text) == 0 {
		return
	}
	if tr, _ := parseText(text); tr != nil {
		p.res.Facts = tr.Facts
		for _, e := range tr.Errors {
			p.res.Errors = appendUnique(p.res.Errors, e)
		}
		p.recognized = true
	}
}

type torchParser struct {
	res        Result
	meta, done bool
	dryRun     bool
	recognized bool
	series     cycles
	arms       []string
	// named is the first line naming a collective; mixed says why another
	// refuses the output.
	named, mixed string
}

// jsonLine reads one line that starts with '{'; false means it is not JSON.
func (p *torchParser) jsonLine(line []byte) bool {
	var l torchLine
	if err := json.Unmarshal(line, &l); err != nil {
		if !isTypeError(err) {
			return false
		}
		p.note("read what fit of a JSON line with a value of the wrong type: " + err.Error())
	}
	switch {
	case l.Instrument != nil:
		p.metadata(&l)
	case l.Done != nil:
		p.recognized = true
		p.done = p.done || *l.Done
	case l.Error != nil:
		p.recognized = true
		msg := strings.TrimSpace(*l.Error)
		if l.Rank != nil && l.Rank.valid {
			msg = fmt.Sprintf("rank %d: %s", int64(l.Rank.v), msg)
		}
		if msg != "" {
			p.res.Errors = appendUnique(p.res.Errors, msg)
		}
	case l.Bytes != nil:
		p.row(&l)
	default:
		p.note("skipped a JSON line that is neither metadata, a size, an error nor the end")
	}
	return true
}

func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

func (p *torchParser) note(msg string) { p.res.Notes = appendUnique(p.res.Notes, msg) }

func (p *torchParser) metadata(l *torchLine) {
	p.recognized = true
	if p.meta {
		p.note("the output holds more than one metadata line (several runs?); the first one's header is kept")
		return
	}
	p.meta = true
	if *l.Instrument != TorchInstrumentName {
		p.note(fmt.Sprintf("the metadata names instrument %q, not %q; read the fields that match", *l.Instrument, TorchInstrumentName))
	}
	if l.Version == nil || !l.Version.valid || l.Version.v != TorchFormatVersion {
		p.note(fmt.Sprintf("the torch instrument's output is not format version %d; read the fields that match", TorchFormatVersion))
	}
	if l.DryRun {
		p.dryRun = true
		p.note("a --dry-run plan, not a measurement")
	}
	p.collective(l.Collective, "the metadata line")
	if l.World != nil && l.World.valid && l.World.v >= 0 && l.World.v < math.MaxInt32 {
		p.res.NRanks = int(l.World.v)
	}
	if l.NCCLVersion != nil {
		p.res.NCCLVersion = *l.NCCLVersion
	}
	if len(l.Devices) > 0 {
		for _, d := range l.Devices {
			p.res.Devices = append(p.res.Devices, Device{Rank: d.Rank, Host: d.Host, Device: d.Device, Pid: d.Pid, Name: l.Device})
		}
	} else {
		for i, h := range l.Hosts {
			p.res.Devices = append(p.res.Devices, Device{Rank: i, Host: h, Name: l.Device})
		}
	}
}

func (p *torchParser) row(l *torchLine) {
	p.recognized = true
	b := l.Bytes
	if !b.valid || b.v < 0 || b.v > float64(MaxRowBytes) || b.v != math.Trunc(b.v) {
		p.note(fmt.Sprintf("skipped a size line without a valid byte count (a whole number up to %d TiB)", MaxRowBytes>>40))
		return
	}
	p.collective(l.Collective, fmt.Sprintf("the line of size %d", int64(b.v)))
	op := p.res.Op().OrAllReduce()
	ranks := p.res.NRanks
	if l.Ranks != nil && l.Ranks.valid && l.Ranks.v > 0 && l.Ranks.v < math.MaxInt32 {
		if ranks == 0 {
			p.res.NRanks = int(l.Ranks.v)
		}
		ranks = int(l.Ranks.v)
	}
	row := Row{Bytes: int64(b.v), Count: int64(b.v) / 4, Type: "float", Redop: "none", Root: -1}
	if op.Splits() && ranks > 0 {
		row.Count /= int64(ranks) // the size column is nRanks shares
	}
	if op.Reduces() {
		row.Redop = "sum"
	}
	if op.Rooted() {
		row.Root = 0 // the script's root, as nccl-tests' default -r 0
	}
	if l.Count != nil && l.Count.valid && l.Count.v >= 0 && l.Count.v < math.MaxInt64/2 {
		row.Count = int64(l.Count.v)
	}
	var samples []float64
	for _, s := range l.Samples {
		if !s.valid || s.v < 0 {
			p.note(fmt.Sprintf("dropped the samples of size %d: one is missing, negative or not a number", row.Bytes))
			samples = nil
			break
		}
		samples = append(samples, s.v)
	}
	m := &row.Out
	switch {
	case l.TimeUS != nil && l.TimeUS.valid && l.TimeUS.v >= 0:
		m.TimeUS = l.TimeUS.v
	case len(samples) > 0:
		// The format defines time_us as the samples' median (docs/TORCH.md).
		s, n := slices.Sorted(slices.Values(samples)), len(samples)
		if m.TimeUS = s[n/2]; n%2 == 0 {
			m.TimeUS = (s[n/2-1] + s[n/2]) / 2
		}
		p.note(fmt.Sprintf("size %d has no valid time_us; used the median of its samples", row.Bytes))
	default:
		p.note(fmt.Sprintf("skipped size %d: its time is missing, negative or not a number", row.Bytes))
		return
	}
	// nccl-tests' algbw is the size column over the time for every op.
	if m.AlgBW = p.bw(l.AlgBW); l.AlgBW == nil && m.TimeUS > 0 {
		m.AlgBW = float64(row.Bytes) / m.TimeUS / 1e3
	}
	if m.BusBW = p.bw(l.BusBW); l.BusBW == nil && ranks > 0 {
		m.BusBW = m.AlgBW * op.BusFactor(ranks)
	}
	switch {
	case l.Wrong != nil && l.Wrong.valid && l.Wrong.v >= 0 && l.Wrong.v < math.MaxInt64/2:
		m.Wrong = new(int64(l.Wrong.v))
	case l.OK != nil && !*l.OK:
		m.Wrong = new(int64(1))
		p.note(fmt.Sprintf(`size %d says "ok": false without a count; #wrong read as 1`, row.Bytes))
	case l.OK != nil:
		m.Wrong = new(int64(0))
	}
	if len(samples) > 0 {
		m.Iter = &IterStats{TimesUS: samples}
	}
	if l.NCCLVersion != nil && p.res.NCCLVersion == "" {
		p.res.NCCLVersion = *l.NCCLVersion
	}
	if l.Arm != nil {
		p.arm(*l.Arm)
	}
	if err := checkRow(&row); err != nil {
		p.note(fmt.Sprintf("skipped size %d: %v", row.Bytes, err))
		return
	}
	row.Cycle = p.series.of(&row)
	p.res.Rows = append(p.res.Rows, row)
}

// collective reads a line's "collective": the first sets the result's op;
// another, or one nccltune does not know, refuses the output.
func (p *torchParser) collective(c *string, where string) {
	if c == nil || p.mixed != "" {
		return
	}
	op, err := nccl.ParseOp(*c)
	switch {
	case err != nil:
		p.mixed = fmt.Sprintf("%s of the torch instrument's output names collective %q, which nccltune does not know (%v)", where, *c, err)
	case p.named == "":
		p.named = where
		p.res.Collective = string(op)
	case string(op) != p.res.Collective:
		p.mixed = fmt.Sprintf("the torch instrument's output names two collectives: %s says %s, %s says %s; one output is one run of one collective (were two runs saved into one file?)",
			p.named, p.res.Collective, where, op)
	}
}

// bw reads a bandwidth; a missing one is 0, "nan" or a negative one 0 with a note.
func (p *torchParser) bw(n *jsonNum) float64 {
	switch {
	case n == nil:
		return 0
	case n.valid && n.v >= 0:
		return n.v
	}
	p.note("a bandwidth that is negative or not a number was read as 0")
	return 0
}

func (p *torchParser) arm(a string) {
	if slices.Contains(p.arms, a) {
		return
	}
	p.arms = append(p.arms, a)
	if len(p.arms) == 2 {
		p.note("the output holds several arms (" + strings.Join(p.arms, ", ") + "…): their rows are read as one run, repeated sizes as later cycles")
	}
}

func (p *torchParser) finish() (*Result, error) {
	r := &p.res
	if !p.recognized {
		return nil, fmt.Errorf("%w: the output holds no torch instrument line (JSON with \"instrument\" or \"bytes\"), NCCL log line or failure message", ErrNoTable)
	}
	fillFromFacts(r)
	if n := len(r.Devices); n > 0 && r.NRanks != n {
		p.note(fmt.Sprintf("the metadata says world %d but lists %d ranks; read %d", r.NRanks, n, n))
		r.NRanks = n
	}
	if r.Rows == nil {
		r.Rows = []Row{}
	}
	// nccl-tests' footer average: the mean bus bandwidth over the rows.
	for _, row := range r.Rows {
		r.AvgBusBW += row.Out.BusBW / float64(len(r.Rows))
	}
	// The seed's bare format has no end marker: rows are all it has.
	r.Complete = p.done || (!p.meta && len(r.Rows) > 0)
	switch {
	case p.mixed != "":
		return r, &FailureError{Message: p.mixed}
	case len(r.Errors) > 0 && (!r.Complete || len(r.Rows) == 0):
		return r, &FailureError{Message: diagnoseTorch(r.Errors), Lines: r.Errors}
	case len(r.Rows) == 0 && p.dryRun:
		return r, fmt.Errorf("%w: the output is the torch instrument's --dry-run plan, not a measurement", ErrNoTable)
	case len(r.Rows) == 0 && p.meta && !p.done:
		return r, &FailureError{Message: "the torch instrument stopped after its metadata line, before the first size: the run was cut short (killed, timed out, or a rank failed; see its stderr)"}
	case len(r.Rows) == 0:
		return r, fmt.Errorf("%w: the torch instrument's output has no size line", ErrNoTable)
	case !r.Complete:
		return r, &FailureError{Message: fmt.Sprintf(
			`the torch instrument's output ends after %d sizes without its closing {"done": true} line: the run was cut short (killed, timed out or crashed)`,
			len(r.Rows))}
	}
	return r, nil
}

// diagnoseTorch names the cause of a failed torch run: torch's NCCL errors
// get the same advice as nccl-tests' failure lines; anything else is
// diagnosed as nccl-tests' output would be.
func diagnoseTorch(lines []string) string {
	for _, l := range lines {
		if !strings.Contains(l, "NCCL error") && !strings.Contains(l, "NCCL communicator") {
			continue
		}
		// NCCL's last error names the cause: quoted on its own, so that
		// shortening torch's long message never cuts it off.
		said, last, _ := strings.Cut(l, "Last error:")
		quoted := shorten(strings.Join(strings.Fields(said), " "), 300)
		msg := "torch.distributed reported an NCCL error: " + quoted
		// The longest key first (the keys' lengths differ).
		for _, k := range slices.SortedFunc(maps.Keys(ncclAdvice), func(a, b string) int { return len(b) - len(a) }) {
			if strings.Contains(said, k) {
				msg = fmt.Sprintf("NCCL reported %s under torch.distributed: %s; torch said: %s", quote(k), ncclAdvice[k], quoted)
				break
			}
		}
		if last = strings.TrimSpace(last); last != "" {
			msg += "; NCCL's last error: " + shorten(last, 200)
		}
		return msg
	}
	return diagnose(lines)
}
