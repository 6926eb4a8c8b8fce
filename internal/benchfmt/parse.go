package benchfmt

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/safetext"
)

// SimulatedHeaderPrefix starts the header line the simulated fabric prints
// after nccl-tests' version line; the simulator and the parser share it.
const SimulatedHeaderPrefix = "# nccltune simulated fabric: profile "

// SimulatedHeader is the simulated fabric's whole header line for profile.
func SimulatedHeader(profile string) string {
	return SimulatedHeaderPrefix + profile + " (SIMULATED, not a measurement)"
}

// ErrNoTable is wrapped by the error Parse returns for output that holds
// neither a results table nor a failure message (garbage, empty output).
var ErrNoTable = errors.New("no nccl-tests results table found")

// FailureError is returned with a Result when the output shows that the run
// failed (failure lines, NCCL WARN, MPI or srun errors, a table without its
// footer); the Result still holds everything that was parsed.
type FailureError struct {
	// Message names the cause and, where nccltune knows it, the next step.
	Message string
	// Lines are the failure lines found in the output (Result.Errors).
	Lines []string
}

func (e *FailureError) Error() string { return e.Message }

// Parse reads what one nccl-tests run printed: its JSON output (-J) when the
// first non-space byte is '{', its text output otherwise, and the torch
// instrument's JSON lines with ParseTorch.
//
// The Result is non-nil whenever anything of nccl-tests or NCCL was
// recognised. The error is nil only for a complete table with a row;
// otherwise it is a *FailureError or wraps ErrNoTable. Parse never panics.
func Parse(data []byte) (*Result, error) {
	if looksLikeTorch(data) {
		return ParseTorch(data)
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return ParseJSON(data)
	}
	return parseText(data)
}

// NCCLVersionString turns an NCCL version code (22803) into "2.28.3"; codes
// before NCCL 2.9 used X*1000+Y*100+Z ("2804" is 2.8.4).
func NCCLVersionString(code int) string {
	if code <= 0 {
		return ""
	}
	div := 1000
	if code >= 10000 {
		div = 10000
	}
	return strconv.Itoa(code/div) + "." + strconv.Itoa(code%div/100) + "." + strconv.Itoa(code%100)
}

// collectiveFromProgram turns nccl-tests' program name ("all_gather_perf",
// "./build/all_reduce_perf_mpi") into the collective ("all_gather").
func collectiveFromProgram(name string) string {
	name = strings.TrimSpace(name)
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.Index(name, "_perf"); i > 0 {
		name = name[:i]
	}
	return name
}

// layout is the shape of the results table, read from its column header.
type layout struct {
	known   bool
	sides   int  // 2: out-of-place and in-place; 1: one side only
	perIter bool // -I 1: i_min i_max i_p99 i_cv% after each side
}

func (l layout) measureWidth() int {
	if l.perIter {
		return 8
	}
	return 4
}

type cycleState struct {
	typ, redop string
	root       int
	lastBytes  int64
	cycle      int
}

// cycles counts -N sweeps: within one (type, redop, root) series a row
// whose size is not larger than the previous one starts a new sweep.
// nccl-tests loops over types, ops and roots outside its -N loop, so a new
// series starts again at cycle 0.
type cycles []cycleState

func (c *cycles) of(row *Row) int {
	for i := range *c {
		s := &(*c)[i]
		if s.typ == row.Type && s.redop == row.Redop && s.root == row.Root {
			if row.Bytes <= s.lastBytes {
				s.cycle++
			}
			s.lastBytes = row.Bytes
			return s.cycle
		}
	}
	*c = append(*c, cycleState{typ: row.Type, redop: row.Redop, root: row.Root, lastBytes: row.Bytes})
	return 0
}

type textParser struct {
	res     Result
	log     ncclLogReader
	layout  layout
	toks    []string // scratch for splitting a line
	pending []string // tokens of a row whose columns are split across lines
	// rowProblem says why the row being read was refused, for its note.
	rowProblem string
	cycles     cycles

	blockDelim byte // the open MPI block's rule character; 0 when none is open
	block      []string

	sawStart   bool // "# Collective test starting" (nccl-tests 2.15+)
	sawFooter  bool // "# Avg bus bandwidth"
	recognized bool
}

func parseText(data []byte) (res *Result, err error) {
	p := &textParser{}
	n := 0
	for line := range strings.Lines(string(data)) {
		n++
		line = strings.TrimSuffix(line, "\n")
		switch {
		case len(line) > MaxLineBytes:
			p.note(fmt.Sprintf("skipped line %d: it is %d bytes long, over the %d KiB a line of nccl-tests or NCCL output can be", n, len(line), MaxLineBytes>>10))
			continue
		case strings.IndexByte(line, 0) >= 0:
			p.note(fmt.Sprintf("skipped line %d: it holds a NUL byte (binary data, not nccl-tests output)", n))
			continue
		}
		p.line(strings.TrimRight(line, "\r"))
	}
	return p.finish()
}

func (p *textParser) line(line string) {
	if p.blockDelim != 0 {
		if blockDelimiter(line) == p.blockDelim {
			p.closeBlock()
			return
		}
		// A block never holds nccl-tests or NCCL lines; seeing one means
		// the block's closing line went missing.
		if !p.looksLikeTestOutput(line) {
			p.block = append(p.block, line)
			return
		}
		p.closeBlock()
	}
	if d := blockDelimiter(line); d != 0 {
		p.blockDelim, p.block = d, p.block[:0]
		return
	}

	content, log, glued := p.log.read(line)
	p.recognized = p.recognized || log.kind != logNone
	switch {
	case log.kind == logNCCL && log.level == "WARN":
		p.addError("NCCL WARN " + log.msg)
	case log.kind == logFailure:
		p.failureLine(log.msg)
	}
	t := strings.TrimSpace(content)
	if t == "" {
		return
	}
	if log.kind == logFailure {
		// nccl-tests printed its failure right after a row's first columns:
		// that row will never be finished.
		p.toks = scanFields(p.toks[:0], t)
		if len(p.pending) > 0 && rowPrefixOK(p.pending, p.toks) {
			p.pending = append(p.pending, p.toks...)
		} else if rowPrefixOK(nil, p.toks) {
			p.pending = append(p.pending[:0], p.toks...)
		}
		if len(p.pending) > 0 {
			p.dropPending("the run failed before its timings were printed")
		}
		return
	}
	if t[0] == '#' {
		if len(p.pending) > 0 {
			p.dropPending("a comment line came before the row's last columns")
		}
		p.comment(t)
		return
	}
	p.toks = scanFields(p.toks[:0], t)
	if len(p.pending) > 0 {
		if rowPrefixOK(p.pending, p.toks) {
			p.pending = append(p.pending, p.toks...)
			p.maybeEmit(glued)
			return
		}
		p.dropPending("the next line does not continue it")
	}
	if rowPrefixOK(nil, p.toks) && (len(p.toks) >= 3 || glued) {
		p.pending = append(p.pending[:0], p.toks...)
		p.maybeEmit(glued)
		return
	}
	if len(p.toks) >= 5 && isDigits(p.toks[0]) && isDigits(p.toks[1]) && isWord(p.toks[2]) {
		// A results row whose size or count has too many digits for any
		// real run (isUint stops at 19).
		p.note(fmt.Sprintf("skipped the row for size %s: the size or count is too large to be real", p.toks[0]))
		return
	}
	if len(p.toks) >= 5 && isSignedInt(p.toks[0]) && isSignedInt(p.toks[1]) && isWord(p.toks[2]) &&
		(strings.HasPrefix(p.toks[0], "-") || strings.HasPrefix(p.toks[1], "-")) {
		p.note(fmt.Sprintf("skipped the row for size %s: a size or count cannot be negative", p.toks[0]))
		return
	}
	if p.log.bareVersion(t) {
		p.recognized = true
		return
	}
	p.failureLine(t)
}

// looksLikeTestOutput reports lines that cannot belong to an MPI block.
func (p *textParser) looksLikeTestOutput(line string) bool {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "#") || strings.Contains(t, " NCCL INFO ") || strings.Contains(t, " NCCL WARN ") {
		return true
	}
	p.toks = scanFields(p.toks[:0], t)
	return len(p.toks) >= 5 && rowPrefixOK(nil, p.toks)
}

func (p *textParser) addError(msg string) {
	p.recognized = true
	p.res.Errors = appendUnique(p.res.Errors, msg)
}

func (p *textParser) note(msg string) {
	p.res.Notes = appendUnique(p.res.Notes, msg)
}

// comment handles nccl-tests' '#' lines: header, devices, column titles, footer.
func (p *textParser) comment(t string) {
	body := strings.TrimSpace(t[1:])
	switch {
	case strings.HasPrefix(t, SimulatedHeaderPrefix):
		p.recognized = true
		p.res.Simulated = true
		name := strings.TrimPrefix(t, SimulatedHeaderPrefix)
		if i := strings.LastIndex(name, " (SIMULATED"); i >= 0 {
			name = name[:i]
		}
		p.res.SimProfile = simProfileOf(name)
	case strings.HasPrefix(body, "nccl-tests version "):
		p.recognized = true
		p.toks = scanFields(p.toks[:0], body)
		if len(p.toks) >= 3 {
			p.res.TestsVersion = p.toks[2]
		}
		var headers, library string
		for _, f := range p.toks {
			if v, ok := strings.CutPrefix(f, "nccl-library="); ok {
				library = v
			} else if v, ok := strings.CutPrefix(f, "nccl-headers="); ok {
				headers = v
			}
		}
		if code, err := strconv.Atoi(cmp.Or(library, headers)); err == nil {
			p.res.NCCLVersion = NCCLVersionString(code)
		}
	case strings.HasPrefix(body, "Collective test starting:"):
		p.recognized = true
		p.sawStart = true
		program := strings.TrimSpace(strings.TrimPrefix(body, "Collective test starting:"))
		p.res.Runs++
		if p.res.Runs > 1 {
			// Two runs saved into one file: their rows, ranks and footers
			// mix, so the file is not one run (import refuses it).
			p.note(fmt.Sprintf("the output holds %d runs (another starts here: %s); their tables are mixed", p.res.Runs, program))
			return
		}
		p.res.Collective = collectiveFromProgram(program)
	case strings.HasPrefix(body, "Collective test concluded:"):
		p.recognized = true
		p.res.Complete = true
		p.res.Collective = cmp.Or(p.res.Collective, collectiveFromProgram(strings.TrimPrefix(body, "Collective test concluded:")))
	case strings.HasPrefix(body, "Rank "):
		if d, ok := parseDeviceLine(body); ok {
			p.recognized = true
			p.res.Devices = append(p.res.Devices, d)
			p.log.learnHost(d.Host)
		}
	case strings.HasPrefix(body, "size "):
		p.toks = scanFields(p.toks[:0], body)
		if len(p.toks) >= 4 && p.toks[0] == "size" && p.toks[1] == "count" {
			p.recognized = true
			p.layout = parseLayout(p.toks)
		}
	case strings.HasPrefix(body, "Out of bounds values"):
		p.recognized = true
		if n, err := strconv.Atoi(p.afterColon(body)); err == nil && n >= 0 {
			p.res.OutOfBounds = &n
		}
	case strings.HasPrefix(body, "Avg bus bandwidth"):
		p.recognized = true
		p.sawFooter = true
		if f, ok := parseMeasureFloat(p.afterColon(body)); ok {
			p.res.AvgBusBW = f
		}
	case strings.HasPrefix(body, "error:"):
		p.addError(strings.TrimSpace(strings.TrimPrefix(body, "error:")))
	case strings.HasPrefix(body, "Reducing maxBytes"):
		p.note(body)
	}
}

// afterColon is the first field after the first ':' of body, "" when none.
func (p *textParser) afterColon(body string) string {
	_, v, _ := strings.Cut(body, ":")
	if p.toks = scanFields(p.toks[:0], v); len(p.toks) > 0 {
		return p.toks[0]
	}
	return ""
}

// parseLayout reads the column titles: "size count type redop root time
// algbw busbw #wrong [i_min i_max i_p99 i_cv%] time … [timestamp]".
func parseLayout(titles []string) layout {
	l := layout{known: true}
	for _, f := range titles {
		switch f {
		case "time", "cputime":
			l.sides++
		case "i_min":
			l.perIter = true
		}
	}
	if l.sides < 1 || l.sides > 2 {
		return layout{}
	}
	return l
}

// parseDeviceLine reads "Rank  0 Group  0 Pid   1397 on  fakehost0 device
// 0 [0000:00:06] NVIDIA H200" (the text after '#'); older nccl-tests omit
// Group and print the bus id as [0x07].
func parseDeviceLine(body string) (Device, bool) {
	var d Device
	var f [12]string
	toks := scanFields(f[:0], body)
	seen := 0
	for i := 0; i+1 < len(toks); i++ {
		v := toks[i+1]
		switch toks[i] {
		case "Rank":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return d, false
			}
			d.Rank = n
			seen++
		case "Group":
			d.GroupIdx, _ = strconv.Atoi(v)
		case "Pid":
			d.Pid, _ = strconv.Atoi(v)
		case "on":
			d.Host = v
			seen++
		case "device":
			n, err := strconv.Atoi(v)
			if err != nil {
				return d, false
			}
			d.Device = n
			seen++
		}
	}
	if seen != 3 {
		return d, false
	}
	// The bus id and the GPU's name follow the device number.
	_, rest, _ := strings.Cut(body, " device ")
	if _, rest, ok := strings.Cut(rest, "["); ok {
		if id, name, ok := strings.Cut(rest, "]"); ok {
			d.BusID, d.Name = id, strings.TrimSpace(name)
		}
	}
	return d, true
}

// maybeEmit turns the pending tokens into a row once all columns are there.
// glued says the line went on with a log line, so the row may continue.
func (p *textParser) maybeEmit(glued bool) {
	pre := preambleLen(p.pending)
	if len(p.pending) < pre {
		return
	}
	l := p.layout
	if !l.known {
		if glued {
			return // without column titles, only the end of a line ends a row
		}
		l = inferLayout(len(p.pending) - pre)
		if !l.known {
			return
		}
	}
	need := pre + l.sides*l.measureWidth()
	if len(p.pending) < need {
		return
	}
	p.emitRow(p.pending[:need], pre, l)
	p.pending = p.pending[:0]
}

// inferLayout guesses the table's shape from a row's measure columns.
func inferLayout(n int) layout {
	switch {
	case n >= 16:
		return layout{known: true, sides: 2, perIter: true}
	case n >= 8:
		return layout{known: true, sides: 2}
	case n >= 4:
		return layout{known: true, sides: 1}
	}
	return layout{}
}

// preambleLen is 5 (size count type redop root), or 4 when the redop column
// is blank, as hypercube_perf prints it.
func preambleLen(toks []string) int {
	if len(toks) >= 4 && isSignedInt(toks[3]) {
		return 4
	}
	return 5
}

func (p *textParser) dropPending(why string) {
	size := ""
	if len(p.pending) > 0 {
		size = " " + p.pending[0]
	}
	p.note(fmt.Sprintf("skipped the row for size%s: its columns are incomplete (%s)", size, why))
	p.pending = p.pending[:0]
}

// rowPrefixOK reports whether prev followed by next can be the start of a
// results row: size and count (integers), type, redop (a word, or missing),
// root (an integer), then numbers, "N/A" or "nan".
func rowPrefixOK(prev, next []string) bool {
	if len(prev)+len(next) == 0 {
		return false
	}
	at := func(i int) string {
		if i < len(prev) {
			return prev[i]
		}
		return next[i-len(prev)]
	}
	n := len(prev) + len(next)
	blankRedop := n >= 4 && isSignedInt(at(3))
	for i := len(prev); i < n; i++ {
		tok, ok := at(i), false
		switch {
		case i <= 1:
			ok = isUint(tok)
		case i == 2, i == 3 && !blankRedop:
			ok = isWord(tok)
		case i == 3, i == 4 && !blankRedop:
			ok = isSignedInt(tok)
		default:
			ok = isMeasureToken(tok) || isTimestampToken(tok)
		}
		if !ok {
			return false
		}
	}
	return true
}

func (p *textParser) emitRow(toks []string, pre int, l layout) {
	var row Row
	var err error
	if row.Bytes, err = strconv.ParseInt(toks[0], 10, 64); err != nil || row.Bytes < 0 || row.Bytes > MaxRowBytes {
		p.note(fmt.Sprintf("skipped the row for size %s: not a real message size (at most %d TiB)", toks[0], MaxRowBytes>>40))
		return
	}
	if row.Count, err = strconv.ParseInt(toks[1], 10, 64); err != nil || row.Count < 0 {
		p.note("skipped a row with an unreadable count " + strconv.Quote(toks[1]))
		return
	}
	row.Type = toks[2]
	rootTok := toks[3]
	if pre == 5 {
		row.Redop, rootTok = toks[3], toks[4]
	}
	root, err := strconv.Atoi(rootTok)
	if err != nil || root < -1 {
		p.note("skipped a row with an unreadable root " + strconv.Quote(rootTok))
		return
	}
	row.Root = root
	w := l.measureWidth()
	p.rowProblem = ""
	for side := range l.sides {
		m, ok := p.parseMeasure(toks[pre+side*w:pre+(side+1)*w], l.perIter)
		if !ok {
			p.note(fmt.Sprintf("skipped the row for size %d: %s", row.Bytes, cmp.Or(p.rowProblem, "unreadable numbers")))
			return
		}
		if side == 0 {
			row.Out = m
		} else {
			row.In = &m
		}
	}
	if err := checkRow(&row); err != nil {
		p.note(fmt.Sprintf("skipped the row for size %d: %v", row.Bytes, err))
		return
	}
	row.Cycle = p.cycles.of(&row)
	p.recognized = true
	p.res.Rows = append(p.res.Rows, row)
}

// parseMeasure reads "time algbw busbw #wrong [i_min i_max i_p99 i_cv%]".
func (p *textParser) parseMeasure(toks []string, perIter bool) (Measure, bool) {
	var m Measure
	var ok bool
	if m.TimeUS, ok = p.measureTime(toks[0]); !ok {
		return m, false
	}
	if m.AlgBW, ok = p.measureFloat(toks[1]); !ok {
		return m, false
	}
	if m.BusBW, ok = p.measureFloat(toks[2]); !ok {
		return m, false
	}
	if toks[3] != "N/A" {
		f, err := strconv.ParseFloat(toks[3], 64)
		if err != nil || f < 0 || f > math.MaxInt64/2 || f != math.Trunc(f) {
			return m, false
		}
		m.Wrong = new(int64(f))
	}
	if perIter {
		var it IterStats
		for i, dst := range []*float64{&it.MinUS, &it.MaxUS, &it.P99US} {
			if *dst, ok = p.measureTime(toks[4+i]); !ok {
				return m, false
			}
		}
		if it.CVPct, ok = p.measureFloat(toks[7]); !ok {
			return m, false
		}
		m.Iter = &it
	}
	return m, true
}

// measureFloat reads a bandwidth or i_cv%: "nan" or "inf" (nccl-tests'
// print of a zero time) becomes 0 with a note, so results stay valid JSON.
func (p *textParser) measureFloat(s string) (float64, bool) {
	f, ok := parseMeasureFloat(s)
	if !ok {
		if isNaNOrInf(s) {
			p.note("a value printed as " + strconv.Quote(s) + " was read as 0")
			return 0, true
		}
		return 0, false
	}
	if f > MaxBandwidth {
		p.rowProblem = fmt.Sprintf("its bandwidth %s GB/s is not plausible", s)
		return 0, false
	}
	return f, true
}

// measureTime reads a time (µs): nan, inf or one too long drops the row
// (read as 0 it would be the fastest result of all).
func (p *textParser) measureTime(s string) (float64, bool) {
	f, ok := parseMeasureFloat(s)
	switch {
	case !ok && isNaNOrInf(s):
		p.rowProblem = "its time is printed as " + strconv.Quote(s)
		return 0, false
	case !ok:
		return 0, false
	case f > MaxTimeUS:
		p.rowProblem = fmt.Sprintf("its time %s µs is not plausible (over %g s)", s, MaxTimeUS/1e6)
		return 0, false
	}
	return f, true
}

// parseMeasureFloat reads a finite, non-negative number.
func parseMeasureFloat(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	return f, true
}

func isNaNOrInf(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if len(s) < 3 || (s[0]|0x20 != 'n' && s[0]|0x20 != 'i') {
		return false
	}
	return strings.EqualFold(s, "nan") || strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinity")
}

func (p *textParser) failureLine(t string) {
	if isFailureLine(t) {
		p.addError(t)
	}
}

func (p *textParser) closeBlock() {
	msg := joinBlock(p.block, p.blockDelim)
	p.blockDelim, p.block = 0, p.block[:0]
	if msg != "" {
		p.addError(msg)
	}
}

func (p *textParser) finish() (*Result, error) {
	if len(p.pending) > 0 {
		p.dropPending("the output ends mid-row")
	}
	if p.blockDelim != 0 {
		p.closeBlock()
	}
	if f := p.log.facts.result(); f != nil {
		p.res.Facts = f
		p.recognized = true
	}
	// nccl-tests before 2.15 print no "Collective test starting/concluded"
	// lines: there the footer's average is the end of the run.
	p.res.Complete = p.res.Complete || !p.sawStart && p.sawFooter
	p.res.NRanks = len(p.res.Devices)
	fillFromFacts(&p.res)
	if !p.recognized {
		return nil, fmt.Errorf("%w: the output holds no nccl-tests header, table, NCCL log line or failure message (is it nccl-tests output?)", ErrNoTable)
	}
	res := &p.res
	return res, verdict(res, "the text output", `"# Collective test concluded"`)
}

func fillFromFacts(r *Result) {
	if r.Facts == nil {
		return
	}
	r.NCCLVersion = cmp.Or(r.NCCLVersion, r.Facts.NCCLVersion)
	r.NRanks = cmp.Or(r.NRanks, r.Facts.NRanks)
}

// verdict decides the error that goes with a parsed result; what names the
// output and footer its last line.
func verdict(r *Result, what, footer string) error {
	if r.Rows == nil {
		r.Rows = []Row{}
	}
	switch {
	case len(r.Errors) > 0 && (!r.Complete || len(r.Rows) == 0):
		return &FailureError{Message: diagnose(r.Errors), Lines: r.Errors}
	case len(r.Rows) == 0:
		return fmt.Errorf("%w in %s: it stops before the first row (cut short, or not an nccl-tests run)", ErrNoTable, what)
	case !r.Complete:
		return &FailureError{Message: fmt.Sprintf(
			"%s ends after %d rows without nccl-tests' footer (%s): the run was cut short (killed, timed out or crashed)",
			what, len(r.Rows), footer)}
	}
	return nil
}

func appendUnique[T comparable](list []T, v T) []T {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// mapOf is *m, made first when nil: the builders start as zero values and
// make their maps as they first need them.
func mapOf[K comparable, V any](m *map[K]V) map[K]V {
	if *m == nil {
		*m = map[K]V{}
	}
	return *m
}

// scanFields appends the fields of s to dst (strings.Fields without the allocation).
func scanFields(dst []string, s string) []string {
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		if j > i {
			dst = append(dst, s[i:j])
		}
		i = j
	}
	return dst
}

// isUint reports digits that fit an int64 (at most 19 of them).
func isUint(s string) bool { return len(s) <= 19 && isDigits(s) }

// isDigits reports a non-empty run of decimal digits, of any length.
func isDigits(s string) bool { return s != "" && strings.TrimLeft(s, "0123456789") == "" }

func isSignedInt(s string) bool { return isUint(strings.TrimPrefix(s, "-")) }

// isWord reports a type or redop name such as "float", "bfloat16", "sum".
func isWord(s string) bool {
	if s == "" || s == "N/A" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(isLetter(c) || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return !isNaNOrInf(s)
}

// isMeasureToken reports the shape of a number column: a float, "N/A", "nan", "inf".
func isMeasureToken(s string) bool {
	if s == "N/A" {
		return true
	}
	digits, dots, exps := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		case c == 'e' || c == 'E':
			exps++
			if digits == 0 {
				return false
			}
		case c == '-' || c == '+':
			if i != 0 && s[i-1] != 'e' && s[i-1] != 'E' {
				return false
			}
		default:
			return isNaNOrInf(s)
		}
	}
	return digits > 0 && dots <= 1 && exps <= 1
}

// isTimestampToken reports the date and time nccl-tests -S 1 adds to a row.
func isTimestampToken(s string) bool {
	return len(s) >= 5 && strings.TrimLeft(s, "0123456789-:") == ""
}

// simProfileOf is a simulated output's profile name, escaped once here where
// it is read, for every printer that names it (a control in it broke SVGs).
func simProfileOf(name string) string { return safetext.Escape(strings.TrimSpace(name)) }
